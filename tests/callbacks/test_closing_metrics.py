"""The closing metrics of a command reach every logger and metrics.json: tiny real runs of the command line, read
back from TensorBoard's event file (scalars and the HParams entry, hp_metric no longer −1), the CSV file and
metrics.json; validate and test add their HParams entry and metrics.json too."""

import csv
import json
import math
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2

from inr.callbacks.closing import HeldLoggers, config_hparams, headline, write_metrics
from inr.run.cli import cli_main


def summary_values(out: str) -> dict[str, float]:
    """The metrics of the ``summary:`` line (4 significant digits)."""
    line = next(ln for ln in out.splitlines() if ln.startswith("summary: "))
    parts = [p.strip() for p in line[len("summary: ") :].split(" | ")]
    return {p.split(" ")[0]: float(p.split(" ")[1]) for p in parts if "/" in p.split(" ")[0]}


def hparams_entry(run: Path) -> tuple[list[str], dict, EventAccumulator]:
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    content = acc.PluginTagToContent("hparams")
    experiment = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"]).session_start_info
    values = {k: v.number_value if v.HasField("number_value") else v.string_value for k, v in start.hparams.items()}
    return [m.name.tag for m in experiment.metric_infos], values, acc


@pytest.mark.slow
def test_fit_logs_its_closing_metrics_to_tensorboard_and_metrics_json(tmp_path, tiny_run_args, capsys):
    cli = cli_main(tiny_run_args(tmp_path))
    run = Path(cli.trainer.log_dir)
    printed = summary_values(capsys.readouterr().out)
    record = json.loads((run / "metrics.json").read_text())
    assert record["command"] == "fit" and record["step"] == 10 and record["headline"] == "test/psnr"
    metrics = record["metrics"]
    assert set(metrics) == {"train/psnr", "test/psnr", "full/psnr", "full/ssim"} == set(printed)
    for key, value in printed.items():
        assert f"{metrics[key]:.4g}" == f"{value:.4g}", key
    assert len(list(run.glob("events.out.tfevents.*"))) == 1  # the loggers closed after the closing metrics
    tags, hparams, acc = hparams_entry(run)
    assert set(tags) == {*metrics, "hp_metric"}
    (hp,) = acc.Scalars("hp_metric")  # written once, at the end: no −1 placeholder
    assert hp.step == 10 and hp.value == pytest.approx(metrics["test/psnr"], rel=1e-6)
    for key, value in metrics.items():
        (event,) = acc.Scalars(key)
        assert event.step == 10 and event.value == pytest.approx(value, rel=1e-6)
    # the config's hyper-parameters: the model's and data's settings, the seed, the run's length
    assert hparams["model.encoder.sigma"] == 10.0 and hparams["model.class_path"] == "inr.tasks.ImageFitting"
    assert hparams["data.resolution"] == 16 and hparams["trainer.max_steps"] == 10 and hparams["seed_everything"] == 0


@pytest.mark.slow
def test_csv_logger_gets_the_closing_metrics_as_columns(tmp_path, tiny_run_args):
    args = tiny_run_args(tmp_path, "--trainer.logger", "CSVLogger", "--trainer.logger.save_dir", str(tmp_path))
    cli = cli_main([*args, "--trainer.logger.name", "csv"])
    run = Path(cli.trainer.log_dir)
    with open(run / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    closing = json.loads((run / "metrics.json").read_text())["metrics"]
    (last,) = [r for r in rows if r.get("test/psnr")]
    assert int(last["step"]) == 10
    for key, value in closing.items():
        assert float(last[key]) == pytest.approx(value, rel=1e-6), key


@pytest.mark.slow
def test_validate_and_test_write_their_scores_and_hparams(tmp_path, tiny_run_args):
    cli_main(tiny_run_args(tmp_path))
    for command, prefix in (("validate", "val/"), ("test", "test/")):
        cli = cli_main([command, *tiny_run_args(tmp_path), "--ckpt_path", "last"])
        run = Path(cli.trainer.log_dir)
        record = json.loads((run / "metrics.json").read_text())
        assert record["command"] == command and record["step"] == 10 and record["checkpoint"].endswith("last.ckpt")
        assert set(record["metrics"]) == {f"{prefix}psnr", f"{prefix}ssim"}
        assert record["headline"] == f"{prefix}psnr"
        tags, _, acc = hparams_entry(run)
        assert set(tags) == {f"{prefix}psnr", f"{prefix}ssim", "hp_metric"}
        (hp,) = acc.Scalars("hp_metric")
        assert hp.value == pytest.approx(record["metrics"][f"{prefix}psnr"], rel=1e-6)


def test_headline_flatten_and_json(tmp_path):
    assert headline({"test/iou_uniform": 0.9, "test/chamfer": 0.01}) == "test/iou_uniform"
    assert headline({"train/residual": 0.1, "full/psnr": 30.0}) == "full/psnr"
    assert headline({"train/residual": 0.1}) == "train/residual" and headline({}) is None
    config = {"data": {"class_path": "D", "init_args": {"resolution": [4, 8], "path": None}}, "trainer": {"logger": {}}}
    assert config_hparams(config) == {"data.class_path": "D", "data.resolution": "[4, 8]", "data.path": "None"}
    path = write_metrics(tmp_path, {"test/psnr": math.inf, "train/psnr": 20.5}, command="fit", step=3)
    assert json.loads(path.read_text()) == {"command": "fit", "step": 3, "metrics": {"test/psnr": None, "train/psnr": 20.5}}
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]  # no temporary file left


def test_held_loggers_close_after_release_and_failures_pass_at_once():
    calls = []

    class Logger:
        def finalize(self, status):
            calls.append(status)

    logger = Logger()
    held = HeldLoggers([logger])
    logger.finalize("failed")  # a failure is not held
    logger.finalize("success")
    assert calls == ["failed"]
    held.release()
    held.release()
    assert calls == ["failed", "success"]
    logger.finalize("success")  # the logger's own method again
    assert calls == ["failed", "success", "success"] and "finalize" not in vars(logger)
