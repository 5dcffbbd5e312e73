"""Learned initialisations (Tancik et al. 2021) against the paper's and PyTorch's: how fast a held-out signal fits
from each, and why.

    python -m inr.experiments.learned_init --kind natural                 # crops of scikit-image's photographs, 64²
    python -m inr.experiments.learned_init --kind ct                      # random-ellipse phantoms, 20 and 6 angles
    python -m inr.experiments.learned_init --kind text --train my_text/ --test my_held_out_text/
    python -m inr.experiments.learned_init --kind natural --keep 0.1      # inpainting: each test crop from 10 % of its pixels

First (``prepare``) each learned row meta-trains its init on the class's training signals (``MetaLearning`` on a
``SignalSet``: ``reptile``, ``maml`` and ``metasgd``, the settings of ``inr.methods.meta.META`` for the kind, by the project's one
meta-training driver, ``inr.methods.meta.meta_train``), written to ``--out``/meta/ (a later run with the same
settings reuses it). Then every row fits each held-out test signal with the registry's
Gaussian-feature method at the grid (``methods.METHODS["gaussian"]``: the paper's MLP and σ by the grid rule), the
same network and encoder in every row; the rows differ in their start and their optimiser:

- ``reptile``, ``maml``, ``metasgd``: the learned init (``init_from``), fitted with the inner loop's optimiser and rate
  (Meta-SGD's first n steps at its learned rate per tensor, as its inner loop: ``inr.tasks.init_steps``; then SGD at
  the inner rate its rates started from);
- ``modulations``: Meta-SGD whose inner loop adapts only a shift per hidden layer,
  h_{l+1} = act(W_l h_l + b_l + s_l) from s = 0 (functa, Dupont et al. 2022; ``inr.tasks.modulations``): its first n
  steps move the hidden layers' biases alone at the learned rate per layer (s_l enters where b_l does), then SGD at
  the inner rate on every tensor, as the Meta-SGD row;
- ``reptile+adam``, ``maml+adam``, ``metasgd+adam``, ``modulations+adam``: the same inits and their inner loops for
  their n steps (Reptile's and MAML's SGD at their inner rate on every tensor, ``model.init_inner_loop``; Meta-SGD's and
  the modulations' at their learned rates), then the protocol's Adam and scheduler, as the paper's row: whether a
  learned start keeps its lead under the standard optimiser;
- ``paper``: the paper's (stax) initialisation, ``torch``: PyTorch's, both with the protocol's Adam;
- ``adam3e-3``, ``adam1e-2``, ``adam3e-2``: the paper's init with Adam at those rates; with ``paper`` they make the
  derived ``tuned`` row, the rate with the best mean after each step budget (``inr.experiments.init_curves``), the
  standard init at a rate tuned for the budget. ``adam3e-4``, ``adam1e-4``, below the protocol's rate, run only
  when ``--methods`` names them (``all`` leaves them out); where they ran they are candidates of ``tuned`` too.

The score (held-out PSNR of images: the [1::2, 1::2] pixels; CT: the whole grid against the phantom; IoU of
shapes' held-out voxels) is taken after 0, 1, 2, 3, 5, 10, 30, 100 and 300 steps and at the protocol's full step
count, with the fit's seconds to each (scoring left out), mean ± std over the test signals; classical baselines (bicubic interpolation, filtered back-projection, trilinear
interpolation) are scored the same way. CT rows are fitted at the paper's 20 angles and at ``--few-angles`` (the
prior's effect where measurements are few), each summarised apart. With ``--keep f`` (natural, text) each test
signal is fitted through a random fraction f of its pixels instead (inpainting, ``InverseFitting`` through a
``PixelMask`` drawn with the signal's seed), from the same inits (meta-trained on the signals unmasked, so a plain
run's ``meta/`` serves), scored on the pixels the fit never saw (the whole image's as ``full_psnr``), against cubic
interpolation of the observed pixels. ``finish`` measures why (``init_analysis``):
the residual per frequency band at step 0 and after 2 steps per init (``bands.png``), and the empirical NTK's
eigenvalues and energy per band at each init against the test signals' mean power per band (``ntk.png``,
``why.json``); and the curves (``curves.png``, ``curves.json``): each row's score against the step and against the
seconds, a learned row's meta-training shared over ``--amortised-over`` signals. The paired table (``paired_table``: each other row − the paper's init per test signal after 2, 10 and
100 steps and at the full count, each learned row − the tuned row at the same budgets, and each row − each baseline
at the full count, judged by the rule of docs/results.md) closes ``results.md``, its numbers in ``paired.json``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional, Union

import lightning as L
import torch
from jsonargparse import ArgumentParser
from lightning.pytorch.loggers import TensorBoardLogger

from inr.data.signal_sets import SignalSet
from inr.errors import InputError
from inr.experiments import comparison
from inr.experiments.baselines import interpolations, score_field
from inr.experiments.comparison import Baseline, Comparison, Context, Member
from inr.experiments.init_analysis import band_figure, class_energy, ntk_figure, ntk_spectrum, outer_loop_figure, subgrid
from inr.experiments.init_curves import BELOW, RATES, TUNED, curves, curves_figure, tuned_rows
from inr.experiments.results import STEP_MARKS, json_safe
from inr.experiments.runner import Column, paired, summarise, verdict
from inr.io.files import atomic_write
from inr.methods.meta import META, META_ADAPTS, MetaSettings, meta_seconds, recorded
from inr.methods.meta import meta_train as driver
from inr.methods.protocols import PROTOCOLS, MappingSettings
from inr.methods.registry import METHODS, Component, Resolved, Setting
from inr.metrics import iou, psnr
from inr.modes import eval_mode
from inr.operators.baselines import cubic_inpaint, filtered_back_projection
from inr.spectral.bands import BandPartition
from inr.tasks import ImageFitting, InverseFitting, VolumeFitting
from inr.tasks.init_from import load_init

# the step counts after which every row is scored (and the protocol's full count): half-decades of steps
MARKS = STEP_MARKS
LEARNED = ("reptile", "maml", "metasgd", "modulations")
# a learned init's inner loop for its n steps, then the protocol's Adam instead of SGD at the inner rate:
# row name -> the learned row whose init it starts from
THEN_ADAM = {f"{name}+adam": name for name in LEARNED}
STANDARD = ("paper", "torch", *RATES)
# the steps after which the residual per band is compared (bands.png): the start and two steps
BAND_MARKS = (0, 2)
# the step budgets of the paired table (below the full count, which it adds): the first steps, then a tenth of a run
PAIRED_MARKS = (2, 10, 100)


@dataclass(frozen=True)
class Kind:
    """A class of signals in the study: its protocol (the registry's settings), task, grid and full step count."""

    protocol: str
    steps: int
    resolution: int
    ndim: int = 2
    metric: str = "psnr"


# Full step counts: the paper's CT protocol (1000) and its 3D grid protocol (300); for images 1000, not the paper's 2000
# at 512²: at 64² its init has converged by step 100 (held-out PSNR of 4 test crops 26.49 dB at 100 steps, 26.52 at
# 1000, 26.51 at 2000), and 1/10 of the run is then the score at step 100
KINDS = {
    "natural": Kind("natural", 1000, 64),
    "text": Kind("text", 1000, 64),
    "ct": Kind("ct", 1000, 64),
    "shape": Kind("volume", 300, 32, ndim=3, metric="iou"),
}


@dataclass(frozen=True)
class Study:
    """What every row shares (``record``: results.json's protocol)."""

    seeds: tuple[int, ...]
    steps: int
    resolution: int
    kind: str
    train: Optional[str]
    test: Optional[str]
    train_signals: int
    test_signals: int
    angles: int
    few_angles: Union[int, tuple[int, ...]]  # one count (as results.json has always stated it) or several
    reptile: MetaSettings
    maml: MetaSettings
    metasgd: MetaSettings
    modulations: Optional[MetaSettings] = None  # only when the row runs (it came later: earlier --out stay readable)
    meta_dir: str = ""  # where the learned inits are kept (--out/meta)
    num_bands: int = 8
    ntk_points: int = 1024
    meta_paths: tuple[tuple[str, str], ...] = ()  # (row, checkpoint), set by ``prepare``
    amortised_over: int = 100  # signals a meta-training's seconds are shared over in the wall-clock curves
    keep: Optional[float] = None  # inpainting: the fraction of a test signal's pixels its fit sees (None: the split)
    adam_warmup: Optional[int] = None  # the +adam rows: Adam's rate ramped up over its first W steps (None: none)

    @property
    def angle_counts(self) -> tuple[int, ...]:
        """CT's angle counts, the paper's first: ``angles``, then each of ``few_angles``."""
        few = self.few_angles if isinstance(self.few_angles, tuple) else (self.few_angles,)
        return tuple(dict.fromkeys((self.angles, *few)))


def few_angle_counts(value: Any) -> tuple[int, ...]:
    """``--few-angles``: one count or several, comma-separated, each a whole number ≥ 1.

    Example:
        >>> few_angle_counts("10,6"), few_angle_counts(6)
        ((10, 6), (6,))
    """
    parts = [value] if isinstance(value, int) else [v.strip() for v in str(value).split(",")]
    counts = []
    for part in parts:
        number = part if isinstance(part, int) else int(part) if part.isdigit() else None
        counts.append(checked_count(number if number is not None else part, "--few-angles"))
    return tuple(dict.fromkeys(counts))


def checked_count(value: int, flag: str, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InputError(f"{flag} must be an int ≥ {least}, got {value}")
    return value


def checked_keep(value: Optional[float], kind: str) -> Optional[float]:
    """``--keep``: None, or a fraction in (0, 1) for the image kinds (CT has its angles, shapes their voxels)."""
    if value is None:
        return None
    if kind not in ("natural", "text"):
        raise InputError(f"--keep: inpainting is studied on images (natural, text), not {kind}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise InputError(f"--keep must be a fraction in (0, 1), got {value}")
    return float(value)


class LearnedInit(Comparison):
    name = "learned_init"
    doc = __doc__
    methods = (*LEARNED, *THEN_ADAM, *STANDARD)
    default_methods = ("all",)  # every row the kind has (``available``), but the rates below the protocol's
    named_only = BELOW
    seeds = 1
    headline = ("psnr_2", "psnr", "iou_2", "iou")
    columns: tuple[Column, ...] = ()  # the kind's: ``table_columns`` (CT: its angles; shapes: IoU)

    def arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--kind", choices=tuple(KINDS), default="natural", help="the class of signals")
        parser.add_argument("--train", type=Optional[str], default=None, help="a directory of your training signals")
        parser.add_argument("--test", type=Optional[str], default=None, help="a directory of your test signals")
        parser.add_argument("--train-signals", type=int, default=256, help="training signals of a generated set")
        parser.add_argument("--test-signals", type=int, default=8, help="test signals of a generated set (each a row)")
        parser.add_argument(
            "--meta-steps",
            type=Optional[int],
            default=None,
            help="outer steps of Reptile (the other learned rows: half; null: META's)",
        )
        parser.add_argument(
            "--inner-steps", type=Optional[int], default=None, help="inner steps of every learned row (null: META's)"
        )
        parser.add_argument("--angles", type=int, default=20, help="CT: projection angles (the paper's 20)")
        parser.add_argument(
            "--few-angles", type=str, default="6", help="CT: the few angles the prior is tried at (several: 10,6)"
        )
        parser.add_argument(
            "--keep",
            type=Optional[float],
            default=None,
            help="natural, text: fit each test signal through a random fraction of its pixels (inpainting), scored on the others",
        )
        parser.add_argument(
            "--adam-warmup",
            type=Optional[int],
            default=None,
            help="the +adam rows: Adam's rate ramped linearly from 1/W of its own to it over its first W steps, after the inner steps",
        )
        parser.add_argument(
            "--amortised-over",
            type=int,
            default=100,
            help="signals a meta-training's seconds are shared over in the wall-clock curves (curves.png)",
        )

    def available(self, args: Any) -> tuple[str, ...]:
        """The learned rows ``META`` holds for the kind, each also fitted on with
        Adam (``THEN_ADAM``), the standard ones."""
        kind = getattr(args, "kind", None)
        learned = tuple(n for n in LEARNED if kind is None or n in META[kind])
        return learned + tuple(n for n, init in THEN_ADAM.items() if init in learned) + STANDARD

    def protocol(self, args: Any) -> Study:
        kind = KINDS[args.kind]
        if args.paper:
            raise InputError("--paper: learned_init runs at 64² (shapes 32³) on a CPU; give --resolution and --steps")
        for flag, value in (("--train-signals", args.train_signals), ("--test-signals", args.test_signals)):
            checked_count(value, flag)
        checked_count(args.angles, "--angles")
        few = few_angle_counts(args.few_angles)
        checked_count(args.amortised_over, "--amortised-over")
        keep = checked_keep(args.keep, args.kind)
        warmup = None if args.adam_warmup is None else checked_count(args.adam_warmup, "--adam-warmup")
        settings = {}
        chosen = {THEN_ADAM.get(n, n) for n in comparison.chosen_methods(self, args)}  # a +adam row needs its init
        for name, meta in META[args.kind].items():
            if name not in ("reptile", "maml", "metasgd") and name not in chosen:
                continue  # a row added later is in the protocol only when it runs (earlier --out stay readable)
            if args.meta_steps is not None:
                steps = checked_count(args.meta_steps, "--meta-steps")
                meta = replace(meta, steps=steps if name == "reptile" else max(1, steps // 2))
            if args.inner_steps is not None:
                meta = replace(meta, inner_steps=checked_count(args.inner_steps, "--inner-steps"))
            signals = {"train_signals": args.train_signals, "test_signals": args.test_signals}
            settings[name] = replace(meta, resolution=args.resolution or kind.resolution, seed=args.seed_list[0], **signals)
        return Study(
            seeds=args.seed_list,
            steps=args.steps or kind.steps,
            resolution=args.resolution or kind.resolution,
            kind=args.kind,
            train=args.train,
            test=args.test,
            train_signals=args.train_signals,
            test_signals=args.test_signals,
            angles=args.angles,
            few_angles=few[0] if len(few) == 1 else few,
            meta_dir=str(Path(self.out_dir(args)) / "meta"),
            amortised_over=args.amortised_over,
            keep=keep,
            adam_warmup=warmup,
            **settings,
        )

    def record(self, p: Study) -> dict[str, Any]:
        # how the curves are drawn is not how the rows are made: an earlier --out stays readable at any --amortised-over
        left_out = ("seeds", "meta_paths", "meta_dir", "amortised_over")
        record = {k: v for k, v in dataclasses.asdict(p).items() if k not in left_out}
        for later in (
            "modulations",
            "keep",
            "adam_warmup",
        ):  # fields added later: stated only when set, earlier --out stay readable
            if record[later] is None:
                del record[later]
        return record

    def table_columns(self, p: Study) -> tuple[Column, ...]:
        return columns_of(p.kind)

    def judged_keys(self, p: Study) -> tuple[str, ...]:
        metric = KINDS[p.kind].metric
        return (f"{metric}_2", metric)  # after 2 steps and at the full count

    # --- the signals ------------------------------------------------------------------------------------
    def signal_set(self, p: Study, signals_per_step: int = 4) -> SignalSet:
        """The class's training and test signals (one instance per protocol: generated once)."""
        key = (self.record(p)["kind"], p.train, p.test, p.train_signals, p.test_signals, p.resolution, p.angles, signals_per_step)
        cache = self.__dict__.setdefault("_sets", {})
        if key not in cache:
            dm = SignalSet(
                kind=p.kind,
                train=p.train,
                test=p.test,
                train_signals=p.train_signals,
                test_signals=p.test_signals,
                resolution=p.resolution,
                angles=p.angles,
                signals_per_step=signals_per_step,
            )
            dm.setup("fit")
            cache[key] = dm
        return cache[key]

    def signals(self, p: Study) -> tuple[Any, ...]:
        count = self.signal_set(p).test_count
        if p.kind == "ct":
            return tuple((k, a) for a in p.angle_counts for k in range(count))
        return tuple(range(count))

    def label(self, p: Study, signal: Any) -> Optional[str]:
        names = self.signal_set(p).test_names
        return f"{names[signal[0]]}, {signal[1]} angles" if isinstance(signal, tuple) else names[signal]

    def data(self, ctx: Context) -> Any:
        k, angles = ctx.signal if isinstance(ctx.signal, tuple) else (ctx.signal, None)
        return self.signal_set(ctx.p).signal_data(k, "test", angles=angles, keep=ctx.p.keep)

    # --- the rows -------------------------------------------------------------------------------------------
    def setting(self, ctx: Context) -> Setting:
        p = ctx.p
        kind = KINDS[p.kind]
        protocol: MappingSettings = PROTOCOLS[kind.protocol]
        side = p.resolution if p.kind == "ct" else p.resolution // 2  # CT's loss sees the whole grid
        output = "none" if p.kind == "shape" else "sigmoid"
        return Setting(
            in_dim=kind.ndim, train_side=side, protocol=protocol, output_activation=output, seed=ctx.seed, steps=p.steps
        )

    def spec(self, ctx: Context) -> Resolved:
        p, name = ctx.p, ctx.name
        base = METHODS["gaussian"].resolve(replace(self.setting(ctx), init="torch" if name == "torch" else "paper"))
        if name in RATES:  # the paper's init at another Adam rate (its scheduler, if any, kept)
            optimizer = replace(base.optimizer, init_args={**base.optimizer.init_args, "lr": RATES[name]})
            return replace(base, name=name, optimizer=optimizer, describe=f"{base.describe}, paper init, Adam {RATES[name]:g}")
        if name in STANDARD:
            return replace(base, name=name, describe=f"{base.describe}, {name} init, Adam {base.lr:g}")
        if name in THEN_ADAM:  # the learned init and its inner loop, then the protocol's optimiser, as the paper's row
            init = THEN_ADAM[name]
            meta = getattr(p, init)
            rates = "its learned rates" if init in ("metasgd", "modulations") else f"SGD {meta.inner_lr:g}"
            describe = f"{base.describe}, {init} init, its {meta.inner_steps} inner steps at {rates}, then Adam {base.lr:g}"
            if p.adam_warmup is None:
                return replace(base, name=name, describe=describe)
            if base.scheduler is not None:
                raise InputError(f"--adam-warmup: the {p.kind} protocol has a scheduler of its own; a warm-up would replace it")
            # the inner loop leaves θ near a fit, where Adam's first steps (each about its rate on every weight, whatever
            # the gradient's size) throw much of it away: lr_t = lr·(1/W + (1 − 1/W)·min(t, W)/W), t Adam's steps
            w = p.adam_warmup
            warm = Component("torch.optim.lr_scheduler.LinearLR", {"start_factor": 1.0 / w, "end_factor": 1.0, "total_iters": w})
            return replace(base, name=name, scheduler=warm, describe=f"{describe}, warmed up over {w} steps")
        meta: MetaSettings = getattr(p, name)
        optimizer = Component(f"torch.optim.{'SGD' if meta.inner_optimizer == 'sgd' else 'Adam'}", {"lr": meta.inner_lr})
        inner = {"metasgd": "learned rates", "modulations": "shifts at learned rates"}.get(
            name, f"{meta.inner_optimizer} {meta.inner_lr:g}"
        )
        describe = f"{base.describe}, {name} init ({meta.inner_steps} × {inner}), {meta.inner_optimizer} {meta.inner_lr:g}"
        return replace(base, name=name, optimizer=optimizer, scheduler=None, describe=describe)

    def task(self, ctx: Context) -> tuple[type, dict[str, Any]]:
        p = ctx.p
        if p.kind == "ct":
            return InverseFitting, {"out_channels": 1}
        if p.keep is not None:  # inpainting: the field through the test signal's pixel mask
            return InverseFitting, {"out_channels": 3}
        if p.kind == "shape":
            return VolumeFitting, {"out_channels": 1, "mode": "occupancy"}
        return ImageFitting, {"out_channels": 3}

    def model(self, ctx: Context) -> L.LightningModule:
        model = super().model(ctx)
        name = THEN_ADAM.get(ctx.spec.name, ctx.spec.name)
        model.init_from = dict(ctx.p.meta_paths).get(name)  # a learned row starts from its init (after prepare)
        # a Reptile or MAML init holds no rates: its inner loop, the SGD steps its checkpoint records, is taken first
        model.init_inner_loop = THEN_ADAM.get(ctx.spec.name) in ("reptile", "maml")
        return model

    def callbacks(self, ctx: Context) -> list[L.Callback]:
        return [StepScores(self, ctx, [m for m in MARKS if m <= ctx.p.steps])]

    def measured(self, ctx: Context, callbacks: list[L.Callback]) -> dict[str, Any]:
        steps = callbacks[0]
        metric = KINDS[ctx.p.kind].metric
        row = {f"{metric}_{m}": scores[metric] for m, scores in steps.scores.items()}
        row.update({f"seconds_{m}": s for m, s in steps.seconds.items() if m != ctx.p.steps})
        row["seconds_full"] = steps.seconds.get(ctx.p.steps, steps.elapsed())
        row["history"] = {str(m): steps.scores[m]["band_errors"] for m in BAND_MARKS if m in steps.scores}
        return row

    def score(self, ctx: Context, prediction: Any) -> dict[str, Any]:
        p, data = ctx.p, ctx.data
        target = data.values_grid()
        scores = score_field(prediction.float(), target, data, 1.0, p.num_bands)
        scores = {k: v for k, v in scores.items() if k in ("psnr", "band_errors", "band_edges")}
        if p.kind == "shape":  # held-out voxels: occupied where the probability is above ½
            index = data.test_index
            flat, truth = prediction.reshape(-1), target.reshape(-1)
            scores["iou"] = iou(flat[index.to(flat.device)] > 0.5, truth[index] > 0.5)
        if p.kind == "ct":
            scores["angles"] = len(data.operator.angles)
        if p.keep is not None:  # inpainting: the pixels the fit never saw, the whole image's beside them
            unseen = ~data.operator.mask.cpu()
            pred, truth = prediction.double().cpu(), target.double().cpu()  # as score_field scores
            scores["full_psnr"] = scores["psnr"]
            scores["psnr"] = psnr(pred[:, unseen], truth[:, unseen])
        return scores

    def baselines(self, ctx: Context) -> list[Baseline]:
        p, data = ctx.p, ctx.data
        if p.kind == "ct":
            make = lambda: filtered_back_projection(data.operator.cpu(), data.measurements).clamp(0, 1)
            return [Baseline("filtered back-projection", make, "ramp filter, clipped to [0, 1]")]
        if p.keep is not None:
            make = lambda: cubic_inpaint(data.operator.cpu(), data.measurements).clamp(0, 1)
            return [Baseline("cubic", make, "Clough–Tocher over the observed pixels, nearest outside their hull, clipped")]
        name = "trilinear" if p.kind == "shape" else "bicubic"
        make, setting = interpolations(data, (0.0, 1.0))["linear" if p.kind == "shape" else "bicubic"]
        return [Baseline(name, make, setting)]

    # --- the learned inits ---------------------------------------------------------------------------------
    def prepare_seconds(self, p: Study, names: Sequence[str]) -> list[tuple[str, float]]:
        """Each learned row's meta-training that ``prepare`` will run (an init already kept in --out costs nothing):
        its median outer step from a short probe × its outer steps (``inr.methods.meta.meta_seconds``)."""
        out = []
        for name in learned_inits(names):
            meta: MetaSettings = getattr(p, name)
            kept = meta_identity(self, p, meta, name)
            if recorded(Path(p.meta_dir) / f"{name}.ckpt", kept):
                continue
            member = Member(self.signals(p)[0], p.seeds[0])
            dm = self.signal_set(p, meta.signals_per_step)
            spec = METHODS["gaussian"].resolve(replace(self.setting(Context(p, member, data=dm)), init="paper"))
            # an init is meta-trained on the class's signals as they are (an inpainting study fits them masked)
            task, _ = self.task(Context(replace(p, keep=None), member, data=dm))
            seconds = meta_seconds(spec, dm, meta, task=f"inr.tasks.{task.__name__}", adapt=META_ADAPTS.get(name, "all"))
            out.append((f"{name}'s meta-training ({meta.steps} outer steps)", seconds))
        return out

    def prepare(self, p: Study, names: list[str], data: Any) -> Study:
        paths = tuple((name, str(meta_train(self, p, getattr(p, name), Path(p.meta_dir), name))) for name in learned_inits(names))
        return replace(p, meta_paths=paths)

    # --- the table -------------------------------------------------------------------------------------------
    def summary(self, p: Study, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Mean ± std per row (CT: per angle count), the derived ``tuned`` row among them where two or more rates ran."""
        keys = [c.key for c in columns_of(p.kind) if c.spec != "s"]
        timing = [f"seconds_{m}" for m in MARKS] + ["seconds_full"]
        rows = self.with_tuned(p, rows)
        if p.kind != "ct":
            return summarise(rows, keys + timing)
        return [s for a in p.angle_counts for s in summarise([r for r in rows if r.get("angles") == a], keys + timing)]

    def with_tuned(self, p: Study, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows and, after the model rows, the ``tuned`` rows derived from the rate rows (``init_curves``)."""
        metric = KINDS[p.kind].metric
        keys = [f"{metric}_{m}" for m in MARKS if m < p.steps] + [metric]
        tuned, _ = tuned_rows([r for r in rows if r.get("method") != TUNED], keys)
        models = [r for r in rows if r.get("kind") == "model" and r.get("method") != TUNED]
        return models + tuned + [r for r in rows if r.get("kind") != "model"]

    def tuned_choice(self, p: Study, rows: list[dict[str, Any]]) -> dict[Any, dict[str, str]]:
        """The rate row the tuned row took at each budget (per angle count for CT)."""
        metric = KINDS[p.kind].metric
        return tuned_rows(rows, [f"{metric}_{m}" for m in MARKS if m < p.steps] + [metric])[1]

    def pairs(self, p: Study, summary: list[dict[str, Any]]) -> list[tuple[str, str]]:
        """Each learned init against the paper's, the paper's against PyTorch's, and the best row at the full count
        against each baseline: judged by the rule of docs/results.md, paired per test signal."""
        return init_pairs(summary, KINDS[p.kind].metric)

    def judged_rows(self, p: Study, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self.with_tuned(p, rows)  # the tuned row is judged as the others are

    def difference_groups(self, p: Study, rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
        if p.kind != "ct":
            return [("", rows)]
        return [(f"at {a} angles", [r for r in rows if r.get("angles") == a]) for a in p.angle_counts]

    def title(self, p: Study) -> str:
        sides = "³" if p.kind == "shape" else "²"
        seen = f", inpainting from {p.keep:.0%} of the pixels" if p.keep is not None else ""
        return f"learned initialisations: {p.kind} at {p.resolution}{sides}{seen}, {p.steps} steps, mean ± std over {p.test_signals} test signals"

    def notes(self, p: Study, summary: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
        metric = KINDS[p.kind].metric
        lines = []
        for angles in p.angle_counts if p.kind == "ct" else (None,):
            by_method = {r["method"]: r for r in summary if angles is None or r.get("angles") == angles}
            where = f" at {angles} angles" if angles is not None else ""
            standard = TUNED if TUNED in by_method else "paper"  # the targets are set against the tuned standard init
            if standard not in by_method:
                continue
            full = by_method[standard].get(metric)
            for name in (*LEARNED, *THEN_ADAM):
                if name not in by_method:
                    continue
                row = by_method[name]
                reached = next(
                    (m for m in MARKS if isinstance(row.get(f"{metric}_{m}"), float) and row[f"{metric}_{m}"] >= full), None
                )
                tenth = p.steps / 10
                target = (
                    f"reached at step {reached} (≤ 1/10 of {p.steps}: {'yes' if reached <= tenth else 'no'})"
                    if reached is not None
                    else f"not reached by step {max(m for m in MARKS if m <= p.steps)}"
                )
                gain = row.get(f"{metric}_2", math.nan) - by_method[standard].get(f"{metric}_2", math.nan)
                unit = " dB" if metric == "psnr" else ""
                goal = 10 if p.kind == "ct" else 8
                whose = "the tuned standard init" if standard == TUNED else "the paper init"
                # the 2-step targets are set for fitting a signal (natural crops, CT), not for inpainting one
                verdict = (
                    ""
                    if p.keep is not None
                    else f" (target +{goal} dB: {'met' if metric == 'psnr' and gain >= goal else 'not met'})"
                )
                lines.append(
                    f"{name}{where}: {whose}'s full-run {metric} ({full:.3g}{unit}) {target}; after 2 steps "
                    f"{gain:+.2f}{unit} against {whose}{verdict}."
                )
        for angles, chosen in self.tuned_choice(p, rows).items():
            where = f" at {angles} angles" if angles is not None else ""
            steps = [(key.rpartition("_")[2] if key != metric else "full", name) for key, name in chosen.items()]
            lines.append(f"{TUNED}{where}, the rate row at each budget: " + ", ".join(f"@{k} {n}" for k, n in steps) + ".")
        info = []
        for name in LEARNED:
            record = meta_record(Path(p.meta_dir), name)
            if record:
                s = record["settings"]
                info.append(
                    f"{name}: {s['steps']} outer steps of {s['signals_per_step']} signals, {s['inner_steps']} inner "
                    f"{s['inner_optimizer']} steps at {s['inner_lr']:g}, outer Adam {s['outer_lr']:g}, {record['seconds'] / 60:.1f} min"
                )
        text = "\n".join(lines + ([f"Meta-training: {'; '.join(info)}."] if info else []))
        table = paired_markdown(self.paired_table(p, rows), p.steps, "dB" if metric == "psnr" else "")
        return f"{text}\n\n{table}" if table else text

    def paired_table(self, p: Study, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The paired table (``paired_table``) of this protocol's rows, CT's angle counts apart."""
        rows = self.with_tuned(p, rows)
        groups = [(a, [r for r in rows if r.get("angles") == a]) for a in p.angle_counts]
        return paired_table(
            groups if p.kind == "ct" else [(None, rows)],
            KINDS[p.kind].metric,
            p.steps,
            lambda a, b, key: self.machine_spread(p, a, b, key),
        )

    def finish(self, p: Study, rows: list[dict[str, Any]], out: Path) -> None:
        why = explain(self, p, rows)
        with atomic_write(out / "why.json", "w") as f:
            f.write(json.dumps(why, indent=1))
        paired_record = {"protocol": {"comparison": self.name, **self.record(p)}, "paired": self.paired_table(p, rows)}
        with atomic_write(out / "paired.json", "w") as f:
            f.write(json.dumps(json_safe(paired_record), indent=1, allow_nan=False))
        figure = band_figure(why["bands"], why["band_edges"], f"{self.title(p)}: residual per band")
        figure.savefig(out / "bands.png", dpi=110)
        if why["ntk"]:  # none when the run has no init's own row (e.g. only another rate from the paper's init)
            figure = ntk_figure(why["ntk"], why["class_power"], f"empirical NTK at each init ({p.kind}, {why['ntk_grid']})")
            figure.savefig(out / "ntk.png", dpi=110)
        curves = {
            name: outer_curves(Path(p.meta_dir) / "tb" / name) for name in LEARNED if (Path(p.meta_dir) / "tb" / name).is_dir()
        }
        if curves:
            metric = KINDS[p.kind].metric
            figure = outer_loop_figure(curves, metric, f"meta-training on {p.kind} signals: the outer loop")
            figure.savefig(out / "outer_loop.png", dpi=110)
        self.write_curves(p, rows, out)

    def write_curves(self, p: Study, rows: list[dict[str, Any]], out: Path) -> None:
        """curves.json and curves.png: each model row's mean score and seconds after each mark (CT: its main angle
        count in the figure, every count in the JSON), a learned row's meta-training shared over ``amortised_over``."""
        metric = KINDS[p.kind].metric
        summary = self.summary(p, rows)
        meta = {n: float(r["seconds"]) for n in LEARNED if (r := meta_record(Path(p.meta_dir), n)) and "seconds" in r}
        meta |= {n: meta[init] for n, init in THEN_ADAM.items() if init in meta}  # the same meta-training
        marks = [m for m in MARKS if m <= p.steps]
        groups = p.angle_counts if p.kind == "ct" else (None,)
        record = {
            str(g) if g is not None else "all": curves(summary, metric, marks, p.steps, meta, p.amortised_over, g) for g in groups
        }
        with atomic_write(out / "curves.json", "w") as f:
            f.write(json.dumps(json_safe(record), indent=1, allow_nan=False))
        first = next(iter(record.values()))
        where = f", {p.angles} angles" if p.kind == "ct" else ""
        figure = curves_figure(first, metric, f"{self.title(p)}{where}")
        figure.savefig(out / "curves.png", dpi=110)


class StepScores(L.Callback):
    """The row's score (the comparison's ``score`` of its render) before its first step and after each of ``marks``,
    and the fit's seconds to each (``seconds``; the scoring's own time left out) and to its end."""

    def __init__(self, study: LearnedInit, ctx: Context, marks: list[int]) -> None:
        self.study, self.ctx, self.marks = study, ctx, set(marks)
        self.scores: dict[int, dict[str, Any]] = {}
        self.seconds: dict[int, float] = {}
        self.started: Optional[float] = None
        self.scoring = 0.0  # seconds spent scoring, taken off the fit's clock

    def elapsed(self) -> float:
        """The fit's seconds so far, scoring left out (NaN before it started)."""
        return math.nan if self.started is None else time.perf_counter() - self.started - self.scoring

    @torch.no_grad()
    def measure(self, trainer: L.Trainer, module: L.LightningModule) -> None:
        step = int(trainer.global_step)
        self.seconds[step] = self.elapsed()
        begun = time.perf_counter()
        with eval_mode(module):
            self.scores[step] = self.study.score(self.ctx, module.render())  # ctx.data: the data it fits
        self.scoring += time.perf_counter() - begun

    def on_train_start(self, trainer: L.Trainer, module: L.LightningModule) -> None:
        self.started = time.perf_counter()
        if 0 in self.marks:
            self.measure(trainer, module)

    def on_train_batch_end(self, trainer: L.Trainer, module: L.LightningModule, *args: Any) -> None:
        if trainer.global_step in self.marks:
            self.measure(trainer, module)

    def on_train_end(self, trainer: L.Trainer, module: L.LightningModule) -> None:
        self.seconds.setdefault(int(trainer.global_step), self.elapsed())


def learned_inits(names: Sequence[str]) -> list[str]:
    """The learned inits rows ``names`` start from, each once: a learned row's own, a +adam row's.

    Example:
        >>> learned_inits(["paper", "metasgd+adam", "reptile", "metasgd"])
        ['metasgd', 'reptile']
    """
    return list(dict.fromkeys(THEN_ADAM.get(n, n) for n in names if THEN_ADAM.get(n, n) in LEARNED))


def init_pairs(summary: list[dict[str, Any]], metric: str) -> list[tuple[str, str]]:
    """The pairs whose differences the study's notes judge: each learned init against the paper's, the paper's against
    PyTorch's, and the model row best at the full count (over every summary row of it) against each baseline.

    Example:
        >>> s = [{"method": "reptile", "kind": "model", "psnr": 26.0}, {"method": "paper", "kind": "model", "psnr": 26.5},
        ...      {"method": "torch", "kind": "model", "psnr": 24.0}, {"method": "bicubic", "kind": "baseline", "psnr": 25.0}]
        >>> init_pairs(s, "psnr")
        [('reptile', 'paper'), ('paper', 'torch'), ('paper', 'bicubic')]
    """
    present = list(dict.fromkeys(r["method"] for r in summary))
    pairs = [(name, "paper") for name in (*LEARNED, *THEN_ADAM) if name in present and "paper" in present]
    pairs += [("paper", "torch")] if {"paper", "torch"} <= set(present) else []
    scored = [r for r in summary if r["kind"] == "model" and isinstance(r.get(metric), (int, float)) and math.isfinite(r[metric])]
    if scored:
        best = max(scored, key=lambda r: r[metric])["method"]
        pairs += [(best, name) for name in dict.fromkeys(r["method"] for r in summary if r["kind"] == "baseline")]
    return pairs


def budgets(metric: str, steps: int) -> list[tuple[int, str]]:
    """(steps, score key) of the paired table: each of ``PAIRED_MARKS`` below the full count, then the full count.

    Example:
        >>> budgets("psnr", 1000), budgets("iou", 10)
        ([(2, 'psnr_2'), (10, 'psnr_10'), (100, 'psnr_100'), (1000, 'psnr')], [(2, 'iou_2'), (10, 'iou')])
    """
    return [(m, f"{metric}_{m}") for m in PAIRED_MARKS if m < steps] + [(steps, metric)]


def paired_table(
    groups: list[tuple[Optional[int], list[dict[str, Any]]]],
    metric: str,
    steps: int,
    spread: Any = lambda a, b, key: None,
) -> list[dict[str, Any]]:
    """Every model row other than the paper's init against it (row − paper's init) after each step budget
    (``budgets``), and every model row against each baseline at the full count, paired per test signal
    (``runner.paired``: a signal's pair counted once) and judged by the rule of docs/results.md (``runner.verdict``,
    with ``spread(a, b, key)``, the machine spread where one was measured): one entry per group (CT's angle count,
    ``angles``; None for the other kinds), row, opponent and budget.

    Example:
        >>> rows = [{"method": m, "kind": k, "signal": s, "seed": None if k == "baseline" else 0, "psnr_2": v + s, "psnr": v}
        ...         for s in range(3) for m, k, v in (("reptile", "model", 20.0), ("paper", "model", 19.0), ("bicubic", "baseline", 18.5))]
        >>> [(e["method"], e["against"], e["steps"], e["mean"], e["pairs"], e["verdict"]) for e in paired_table([(None, rows)], "psnr", 10)]  # doctest: +NORMALIZE_WHITESPACE
        [('reptile', 'paper', 2, 1.0, 3, 'reptile above paper'), ('reptile', 'paper', 10, 1.0, 3, 'reptile above paper'),
         ('reptile', 'bicubic', 10, 1.5, 3, 'reptile above bicubic'), ('paper', 'bicubic', 10, 0.5, 3, 'paper above bicubic')]
    """
    entries = []
    for angles, group in groups:
        models = list(dict.fromkeys(r["method"] for r in group if r["kind"] == "model"))
        baselines = list(dict.fromkeys(r["method"] for r in group if r["kind"] == "baseline"))
        for name in models:
            opponents = [("paper", b) for b in budgets(metric, steps)] if name != "paper" and "paper" in models else []
            if (
                name in LEARNED or name in THEN_ADAM
            ) and TUNED in models:  # the fair baseline: the standard init at the budget's best rate
                opponents += [(TUNED, b) for b in budgets(metric, steps)]
            opponents += [(baseline, (steps, metric)) for baseline in baselines]
            for against, (budget, key) in opponents:
                d = paired(group, name, against, key)
                entries.append(
                    {
                        "method": name,
                        "against": against,
                        "angles": angles,
                        "steps": budget,
                        "key": key,
                        "mean": d.mean,
                        "std": d.std,
                        "pairs": d.n,
                        "signals": d.signals,
                        "above": d.above,
                        "low": d.low,
                        "high": d.high,
                        "p": d.p,
                        "verdict": verdict(d, spread(name, against, key)) if d.n else "no pairs",
                    }
                )
    return entries


def paired_markdown(entries: list[dict[str, Any]], steps: int, unit: str = "dB") -> str:
    """``paired_table``'s entries as Markdown: against the paper's init, a row per row (and angle count) and a column
    per budget; against each baseline, a line per row at the full count. Each cell: the mean ± std of the
    differences, how many of the pairs are above, the t-test's p and the verdict."""
    digits = 2 if unit else 3

    def cell(e: dict[str, Any]) -> str:
        if not e["pairs"]:
            return "—"
        spread = f" ± {e['std']:.{digits}f}" if math.isfinite(e["std"]) else ""
        p = "" if not math.isfinite(e["p"]) else "; p < 0.001" if e["p"] < 0.001 else f"; p = {e['p']:.2g}"
        word = {f"{e['method']} above {e['against']}": "above", f"{e['against']} above {e['method']}": "below"}
        return f"{e['mean']:+.{digits}f}{spread} ({e['above']} of {e['pairs']} above{p}): {word.get(e['verdict'], e['verdict'])}"

    budgeted = {"paper": "the paper's init", TUNED: "the tuned standard init (the rate row best at each budget)"}
    others = [e for e in entries if e["against"] not in budgeted]
    parts, ct = [], any(e["angles"] is not None for e in entries)
    heading = f"row − {{}}, {'PSNR (dB)' if unit else 'score'}, paired per test signal: mean ± std over the pairs (how many above; two-sided paired t-test p): the verdict at 5 %, the rule of docs/results.md"
    for opponent, words in budgeted.items():
        versus = [e for e in entries if e["against"] == opponent]
        if not versus:
            continue
        marks = list(dict.fromkeys(e["steps"] for e in versus))
        lines = [
            heading.format(words) + ":",
            "",
            "| row |"
            + (" angles |" if ct else "")
            + " pairs (signals) |"
            + "".join(f" @{m}{' (full)' if m == steps else ''} |" for m in marks),
            "|---|" + ("---:|" if ct else "") + "---:|" + "---:|" * len(marks),
        ]
        for name, angles in dict.fromkeys((e["method"], e["angles"]) for e in versus):
            cells = {e["steps"]: e for e in versus if e["method"] == name and e["angles"] == angles}
            full = cells[marks[-1]]
            lines.append(
                f"| {name} |"
                + (f" {angles} |" if ct else "")
                + f" {full['pairs']} ({full['signals']}) |"
                + "".join(f" {cell(cells[m])} |" for m in marks)
            )
        parts.append("\n".join(lines))
    for against in dict.fromkeys(e["against"] for e in others):
        lines = [heading.format(against) + f", at the full count ({steps} steps):", ""]
        for e in (e for e in others if e["against"] == against):
            where = f" at {e['angles']} angles" if e["angles"] is not None else ""
            lines.append(f"- {e['method']}{where}: {cell(e)}, {e['pairs']} pairs from {e['signals']} signals")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def columns_of(kind: str) -> tuple[Column, ...]:
    """The table of a kind: the score after each mark and at the full count (CT: with its angles)."""
    metric = KINDS[kind].metric
    header, spec = ("IoU", ".3f") if metric == "iou" else ("PSNR", ".2f")
    extra = (Column("angles", "angles", "d", spread=False),) if kind == "ct" else ()
    # a mark at the kind's full count is its "full" column (shapes: 300)
    marks = tuple(Column(f"{header} @{m}", f"{metric}_{m}", spec) for m in MARKS if m < KINDS[kind].steps)
    return (
        Column("row", "method", "s"),
        *extra,
        *marks,
        Column(f"{header} full", metric, spec),
        Column("s", "seconds", ".0f", spread=False),
    )


def outer_curves(folder: Path) -> dict[str, list[tuple[int, float]]]:
    """The scalars of a meta-training's TensorBoard run: tag -> [(step, value)]."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    curves: dict[str, list[tuple[int, float]]] = {}
    for events in sorted(folder.glob("events.out.tfevents.*")):
        acc = EventAccumulator(str(events))
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            curves.setdefault(tag, []).extend((e.step, e.value) for e in acc.Scalars(tag))
    return curves


def meta_record(folder: Path, name: str) -> Optional[dict[str, Any]]:
    path = folder / f"{name}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def meta_identity(study: LearnedInit, p: Study, meta: MetaSettings, name: str) -> dict[str, Any]:
    """What a row's learned init is made from, as its record states it: a later run keeps an init that states it."""
    adapt = META_ADAPTS.get(name, "all")
    settings = {
        **dataclasses.asdict(meta),
        **({"adapt": adapt} if adapt != "all" else {}),  # the other rows' records as before
        # the init is made from the training signals: how the test signals are seen (--keep) or fitted (--adam-warmup)
        # is not part of it
        "data": {k: v for k, v in study.record(p).items() if k not in (*LEARNED, "steps", "keep", "adam_warmup")},
    }
    return {"settings": json.loads(json.dumps(settings))}  # as its record reads back (a tuple of angles: a list)


def meta_train(study: LearnedInit, p: Study, meta: MetaSettings, folder: Path, name: Optional[str] = None) -> Path:
    """The learned init of one row (by default its algorithm) on the class's training signals, ``folder``/<row>.ckpt,
    by the project's driver (``inr.methods.meta.meta_train``: the whole checkpoint, and the outer loop's TensorBoard run
    under ``folder``/tb); kept when its record (<row>.json) states the same settings, data and architecture."""
    name = name or meta.algorithm
    adapt = META_ADAPTS.get(name, "all")
    identity = meta_identity(study, p, meta, name)
    member = Member(study.signals(p)[0], p.seeds[0])
    dm = study.signal_set(p, meta.signals_per_step)
    spec = METHODS["gaussian"].resolve(replace(study.setting(Context(p, member, data=dm)), init="paper"))
    task, _ = study.task(Context(replace(p, keep=None), member, data=dm))  # the class's signals unmasked
    logger = TensorBoardLogger(str(folder / "tb"), name=name, version="")
    return driver(
        spec,
        dm,
        meta,
        folder / f"{name}.ckpt",
        identity,
        label=name,
        task=f"inr.tasks.{task.__name__}",
        logger=logger,
        adapt=adapt,
    )


def explain(study: LearnedInit, p: Study, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The measurements behind bands.png and ntk.png: the rows' mean band errors at ``BAND_MARKS`` (the main CT
    angles only), and the NTK of each row's init on a sub-grid of the field's grid, with the class's power."""
    # the rate rows start from the paper's θ: their kernel is its kernel
    main_rows = [r for r in rows if r["kind"] == "model" and r.get("angles") in (None, p.angles) and r["method"] not in RATES]
    bands: dict[str, dict[int, list[float]]] = {}
    for name in dict.fromkeys(r["method"] for r in main_rows):
        for mark in BAND_MARKS:
            series = [r["history"][str(mark)] for r in main_rows if r["method"] == name and str(mark) in r.get("history", {})]
            if series:
                values = torch.tensor([[math.nan if v is None else v for v in s] for s in series], dtype=torch.float64)
                bands.setdefault(name, {})[mark] = values.nanmean(0).tolist()
    edges = next((r["band_edges"] for r in main_rows if "band_edges" in r), [])
    dm = study.signal_set(p)
    member = Member(study.signals(p)[0], p.seeds[0])
    data = study.data(Context(p, member))
    data.setup("fit")
    coords, shape = subgrid(dm.shape, p.ntk_points)
    spectra = {}
    # a +adam row starts from its learned row's θ: its kernel is that row's (charted under the learned row's name, also
    # when a run fits the +adam row alone)
    for name in dict.fromkeys(THEN_ADAM.get(r["method"], r["method"]) for r in main_rows):
        L.seed_everything(p.seeds[0], verbose=False)
        model = study.model(comparison.context(study, p, name, member, data))
        if model.init_from is not None:
            load_init(model, model.init_from)
        spectra[name] = ntk_spectrum(model.eval(), coords, shape, p.num_bands)
    signals = torch.stack([dm.signal_values(k, "test").movedim(-1, 0) for k in range(dm.test_count)])
    # the kernel's bands (its sub-grid's, in cycles per unit) on the signals' whole grid: one frequency axis for both
    power, power_edges = class_energy(signals, p.num_bands, BandPartition(shape, p.num_bands).edges)
    return {
        "bands": bands,
        "band_edges": edges,
        "ntk": spectra,
        "ntk_grid": "×".join(map(str, shape)),
        "class_power": power.tolist(),
        "class_power_edges": power_edges.tolist(),
    }


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """``python -m inr.experiments.learned_init``."""
    return comparison.main(LearnedInit(), argv)


if __name__ == "__main__":
    main()
