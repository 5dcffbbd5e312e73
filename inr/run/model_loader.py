"""One loader of trained runs: a checkpoint (data only) plus its run's config (data only, trusted classes only).

    model = load_model("runs/image/version_0/checkpoints/last.ckpt")   # the config.yaml two folders up
    image = model.render((512, 512))                                    # (C, 512, 512), chunked

Used by ``inr-mesh``, the turntable command and notebooks. The weights are read with
``torch.load(weights_only=True)``; the config beside them builds only classes of the trusted packages and
imports nothing from the run directory (``inr.io.trusted``). A run built from the user's own classes loads
once the user grants their package (``trust=["mylab"]``, the commands' ``--trust mylab``, or
``INR_TRUSTED_PACKAGES=mylab``); in Python, classes the caller has already imported count as granted.
"""

from __future__ import annotations

from argparse import ArgumentError
from collections.abc import Sequence
from pathlib import Path
from typing import Optional, Union

from inr.errors import InputError
from inr.io.trusted import refuse_untrusted_imports, trusted_imported_classes
from inr.run.checkpoints import check_finite, check_matches_model, read_checkpoint
from inr.run.config_loader import load_config_text
from inr.tasks.buildable import check_saved_config


def load_model(
    ckpt: Union[str, Path],
    config: Optional[Union[str, Path]] = None,
    trust: Union[str, Sequence[str], None] = None,
    imported: bool = True,
):
    """Rebuild a trained task from its run's ``config.yaml`` (default: two folders above the checkpoint,
    where the command line saves it) and load the checkpoint's weights; returned in eval mode.

    ``trust``: packages of the user's own classes that the config may build (also ``$INR_TRUSTED_PACKAGES``);
    ``imported``: classes the calling program has already imported count as granted (Python use; the commands
    pass False, since nothing of the user's is imported there)."""
    from lightning.pytorch.cli import LightningArgumentParser

    from inr.tasks.base import INRModule

    ckpt = Path(ckpt)
    if not ckpt.is_file():
        raise InputError(f"{ckpt}: checkpoint not found")
    config = Path(config) if config is not None else ckpt.resolve().parent.parent / "config.yaml"
    if not config.is_file():
        raise InputError(f"{config}: run config not found; pass --config")
    try:
        text = config.read_text()
    except UnicodeDecodeError:
        raise InputError(f"{config}: not a text file (a run's config.yaml is YAML)") from None
    loaded = load_config_text(text, str(config))  # bounded like train.py's configs
    model_cfg = loaded.get("model")
    if not isinstance(model_cfg, dict):
        raise InputError(f"{config}: no model section")
    if not isinstance(model_cfg.get("init_args", {}), dict):
        raise InputError(f"{config}: model.init_args must be a mapping of arguments")
    classes = trusted_imported_classes(model_cfg) if imported else frozenset()
    state = read_checkpoint(ckpt)  # weights_only: a checkpoint is data, never code
    # out_channels is linked from the data at training time, so the saved config lacks it; the checkpoint has it
    model_cfg.setdefault("init_args", {})["out_channels"] = state.get("hyper_parameters", {}).get("out_channels", 1)
    # so is a task's mode (occupancy, density, sdf): without it an sdf or density model would be rebuilt as occupancy
    if state.get("hyper_parameters", {}).get("mode") is not None:
        model_cfg["init_args"].setdefault("mode", state["hyper_parameters"]["mode"])
    # checked as built: the values taken from the checkpoint included
    grants = check_saved_config(model_cfg, str(config), "model", trust, classes, run_dir=config.resolve().parent)
    parser = LightningArgumentParser(exit_on_error=False)
    parser.add_lightning_class_args(INRModule, "model", subclass_mode=True)
    try:
        with refuse_untrusted_imports(str(config), grants):
            parsed = parser.parse_object({"model": model_cfg})
            instantiate = getattr(parser, "instantiate", None) or parser.instantiate_classes  # renamed in jsonargparse 4.49
            model = instantiate(parsed).model
    except (ArgumentError, ValueError, TypeError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{config}: its model section does not build ({str(exc).strip().splitlines()[0]})") from None
    check_matches_model(state, model, ckpt)
    check_finite(state, ckpt)  # NaN weights would mesh or render as nothing, silently
    model.load_state_dict(state["state_dict"])
    return model.eval()
