"""Step time of an inverse config over a whole run under the paper's and PyTorch's initialisation, side by side, and
the share of subnormal floats in activations, gradients and Adam's moments as the run goes on.

    python benchmarks/inverse_init.py [--config ct.yaml] [--steps 1000] [--block 50] [--threads 2]

Two copies of the config's problem (``ct.yaml``: 128², 20 angles, Gaussian features, 3 × 256 ReLU MLP) train in a
hand-written loop (the config's encoder, network, operator and Adam; the fixed grid's encoding computed once, as
the framework's cache does), one with ``init: paper`` and one with ``init: torch``; they alternate in blocks of
``--block`` steps, so both see the same machine load. Per block and copy: the mean step time, the loss, and the
largest share of subnormal values (0 < |x| < 1.18e-38 in float32) over the network's layer outputs, gradients
and Adam's ``exp_avg`` / ``exp_avg_sq`` tensors. A dead ReLU unit's gradient is exactly 0, so its ``exp_avg``
decays by β₁ = 0.9 a step and reaches the subnormal range some hundreds of steps after the unit died (from
about step 650 of ``ct.yaml``, benchmarks/README.md); CPU arithmetic on
subnormals is slower, and this shows whether it costs the step anything. Printed at the end: the median block
time of each copy over the second half of the run and their ratio.
"""

from __future__ import annotations

import statistics
import time

import lightning as L
import torch
from common import as_train_py, instantiate, quiet, set_threads

from inr.io.command_line import CommandParser
from inr.tasks.optimizers import make_optimizer

TINY = torch.finfo(torch.float32).tiny


def subnormal_share(tensors) -> float:
    """The largest share, over ``tensors``, of entries with 0 < |x| < tiny (float32's smallest normal)."""
    return max((((t != 0) & (t.abs() < TINY)).float().mean().item() for t in tensors), default=0.0)


class Copy:
    """One initialisation's problem and its optimizer, stepped by hand."""

    def __init__(self, config: str, init: str) -> None:
        L.seed_everything(0, verbose=False)
        model, dm, _ = instantiate(config, ["--model.init_args.network.init_args.init", init])
        dm.setup("fit")
        self.network, self.operator, self.y = model.network, dm.operator, dm.measurements
        self.shape, self.channels = dm.shape, dm.out_channels
        with torch.no_grad():
            self.features = model.encoder(dm.grid.coords(dm.train_index))  # (N, m): fixed, encoded once
        self.optimizer = make_optimizer(model.optimizer_factory, list(self.network.parameters()))
        self.outputs: list[torch.Tensor] = []
        for layer in self.network.modules():
            if isinstance(layer, torch.nn.Linear):
                layer.register_forward_hook(lambda _m, _i, out: self.outputs.append(out.detach()))
        self.loss = float("nan")

    def step(self) -> None:
        self.outputs.clear()
        field = self.network(self.features)  # (N, C)
        loss = (self.operator(field.T.reshape(self.channels, *self.shape)) - self.y).abs().square().mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.loss = loss.item()

    def shares(self) -> dict[str, float]:
        state = [self.optimizer.state[p] for p in self.network.parameters() if p in self.optimizer.state]
        return {
            "act": subnormal_share(self.outputs),
            "grad": subnormal_share(p.grad for p in self.network.parameters() if p.grad is not None),
            "m": subnormal_share(s["exp_avg"] for s in state),
            "v": subnormal_share(s["exp_avg_sq"] for s in state),
        }


def main() -> None:
    parser = CommandParser(
        description=__doc__.splitlines()[0], run_config="the task's config (default ct.yaml)", config_default="ct.yaml"
    )
    parser.add_argument("--steps", type=int, default=1000, help="steps of each copy (the config's run: 1000)")
    parser.add_argument("--block", type=int, default=50, help="steps of one copy before the other runs")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    quiet()
    as_train_py()
    set_threads(args.threads)
    copies = {init: Copy(args.config, init) for init in ("paper", "torch")}
    times: dict[str, list[float]] = {init: [] for init in copies}
    print(f"{args.config}: {torch.get_num_threads()} threads; blocks of {args.block} steps, alternating")
    for start in range(0, args.steps, args.block):
        cells = [f"steps {start:5d}–{start + args.block:5d}"]
        for init, c in copies.items():
            t0 = time.perf_counter()
            for _ in range(args.block):
                c.step()
            times[init].append((time.perf_counter() - t0) / args.block)
            s = c.shares()
            cells.append(
                f"{init}: {times[init][-1] * 1e3:6.1f} ms/step, loss {c.loss:.2e}, subnormal act {s['act']:.3f} "
                f"grad {s['grad']:.3f} m {s['m']:.3f} v {s['v']:.3f}"
            )
        print(" | ".join(cells), flush=True)
    half = {init: statistics.median(t[len(t) // 2 :]) for init, t in times.items()}
    print(
        f"second half, median block: paper {half['paper'] * 1e3:.1f} ms/step, torch {half['torch'] * 1e3:.1f} ms/step, "
        f"ratio paper/torch {half['paper'] / half['torch']:.3f}"
    )


if __name__ == "__main__":
    main()
