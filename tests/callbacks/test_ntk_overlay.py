"""configs/ntk.yaml over image.yaml: the NTK callback is added to image.yaml's callbacks, not put in their place,
and with several optimizer steps per Lightning step (image.yaml's inner_steps) Σ η counts every step."""

import pytest

from inr.callbacks import ImageLogger, MonitoringBudget, NTKCallback, SpectralBiasCallback
from inr.run.cli import cli_main

# 16², 5 steps an epoch, 5 optimizer steps per Lightning step
INNER_STEPS = ("--data.init_args.steps_per_epoch", 5, "--model.init_args.inner_steps", 5)


@pytest.mark.slow
def test_the_overlay_keeps_the_base_configs_callbacks_and_counts_every_inner_step(tmp_path, tiny_flags):
    configs = ("image.yaml", "ntk.yaml")
    args = tiny_flags(configs, 16, *INNER_STEPS, width=16, features=16, steps=10, bar=False, save_dir=tmp_path)
    cli = cli_main(args)
    kinds = [type(c) for c in cli.trainer.callbacks]
    for kind in (MonitoringBudget, ImageLogger, SpectralBiasCallback, NTKCallback):
        assert kinds.count(kind) == 1, kind
    (callback,) = [c for c in cli.trainer.callbacks if isinstance(c, NTKCallback)]
    assert callback.num_probes == 256 and callback.every_n_epochs == 1
    # 10 optimizer steps at Adam's constant lr 1e-3, in two Lightning steps of 5: Σ η = 0.01, not 2 × 1e-3
    assert callback.elapsed == pytest.approx(10 * 1e-3, rel=1e-9)
    assert "ntk/drift" in callback.last
