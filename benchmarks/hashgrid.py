"""Hash-encoding forward+backward throughput on CPU, against variants measured side by side in one run.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/hashgrid.py                # 2^18 points, 2D and 3D
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/hashgrid.py --points 65536 --repeats 3
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/hashgrid.py --image-step  # the image configs' training steps
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/hashgrid.py --profile --dims 2  # where the vectorised step's time goes

Rows, each timed as forward + backward of sum(y²), repeats interleaved, median reported:
- ``vectorised``: ``HashGridEncoding`` as trained (dense and hashed levels each in one pass, index_add backward);
- ``per-level loop``: the same features one level at a time, each level with its own table;
- ``embedding_bag backward``: the vectorised forward with PyTorch's own embedding_bag backward;
- ``hash + MLP 2×64`` and ``Gaussian + MLP 3×256``: a whole training step of configs/methods/hashgrid.yaml's and
  configs/image.yaml's models (2D only), the Gaussian features computed once as the task caches them.
Ratios are against ``vectorised``, so they are comparable across machines; absolute times are not.

``--image-step`` instead times one full-batch training step (forward, MSE, backward, Adam) of the models of
configs/image.yaml (Gaussian features, cached as the task caches them), methods/siren.yaml and
methods/hashgrid.yaml on the 128² training pixels of the default image setup, interleaved, ratios against
the Gaussian model.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from inr.data.grid import Grid, split_indices
from inr.encoders import GaussianEncoding, HashGridEncoding
from inr.encoders.hashgrid import blend
from inr.io.command_line import CommandParser
from inr.networks import MLP, SIREN


def step(fn: Callable[[], torch.Tensor], params: list[torch.Tensor]) -> float:
    for p in params:
        p.grad = None
    start = time.perf_counter()
    fn().square().sum().backward()
    return time.perf_counter() - start


def per_level_loop(enc: HashGridEncoding, tables: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """One level at a time, each level with its own table (the usual pure-PyTorch layout)."""
    outs = []
    for level, table in enumerate(tables):
        index, weights = enc.corners_and_weights(x, range(level, level + 1))
        local = (index - int(enc.level_offsets[level]))[0]  # (1, N, 2^d) -> (N, 2^d)
        outs.append(blend(table, local, weights[0]))
    return torch.cat(outs, dim=1)  # L × (N, F) -> (N, L·F)


def builtin_backward(enc: HashGridEncoding, x: torch.Tensor) -> torch.Tensor:
    """The vectorised forward, blended by F.embedding_bag with PyTorch's own backward (it sorts the rows)."""
    index, weights = enc.corners_and_weights(x)
    c = index.shape[-1]
    out = F.embedding_bag(index.reshape(-1, c), enc.params, per_sample_weights=weights.reshape(-1, c), mode="sum")
    return out.reshape(enc.n_levels, len(x), -1).transpose(0, 1).reshape(len(x), -1)  # (L·N, F) -> (N, L·F)


def run(d: int, n_points: int, repeats: int) -> list[tuple[str, float]]:
    torch.manual_seed(0)
    enc = HashGridEncoding(in_dim=d)  # tiny-cuda-nn defaults: 16 levels × 2 features, 2^19, N_min 16, b = 2
    x = torch.rand(n_points, d)
    tables = [enc.level_table(l).detach().clone().requires_grad_(True) for l in range(enc.n_levels)]
    with torch.no_grad():  # the variants compute the same features
        reference = enc(x)
        torch.testing.assert_close(per_level_loop(enc, tables, x), reference)
        torch.testing.assert_close(builtin_backward(enc, x), reference)
    variants: dict[str, tuple[Callable[[], torch.Tensor], list[torch.Tensor]]] = {
        "vectorised": (lambda: enc(x), [enc.params]),
        "per-level loop": (lambda: per_level_loop(enc, tables, x), tables),
        "embedding_bag backward": (lambda: builtin_backward(enc, x), [enc.params]),
    }
    if d == 2:
        small = MLP(enc.out_dim, 3, width=64, depth=2, output_activation="sigmoid")
        gauss = GaussianEncoding(in_dim=2, num_features=256, sigma=10.0)
        big = MLP(gauss.out_dim, 3, width=256, depth=3, output_activation="sigmoid")
        features = gauss(x)  # fixed features: encoded once, as the task's cache_encoding does
        variants["hash + MLP 2×64 (step)"] = (lambda: small(enc(x)), [enc.params, *small.parameters()])
        variants["Gaussian + MLP 3×256 (step)"] = (lambda: big(features), list(big.parameters()))
    times: dict[str, list[float]] = {name: [] for name in variants}
    for fn, params in variants.values():  # warm-up
        step(fn, params)
    for _ in range(repeats):
        for name, (fn, params) in variants.items():
            times[name].append(step(fn, params))
    return [(name, statistics.median(ts)) for name, ts in times.items()]


def image_steps(repeats: int) -> list[tuple[str, float, int]]:
    """Seconds per training step and parameter count of the three image configs' models."""
    torch.manual_seed(0)
    index, _ = split_indices((256, 256), "every_other")["train"]
    coords, target = Grid((256, 256)).coords(index), torch.rand(len(index), 3)  # (16384, 2), (16384, 3)
    gauss = GaussianEncoding(in_dim=2, num_features=256, sigma=10.0)
    hashgrid = HashGridEncoding(in_dim=2, finest_resolution=128)
    models = {  # (trainable modules, features -> prediction, lr, Adam extras) as in the configs
        "ReLU MLP 3×256 + Gaussian": ([MLP(512, 3, width=256, depth=3, output_activation="sigmoid")], gauss(coords), 1e-3, {}),
        "SIREN 4×256": ([SIREN(2, 3, width=256, depth=4)], coords, 5e-4, {}),
        "hash grid + MLP 2×64": (
            [hashgrid, MLP(32, 3, width=64, depth=2, output_activation="sigmoid")],
            coords,
            1e-2,
            {"betas": (0.9, 0.99), "eps": 1e-15},
        ),
    }
    runs = {}
    for name, (modules, inputs, lr, extra) in models.items():
        net = torch.nn.Sequential(*modules)
        runs[name] = (net, inputs, torch.optim.Adam(net.parameters(), lr=lr, **extra))

    def train_step(net, inputs, opt) -> float:
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        F.mse_loss(net(inputs), target).backward()
        opt.step()
        return time.perf_counter() - start

    times: dict[str, list[float]] = {name: [] for name in runs}
    for run_ in runs.values():  # warm-up
        train_step(*run_)
    for _ in range(repeats):
        for name, run_ in runs.items():
            times[name].append(train_step(*run_))
    return [(name, statistics.median(times[name]), sum(p.numel() for p in runs[name][0].parameters())) for name in runs]


def profile_vectorised(d: int, n_points: int, steps: int = 3) -> None:
    """torch.profiler table of the vectorised forward + backward, ops grouped by input shape, with each
    op's share of the total self time."""
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    enc = HashGridEncoding(in_dim=d)
    x = torch.rand(n_points, d)
    for _ in range(2):  # warm-up
        step(lambda: enc(x), [enc.params])
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(steps):
            step(lambda: enc(x), [enc.params])
    events = [e for e in prof.key_averages(group_by_input_shape=True) if e.key.startswith("aten::")]
    total = sum(e.self_cpu_time_total for e in events)
    print(f"\n{d}D vectorised, {steps} steps: aten self time {total / 1e6:.3f} s")
    print(f"{'op':24s} {'share':>6s}  input shapes")
    for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[:12]:
        print(f"{e.key:24s} {e.self_cpu_time_total / total:6.1%}  {e.input_shapes}")


def main() -> None:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=2**18)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--image-step", action="store_true", help="time the image configs' training steps instead")
    parser.add_argument("--profile", action="store_true", help="profile the vectorised encoding instead")
    args = parser.parse_args()
    if args.profile:
        for d in args.dims:
            profile_vectorised(d, args.points)
        return
    if args.image_step:
        rows = image_steps(max(args.repeats, 10))
        print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), 16384 points, median of {max(args.repeats, 10)}")
        print(f"{'model':28s} {'s/step':>8s} {'params':>9s} {'time / Gaussian':>16s}")
        for name, t, n in rows:
            print(f"{name:28s} {t:8.3f} {n:9d} {t / rows[0][1]:16.2f}")
        return
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {args.points} points, median of {args.repeats}")
    for d in args.dims:
        rows = run(d, args.points, args.repeats)
        base = rows[0][1]
        print(f"\n{d}D, forward+backward")
        print(f"{'variant':30s} {'s/step':>8s} {'points/s':>12s} {'time / vectorised':>18s}")
        for name, t in rows:
            print(f"{name:30s} {t:8.3f} {args.points / t:12.3g} {t / base:18.2f}")


if __name__ == "__main__":
    main()
