"""The command line: a LightningCLI over any task and DataModule, with one-line errors and a summary."""
from __future__ import annotations

import re
import shutil
import sys
import time
import warnings
from argparse import ArgumentError
from pathlib import Path
from typing import Optional

from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.utilities import rank_zero_only

from inr.callbacks.guards import TrainingDiverged
from inr.data.module import GridDataModule
from inr.errors import InputError
from inr.tasks.base import INRModule

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
DEFAULT_CONFIG = "image.yaml"

# train.py always passes its (resolved) argv explicitly
warnings.filterwarnings("ignore", message=".*LightningCLI's args parameter is intended.*")


def resolve_config_names(args: list[str]) -> list[str]:
    """``--config NAME`` where NAME is not a file but ``configs/NAME`` is -> that path; no config and no
    model given -> the default config."""
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
        return name
    for candidate in (CONFIG_DIR / name, CONFIG_DIR / f"{name}.yaml"):
        if candidate.exists():
            return str(candidate)
    raise InputError(f"config {name!r} not found (looked in . and {CONFIG_DIR})")


_STRUCTURE = ("Does not validate against any", "Subtypes:", "Errors:", "Given value", "- Expected a <class 'NoneType'>")


def condense_config_error(text: str) -> str:
    """One line from jsonargparse's nested validation report: the config key path, the class it concerns
    and the innermost complaint, e.g. ``model.encoder.sigma (inr.encoders.GaussianEncoding): Expected a
    <class 'float'>. Got value: abc``."""
    keys, classes, leaf = [], [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(_STRUCTURE):
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
    """LightningCLI with the model's output width linked to the data and a ``--ckpt_path`` to resume from."""

    def add_arguments_to_parser(self, parser) -> None:
        parser.link_arguments("data.out_channels", "model.init_args.out_channels", apply_on="instantiate")
        parser.add_argument("--ckpt_path", type=Optional[str], default=None, help="checkpoint to resume from, or 'last'")


def build_cli(args: list[str]) -> INRCLI:
    return INRCLI(
        INRModule,
        GridDataModule,
        subclass_mode_model=True,
        subclass_mode_data=True,
        run=False,
        args=args,
        save_config_kwargs={"overwrite": True},
        # every epoch's end refreshes checkpoints/last.ckpt, what `--ckpt_path last` resumes from
        trainer_defaults={"callbacks": [ModelCheckpoint(save_last=True)]},
        parser_kwargs={"exit_on_error": False},
    )


@rank_zero_only
def print_summary(cli: INRCLI, seconds: float) -> None:
    metrics = cli.model.evaluate()
    parts = [f"{k} {v:.4g}" for k, v in sorted(metrics.items())]
    log_dir = run_dir(cli)
    print(f"summary: {' | '.join(parts)} | {seconds:.1f} s | steps {cli.trainer.global_step} | logs {log_dir}", flush=True)


def resolve_checkpoint(cli: INRCLI, ckpt_path: Optional[str]) -> Optional[str]:
    """``last`` -> the newest ``last.ckpt`` among this logger's earlier versions, whose version the run then
    continues (same log directory); a path must exist."""
    if ckpt_path is None:
        return None
    if ckpt_path != "last":
        if not Path(ckpt_path).is_file():
            raise InputError(f"ckpt_path {ckpt_path}: file not found")
        return ckpt_path
    logger = cli.trainer.logger
    root = Path(logger.root_dir) if logger is not None else Path(cli.trainer.default_root_dir)
    candidates = sorted(root.glob("*/checkpoints/last*.ckpt"), key=lambda p: p.stat().st_mtime)
    if not candidates:
        raise InputError(f"ckpt_path last: no last.ckpt under {root} (enable ModelCheckpoint(save_last=true))")
    newest = candidates[-1]
    version = newest.parent.parent.name
    if logger is not None and hasattr(logger, "_version") and version.startswith("version_"):
        logger._version = int(version.split("_", 1)[1])  # continue in the same log directory
    return str(newest)


def run_dir(cli: INRCLI) -> str:
    """The run's log directory, read from the logger (``Trainer.log_dir`` broadcasts: not for rank 0 alone)."""
    logger = cli.trainer.logger
    return str(logger.log_dir) if logger is not None and logger.log_dir else cli.trainer.default_root_dir


def _remove_empty_run_dir(cli: Optional[INRCLI]) -> None:
    """After a failure, drop a run directory that holds nothing but the saved config (and, when the failure
    came before the first step, e.g. in a task's ``setup``, the logger's still empty event file)."""
    if cli is None or cli.trainer.logger is None:
        return
    path = Path(run_dir(cli))
    untrained = cli.trainer.global_step == 0
    disposable = lambda p: p.name in ("config.yaml", "hparams.yaml") or (untrained and p.name.startswith("events.out.tfevents."))
    if path.is_dir() and all(disposable(p) for p in path.iterdir()):
        shutil.rmtree(path, ignore_errors=True)


def cli_main(args: Optional[list[str]] = None) -> Optional[INRCLI]:
    """Parse ``args`` (default ``sys.argv[1:]``), train, print one summary line; errors -> one line, exit 2."""
    cli = None
    try:
        argv = resolve_config_names(sys.argv[1:] if args is None else args)
        cli = build_cli(argv)
        if cli.config.get("print_config"):
            return cli
        ckpt_path = resolve_checkpoint(cli, cli.config.get("ckpt_path"))
        start = time.perf_counter()
        cli.trainer.fit(cli.model, datamodule=cli.datamodule, ckpt_path=ckpt_path)
        if cli.trainer.interrupted:
            raise SystemExit(130)
        print_summary(cli, time.perf_counter() - start)
        return cli
    except InputError as exc:
        _fail(cli, str(exc))
    except TrainingDiverged as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(3) from None
    except ArgumentError as exc:
        _fail(cli, condense_config_error(str(exc)))
    except ValueError as exc:  # jsonargparse reports failed instantiation (our InputErrors too) as ValueError
        if "Does not validate against any" not in str(exc):
            raise
        _fail(cli, condense_config_error(str(exc)))


def _fail(cli: Optional[INRCLI], message: str) -> None:
    _remove_empty_run_dir(cli)
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)
