"""The inner rate of MAML and Meta-SGD on CT phantoms (``inr.methods.meta.META["ct"]``): for each rate, what the first
inner SGD steps do from the driver's θ₀, then the held-out PSNR of an init meta-trained a few outer steps at it.

    python benchmarks/maml_ct_inner_rate.py [--rates 1,3,10] [--steps 10] [--threads 1] [--out DIR]

θ₀ is the study's network (the registry's Gaussian features, the paper's 3 × 256 ReLU MLP with a sigmoid output)
drawn as ``inr.methods.meta.meta_train`` draws it (seed 0). From θ₀, on the first 4 training phantoms (64², 20
angles, the study's ``SignalSet``), two differentiable SGD steps at the rate (MAML's inner loop) give: the members'
mean loss |A f − y|² at θ₀, after one and after two steps; the output layer's pre-activation z (the sigmoid's input)
over the grid after one step, its range, and the fraction of the grid where the sigmoid is saturated (σ(z) < 10⁻³ or
> 1 − 10⁻³, where its gradient is below 10⁻³); and the norm of the outer gradient ∇_θ of the loss after the two
steps. Then MAML with ``META["ct"]["maml"]``'s settings but the rate runs ``--steps`` outer steps (256 training and
8 test phantoms, the study's) and the test phantoms are scored after 0, 1, 2, 5 and 10 SGD steps at the rate
(``MetaLearning.evaluate``; PSNR in dB, mean over the test phantoms). The trials look at the test phantoms: there is
no third split.

Printed: one Markdown table, a row per rate, with each trial's wall seconds (they depend on the machine's load).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from inr.io.command_line import CommandParser

EVAL_STEPS = (0, 1, 2, 5, 10)
SATURATED = 1e-3  # σ(z) below this or above 1 − this: the sigmoid's gradient σ(1 − σ) is below it
COLUMNS = ("L@0", "L@1", "L@2", "z after 1 step", "saturated", "‖∇θ‖")


def study_parts(train_signals: int, test_signals: int, resolution: int | None, out: Path):
    """The CT study's protocol, signal set, network (``Resolved``, the paper's init) and task name."""
    from inr.experiments.comparison import Context, Member, parse
    from inr.experiments.learned_init import LearnedInit
    from inr.methods.registry import METHODS

    study = LearnedInit()
    argv = ["--kind", "ct", "--train-signals", str(train_signals), "--test-signals", str(test_signals), "--out", str(out)]
    p = study.protocol(parse(study, argv + (["--resolution", str(resolution)] if resolution else [])))
    dm = study.signal_set(p, 4)
    ctx = Context(p, Member(study.signals(p)[0], p.seeds[0]), data=dm)
    spec = METHODS["gaussian"].resolve(replace(study.setting(ctx), init="paper"))
    task, _ = study.task(ctx)
    return dm, spec, f"inr.tasks.{task.__name__}"


def first_steps(spec, dm, task: str, rate: float, seed: int = 0) -> dict[str, float]:
    """MAML's two inner steps at ``rate`` from θ₀ on the first 4 training phantoms (module docstring)."""
    import torch
    from torch import nn

    from inr.methods.meta import MetaSettings, meta_model
    from inr.tasks.adaptation import differentiable_sgd, expand

    settings = MetaSettings("maml", 1, inner_steps=2, inner_lr=rate, inner_optimizer="sgd", seed=seed)
    model = meta_model(spec, dm, settings, task=task)  # the task meta_train builds, drawn at the seed
    model.attach_data(dm)
    count = min(4, dm.train_count)
    batch = dm.batch(torch.arange(count), "train", torch.device("cpu"))
    losses = model.losses_at(model.members_task(count, torch.device("cpu")), batch)
    theta = model.theta()
    first, _, phi = differentiable_sgd(losses, expand(theta, count), 1, rate)
    second, after, _ = differentiable_sgd(losses, phi, 1, rate)
    after.mean().backward()
    gradient = math.sqrt(sum(float(p.grad.square().sum()) for p in theta.values()))
    layers = list(model.network)
    body = nn.Sequential(*(layers[:-1] if isinstance(layers[-1], nn.Sigmoid) else layers))  # up to the sigmoid's input
    with torch.no_grad():
        features = model.encoder(dm.grid.coords(torch.arange(math.prod(dm.shape))))
        z = torch.stack([torch.func.functional_call(body, {n: v[k] for n, v in phi.items()}, (features,)) for k in range(count)])
        out = z.sigmoid()
    return {
        "L@0": float(first.mean()),
        "L@1": float(second.mean()),
        "L@2": float(after.detach().mean()),
        "z after 1 step": (float(z.min()), float(z.max())),
        "saturated": float(((out < SATURATED) | (out > 1 - SATURATED)).float().mean()),
        "‖∇θ‖": gradient,
    }


def run(
    rates: list[float], steps: int, out: Path, resolution: int | None = None, test_signals: int = 8, train_signals: int = 256
):
    """Each rate's first inner steps, and its init's held-out PSNR after ``EVAL_STEPS`` (one row per rate)."""
    from inr.methods.meta import META, meta_train

    dm, spec, task = study_parts(train_signals, test_signals, resolution, out)
    rows = []
    for rate in rates:
        start = time.perf_counter()
        row = {"rate": rate, "outer_steps": steps, **first_steps(spec, dm, task, rate)}
        settings = replace(
            META["ct"]["maml"],
            steps=steps,
            inner_lr=rate,
            resolution=dm.side,
            train_signals=train_signals,
            test_signals=test_signals,
            validations=1,
        )
        path = out / f"maml_rate_{rate:g}.ckpt"
        meta_train(spec, dm, settings, path, {"settings": dataclasses.asdict(settings)}, label=f"MAML, rate {rate:g}", task=task)
        scores = json.loads(path.with_suffix(".json").read_text())["scores"]
        row.update({f"@{n}": scores[f"test/psnr@{n}"] for n in EVAL_STEPS})
        row["seconds"] = time.perf_counter() - start
        print(f"rate {rate:g}: {json.dumps(row)}", file=sys.stderr, flush=True)
        rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    """The rows as Markdown: the first inner steps from θ₀, then the init's held-out PSNR (dB) after n steps."""
    lines = [
        "| inner rate | " + " | ".join(COLUMNS) + " | outer steps | s |" + "".join(f" @{n} |" for n in EVAL_STEPS),
        "|---:|" + "---:|" * (len(COLUMNS) + 2 + len(EVAL_STEPS)),
    ]
    for r in rows:
        (low, high), gradient = r["z after 1 step"], r["‖∇θ‖"]
        first = f" {r['L@0']:.4f} | {r['L@1']:.4f} | {r['L@2']:.4f} | [{low:.2f}, {high:.2f}] | {r['saturated']:.3f} | {gradient:.3g} |"
        cells = "".join(f" {r[f'@{n}']:.2f} |" for n in EVAL_STEPS)
        lines.append(f"| {r['rate']:g} |{first} {r['outer_steps']} | {r['seconds']:.0f} |{cells}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", default="1,3,10", help="comma-separated inner SGD rates")
    parser.add_argument("--steps", type=int, default=10, help="outer steps of every trial")
    parser.add_argument("--resolution", type=int, default=None, help="the grid's side (default: the study's 64)")
    parser.add_argument("--train-signals", type=int, default=256)
    parser.add_argument("--test-signals", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None, help="where the trials' inits are written (default: a scratch folder)")
    args = parser.parse_args(argv)
    try:
        rates = [float(r) for r in args.rates.split(",") if r]
    except ValueError:
        parser.error(f"--rates: numbers separated by commas, got {args.rates!r}")
    if not rates or any(not (math.isfinite(r) and r > 0) for r in rates) or args.steps < 1:
        parser.error("--rates must be finite numbers > 0" if args.steps >= 1 else "--steps must be ≥ 1")
    import torch

    from inr.methods.training import silence_lightning

    torch.set_num_threads(args.threads)
    silence_lightning()
    with tempfile.TemporaryDirectory() as scratch:
        rows = run(rates, args.steps, Path(args.out or scratch), args.resolution, args.test_signals, args.train_signals)
    text = table(rows)
    print(f"MAML on CT phantoms, {args.steps} outer steps per rate, {args.threads} thread(s):\n\n{text}")
    return text


if __name__ == "__main__":
    main()
