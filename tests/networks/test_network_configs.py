"""Each architecture's image config trains through the command line (tiny: 16² image, 20 steps) and improves."""

from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.run.cli import cli_main

NETWORKS = {"wire": "WIRE", "gauss": "GaussMLP", "finer": "FINER", "bacon": "BACON", "mfn": "MFN"}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(NETWORKS))
def test_config_trains_through_the_cli(tmp_path, capsys, name, tiny_flags):
    configs, log_every_step = ("image.yaml", f"methods/{name}.yaml"), ("--trainer.log_every_n_steps", 1)
    small = tiny_flags(configs, 16, *log_every_step, width=16, steps=20, bar=False, save_dir=tmp_path)
    cli = cli_main([*small, "--trainer.default_root_dir", str(tmp_path)])
    assert type(cli.model.network).__name__ == NETWORKS[name]
    out = capsys.readouterr().out
    assert "summary:" in out and "steps 20" in out
    (event_file,) = Path(tmp_path).glob(f"image_{name}/version_0/events.out.tfevents.*")
    acc = EventAccumulator(str(event_file), size_guidance={"scalars": 0})
    acc.Reload()
    losses = [e.value for e in acc.Scalars("train/loss")]
    assert len(losses) == 20 and losses[-1] < 0.8 * losses[0]  # 20 steps lower the loss by ≥ 20 %
