"""Training-step speed of an inverse task (CT through 20 projections) against a hand-written PyTorch loop,
and where the step's time goes.

    python benchmarks/inverse_step.py [--config ct.yaml] [--steps 20] [--repeats 5] [--override --data.init_args.resolution 64]

Variants, interleaved in each repeat (ratios are formed within a repeat, then their median and range):
  - hand loop: the same encoder, network, operator and Adam in plain PyTorch; the fixed grid's encoding is
    computed once (as the framework's cache does), then per step f = net(γ), A(f), mean |A f − y|², backward;
  - the framework as configured (``InverseFitting`` in a real ``Trainer.fit``, no callbacks);
  - the hand loop's two halves alone, with the same shapes: the network's forward + backward (loss on the
    field itself) and the operator's forward + backward (a leaf image through A).
Per-step time is the median gap between consecutive steps (framework: ``on_train_batch_end`` calls).
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
    set_threads,
)

from inr.io.command_line import CommandParser


def hand_loop(config: str, clock: StepClock, part: str = "all", extra: tuple = ()) -> float:
    """Median step time of the hand-written loop; ``part`` = all | network | operator.

    Written out here rather than ``common.HandStep``: the loss is not the field's own against target values but
    the measurement operator's output against the measurements, and the two halves are timed apart."""
    model, dm, _ = instantiate(config, extra)
    dm.setup("fit")
    encoder, network, operator = model.encoder, model.network, dm.operator
    y = dm.measurements
    shape, channels = dm.shape, dm.out_channels
    with torch.no_grad():
        features = encoder(dm.grid.coords(dm.train_index))  # (N, m): fixed, encoded once
    image = torch.rand(channels, *shape, requires_grad=True)
    params = list(network.parameters()) if part != "operator" else [image]
    optimizer = model.optimizer_factory(params)  # the config's optimizer
    for _ in range(clock.runs):
        if part == "operator":
            loss = (operator(image) - y).abs().square().mean()
        else:
            field = network(features)  # (N, C)
            if part == "network":
                loss = field.square().mean()
            else:
                loss = (operator(field.T.reshape(channels, *shape)) - y).abs().square().mean()  # (N, C) -> (C, *shape)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        clock.stamp()
    return clock.median()


def main() -> None:
    parser = CommandParser(
        description=__doc__.splitlines()[0], run_config="the task's config (default ct.yaml)", config_default="ct.yaml"
    )
    add_step_arguments(parser, steps=20, warmup=3, repeats=5)
    add_override_argument(parser, "--data.init_args.resolution 64")
    args = parser.parse_args()
    quiet()
    as_train_py()
    set_threads(args.threads)
    extra = tuple(args.override)
    L.seed_everything(0, verbose=False)

    def clock() -> StepClock:
        return StepClock(args.warmup, args.steps)

    runs = interleave(
        {
            "hand loop": lambda: hand_loop(args.config, clock(), extra=extra),
            "framework (as configured)": lambda: framework_step(args.config, clock(), extra).median(),
            "network forward + backward alone": lambda: hand_loop(args.config, clock(), "network", extra),
            "operator forward + backward alone": lambda: hand_loop(args.config, clock(), "operator", extra),
        },
        args.repeats,
    )
    base = runs["hand loop"]
    print(
        f"\n{args.config} {' '.join(extra)}: {torch.get_num_threads()} threads; median of {args.repeats} interleaved runs × {args.steps} steps"
    )
    print("| variant | step (ms) | ratio vs hand loop (range) |\n|---|---:|---|")
    for name, values in runs.items():
        print(f"| {name} | {statistics.median(values) * 1e3:.1f} | {cell(paired_ratios(values, base), 3, 2)} |")


if __name__ == "__main__":
    main()
