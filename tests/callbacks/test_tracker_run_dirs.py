"""W&B (offline) and MLflow (file store) runs keep everything of a run in one directory — config, checkpoints,
media, spectral history — and a second run touches none of the first's files; the closing metrics reach W&B's run
summary and MLflow's metrics."""

import json
import os
from pathlib import Path

import pytest

from inr.run.cli import cli_main

# image.yaml at 16², 5 steps an epoch, an 8-wide network, 10 steps
TINY = ("image.yaml", 16, "--data.init_args.steps_per_epoch", 5)
LOGGERS = {
    "wandb": ["--trainer.logger", "WandbLogger", "--trainer.logger.project", "inr", "--trainer.logger.offline", "true"],
    "mlflow": ["--trainer.logger", "MLFlowLogger", "--trainer.logger.experiment_name", "inr"],
}


def files(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("tracker", list(LOGGERS))
def test_one_run_directory_per_run(tracker, tmp_path, monkeypatch, tiny_flags):
    pytest.importorskip({"wandb": "wandb", "mlflow": "mlflow"}[tracker])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    args = [
        *tiny_flags(*TINY, width=8, steps=10, bar=False),
        *LOGGERS[tracker],
        "--trainer.logger.save_dir",
        str(tmp_path / "runs"),
    ]
    first = cli_main(args)
    run = Path(first.trainer.checkpoint_callback.dirpath).parent
    assert run.parent.parent == tmp_path / "runs"  # save_dir/<project or experiment>/<run id>
    for name in ("config.yaml", "spectral_history.npz", "checkpoints/last.ckpt"):
        assert (run / name).is_file(), name
    assert list((run / "media" / "images" / "reconstruction").glob("step_*.png"))
    assert sorted(os.listdir(tmp_path)) == ["runs"]  # nothing in the working directory
    outside = [p for p in (tmp_path / "runs").glob("*") if p.is_file()]
    assert outside == []  # nothing at the root of save_dir either
    before = files(run)
    closing = json.loads((run / "metrics.json").read_text())["metrics"]
    if tracker == "wandb":  # in one process W&B hands the next logger the run in progress until it finishes
        import wandb

        # the closing metrics are in the run's summary (the values W&B's table of runs shows)
        summary = first.trainer.logger.experiment.summary
        assert {k: summary[k] for k in closing} == pytest.approx(closing, rel=1e-6)
        wandb.finish()
    else:  # MLflow's metrics of the run
        from mlflow.tracking import MlflowClient

        metrics = MlflowClient(first.trainer.logger._tracking_uri).get_run(run.name).data.metrics
        assert {k: metrics[k] for k in closing} == pytest.approx(closing, rel=1e-6)
    second = cli_main(args)
    other = Path(second.trainer.checkpoint_callback.dirpath).parent
    assert other != run and (other / "config.yaml").is_file()
    assert files(run) == before  # the first run's files are untouched
