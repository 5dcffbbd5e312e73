"""Short trials of meta-training settings for the learned-initialisation study (docs/learned_init.md, "How the
settings were chosen"): each trial meta-trains an init for a fixed number of outer steps and scores the test
signals after n inner steps from it; the paper's init, not meta-trained, scored with the protocol's Adam beside.

    python benchmarks/meta_settings.py [--kinds natural,ct,shape,text] [--steps 300] [--threads 1] [--out DIR]

Every trial is the study's own meta-training (``inr.methods.meta.meta_train`` on the study's ``SignalSet``, with the
study's network: the registry's Gaussian features at the grid rule and the paper's 3 × 256 MLP), at the study's
sizes (64², shapes 32³; 256 natural training crops, 128 training signals of the other kinds; the 8 test signals of
the study's tables), 4 signals per outer step, seed 0. The trials differ in the algorithm, the inner optimiser, its
rate and step count, and the outer Adam's rate (``TRIALS``). Each runs ``--steps`` outer steps (the same count for
every trial, so the wall time per trial differs: a step of 5 inner steps costs more than one of 2, and MAML's
second-order steps more than Reptile's); its held-out score (PSNR, dB; shapes: IoU) is the mean over the 8 test
signals after 0, 1, 2, 5, 10 and 50 steps of the trial's inner optimiser (``MetaLearning.evaluate``). The trials
look at the test signals: there is no third split, so settings chosen here are chosen on the study's test signals.

Printed: one Markdown table per kind, with each trial's wall seconds (they depend on the machine's load).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from inr.io.command_line import CommandParser

EVAL_STEPS = (0, 1, 2, 5, 10, 50)
# (kind, label, algorithm, inner steps, inner optimiser, inner rate, outer rate); None: the paper's init, not
# meta-trained, adapted with the protocol's Adam at 1e-3
TRIALS = (
    ("natural", "the paper's init, Adam 1e-3", None, 0, "adam", 1e-3, 0.0),
    ("natural", "Reptile, 5 inner Adam 1e-3, outer Adam 1e-4", "reptile", 5, "adam", 1e-3, 1e-4),
    ("natural", "Reptile, 2 inner SGD 10, outer Adam 1e-4", "reptile", 2, "sgd", 10.0, 1e-4),
    ("natural", "Reptile, 2 inner SGD 10, outer Adam 1e-3", "reptile", 2, "sgd", 10.0, 1e-3),
    ("natural", "Reptile, 5 inner SGD 30, outer Adam 1e-3", "reptile", 5, "sgd", 30.0, 1e-3),
    ("natural", "MAML, 2 inner SGD 10, outer Adam 1e-4", "maml", 2, "sgd", 10.0, 1e-4),
    ("natural", "MAML, 2 inner SGD 1, outer Adam 1e-4", "maml", 2, "sgd", 1.0, 1e-4),
    ("ct", "the paper's init, Adam 1e-3", None, 0, "adam", 1e-3, 0.0),
    ("ct", "Reptile, 2 inner SGD 1, outer Adam 1e-3", "reptile", 2, "sgd", 1.0, 1e-3),
    ("ct", "Reptile, 2 inner SGD 10, outer Adam 1e-3", "reptile", 2, "sgd", 10.0, 1e-3),
    ("shape", "the paper's init, Adam 1e-3", None, 0, "adam", 1e-3, 0.0),
    ("shape", "Reptile, 2 inner SGD 1, outer Adam 1e-3", "reptile", 2, "sgd", 1.0, 1e-3),
    ("shape", "Reptile, 2 inner SGD 10, outer Adam 1e-3", "reptile", 2, "sgd", 10.0, 1e-3),
    ("text", "the paper's init, Adam 1e-3", None, 0, "adam", 1e-3, 0.0),
    ("text", "Reptile, 2 inner SGD 1, outer Adam 1e-3", "reptile", 2, "sgd", 1.0, 1e-3),
    ("text", "Reptile, 2 inner SGD 10, outer Adam 1e-3", "reptile", 2, "sgd", 10.0, 1e-3),
)
KINDS = tuple(dict.fromkeys(t[0] for t in TRIALS))


def study_parts(kind: str, train_signals: int, test_signals: int, resolution: int | None, out: Path):
    """The study's protocol, signal set, network (``Resolved``, the paper's init) and task name for ``kind``."""
    from inr.experiments.comparison import Context, Member, parse
    from inr.experiments.learned_init import LearnedInit
    from inr.methods.registry import METHODS

    study = LearnedInit()
    argv = ["--kind", kind, "--train-signals", str(train_signals), "--test-signals", str(test_signals), "--out", str(out)]
    p = study.protocol(parse(study, argv + (["--resolution", str(resolution)] if resolution else [])))
    dm = study.signal_set(p, 4)
    ctx = Context(p, Member(study.signals(p)[0], p.seeds[0]), data=dm)
    spec = METHODS["gaussian"].resolve(replace(study.setting(ctx), init="paper"))
    task, _ = study.task(ctx)
    return p, dm, spec, f"inr.tasks.{task.__name__}"


def unadapted(spec, dm, task: str, optimizer: str, lr: float, seed: int = 0) -> dict[str, float]:
    """The paper's init, not meta-trained: the test signals adapted from it with ``optimizer`` at ``lr``. θ is drawn
    as the meta-training driver draws it (``meta_model``, seeded with ``seed``, META's), so it is where every trial
    starts; one inner step is its inner loop, which ``evaluate`` does not use (it adapts for ``EVAL_STEPS``)."""
    from inr.methods.meta import MetaSettings, meta_model

    settings = MetaSettings(inner_steps=1, inner_lr=lr, inner_optimizer=optimizer, outer_lr=1e-3, seed=seed)
    model = meta_model(spec, dm, settings, task=task, eval_steps=EVAL_STEPS)
    model.attach_data(dm)
    return model.evaluate()


def run(kinds: list[str], steps: int, out: Path, resolution: int | None = None, test_signals: int = 8) -> list[dict]:
    """Every trial of ``kinds``: its label, outer steps, seconds and held-out scores after ``EVAL_STEPS``."""
    from inr.methods.meta import META, meta_train

    results = []
    for kind in kinds:
        train = 256 if kind == "natural" else 128
        p, dm, spec, task = study_parts(kind, train, test_signals, resolution, out / kind)
        for i, (k, label, algorithm, inner, optimizer, lr, outer) in enumerate(TRIALS):
            if k != kind:
                continue
            start = time.perf_counter()
            if algorithm is None:
                scores, outer_steps = unadapted(spec, dm, task, optimizer, lr), 0
            else:
                settings = replace(
                    META[kind][algorithm],
                    steps=steps,
                    inner_steps=inner,
                    inner_optimizer=optimizer,
                    inner_lr=lr,
                    outer_lr=outer,
                    resolution=p.resolution,
                    train_signals=train,
                    test_signals=test_signals,
                    validations=1,
                )
                path = out / kind / f"trial_{i}.ckpt"
                meta_train(
                    spec,
                    dm,
                    settings,
                    path,
                    {"settings": dataclasses.asdict(settings)},
                    label=label,
                    task=task,
                    eval_steps=EVAL_STEPS,
                )
                scores, outer_steps = json.loads(path.with_suffix(".json").read_text())["scores"], steps
            seconds = time.perf_counter() - start
            metric = "iou" if kind == "shape" else "psnr"
            row = {"kind": kind, "trial": label, "outer_steps": outer_steps, "seconds": seconds}
            row.update({f"@{n}": scores[f"test/{metric}@{n}"] for n in EVAL_STEPS})
            print(f"{kind}: {label}: {json.dumps(row)}", file=sys.stderr, flush=True)
            results.append(row)
    return results


def table(rows: list[dict]) -> str:
    """One Markdown table per kind: each trial's outer steps, wall seconds and held-out score after n inner steps."""
    parts = []
    for kind in dict.fromkeys(r["kind"] for r in rows):
        spec, unit = (".3f", "IoU") if kind == "shape" else (".2f", "PSNR, dB")
        lines = [
            f"{kind} ({unit} of the test signals after n inner steps, mean):",
            "",
            "| trial | outer steps | s |" + "".join(f" @{n} |" for n in EVAL_STEPS),
            "|---|---:|---:|" + "---:|" * len(EVAL_STEPS),
        ]
        for r in (r for r in rows if r["kind"] == kind):
            cells = "".join(f" {r[f'@{n}']:{spec}} |" for n in EVAL_STEPS)
            lines.append(f"| {r['trial']} | {r['outer_steps'] or '—'} | {r['seconds']:.0f} |{cells}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> str:
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--steps", type=int, default=300, help="outer steps of every trial")
    parser.add_argument("--resolution", type=int, default=None, help="the grid's side (default: the study's)")
    parser.add_argument("--test-signals", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None, help="where the trials' inits are written (default: a scratch folder)")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or args.steps < 1:
        parser.error(f"unknown kinds {unknown}" if unknown else "--steps must be ≥ 1")
    import torch

    from inr.methods.training import silence_lightning

    torch.set_num_threads(args.threads)
    silence_lightning()
    with tempfile.TemporaryDirectory() as scratch:
        rows = run(kinds, args.steps, Path(args.out or scratch), args.resolution, args.test_signals)
    text = table(rows)
    print(f"meta-training trials, {args.steps} outer steps each, {args.threads} thread(s):\n\n{text}")
    return text


if __name__ == "__main__":
    main()
