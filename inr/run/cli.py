"""The command line, ``inr-train`` or ``python train.py``: LightningCLI's subcommands over any task and
DataModule, with one-line errors, safe resumes and a summary line.

    inr-train --config image.yaml                                   # fit, the default subcommand
    inr-train validate --config image.yaml --ckpt_path last         # val/... of the newest checkpoint
    inr-train test --config image.yaml --ckpt_path runs/image/version_0/checkpoints/last.ckpt
    inr-train predict --config image.yaml --ckpt_path last --scale 4   # the field as files, 4× the grid

Exit codes (``inr.errors``): 0 done; 1 stopped by its environment (disk full, out of memory) or by a bug;
2 bad input, nothing trained; 3 the loss diverged; 130 / 143 stopped by Ctrl-C / SIGTERM with a checkpoint
saved. Everything but a bug ends with one line on stderr saying what happened and what to do.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import warnings
from argparse import ArgumentError
from collections.abc import Callable
from pathlib import Path
from typing import Literal, Optional, Union

import torch
from lightning.pytorch.callbacks import ProgressBar as LightningProgressBar
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.utilities.exceptions import MisconfigurationException

from inr.data.module import GridDataModule
from inr.errors import EXIT_DIVERGED, EXIT_INPUT, InputError
from inr.io.allocator import retain_freed_memory
from inr.resources import CONFIG_DIR
from inr.run.cluster import JoinTimedOut, PeerFailed, check_node_count, launch_error
from inr.run.config_loader import PARSER_MODE, check_config_file
from inr.run.gpu_probe import skip_failing_gpu_probe
from inr.run.launch_env import LaunchError, launch_variables
from inr.run.preflight import check_unique_callbacks
from inr.run.program import program_name
from inr.run.progress import ProgressBar
from inr.run.resume import RunConfigRecorder
from inr.run.saving import RunCheckpoint
from inr.run.session import SUBCOMMANDS, Session
from inr.run.signals import RunInterrupted
from inr.tasks.base import INRModule
from inr.tasks.guards import TrainingDiverged
from inr.tasks.memory import check_model_memory

DEFAULT_CONFIG = "image.yaml"
CHECKPOINT_MINUTES = 5.0  # a run's checkpoint cadence in wall time (and when training ends): inr.run.saving
SEED_MAX = 2**32 - 1  # numpy's seed range, which Lightning's seed_everything enforces
DESCRIPTION = (
    "Train (fit, the default), score (validate, test) or render (predict) an implicit neural representation. "
    "Subcommands: fit | validate | test | predict, given first; validate/test/predict need --ckpt_path."
)

# the CLI always passes its (resolved) argv explicitly
warnings.filterwarnings("ignore", message=".*LightningCLI's args parameter is intended.*")
# a resumed run writes into its own checkpoint directory on purpose
warnings.filterwarnings("ignore", message=".*Checkpoint directory .* exists and is not empty.*")
# Lightning's own use of a torch API it deprecated, printed twice per fit: nothing a user can act on
warnings.filterwarnings("ignore", message=r".*isinstance\(treespec, LeafSpec\).*")


class DropAdvertisements(logging.Filter):
    """Lightning logs "💡 Tip: ... try installing ..." for its cloud products at every fit: not about the run."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("💡 Tip:")


for _name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero"):
    logging.getLogger(_name).addFilter(DropAdvertisements())


def split_subcommand(args: list[str]) -> tuple[str, list[str]]:
    """``[fit|validate|test|predict] rest...`` -> (subcommand, rest); without one, ``fit``, so that every
    command line of the fit-only CLI keeps its meaning.

    Example:
        >>> split_subcommand(["predict", "--ckpt_path", "last"]), split_subcommand(["--config", "image.yaml"])
        (('predict', ['--ckpt_path', 'last']), ('fit', ['--config', 'image.yaml']))
    """
    if args and args[0] in SUBCOMMANDS:
        return args[0], list(args[1:])
    return "fit", list(args)


def resolve_config_names(args: list[str]) -> list[str]:
    """``--config NAME`` where NAME is not a file but ``configs/NAME`` is -> that path; no config and no
    model given -> the default config. ``configs/`` is the checkout's or the installed package's
    (``inr.resources``), so a bare name works from any directory."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--config" and i + 1 < len(out):
            out[i + 1] = _resolve(out[i + 1])
        elif arg.startswith("--config="):
            out[i] = "--config=" + _resolve(arg.split("=", 1)[1])
    given = any(a == "--config" or a.startswith(("--config=", "--model", "-h", "--help", "--print_config")) for a in out)
    if not given:
        out = ["--config", str(CONFIG_DIR / DEFAULT_CONFIG)] + out
    return out


def _resolve(name: str) -> str:
    path = Path(name)
    if path.exists():
        check_config_file(name)  # bounded before the parser reads it
        return name
    for candidate in (CONFIG_DIR / name, CONFIG_DIR / f"{name}.yaml"):
        if candidate.exists():
            return str(candidate)
    raise InputError(f"config {name!r} not found (looked in . and {CONFIG_DIR})")


_STRUCTURE = ("Does not validate against any", "Subtypes:", "Errors:", "Given value", "Expected a <class 'NoneType'>")


def condense_config_error(text: str) -> str:
    """One line from jsonargparse's nested validation report: the config key path, the class it concerns
    and the innermost complaint, e.g. ``model.encoder.sigma (inr.encoders.GaussianEncoding): Expected a
    <class 'float'>. Got value: abc``."""
    keys, classes, leaf = [], [], None
    for raw in text.splitlines():
        line = raw.strip()
        if m := re.match(r"Given value: Namespace\(class_path='([^']+)'", line):
            classes.append(m.group(1))  # a class that failed to build: its own exception is the complaint
            continue
        if not line or line.lstrip("- ").startswith(_STRUCTURE):
            continue
        if m := re.match(r'Parser key "([^"]+)":', line):
            keys.append(m.group(1))
        elif m := re.match(r"- Problem with given class_path '([^']+)':", line):
            classes.append(m.group(1))
        elif leaf is None:
            leaf = line.lstrip("- ")
    where = ".".join(keys)
    if classes:
        where = f"{where} ({classes[-1]})" if where else classes[-1]
    message = leaf or text.strip().splitlines()[0]
    return f"config {where}: {message}" if where else f"config: {message}"


class INRCLI(LightningCLI):
    """LightningCLI with the model's output width linked to the data, a ``--ckpt_path`` and the run's
    ``checkpoint`` section (a ``RunCheckpoint`` always present, configurable like any class); ``predict``
    adds its output options. One parser per subcommand (``command``), each parsed as a single command."""

    def __init__(self, *args, command: str = "fit", **kwargs) -> None:
        self.command = command
        super().__init__(*args, **kwargs)

    def add_arguments_to_parser(self, parser) -> None:
        parser.link_arguments("data.out_channels", "model.init_args.out_channels", apply_on="instantiate")
        # a volume's mode (occupancy or density) is said once, in the data; tasks without a mode ignore the link
        parser.link_arguments("data", "model.init_args.mode", compute_fn=data_mode, apply_on="instantiate")
        what = "checkpoint to resume from" if self.command == "fit" else f"checkpoint to {self.command} (required)"
        parser.add_argument("--ckpt_path", type=Optional[str], default=None, help=f"{what}, or 'last' for the newest")
        if self.command == "predict":
            add_predict_arguments(parser)
        # last.ckpt and the newest epoch=…-step=….ckpt every 5 minutes of training and when it ends (inr.run.saving);
        # --checkpoint.every_n_epochs / --checkpoint.every_n_train_steps add saves at those epochs or steps. No version
        # counter: a resumed or copied run refreshes its last.ckpt instead of writing last-v1.ckpt beside it.
        parser.add_lightning_class_args(RunCheckpoint, "checkpoint")
        parser.set_defaults(
            {
                "checkpoint.save_last": True,
                "checkpoint.save_on_train_epoch_end": True,
                "checkpoint.enable_version_counter": False,
                "checkpoint.every_n_epochs": 0,
                "checkpoint.every_n_minutes": CHECKPOINT_MINUTES,
            }
        )

    def _set_seed(self) -> None:
        """Refuse a seed numpy cannot take (Lightning raises a ValueError with a traceback) before seeding."""
        seed = self._get(self.config, "seed_everything")
        if isinstance(seed, int) and not isinstance(seed, bool) and not 0 <= seed <= SEED_MAX:
            raise InputError(f"seed_everything must be between 0 and {SEED_MAX} (or true: a random seed), got {seed}")
        super()._set_seed()

    def _parse_ckpt_path(self) -> None:
        """Nothing: LightningCLI would parse a checkpoint's hyper-parameters into the command's config, importing the
        classes they name. Here the command's config defines the model, and a checkpoint is data checked against it
        (``inr.run.checkpoints``); this CLI has no subcommand key, so Lightning's version returns early anyway."""

    def before_instantiate_classes(self) -> None:
        """Refuse a ``model.mode`` that contradicts ``data.mode`` (the link would silently replace it), and a model
        that would not fit in memory (sized on the meta device, before its weights are allocated)."""
        self.check_model_size()
        model_mode = self._get(self.config, "model", default={}).get("init_args", {}).get("mode")
        given_data_mode = self._get(self.config, "data", default={}).get("init_args", {}).get("mode")
        if model_mode is not None and given_data_mode is not None and model_mode != given_data_mode:
            raise InputError(
                f"model.mode is {model_mode!r} but data.mode is {given_data_mode!r}; the model follows data.mode, so leave model.mode out"
            )

    def check_model_size(self) -> None:
        """Build the configured model on the meta device (shapes, no storage) and refuse it, with the estimate,
        when its weights, gradients and optimizer state would not fit (``inr.tasks.memory.check_model_memory``)."""
        model = self._get(self.config, "model", default=None)
        if model is None or not getattr(model, "class_path", None):
            return
        from lightning.pytorch.cli import LightningArgumentParser

        parser = LightningArgumentParser(exit_on_error=False)
        parser.add_lightning_class_args(INRModule, "model", subclass_mode=True)
        try:
            parsed = parser.parse_object({"model": model.clone().as_dict()})
        except (ArgumentError, ValueError, TypeError):
            return  # the real instantiation reports it in its own words
        instantiate = getattr(parser, "instantiate", None) or parser.instantiate_classes
        check_model_memory(lambda: instantiate(parsed).model, "model")

    def instantiate_trainer(self, **kwargs):
        """The Trainer, after refusing duplicate callbacks in one line; ``trainer.enable_checkpointing: false``
        leaves out the ``checkpoint`` section's callback (Lightning refuses the two together), and so do
        ``validate``/``test``/``predict``, which read a checkpoint and write none. The progress bar is
        ``inr.run.progress.ProgressBar`` unless the config names its own or turns it off."""
        if self.command != "fit":
            kwargs["enable_checkpointing"] = False
        parser = self._parser(self.subcommand)
        trainer_config = {**self._get(self.config_init, "trainer", default={}), **kwargs}
        keys = [k for k in parser.callback_keys if k != "checkpoint" or trainer_config.get("enable_checkpointing") is not False]
        extra = [self._get(self.config_init, k) for k in keys]
        check_unique_callbacks([*(trainer_config.get("callbacks") or []), *extra])
        given = trainer_config.get("callbacks") or []
        callbacks = list(given) if isinstance(given, (list, tuple)) else [given]
        if trainer_config.get("enable_progress_bar") is not False and not any(
            isinstance(c, LightningProgressBar) for c in callbacks
        ):
            kwargs["callbacks"] = [*callbacks, ProgressBar()]  # redrawn ten times a second, not every step
        check_node_count(trainer_config.get("num_nodes"))
        saved_keys, parser.callback_keys = parser.callback_keys, keys
        try:
            return super().instantiate_trainer(**kwargs)
        except (ValueError, RuntimeError) as exc:  # devices or num_nodes that contradict torchrun's or SLURM's
            refusal = launch_error(exc)
            if refusal is None:
                raise
            raise refusal from None
        finally:
            parser.callback_keys = saved_keys


def data_mode(data: GridDataModule) -> Optional[str]:
    """The data's ``mode`` (a volume's occupancy or density), None for data without one."""
    return getattr(data, "mode", None)


def add_predict_arguments(parser) -> None:
    """The options of ``predict`` (the files: ``inr.export.render``)."""
    parser.add_argument("--out", type=Optional[str], default=None, help="folder of the files (default: <run dir>/predictions)")
    parser.add_argument(
        "--shape", type=Optional[list[int]], default=None, help="render grid, one size per axis of the data's grid"
    )
    parser.add_argument("--scale", type=Optional[float], default=None, help="render grid = the data's grid × scale (default 1)")
    parser.add_argument(
        "--video",
        type=Literal["auto", "mp4", "webm", "gif", "none"],
        default="auto",
        help="video of a 3-D grid (video frames, volume slices); auto: mp4 with the video extra",
    )
    parser.add_argument("--fps", type=Union[int, float], default=8, help="frames per second of that video")
    parser.add_argument("--member", type=Optional[int], default=None, help="k: the member rendered, for a model with members")
    parser.add_argument(
        "--camera_path",
        type=Optional[str],
        default=None,
        help="a radiance field's cameras: views (the data's, default), orbit, spiral, or a camera-path JSON file",
    )
    parser.add_argument("--frames", type=int, default=60, help="frames of an orbit or spiral camera path")


def build_cli(args: list[str], command: str = "fit") -> INRCLI:
    """The parsed and instantiated CLI of ``command`` (run=False: the Session calls the Trainer)."""
    return INRCLI(
        INRModule,
        GridDataModule,
        subclass_mode_model=True,
        subclass_mode_data=True,
        run=False,
        args=args,
        command=command,
        save_config_callback=RunConfigRecorder,
        parser_kwargs={
            "exit_on_error": False,
            "parser_mode": PARSER_MODE,
            "description": DESCRIPTION,
            "prog": f"{os.path.basename(sys.argv[0])} {command}" if command != "fit" else None,
        },
    )


def working_directory_importable() -> Callable[[], None]:
    """Let a config name classes of the user's own modules in the working directory (``mynets.MyNet`` of
    ./mynets.py), as ``python -m`` would, without ``PYTHONPATH=.``: the directory goes at the end of
    ``sys.path`` (after the installed packages, which it never shadows) while the command runs. Returns the
    function that takes it out again."""
    here = os.getcwd()
    if here in sys.path or "" in sys.path:
        return lambda: None
    sys.path.append(here)

    def restore() -> None:
        if here in sys.path:
            sys.path.remove(here)

    return restore


def typed_command(args: Optional[list[str]]) -> Optional[list[str]]:
    """The command line as the user typed it, when this process is the command (``args`` None): ``python
    train.py ...`` or ``inr-train ...``; None for a call from Python, which the session records as the
    program and the arguments given."""
    if args is not None or not sys.argv or not sys.argv[0]:
        return None
    program = sys.argv[0]
    return ["python", program, *sys.argv[1:]] if program.endswith(".py") else [program, *sys.argv[1:]]


def cli_main(args: Optional[list[str]] = None) -> Optional[INRCLI]:
    """Parse ``args`` (default ``sys.argv[1:]``: ``[fit|validate|test|predict] options``), run the subcommand,
    print one summary line; every failure but a bug ends with one line on stderr and the exit code of the
    module docstring."""
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in (inr.io.allocator)
    skip_failing_gpu_probe()  # without a GPU, no optimizer step looks for the NVML library (inr.run.gpu_probe)
    command, rest = split_subcommand(list(sys.argv[1:] if args is None else args))
    if command != "fit":  # an evaluation reads the weights only; the training callbacks' states are not needed
        warnings.filterwarnings("ignore", message=".*when using `ckpt_path`, callbacks used to create the checkpoint.*")
    session = Session(command, rest, program_name("inr-train", "python train.py"), typed_command(args))
    importable = working_directory_importable()
    try:
        launch_variables()  # torchrun's, SLURM's: whole numbers that agree (train.py checks before importing Lightning)
        return session.run(lambda: build_cli(resolve_config_names(rest), command))
    except RunInterrupted as exc:
        session.interrupted(exc)
    except PeerFailed as exc:  # another rank of a launcher refused the command: its line, its exit code
        session.fail(str(exc), exc.code)
    except (LaunchError, JoinTimedOut) as exc:  # this process's own launch: its line, whatever its rank
        session.fail(str(exc), getattr(exc, "code", EXIT_INPUT), everywhere=True)
    except InputError as exc:
        session.fail(str(exc))
    except TrainingDiverged as exc:
        session.fail(str(exc), EXIT_DIVERGED)
    except ArgumentError as exc:
        session.fail(condense_config_error(str(exc)))
    except MisconfigurationException as exc:  # Lightning's refusal of a Trainer setting, e.g. max_steps < -1
        session.fail(f"trainer: {str(exc).strip().splitlines()[0]}")
    except torch.OutOfMemoryError:
        session.failed_while_running("out of memory", "choose a smaller data.batch_size or model")
    except OSError as exc:  # disk full, a file system turned read-only, a quota
        where = f" ({exc.filename})" if exc.filename else ""
        if not session.running:
            session.fail(f"{exc.strerror or exc}{where}")
        session.failed_while_running(f"cannot write: {exc.strerror or exc}{where}", "free space or choose another save_dir")
    except ValueError as exc:  # jsonargparse reports failed instantiation (our InputErrors too) as ValueError
        if "Does not validate against any" not in str(exc):
            raise
        session.fail(condense_config_error(str(exc)))
    finally:
        session.close()
        importable()
        leave_process_group()


def leave_process_group() -> None:
    """The run's process group closed on the way out: torch leaves an initialised group for the interpreter's exit,
    where tearing down gloo's threads can abort the process ("terminate called without an active exception") after
    a run that succeeded."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
