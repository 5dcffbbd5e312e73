"""Rays per second of a radiance field's training step (nerf.yaml) against a hand-written PyTorch loop.

    python benchmarks/nerf_step.py [--config nerf.yaml] [--steps 20] [--repeats 5] [--threads 1] [--override KEY VALUE ...]

Variants, interleaved in each repeat (ratios are formed within a repeat, then their median and range):
  - hand loop: the same encoder and network in plain PyTorch, written out here without the framework's
    renderer: every training ray (origin, direction, colour) is computed once, and each step draws
    ``batch_size`` of them, clips them to the scene box (slab test), takes S jittered stratified samples,
    evaluates the field, composites C = Σ T_i (1 − e^{−σ_i δ_i}) c_i + T_S c_bg, and steps Adam on the mean
    squared error;
  - the framework as configured (``RadianceFieldFitting`` in a real ``Trainer.fit``: its rays gathered by
    index from the poses every step, its ``VolumeRenderer``, metrics and logging hooks; no callbacks).
Per-step time is the median gap between consecutive steps (framework: ``on_train_batch_end`` calls);
rays/s = batch_size / step time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import lightning as L
import torch
from training_step import framework_step, instantiate, median_step

from inr.io.threads import torch_threads
from inr.tasks.radiance import DENSITY_ACTIVATIONS

# a direction component below this is parallel to the box faces it would cross (as the renderer's slab test)
PARALLEL_EPS = 1e-12


def hand_loop(config: str, steps: int, warmup: int, extra: tuple = ()) -> tuple[float, int]:
    """Median step time of the hand-written loop, and its rays per step."""
    model, dm, _ = instantiate(config, list(extra))
    dm.setup("fit")
    encoder, network = model.encoder, model.network
    activation = DENSITY_ACTIVATIONS[model.density_activation]  # the config's σ = activation(raw₀)
    samples, batch = model.renderer.samples, dm.batch_size
    index = dm.train_index
    origins, directions = dm.rays(index)  # (R, 3) each: every training ray, once
    colours = dm.values[index]  # (R, 3)
    lo, hi = torch.full((3,), -dm.bound), torch.full((3,), dm.bound)
    background = torch.tensor(dm.background)
    fractions = torch.linspace(0.0, 1.0, samples + 1)[:-1]  # bin starts as fractions of [t0, t1]
    optimizer = torch.optim.Adam(network.parameters(), lr=5e-3)
    gen = torch.Generator().manual_seed(0)
    stamps = []
    for _ in range(steps + warmup + 1):
        pick = torch.randint(len(index), (batch,), generator=gen)
        o, d, target = origins[pick], directions[pick], colours[pick]
        safe = torch.where(d.abs() < PARALLEL_EPS, torch.full_like(d, PARALLEL_EPS), d)
        t_lo, t_hi = (lo - o) / safe, (hi - o) / safe
        t0 = torch.minimum(t_lo, t_hi).amax(-1).clamp(min=dm.near)
        t1 = torch.maximum(torch.maximum(t_lo, t_hi).amin(-1).clamp(max=dm.far), t0)
        width = (t1 - t0) / samples  # (B,)
        t = t0[:, None] + (t1 - t0)[:, None] * fractions + width[:, None] * torch.rand(batch, samples, generator=gen)  # (B, S)
        points = o[:, None, :] + t[..., None] * d[:, None, :]  # (B, S, 3)
        raw = network(encoder(((points - lo) / (hi - lo)).reshape(-1, 3))).reshape(batch, samples, -1)  # (B·S, 4) -> (B, S, 4)
        density, colour = activation(raw[..., 0]), torch.sigmoid(raw[..., 1:])
        optical = density * (width * d.norm(dim=-1))[:, None]  # σ_i δ_i
        weights = torch.exp(-(torch.cumsum(optical, -1) - optical)) * (1.0 - torch.exp(-optical))
        rgb = (weights[..., None] * colour).sum(1) + (1.0 - weights.sum(1))[:, None] * background
        loss = (rgb - target).square().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        stamps.append(time.perf_counter())
    return median_step(stamps, warmup), batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="nerf.yaml")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument(
        "--override", nargs=argparse.REMAINDER, default=[], help="config overrides, e.g. --data.init_args.batch_size 256"
    )
    args = parser.parse_args()
    extra = tuple(args.override)
    L.seed_everything(0, verbose=False)
    runs: dict[str, list[float]] = {"hand loop": [], "framework (as configured)": []}
    batch = 0
    with torch_threads(args.threads):
        for _ in range(args.repeats):
            step, batch = hand_loop(args.config, args.steps, args.warmup, extra)
            runs["hand loop"].append(step)
            runs["framework (as configured)"].append(framework_step(args.config, args.steps, args.warmup, extra=extra))
        threads = torch.get_num_threads()
    base = runs["hand loop"]
    print(
        f"\n{args.config} {' '.join(extra)}: {batch} rays per step, {threads} threads; median of {args.repeats} interleaved runs × {args.steps} steps"
    )
    print("| variant | step (ms) | rays/s | ratio of step time vs hand loop (range) |\n|---|---:|---:|---|")
    for name, values in runs.items():
        ratios = [t / b for t, b in zip(values, base)]
        step = statistics.median(values)
        print(
            f"| {name} | {step * 1e3:.1f} | {batch / step:,.0f} | {statistics.median(ratios):.3f} ({min(ratios):.2f}–{max(ratios):.2f}) |"
        )


if __name__ == "__main__":
    main()
