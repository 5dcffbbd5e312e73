"""Each architecture's image config trains through the command line (tiny: 16² image, 20 steps) and improves."""

from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.run.cli import cli_main

NETWORKS = {"wire": "WIRE", "gauss": "GaussMLP", "finer": "FINER", "bacon": "BACON", "mfn": "MFN"}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(NETWORKS))
def test_config_trains_through_the_cli(tmp_path, capsys, name):
    cli = cli_main(
        [
            "--config",
            "image.yaml",
            "--config",
            f"methods/{name}.yaml",
            "--data.init_args.resolution",
            "16",
            "--model.init_args.network.init_args.width",
            "16",
            "--trainer.max_steps",
            "20",
            "--trainer.log_every_n_steps",
            "1",
            "--trainer.enable_progress_bar",
            "false",
            "--trainer.logger.init_args.save_dir",
            str(tmp_path),
            "--trainer.default_root_dir",
            str(tmp_path),
        ]
    )
    assert type(cli.model.network).__name__ == NETWORKS[name]
    out = capsys.readouterr().out
    assert "summary:" in out and "steps 20" in out
    (event_file,) = Path(tmp_path).glob(f"image_{name}/version_0/events.out.tfevents.*")
    acc = EventAccumulator(str(event_file), size_guidance={"scalars": 0})
    acc.Reload()
    losses = [e.value for e in acc.Scalars("train/loss")]
    assert len(losses) == 20 and losses[-1] < 0.8 * losses[0]  # 20 steps lower the loss by ≥ 20 %
