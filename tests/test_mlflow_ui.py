"""docs/usage.md's MLflow web UI line, `mlflow ui --backend-store-uri sqlite:///runs/mlflow/mlflow.db`, from the
trackers extra: started on a free loopback port against a store a logger wrote, its page and the store's run read
over HTTP on 127.0.0.1 within a bounded time, then stopped with its whole process group."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

# the first start migrates the database and imports MLflow's server: 60 s measured on 2 busy cores
START_SECONDS = 300


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mlflow_command() -> list[str]:
    """The console script the extra installs beside this interpreter (the documented ``mlflow``)."""
    script = Path(sys.executable).with_name("mlflow")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "mlflow"]


def fetch(url: str, body: dict | None = None) -> tuple[int, str]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read().decode("utf-8", "replace")


@pytest.mark.slow
def test_the_mlflow_ui_serves_a_runs_store(tmp_path):
    from lightning.pytorch.loggers import MLFlowLogger

    store = tmp_path / "runs" / "mlflow"
    store.mkdir(parents=True)
    uri = f"sqlite:///{store / 'mlflow.db'}"
    logger = MLFlowLogger(experiment_name="inr", tracking_uri=uri, artifact_location=str(store / "artifacts"))
    logger.log_hyperparams({"sigma": 10.0})
    logger.log_metrics({"test/psnr": 27.0}, step=300)
    logger.finalize("success")

    port = free_port()
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    log = (tmp_path / "ui.log").open("w")
    server = subprocess.Popen(
        [*mlflow_command(), "ui", "--backend-store-uri", uri, "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the server's workers stop with it
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline, page = time.monotonic() + START_SECONDS, None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                status, page = fetch(base + "/")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(1)
        assert page is not None, f"no page within {START_SECONDS} s: {(tmp_path / 'ui.log').read_text()[-3000:]}"
        assert status == 200 and "<title>MLflow</title>" in page
        _, found = fetch(base + "/api/2.0/mlflow/experiments/search", {"max_results": 100})
        (experiment,) = [e for e in json.loads(found)["experiments"] if e["name"] == "inr"]
        _, runs = fetch(base + "/api/2.0/mlflow/runs/search", {"experiment_ids": [experiment["experiment_id"]]})
        (run,) = json.loads(runs)["runs"]
        assert run["info"]["run_id"] == logger.run_id and run["info"]["status"] == "FINISHED"
        assert {m["key"]: m["value"] for m in run["data"]["metrics"]} == {"test/psnr": 27.0}
    finally:
        stop(server)
        log.close()


def stop(server: subprocess.Popen) -> None:
    """SIGTERM to the server's process group (its workers too), SIGKILL after 30 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(server.pid, sig)
        except ProcessLookupError:  # the whole group has ended
            break
        try:
            server.wait(timeout=30)
            break
        except subprocess.TimeoutExpired:
            continue
