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

import statistics

import lightning as L
import torch
from common import (
    StepClock,
    add_override_argument,
    add_step_arguments,
    as_train_py,
    cell,
    framework_step,
    instantiate,
    interleave,
    paired_ratios,
    quiet,
)

from inr.io.command_line import CommandParser
from inr.io.threads import torch_threads
from inr.tasks.radiance import DENSITY_ACTIVATIONS

# a direction component below this is parallel to the box faces it would cross (as the renderer's slab test)
PARALLEL_EPS = 1e-12


def hand_loop(config: str, clock: StepClock, extra: tuple = ()) -> tuple[float, int]:
    """Median step time of the hand-written loop, and its rays per step.

    Written out here rather than ``common.HandStep``: a radiance field's step renders rays (sampling along them,
    compositing), which a field's loss on grid points does not."""
    model, dm, _ = instantiate(config, extra)
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
    optimizer = model.optimizer_factory(network.parameters())  # the config's optimizer
    gen = torch.Generator().manual_seed(0)
    for _ in range(clock.runs):
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
        clock.stamp()
    return clock.median(), batch


def main() -> None:
    parser = CommandParser(
        description=__doc__.splitlines()[0], run_config="the task's config (default nerf.yaml)", config_default="nerf.yaml"
    )
    add_step_arguments(parser, steps=20, warmup=3, repeats=5)
    add_override_argument(parser, "--data.init_args.batch_size 256")
    args = parser.parse_args()
    quiet()
    as_train_py()
    extra = tuple(args.override)
    L.seed_everything(0, verbose=False)

    def clock() -> StepClock:
        return StepClock(args.warmup, args.steps)

    rays: list[int] = []  # per step, as the hand loop reads it from the config

    def hand() -> float:
        step, batch = hand_loop(args.config, clock(), extra)
        rays[:] = [batch]
        return step

    with torch_threads(args.threads):
        runs = interleave(
            {"hand loop": hand, "framework (as configured)": lambda: framework_step(args.config, clock(), extra).median()},
            args.repeats,
        )
        threads = torch.get_num_threads()
    batch = rays[0]
    base = runs["hand loop"]
    print(
        f"\n{args.config} {' '.join(extra)}: {batch} rays per step, {threads} threads; median of {args.repeats} interleaved runs × {args.steps} steps"
    )
    print("| variant | step (ms) | rays/s | ratio of step time vs hand loop (range) |\n|---|---:|---:|---|")
    for name, values in runs.items():
        step = statistics.median(values)
        print(f"| {name} | {step * 1e3:.1f} | {batch / step:,.0f} | {cell(paired_ratios(values, base), 3, 2)} |")


if __name__ == "__main__":
    main()
