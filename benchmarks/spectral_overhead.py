"""Cost of SpectralBiasCallback at its default settings, relative to the training it observes.

    .venv/bin/python benchmarks/spectral_overhead.py --steps 100 --repeats 3

Setup of configs/image.yaml: astronaut 256², every_other split (16,384 training pixels), full batch,
Gaussian m = 256, σ = 10 → 3×256 ReLU → sigmoid, Adam 1e-3, 10 steps per epoch, TensorBoard logger.
Two measurements, both in this one process:

1. End to end: ``Trainer.fit`` for ``--steps`` steps without and with the callback, interleaved
   ``--repeats`` times; the ratio of the medians of the fit times (figures drawn at their default cadence
   and at the end, the history file written after each measurement, the closing forward pass included).
2. Parts: the median time of one training epoch, of one measurement (reused prediction, scalars logged,
   history written) and of one figure draw; from them the overhead of a run of any length
   E epochs: (E·measure + D·figures + final) / (E·epoch), D = ⌊(E − 1)/25⌋ + 1 draws (every 25 epochs
   except the last, then once at the end).
"""

from __future__ import annotations

import logging
import statistics
import tempfile
import time
import warnings
from functools import partial

import lightning as L
import torch
from lightning.pytorch.loggers import TensorBoardLogger

from inr.callbacks import SpectralBiasCallback
from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.io.command_line import CommandParser
from inr.networks import MLP
from inr.tasks import ImageFitting


class EpochClock(L.Callback):
    """Wall time of each training epoch, from its first batch to its end (before other epoch-end hooks)."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self._start = time.perf_counter()

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        self.times.append(time.perf_counter() - self._start)


def make(tmp: str, steps: int, callbacks: list) -> tuple[L.Trainer, ImageFitting, ImageDataModule]:
    L.seed_everything(0, verbose=False)
    model = ImageFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=256, sigma=10.0, seed=0),
        network=partial(MLP, width=256, depth=3, activation="relu", output_activation="sigmoid"),
        out_channels=3,
        optimizer=partial(torch.optim.Adam, lr=1e-3),
    )
    dm = ImageDataModule(resolution=256, split="every_other")
    trainer = L.Trainer(
        max_steps=steps,
        logger=TensorBoardLogger(tmp, name="bench"),
        callbacks=callbacks,
        limit_val_batches=0,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        log_every_n_steps=10,
    )
    return trainer, model, dm


def fit_seconds(tmp: str, steps: int, spectral: bool) -> float:
    trainer, model, dm = make(tmp, steps, [SpectralBiasCallback()] if spectral else [])
    start = time.perf_counter()
    trainer.fit(model, datamodule=dm)
    return time.perf_counter() - start


def timed(fn, repeats: int) -> float:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return statistics.median(out)


def parts(tmp: str, repeats: int) -> dict[str, float]:
    """Train 3 epochs with the callback and an epoch clock, then time the callback's pieces on that state."""
    clock, cb = EpochClock(), SpectralBiasCallback(figure_every_n_epochs=0)
    trainer, model, dm = make(tmp, 30, [clock, cb])
    trainer.fit(model, datamodule=dm)
    # last_train_grid_prediction is still the final step's: measure() reuses it as during training
    figures = timed(lambda: cb._draw(trainer), repeats)
    measure = timed(lambda: cb.measure(trainer, model, final=False, figures=False), 4 * repeats)
    final = timed(lambda: cb._predict(model, "train"), repeats)
    return {"epoch": statistics.median(clock.times[1:]), "measure": measure, "figures": figures, "final": final}


def main() -> None:
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100, help="steps per end-to-end fit (10 per epoch)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("lightning.pytorch").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        fit_seconds(tmp, 10, True)  # warm-up: imports, allocator, first TensorBoard writer
        base, spectral = [], []
        for _ in range(args.repeats):
            base.append(fit_seconds(tmp, args.steps, False))
            spectral.append(fit_seconds(tmp, args.steps, True))
        p = parts(tmp, args.repeats)
    b, s = statistics.median(base), statistics.median(spectral)
    print(f"end to end, {args.steps} steps × {args.repeats} interleaved repeats")
    print(f"  without callback: median {b:.2f} s  {[round(t, 2) for t in base]}")
    print(f"  with callback:    median {s:.2f} s  {[round(t, 2) for t in spectral]}")
    print(f"  ratio with/without: {s / b:.4f}  (overhead {100 * (s / b - 1):+.2f}%)")
    print("parts (medians): " + ", ".join(f"{k} {1000 * v:.1f} ms" for k, v in p.items()))
    for epochs in (10, 30, 100):
        draws = (epochs - 1) // SpectralBiasCallback().figure_every_n_epochs + 1
        cost = epochs * p["measure"] + draws * p["figures"] + p["final"]
        print(f"  {epochs:3d} epochs: overhead from parts {100 * cost / (epochs * p['epoch']):.2f}%")
    print(f"  per epoch without figures: {100 * p['measure'] / p['epoch']:.2f}%")


if __name__ == "__main__":
    main()
