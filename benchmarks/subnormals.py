"""What subnormal floats cost a CPU training step of the Gaussian-window networks, side by side.

    python benchmarks/subnormals.py [--rows gauss wire siren] [--points 4096] [--steps 60] [--threads 2]
    python benchmarks/subnormals.py --cutoff 1.18e-38      # the flushed copy with another threshold τ
    python benchmarks/subnormals.py --rows gauss --threads 1 --torch-flush-denormal   # the CPU's own flush mode

The windows e^{−(s z)²} of ``GaussMLP`` and of WIRE's Gabor wavelet fall below the smallest normal float32
(1.2e-38) in their tails, and CPU arithmetic on subnormal numbers is several times slower;
``inr.networks.layers.flush_negligible`` sets window values under τ = tiny/ε (9.9e-32) to 0 (``--cutoff``: the
flushed copy uses another τ instead, to compare thresholds). (The MFN's Gabor filters, with
their small γ, produced none in this test and are left as they are.) For each row, two copies of
the network start from the same weights and train in lockstep on the same batch (random coordinates in
[0, 1)², random RGB targets, Adam at the row's learning rate): one as shipped, one with the flush replaced by
the identity. Their steps alternate, so both see the same machine load; printed per row: the median step of
each over the last half of the steps (when the tails have grown), the ratio unflushed / flushed, and the
share of the unflushed copy's activations that were subnormal at the end. SIREN (no window) is the control:
its ratio should be 1.
"""

from __future__ import annotations

import statistics
import time

import torch

import inr.networks.gauss as gauss_module
import inr.networks.wire as wire_module
from inr.io.command_line import CommandParser
from inr.networks import SIREN, WIRE, GaussMLP

# the rows' networks and Adam learning rates, as configs/image_<row>.yaml
ROWS = {
    "gauss": (lambda: GaussMLP(2, 3), 2e-3),
    "wire": (lambda: WIRE(2, 3), 1e-3),
    "siren": (lambda: SIREN(2, 3), 5e-4),
}
MODULES = (gauss_module, wire_module)
TINY = torch.finfo(torch.float32).tiny


def flushing(enabled: bool) -> None:
    """Point the networks' window flush at the real one (or the ``--cutoff`` one) or at the identity."""
    for module in MODULES:
        module.flush_negligible = FLUSH if enabled else (lambda window, inplace=False: window)


FLUSH = gauss_module.flush_negligible  # the shipped one, until --cutoff replaces it


def threshold_at(cutoff: float):
    return lambda window, inplace=False: torch.nn.functional.threshold(window, cutoff, 0.0, inplace=inplace)


def subnormal_share(net: torch.nn.Module, x: torch.Tensor) -> float:
    counts = [0, 0]

    def count(_module, _inputs, out):
        if isinstance(out, torch.Tensor):
            counts[0] += int(((out != 0) & (out.abs() < TINY)).sum())
            counts[1] += out.numel()

    hooks = [m.register_forward_hook(count) for m in net.modules() if not list(m.children())]
    with torch.no_grad():
        net(x)
    for hook in hooks:
        hook.remove()
    return counts[0] / max(counts[1], 1)


def run_row(name: str, points: int, steps: int) -> dict:
    make, lr = ROWS[name]
    generator = torch.Generator().manual_seed(0)
    x, y = torch.rand(points, 2, generator=generator), torch.rand(points, 3, generator=generator)
    torch.manual_seed(0)
    nets = {"flushed": make()}
    nets["unflushed"] = make()
    nets["unflushed"].load_state_dict(nets["flushed"].state_dict())
    optimizers = {key: torch.optim.Adam(net.parameters(), lr) for key, net in nets.items()}
    times: dict[str, list[float]] = {key: [] for key in nets}
    for _ in range(steps):
        for key, net in nets.items():
            flushing(key == "flushed")
            start = time.perf_counter()
            loss = (net(x) - y).square().mean()
            optimizers[key].zero_grad(set_to_none=True)
            loss.backward()
            optimizers[key].step()
            times[key].append(time.perf_counter() - start)
    flushing(False)
    share = subnormal_share(nets["unflushed"], x)
    flushing(True)
    half = steps // 2
    medians = {key: 1e3 * statistics.median(t[half:]) for key, t in times.items()}
    return {"row": name, **medians, "ratio": medians["unflushed"] / medians["flushed"], "subnormal": share}


def main() -> None:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", choices=sorted(ROWS), default=["gauss", "wire", "siren"])
    parser.add_argument("--points", type=int, default=64 * 64, help="batch: 4096 = the 128² protocol's training pixels")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--cutoff", type=float, default=None, help="τ of the flushed copy (default: the shipped tiny/ε)")
    parser.add_argument(
        "--torch-flush-denormal",
        action="store_true",
        help="torch.set_flush_denormal(True) before any work: the worker threads started later inherit the mode",
    )
    args = parser.parse_args()
    global FLUSH
    if args.cutoff is not None:
        FLUSH = threshold_at(args.cutoff)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.torch_flush_denormal and not torch.set_flush_denormal(True):
        raise SystemExit("torch.set_flush_denormal is not supported on this CPU")
    tau = "shipped τ = tiny/ε" if args.cutoff is None else f"τ = {args.cutoff:g}"
    tau += ", torch.set_flush_denormal(True)" if args.torch_flush_denormal else ""
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.points} points, {args.steps} steps per copy, {tau}"
    )
    print("| row | flushed (ms/step) | unflushed (ms/step) | unflushed / flushed | subnormal activations, unflushed |")
    print("|---|---:|---:|---:|---:|")
    for name in args.rows:
        r = run_row(name, args.points, args.steps)
        print(
            f"| {name} | {r['flushed']:.1f} | {r['unflushed']:.1f} | {r['ratio']:.2f} | {100 * r['subnormal']:.3f} % |",
            flush=True,
        )


if __name__ == "__main__":
    main()
