"""Hash-encoding forward+backward throughput on CPU, against variants measured side by side in one run.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/hashgrid.py                # 2^18 points, 2D and 3D
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/hashgrid.py --points 65536 --repeats 3

Rows, each timed as forward + backward of sum(y²), repeats interleaved, median reported:
- ``vectorised``: ``HashGridEncoding`` as trained (dense and hashed levels each in one pass, index_add backward);
- ``per-level loop``: the same features one level at a time, each level with its own table;
- ``embedding_bag backward``: the vectorised forward with PyTorch's own embedding_bag backward;
- ``hash + MLP 2×64`` and ``Gaussian + MLP 3×256``: a whole training step of configs/image_hashgrid.yaml's and
  configs/image.yaml's models (2D only), the Gaussian features computed once as the task caches them.
Ratios are against ``vectorised``, so they are comparable across machines; absolute times are not.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from inr.encoders import GaussianEncoding, HashGridEncoding
from inr.encoders.hashgrid import blend
from inr.networks import MLP


def step(fn: Callable[[], torch.Tensor], params: list[torch.Tensor]) -> float:
    for p in params:
        p.grad = None
    start = time.perf_counter()
    fn().square().sum().backward()
    return time.perf_counter() - start


def level_blocks(enc: HashGridEncoding) -> list[tuple[range, bool]]:
    return [(r, h) for r, h in ((range(enc.dense_levels), False), (range(enc.dense_levels, enc.n_levels), True)) if len(r)]


def per_level_loop(enc: HashGridEncoding, tables: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """One level at a time, each level with its own table (the usual pure-PyTorch layout)."""
    outs = []
    for level, table in enumerate(tables):
        index, weights = enc.corners_and_weights(x, range(level, level + 1), hashed=level >= enc.dense_levels)
        local = (index - int(enc.level_offsets[level]))[0]  # (1, N, 2^d) -> (N, 2^d)
        outs.append(blend(table, local, weights[0]))
    return torch.cat(outs, dim=1)  # L × (N, F) -> (N, L·F)


def builtin_backward(enc: HashGridEncoding, x: torch.Tensor) -> torch.Tensor:
    """The vectorised forward, blended by F.embedding_bag with PyTorch's own backward (it sorts the rows)."""
    outs = []
    for levels, hashed in level_blocks(enc):
        index, weights = enc.corners_and_weights(x, levels, hashed)
        c = index.shape[-1]
        out = F.embedding_bag(index.reshape(-1, c), enc.params, per_sample_weights=weights.reshape(-1, c), mode="sum")
        outs.append(out.reshape(len(levels), len(x), -1).transpose(0, 1).reshape(len(x), -1))  # (L'·N, F) -> (N, L'·F)
    return torch.cat(outs, dim=1)


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
    for name, (fn, params) in variants.items():  # warm-up
        step(fn, params)
    for _ in range(repeats):
        for name, (fn, params) in variants.items():
            times[name].append(step(fn, params))
    return [(name, statistics.median(ts)) for name, ts in times.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=2**18)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 3])
    args = parser.parse_args()
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
