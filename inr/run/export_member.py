"""One member of a stacked run (``model.members``) as an ordinary single-model run that every command accepts.

    python -m inr.run.export_member --ckpt runs/image/version_0/checkpoints/last.ckpt --member 3 --out runs/image_m3
    inr-train validate --config runs/image_m3/config.yaml --ckpt_path runs/image_m3/checkpoints/last.ckpt
    inr-train predict --config runs/image_m3/config.yaml --ckpt_path runs/image_m3/checkpoints/last.ckpt

The export is ``<out>/config.yaml`` (the stacked run's config with member k's encoder, ``seed_everything`` its
seed and, where the members had one image each, its image) and ``<out>/checkpoints/last.ckpt``: member k's
slice of every weight and of Adam's moments (the optimizer state of the single run it is), the run's step and
loops, so it also resumes as a single run. ``load_model``, ``inr-mesh`` and the turntable command read it like
any run. The stacked checkpoint is read as data (``weights_only``), its config as data (trusted classes only);
the files appear together or not at all.
"""

from __future__ import annotations

import copy
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional, Union

import torch
import yaml

from inr.errors import EXIT_INPUT, InputError
from inr.io.command_line import CommandParser
from inr.io.files import atomic_write, fsync_directory, refuse_overwriting
from inr.run.checkpoints import CheckpointError, read_checkpoint
from inr.run.config_loader import check_config_file, load_config_text
from inr.run.program import add_trust_argument
from inr.tasks.buildable import check_saved_config
from inr.tasks.members import resolve_members

MEMBER_ARGS = ("members", "member_seeds", "member_encoders")


def stacked_members(checkpoint: dict[str, Any], path: Union[str, Path]) -> tuple[int, list[int]]:
    """K and the seeds of a stacked checkpoint's members; ``CheckpointError`` for a single model's checkpoint."""
    hparams = checkpoint.get("hyper_parameters") or {}
    count, seeds = hparams.get("members"), hparams.get("member_seeds")
    if not isinstance(count, int) or not isinstance(seeds, list) or len(seeds) != count:
        raise CheckpointError(f"{path}: not a checkpoint of a model with members (model.members); it is a single model already")
    return count, [int(s) for s in seeds]


def member_checkpoint(checkpoint: dict[str, Any], k: int, count: int) -> dict[str, Any]:
    """Member k's checkpoint: the k-th slice of every weight and of every per-parameter optimizer state (Adam's
    moments; its step count is shared), the hyper-parameters without the members', and the run's step, epoch,
    loops and schedulers. Callback states are left out: they describe the stacked run."""
    state = {key: value[k].clone() for key, value in checkpoint["state_dict"].items()}
    optimizers = []
    for opt in checkpoint.get("optimizer_states", []):
        opt = copy.deepcopy(opt)
        for param_state in opt.get("state", {}).values():
            for name, value in param_state.items():
                if torch.is_tensor(value) and value.ndim > 0 and value.shape[0] == count:
                    param_state[name] = value[k].clone()
        optimizers.append(opt)
    hparams = {key: v for key, v in (checkpoint.get("hyper_parameters") or {}).items() if key not in MEMBER_ARGS}
    kept = {
        key: checkpoint[key]
        for key in ("epoch", "global_step", "pytorch-lightning_version", "loops", "lr_schedulers", "hparams_name")
        if key in checkpoint
    }
    return {**kept, "state_dict": state, "optimizer_states": optimizers, "hyper_parameters": hparams, "callbacks": {}}


def member_config(config: dict[str, Any], k: int, seeds: list[int], source: str) -> dict[str, Any]:
    """The single run's config of member k: the stacked run's, with member k's encoder and seed and, when the
    data gave the members one image each (``data.init_args.path`` a list or a directory), member k's image."""
    from inr.data.image import image_files

    config = copy.deepcopy(config)
    init = (config.get("model") or {}).get("init_args")
    if not isinstance(init, dict):
        raise InputError(f"{source}: no model.init_args section")
    encoders = init.get("member_encoders")
    for key in MEMBER_ARGS:
        init.pop(key, None)
    if encoders:
        if len(encoders) != len(seeds):
            raise InputError(f"{source}: model.init_args.member_encoders has {len(encoders)} entries for {len(seeds)} members")
        init["encoder"] = encoders[k]
    config["seed_everything"] = seeds[k]
    data = (config.get("data") or {}).get("init_args") or {}
    path = data.get("path")
    if isinstance(path, list) or (isinstance(path, str) and Path(path).is_dir()):
        files = image_files(path)
        if len(files) == len(seeds):
            data["path"] = str(files[k])
    config.pop("ckpt_path", None)
    return config


def check_same_members(config: dict[str, Any], count: int, seeds: list[int], path: Path, ckpt: Path) -> None:
    """Refuse a config that is not the stacked run's: its members (``members``, ``member_seeds``,
    ``member_encoders``) must be the checkpoint's, K and seeds; a single model's config would pair its network with
    the member's weights."""
    init = (config.get("model") or {}).get("init_args") or {}
    given = [init.get(key) for key in MEMBER_ARGS]
    same = any(value is not None for value in given) and resolve_members(*given) == (count, seeds)
    if not same:
        raise InputError(
            f"{path}: not the config of the run of {ckpt}, which has {count} members (seeds {seeds}); "
            "give that run's config.yaml with --config"
        )


def export_member(
    ckpt: Union[str, Path],
    k: int,
    out: Union[str, Path],
    config: Optional[Union[str, Path]] = None,
    trust: Union[str, Sequence[str], None] = None,
) -> Path:
    """Write member k of the stacked run's checkpoint ``ckpt`` as a single run in ``out`` (``config.yaml`` and
    ``checkpoints/last.ckpt``); ``config`` defaults to the run's ``config.yaml`` two folders above ``ckpt``.
    Returns the checkpoint written. ``out`` must not exist or be empty; ``trust``: packages of the user's own
    classes the config may name (``inr.io.trusted``)."""
    ckpt, out = Path(ckpt), Path(out)
    refuse_overwriting(out, [ckpt, config], "--out", directory=True)  # the default config lies where ckpt does
    checkpoint = read_checkpoint(ckpt)
    count, seeds = stacked_members(checkpoint, ckpt)
    if not 0 <= k < count:
        raise InputError(f"--member {k}: {ckpt} holds members 0..{count - 1}")
    config_path = Path(config) if config is not None else ckpt.resolve().parent.parent / "config.yaml"
    if config_path.is_dir():
        raise InputError(f"{config_path}: a directory, not a run's config.yaml")
    if not config_path.is_file():
        raise InputError(f"{config_path}: run config not found; pass --config")
    check_config_file(str(config_path))  # bounded before it is read
    try:
        text = config_path.read_text()
    except UnicodeDecodeError:
        raise InputError(f"{config_path}: not a text file (a run's config.yaml is YAML)") from None
    loaded = load_config_text(text, str(config_path))
    check_saved_config(loaded.get("model"), str(config_path), "model", trust, run_dir=config_path.resolve().parent)
    check_same_members(loaded, count, seeds, config_path, ckpt)
    single_config = member_config(loaded, k, seeds, str(config_path))
    single = member_checkpoint(checkpoint, k, count)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"--out {out}: exists and is not an empty directory")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write in {out.parent} ({exc.strerror or exc})") from None
    try:
        (staging / "checkpoints").mkdir()
        with atomic_write(staging / "config.yaml", "w") as f:
            yaml.safe_dump(single_config, f, sort_keys=False)
        with atomic_write(staging / "checkpoints" / "last.ckpt") as f:
            torch.save(single, f)
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    fsync_directory(out.parent)
    return out / "checkpoints" / "last.ckpt"


def main(argv: Optional[list[str]] = None) -> None:
    parser = CommandParser(
        prog="python -m inr.run.export_member",
        description=__doc__.splitlines()[0],
        run_config="the run's config.yaml (default: two folders above --ckpt)",
    )
    parser.add_argument("--ckpt", required=True, help="checkpoint of a run with model.members")
    parser.add_argument("--member", type=int, required=True, help="k, the member to export (0..K−1)")
    parser.add_argument("--out", required=True, help="folder of the single run (must not exist or be empty)")
    add_trust_argument(parser)
    args = parser.parse_args(argv)
    try:
        written = export_member(args.ckpt, args.member, args.out, args.config, trust=args.trust)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_INPUT) from None
    print(f"member {args.member} of {args.ckpt}: {written} (config {written.parent.parent / 'config.yaml'})")


if __name__ == "__main__":
    main()
