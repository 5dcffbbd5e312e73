"""``python -m inr.methods``: print every method of the registry and its settings for the image protocol, or
regenerate the config overlays (``--write-configs DIR``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from inr.methods.registry import IMAGE_SETTING, METHODS, OVERLAYS, overlay_text
from inr.run.command import ExperimentParser


def main(argv: Optional[list[str]] = None) -> None:
    """``python -m inr.methods``: print every method and its settings for the image protocol."""
    parser = ExperimentParser(__name__, main.__doc__)
    parser.add_argument("--write-configs", type=Path, default=None, metavar="DIR", help="write the overlays under DIR/methods/")
    args = parser.parse_args(argv)
    if args.write_configs is not None:
        for relative in OVERLAYS:
            path = args.write_configs / "methods" / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(overlay_text(relative))
        print(f"{len(OVERLAYS)} overlays -> {args.write_configs / 'methods'}")
        return
    for name, method in METHODS.items():
        if 2 not in method.dims:
            print(f"{name:16s} {method.summary}; {', '.join(f'{d}-D' for d in method.dims)} only")
            continue
        spec = method.resolve(IMAGE_SETTING)
        print(f"{name:16s} {method.summary}; image.yaml: lr {spec.lr:g}, {spec.describe or '-'}")


if __name__ == "__main__":
    main()
