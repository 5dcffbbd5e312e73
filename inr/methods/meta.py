"""The meta-training driver: one learned initialisation θ₀ meta-trained over a class of signals (``MetaLearning`` on a
``SignalSet``, ``inr.tasks.meta``), written, and kept when a later call asks for the same one; and ``MetaSettings``,
the one statement of how an init is meta-trained (its defaults: ``inr-codec learn-init``'s; ``META``: the
learned-init study's, per class and algorithm: Reptile, MAML and Meta-SGD).

Both meta-trainings of the project are ``meta_train``; what differs between them is an argument, not a loop:

- the study (``inr.experiments.learned_init``): the registry's Gaussian features, the class's own task, Reptile and
  MAML with the inner SGD of ``META``; the whole checkpoint written, and a TensorBoard run of the outer loop;
- the codec (``inr.codec.learn``): a network of the codec's table, Reptile whose inner loop is the codec's own fit
  (``inner_lr`` and ``inner_optimizer`` left None: the registry's optimiser and rate for the method); only the
  field's tensors written (``parts_only``), with the photographs' digests (``extra``).

``configs/meta_*.yaml`` state ``META``'s Reptile of each class for ``train.py``; tests/methods/test_meta.py checks
them against it. ``MetaSettings`` and ``META`` load no torch (the codec's ``--help`` shows their defaults): the driver
imports the training where it runs.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from inr.errors import InputError

if TYPE_CHECKING:
    from inr.data.signal_sets import SignalSet
    from inr.methods.registry import Resolved

# ``inr.tasks.meta.ALGORITHMS``, here without its import (tests/methods/test_meta.py checks they are the same)
ALGORITHMS = ("reptile", "maml", "metasgd")


@dataclass(frozen=True)
class MetaSettings:
    """How one init is meta-trained: ``steps`` outer steps, each adapting ``signals_per_step`` of ``train_signals``
    training signals (``resolution`` samples per side) from θ by ``inner_steps`` steps of ``inner_optimizer`` at
    ``inner_lr`` (None: the fitted method's own optimiser and rate, the registry's); the outer Adam at ``outer_lr``
    (Reptile's ε) steps on ``algorithm``'s direction. ``test_signals`` held-out signals are scored ``validations``
    times as it runs, every ``steps // validations`` outer steps — an epoch of the data, whose draws of signals are
    seeded per epoch, so it changes the init too. ``seed`` seeds θ's draw.

    The defaults are ``inr-codec learn-init``'s (its flags default to them); ``META`` holds the study's.

    Example:
        >>> MetaSettings().inner_steps, META["natural"]["reptile"].inner_lr, META["ct"]["maml"].steps
        (10, 10.0, 60)
    """

    algorithm: str = "reptile"
    steps: int = 200
    inner_steps: int = 10
    inner_lr: Optional[float] = None
    inner_optimizer: Optional[str] = None
    outer_lr: float = 1e-3
    signals_per_step: int = 4
    resolution: int = 192
    train_signals: int = 256
    test_signals: int = 4
    validations: int = 2
    seed: int = 0

    def check(self) -> None:
        """Refuse a setting no meta-training can run, in one line naming its flag."""
        for key, least in (("resolution", 8), ("steps", 1), ("inner_steps", 1), ("signals_per_step", 1), ("test_signals", 1)):
            if getattr(self, key) < least:
                raise InputError(f"--{key.replace('_', '-')} must be ≥ {least}, got {getattr(self, key)}")
        if not self.outer_lr > 0:
            raise InputError(f"--outer-lr must be > 0, got {self.outer_lr}")
        if self.algorithm not in ALGORITHMS:
            raise InputError(f"algorithm {self.algorithm!r}: choose {' or '.join(ALGORITHMS)}")
        if self.inner_lr is not None and not (math.isfinite(self.inner_lr) and self.inner_lr > 0):
            raise InputError(f"--inner-lr must be a finite number > 0, got {self.inner_lr}")
        if self.validations < 1:
            raise InputError(f"validations must be ≥ 1, got {self.validations}")


# The study's meta-training of each class, chosen by short trials on this 2-core CPU (benchmarks/meta_settings.py runs
# them; docs/learned_init.md, "How the settings were chosen", states what it measured): two inner SGD steps; Reptile's
# outer Adam at 1e-3, MAML's at 1e-4; the inner rate per class (10 for natural crops and CT, 1 for shapes and text,
# where 10 was seen to diverge or oscillate in earlier trials not repeated); MAML's and Meta-SGD's on CT 1, not 10
# (benchmarks/maml_ct_inner_rate.py, 10 outer steps): from θ₀ one inner SGD step at 10 moves the sigmoid's input to
# −149 … −35 over the grid (at 3: −20 … −6), the output is 0 with no gradient, the second step does nothing and the
# outer gradient vanishes (‖∇θ‖ 1.5e-17, at 3 1.6e-3), so MAML learns nothing and a fit from its init stays a constant
# (held-out PSNR 8.06 dB after 1 to 10 steps); at 1 the step moves it to −6.5 … −1.5, nothing saturates, ‖∇θ‖ 0.2, and
# the PSNR after 10 outer steps rises from 10.07 dB (0 steps) to 11.10 (10); outer steps for at most about a quarter
# of an hour each on this shared CPU with one thread (--threads 1: two threads on its two loaded cores ran a fit 5-10
# times slower). MAML's second-order steps cost about twice Reptile's on images, so it gets half as many; through CT's
# projections they cost about 10 s each against Reptile's 0.9 s, so 60 there. 64² grids (shapes 32³), 256 training
# and 8 test signals, ten scorings of the outer loop (its TensorBoard curves). Meta-SGD is MAML with learned
# per-tensor inner rates: MAML's settings (its rates start at MAML's inner rate), the rates' own outer Adam at
# ``MetaLearning``'s ``inner_log_rate_lr`` (1e-2); not tuned by trials.
META = {
    kind: {
        name: MetaSettings(
            name,
            steps,
            inner_steps=2,
            inner_lr=lr,
            inner_optimizer="sgd",
            outer_lr=outer_lr,
            resolution=side,
            test_signals=8,
            validations=10,
        )
        for name, lr, outer_lr, steps in (
            ("reptile", reptile_lr, 1e-3, reptile_steps),
            ("maml", maml_lr, 1e-4, maml_steps),
            ("metasgd", maml_lr, 1e-4, maml_steps),
        )
    }
    for kind, side, reptile_lr, maml_lr, reptile_steps, maml_steps in (
        ("natural", 64, 10.0, 1.0, 2000, 1000),
        ("text", 64, 1.0, 1.0, 2000, 1000),
        ("ct", 64, 10.0, 1.0, 600, 60),
        ("shape", 32, 1.0, 1.0, 600, 300),
    )
}
# Shift modulations (functa, Dupont et al. 2022): Meta-SGD whose inner loop adapts a shift per hidden layer and nothing
# else (``MetaLearning(adapt="modulations")``), 3 inner steps as functa's; otherwise the class's MAML settings (its
# rates start at MAML's inner rate 1, the outer Adam at 1e-4, MAML's outer steps). Not tuned by trials.
for _kind, _maml in ((kind, META[kind]["maml"]) for kind in ("natural", "text", "ct", "shape")):
    META[_kind]["modulations"] = replace(_maml, algorithm="metasgd", inner_steps=3)
# what the inner loop of a row of ``META`` adapts where it is not every tensor (``MetaLearning``'s ``adapt``)
META_ADAPTS = {"modulations": "modulations"}


def inner_loop(spec: Resolved, settings: MetaSettings) -> tuple[str, float]:
    """(optimiser, rate) of the inner loop: the settings', or where they leave them None the method's own fit's.

    Example:
        >>> from inr.methods.registry import IMAGE_SETTING, METHODS
        >>> inner_loop(METHODS["siren"].resolve(IMAGE_SETTING), MetaSettings())
        ('adam', 0.0005)
    """
    optimizer = settings.inner_optimizer
    if optimizer is None:
        import torch

        own = spec.optimizer.cls()
        optimizer = {torch.optim.Adam: "adam", torch.optim.SGD: "sgd"}.get(own)  # as the inner loop names them
        if optimizer is None:
            raise InputError(f"{spec.name}: its optimiser {own.__name__} has no inner loop here (Adam or SGD)")
    return optimizer, spec.lr if settings.inner_lr is None else settings.inner_lr


def recorded(path: Path, identity: Mapping[str, Any]) -> bool:
    """Whether ``path`` is there with a record beside it (``.json``) that states ``identity``."""
    record_path = path.with_suffix(".json")
    if not (path.is_file() and record_path.is_file()):
        return False
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and all(record.get(k) == v for k, v in identity.items())


def held_out(scores: Mapping[str, float]) -> str:
    """``evaluate()``'s mean scores in words: ``PSNR 14.20 dB after 0 steps, 16.31 dB after 2 steps``.

    Example:
        >>> held_out({"test/psnr@0": 14.2, "test/psnr@0/std": 1.0, "test/psnr@2": 16.314})
        'PSNR 14.20 dB after 0 steps, 16.31 dB after 2 steps'
    """
    means = {k: v for k, v in scores.items() if not k.endswith("/std")}
    metric = next(iter(means), "/").split("/")[1].partition("@")[0]
    name, unit, spec = {"psnr": ("PSNR", " dB", ".2f"), "iou": ("IoU", "", ".3f")}.get(metric, (metric, "", ".4g"))
    return f"{name} " + ", ".join(f"{v:{spec}}{unit} after {k.rpartition('@')[2]} steps" for k, v in means.items())


def meta_train(
    spec: Resolved,
    data: SignalSet,
    settings: MetaSettings,
    path: Path,
    identity: Mapping[str, Any],
    *,
    label: str,
    task: str = "inr.tasks.ImageFitting",
    eval_steps: Optional[Sequence[int]] = None,
    logger: Any = False,
    parts_only: bool = False,
    extra: Optional[Mapping[str, Any]] = None,
    check_kept: Optional[Callable[[Path], None]] = None,
    adapt: str = "all",
) -> Path:
    """θ₀ of ``spec``'s encoder and network meta-learned on ``data`` with ``settings``, written to ``path``; kept
    instead when ``path`` is there with a record (``path`` as ``.json``) that states ``identity`` (and
    ``check_kept(path)`` accepts it).

    Args:
        spec: the method resolved where its inits are used: its encoder, network and (for an inner loop the
            settings leave None) optimiser and rate.
        data: the class's signals, ``settings``' (the caller builds it: a study shares it with its rows); its epoch
            is set here to ``settings.steps // settings.validations`` outer steps.
        identity: what the init is made from, as its record states it (``{"settings": ...}``): the next call keeps
            the init if its own identity is the same.
        label: the init in progress lines and messages.
        task: the fitting task of one signal whose loss the inner loop minimises (``MetaLearning.task``).
        eval_steps: the inner-step counts after which the held-out signals are scored (None: ``MetaLearning``'s).
        logger: the Trainer's logger (a ``TensorBoardLogger`` keeps the outer loop's curves).
        parts_only: write the encoder's and network's tensors only, not the whole checkpoint (``hyper_parameters``).
        extra: entries added to the checkpoint (the codec's: the photographs it was learned on, its settings).
        check_kept: called with a kept ``path`` before it is kept (raises if it no longer serves).
        adapt: what the inner loop adapts (``MetaLearning.adapt``): ``all`` network tensors, or the hidden layers'
            shift ``modulations`` only.

    Returns:
        ``path``; its record holds ``identity``, the fit's wall seconds and ``evaluate()``'s held-out scores.
    """
    if recorded(path, identity):
        if check_kept is not None:
            check_kept(path)
        print(f"{label}: the learned init in {path} has these settings; kept", file=sys.stderr, flush=True)
        return path
    import torch

    from inr.io.files import atomic_write
    from inr.methods.training import fit_row, silence_lightning
    from inr.tasks.init_from import PARTS

    settings.check()
    silence_lightning()
    data.steps_per_epoch_arg = max(1, settings.steps // settings.validations)
    model = meta_model(spec, data, settings, task=task, eval_steps=eval_steps, adapt=adapt)
    trainer_args = {"limit_val_batches": 1.0, "check_val_every_n_epoch": 1, "log_every_n_steps": 10}
    seconds = fit_row(model, data, settings.steps, logger=logger, label=f"{label}: meta-training", **trainer_args)
    state = model.state_dict()
    if parts_only:
        checkpoint: dict[str, Any] = {"state_dict": {k: v.detach().cpu() for k, v in state.items() if k.startswith(PARTS)}}
    else:
        checkpoint = {"state_dict": state, "hyper_parameters": dict(model.hparams)}
    checkpoint.update(extra or {})
    model.on_save_checkpoint(checkpoint)  # the architecture its weights belong to
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as f:
        torch.save(checkpoint, f)
    scores = model.evaluate()
    with atomic_write(path.with_suffix(".json"), "w") as f:
        f.write(json.dumps({**identity, "seconds": seconds, "scores": scores}, indent=1))
    print(f"wrote {path}: {label} meta-trained in {seconds:.0f} s; held-out {held_out(scores)}", file=sys.stderr, flush=True)
    return path


def meta_model(
    spec: Resolved,
    data: SignalSet,
    settings: MetaSettings,
    *,
    task: str = "inr.tasks.ImageFitting",
    eval_steps: Optional[Sequence[int]] = None,
    adapt: str = "all",
) -> Any:
    """The ``MetaLearning`` task ``meta_train`` trains: θ drawn from ``spec``'s encoder and network at the settings'
    seed, the outer Adam at ``outer_lr``, the inner loop of ``inner_loop``."""
    import lightning as L
    import torch

    from inr.tasks.meta import MetaLearning

    encoder, network, _ = spec.build()
    inner_optimizer, inner_lr = inner_loop(spec, settings)
    L.seed_everything(settings.seed, verbose=False)
    return MetaLearning(
        encoder=encoder,
        network=network,
        out_channels=data.out_channels,
        optimizer=lambda params: torch.optim.Adam(params, lr=settings.outer_lr),
        task=task,
        mode=data.mode,
        algorithm=settings.algorithm,
        inner_loop_steps=settings.inner_steps,
        inner_loop_lr=inner_lr,
        inner_loop_optimizer=inner_optimizer,
        eval_steps=None if eval_steps is None else list(eval_steps),
        adapt=adapt,
    )


def meta_seconds(
    spec: Resolved, data: SignalSet, settings: MetaSettings, *, task: str = "inr.tasks.ImageFitting", adapt: str = "all"
) -> float:
    """Expected seconds of ``meta_train`` here: the median outer step of a short probe (after one to warm up) × the
    settings' outer steps; the held-out scorings (``validations`` of them) add to it."""
    from inr.methods.training import silence_lightning, step_seconds

    silence_lightning()
    settings.check()
    model = meta_model(spec, data, settings, task=task, adapt=adapt)
    return step_seconds(model, data) * settings.steps
