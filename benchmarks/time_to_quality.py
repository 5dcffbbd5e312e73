"""Time to quality: wall-clock seconds and steps each image model needs to reach given held-out PSNRs.

    python benchmarks/time_to_quality.py [--psnr 20 22 24] [--max-steps 200] [--resolution 128] [--threads 1]
    python benchmarks/time_to_quality.py --device cuda --resolution 256 --max-steps 1000   # on a GPU

Models: the image configs' Gaussian Fourier features (image.yaml), SIREN (image.yaml + methods/siren.yaml) and hash grid
(image.yaml + methods/hashgrid.yaml), each eager, with torch.compile (``model.compile: true``) and with bf16-mixed precision;
and a hand-written loop of the Gaussian model (the same encoder, network, loss and Adam in plain PyTorch, the
fixed training batch encoded once). All run one after the other in this process on the same data: the
config's image at ``--resolution`` (``every_other`` split: train on the even pixels, score the odd ones); the
hash grid's finest level follows the training resolution, as its config sets it for 256².

The clock starts when training starts and stops while the held-out PSNR is measured (every ``--every``
steps, fp32, on the whole held-out split; on a GPU the device is drained before the clock is read); a
threshold's time is that clock at the first measurement at or above it, so torch.compile's compilation is inside the times, as a user pays it. A model that reaches every
threshold stops early; one that reaches none within ``--max-steps`` shows "—".
With ``--repeats`` > 1 the runs are interleaved and each cell is the median over the repeats (a threshold
missed in a repeat counts as missed).
"""

from __future__ import annotations

import statistics
import time

import lightning as L
import torch
from common import HandStep, as_train_py, instantiate, quiet

from inr.io.command_line import CommandParser
from inr.methods.training import quiet_trainer
from inr.metrics import psnr

MODELS = {"Gaussian": [], "SIREN": ["--config", "methods/siren.yaml"], "hash grid": ["--config", "methods/hashgrid.yaml"]}
VARIANTS = {"eager": ([], "32-true"), "compile": (["--model.init_args.compile", "true"], "32-true"), "bf16": ([], "bf16-mixed")}
EVAL_CHUNK = 65_536  # held-out points per forward pass: bounds the evaluation's memory


def overrides(method: list[str], resolution: int) -> list[str]:
    """Options after ``--config image.yaml``: the method's overlay, the image side and, for the hash grid, its
    finest level at the training pixels' resolution (every_other: half the side)."""
    args = [*method, "--data.init_args.resolution", str(resolution)]
    if "methods/hashgrid.yaml" in method:
        args += ["--model.init_args.encoder.init_args.finest_resolution", str(resolution // 2)]
    return args


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


@torch.no_grad()
def heldout_psnr(field, postprocess, dm, device: torch.device) -> float:
    """PSNR (dB, data range 1) of the prediction on the whole held-out split, fp32, in chunks, on ``device``."""
    chunks = dm.test_index.to(device).split(EVAL_CHUNK)
    preds = torch.cat([postprocess(field(dm.grid.coords(index)).float()) for index in chunks])
    return psnr(preds, dm.values[dm.test_index].to(device))


class QualityClock:
    """Training-time clock with pauses for evaluation; records (seconds, step) at the first evaluation at or
    above each PSNR threshold."""

    def __init__(self, thresholds: list[float]) -> None:
        self.thresholds = sorted(thresholds)
        self.reached: dict[float, tuple[float, int]] = {}
        self.final_psnr = float("nan")
        self.steps = 0
        self.start = time.perf_counter()
        self.paused = 0.0

    def check(self, step: int, psnr_fn) -> bool:
        """Evaluates at ``step`` (outside the clock); True once every threshold is reached."""
        sync()  # the queued steps belong to the training time
        elapsed = time.perf_counter() - self.start - self.paused
        t0 = time.perf_counter()
        self.final_psnr, self.steps = psnr_fn(), step
        self.paused += time.perf_counter() - t0
        for threshold in self.thresholds:
            if self.final_psnr >= threshold and threshold not in self.reached:
                self.reached[threshold] = (elapsed, step)
        return len(self.reached) == len(self.thresholds)


class EvaluateEvery(L.Callback):
    def __init__(self, clock: QualityClock, every: int) -> None:
        self.clock, self.every = clock, every

    def on_train_start(self, trainer, module) -> None:
        self.clock.start, self.clock.paused = time.perf_counter(), 0.0

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx) -> None:
        if trainer.global_step % self.every == 0:
            done = self.clock.check(
                trainer.global_step, lambda: heldout_psnr(module, module.postprocess, trainer.datamodule, module.device)
            )
            trainer.should_stop = trainer.should_stop or done


def framework_run(method: list[str], variant: str, args) -> QualityClock:
    extra, precision = VARIANTS[variant]
    model, dm, _ = instantiate("image.yaml", [*overrides(method, args.resolution), *extra])
    clock = QualityClock(args.psnr)
    accelerator = "gpu" if args.device == "cuda" else "cpu"
    trainer = quiet_trainer(
        args.max_steps, callbacks=[EvaluateEvery(clock, args.every)], accelerator=accelerator, precision=precision
    )
    trainer.fit(model, datamodule=dm)
    return clock


def hand_loop_run(args) -> QualityClock:
    """The Gaussian model as ``common.HandStep``: the fixed batch encoded once, the task's loss, the config's Adam;
    the encoding of the fixed batch is inside the clock, as the framework's first step computes it."""
    model, dm, _ = instantiate("image.yaml", overrides([], args.resolution))
    clock = QualityClock(args.psnr)
    clock.start = time.perf_counter()
    hand = HandStep(model, dm, args.device)
    device = torch.device(args.device)
    for step in range(1, args.max_steps + 1):
        hand.step()
        if step % args.every == 0 and clock.check(
            step, lambda: heldout_psnr(lambda x: hand.network(hand.encoder(x)), model.postprocess, dm, device)
        ):
            break
    return clock


def device_name(device: str) -> str:
    if device == "cuda":
        return f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}"
    return f"CPU, {torch.get_num_threads()} thread(s)"


def cell(clocks: list[QualityClock], threshold: float) -> str:
    hits = [c.reached.get(threshold) for c in clocks]
    if any(h is None for h in hits):
        return "—"
    return f"{statistics.median(h[0] for h in hits):.1f} s / {statistics.median(h[1] for h in hits):.0f}"


def main() -> None:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--psnr", type=float, nargs="+", default=[20.0, 22.0, 24.0], help="held-out PSNR thresholds (dB)")
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--every", type=int, default=10, help="steps between held-out evaluations")
    parser.add_argument("--resolution", type=int, default=128, help="image side; the configs use 256")
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="where every model trains")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device on this machine")
    quiet()
    as_train_py()
    if args.threads:
        torch.set_num_threads(args.threads)
    runs: dict[str, list[QualityClock]] = {}
    rows = [(m, v) for m in args.models for v in args.variants] + [("Gaussian", "hand-written loop")]
    for _ in range(args.repeats):
        for model, variant in rows:
            L.seed_everything(0, verbose=False)
            try:
                clock = hand_loop_run(args) if variant == "hand-written loop" else framework_run(MODELS[model], variant, args)
            except Exception as error:  # noqa: BLE001 - one broken row must not cost the others' figures
                print(f"  {model}, {variant}: FAILED: {type(error).__name__}: {error}", flush=True)
                continue
            runs.setdefault(f"{model} | {variant}", []).append(clock)
            print(
                f"  {model}, {variant}: {clock.steps} steps, held-out PSNR {clock.final_psnr:.2f} dB, "
                f"reached {sorted(clock.reached.items())}",
                flush=True,
            )
    print(
        f"\n{args.resolution}² image, every_other split; held-out PSNR every {args.every} steps (clock paused); "
        f"at most {args.max_steps} steps; {device_name(args.device)}; {args.repeats} repeat(s)"
    )
    head = " | ".join(f"{p:g} dB: s / steps" for p in sorted(args.psnr))
    print(f"| model | variant | {head} | last held-out PSNR (dB) at step |")
    print("|---|---|" + "---|" * len(args.psnr) + "---|")
    for name, clocks in runs.items():
        cells = " | ".join(cell(clocks, p) for p in sorted(args.psnr))
        last = statistics.median(c.final_psnr for c in clocks)
        print(f"| {name} | {cells} | {last:.2f} at {statistics.median(c.steps for c in clocks):.0f} |")


if __name__ == "__main__":
    main()
