"""The first steps of one fit of ``inr.experiments.inverse``, traced: why a sigmoid network can collapse to a constant.

    python examples/first_steps.py --task mri --resolution 32 --seed 3 --init-seed 0 --method positional --steps 12

For each output bias (``init``: the paper's draw; ``data``: the mean the measurements give, ``inr.tasks.output_bias``)
the same network as the comparison's row — the same seed, mapping, learning rate and Adam — takes ``--steps``
full-batch steps through the operator; after each step it prints the mean of the network's output over the grid
and the share of the last hidden layer's ReLUs that are zero on every grid point (dead: no gradient reaches their
weights again). Adam's first step moves every parameter by about the learning rate in the direction that lowers
the loss; when the output starts far above a dark object's mean, all of them push it down at once.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from jsonargparse import ActionConfigFile, ArgumentParser

from inr.experiments.comparison import Member, context, parse
from inr.experiments.inverse import Inverse
from inr.tasks.output_bias import constant_fit, set_output_bias


def trace(
    task: str,
    resolution: int,
    seed: int,
    init_seed: Optional[int],
    method: str,
    steps: int,
    bias: str,
    lr: Optional[float] = None,
) -> dict[str, Any]:
    """The truth's mean and, after 0, 1, …, ``steps`` steps, (the output's mean, the dead share of the last hidden
    layer's units) of ``method``'s network for problem ``seed`` with output bias ``bias`` (``lr``: Adam's rate in
    place of the protocol's)."""
    c = Inverse()
    argv = ["--task", task, "--resolution", str(resolution), "--seed", str(seed), "--output-bias", bias]
    p = c.protocol(parse(c, argv + ([] if init_seed is None else ["--init-seed", str(init_seed)])))
    row = context(c, p, method, Member(None, seed))  # the comparison's row: its data and spec
    data, spec = row.data, row.spec
    model = c.model(row)
    operator, y = data.operator, data.measurements
    if bias == "data":  # what the task does at its first fit
        set_output_bias(model.network, constant_fit(operator, y, data.out_channels))
    optimizer = torch.optim.Adam(model.parameters(), lr=spec.lr if lr is None else lr)
    features = model.encoder(data.grid.coords(torch.arange(data.grid.numel)))  # (N, d) -> (N, F)
    layers = list(model.network)
    hidden = torch.nn.Sequential(*layers[:-2])  # up to the last ReLU; then the output layer and the sigmoid
    trail = []
    for k in range(steps + 1):
        with torch.no_grad():
            h = hidden(features)
            trail.append((float(model.network(features).mean()), float((h.amax(0) <= 0).float().mean())))
        if k == steps:
            break
        field = model.network(features)  # (N, C)
        measured = operator(field.T.reshape(data.out_channels, *operator.field_shape))
        loss = (measured - y).abs().square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"truth_mean": float(data.values_grid().mean()), "trail": trail}


def main(argv: Optional[list[str]] = None) -> dict[str, dict[str, Any]]:
    parser = ArgumentParser(prog="python examples/first_steps.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", action=ActionConfigFile, help="a YAML file of these options (--print_config writes one)")
    parser.add_argument("--task", default="mri", help="an inverse problem of inr.experiments.problems")
    parser.add_argument("--resolution", type=int, default=32)
    parser.add_argument("--seed", type=int, default=3, help="the problem's seed (phantom, mask)")
    parser.add_argument("--init-seed", type=Optional[int], default=0, help="the network's seed (null: the problem's)")
    parser.add_argument("--method", default="positional")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--lr", type=Optional[float], default=None, help="Adam's rate (null: the protocol's)")
    args = parser.parse_args(argv)
    out = {}
    for bias in ("init", "data"):
        out[bias] = trace(args.task, args.resolution, args.seed, args.init_seed, args.method, args.steps, bias, args.lr)
        steps = ", ".join(f"{k}: {m:.3f} / {d:.2f}" for k, (m, d) in enumerate(out[bias]["trail"]))
        print(f"output bias {bias} (the truth's mean {out[bias]['truth_mean']:.3f}); step: output mean / dead units")
        print(f"  {steps}", flush=True)
    return out


if __name__ == "__main__":
    main()
