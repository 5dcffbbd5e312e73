"""configs/ntk.yaml over image.yaml: the NTK callback is added to image.yaml's callbacks, not put in their place,
and with several optimizer steps per Lightning step (image.yaml's inner_steps) Σ η counts every step."""

import pytest

from inr.callbacks import ImageLogger, MonitoringBudget, NTKCallback, SpectralBiasCallback
from inr.run.cli import cli_main

TINY = [
    "--data.init_args.resolution",
    "16",
    "--data.init_args.steps_per_epoch",
    "5",
    "--model.init_args.inner_steps",
    "5",
    "--model.init_args.network.init_args.width",
    "16",
    "--model.init_args.encoder.init_args.num_features",
    "16",
    "--trainer.max_steps",
    "10",
    "--trainer.enable_progress_bar",
    "false",
]


@pytest.mark.slow
def test_the_overlay_keeps_the_base_configs_callbacks_and_counts_every_inner_step(tmp_path):
    args = ["--config", "image.yaml", "--config", "ntk.yaml", *TINY, "--trainer.logger.init_args.save_dir", str(tmp_path)]
    cli = cli_main(args)
    kinds = [type(c) for c in cli.trainer.callbacks]
    for kind in (MonitoringBudget, ImageLogger, SpectralBiasCallback, NTKCallback):
        assert kinds.count(kind) == 1, kind
    (callback,) = [c for c in cli.trainer.callbacks if isinstance(c, NTKCallback)]
    assert callback.num_probes == 256 and callback.every_n_epochs == 1
    # 10 optimizer steps at Adam's constant lr 1e-3, in two Lightning steps of 5: Σ η = 0.01, not 2 × 1e-3
    assert callback.elapsed == pytest.approx(10 * 1e-3, rel=1e-9)
    assert "ntk/drift" in callback.last
