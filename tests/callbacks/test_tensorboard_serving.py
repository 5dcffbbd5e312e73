"""TensorBoard serves the spectral scalars: a real server on 127.0.0.1 is asked for a run's scalar tags."""

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from functools import partial
from pathlib import Path

import pytest

from inr.callbacks import SpectralBiasCallback
from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.tasks import ImageFitting

TENSORBOARD = Path(sys.executable).with_name("tensorboard")
STARTUP_SECONDS = 60  # bound on server start + first load of the event files; a failing test never hangs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_tensorboard_serves_spectral_tags(tmp_path, tiny_trainer):
    model = ImageFitting(encoder=GaussianEncoding(2, 16, 4.0), network=partial(MLP, width=16, depth=1), out_channels=3)
    trainer = tiny_trainer(tmp_path, [SpectralBiasCallback(num_bands=4, figure_every_n_epochs=0)], max_epochs=2, name="serve")
    trainer.fit(model, datamodule=ImageDataModule(resolution=16, steps_per_epoch=2))

    port = free_port()
    server = subprocess.Popen(
        [
            str(TENSORBOARD),
            "--logdir",
            str(tmp_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--load_fast",
            "false",
            "--reload_interval",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    tags, deadline = {}, time.monotonic() + STARTUP_SECONDS
    try:
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/data/plugin/scalars/tags", timeout=5) as r:
                    tags = json.load(r)
                if any(t.startswith("spectral/") for run in tags.values() for t in run):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass  # not listening yet
            time.sleep(0.3)
    finally:
        server.terminate()
        try:
            _, err = server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            _, err = server.communicate()
    assert tags, f"tensorboard never answered on port {port}: {err.decode()[-1500:]}"
    run = tags.get("serve/version_0", {})
    # bands 1 cycle wide on the 8×8 training grid: band 0 = [0, 1) would hold DC alone, logged as "dc" instead
    expected = {f"spectral/rel_err/band_{b:02d}" for b in range(1, 4)} | {f"spectral/rel_err/{k}" for k in ("dc", "low", "high")}
    assert expected <= set(run), tags
    assert server.returncode is not None
