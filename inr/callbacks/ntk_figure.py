"""The figure of an ``NTKCallback`` run, drawn from its TensorBoard event file: the kernel slice Θ(x_c, v) at the
first and last logged steps (and evenly between), the drift ‖K_t − K₀‖_F/‖K₀‖_F and the top eigenvalues of K_t/N
over the steps.

    python -m inr.callbacks.ntk_figure RUN_DIR -o ntk.png [--slices 3] [--title TEXT]

RUN_DIR is the run's log directory, the one holding ``events.out.tfevents.*`` (``runs/image/version_0``); the
files of a resumed run are read in order, a later value of a step replacing an earlier one.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

import numpy as np

from inr.errors import InputError

DRIFT = "ntk/drift"
SLICE = "ntk/kernel_slice"
EIGENVALUE = re.compile(r"ntk/eigenvalue_(\d+)$")
EVENTS = "events.out.tfevents.*"
TITLE = "NTKCallback: the empirical NTK on its probes during training"


@dataclass
class NTKLog:
    """What ``NTKCallback`` logged, by global step.

    Attributes:
        drift: step -> ‖K_t − K₀‖_F / ‖K₀‖_F.
        eigenvalues: i -> {step -> λ_i(K_t/N)}, i = 0 the largest.
        slices: step -> the logged kernel slice as stored (H, W) gray or (H, W, 3) uint8; 1 + Θ/max|Θ| over 2 in
            [0, 255] (grey = 0) for 2D grids, a line plot for 1D ones.
    """

    drift: dict[int, float] = field(default_factory=dict)
    eigenvalues: dict[int, dict[int, float]] = field(default_factory=dict)
    slices: dict[int, np.ndarray] = field(default_factory=dict)


def event_files(run_dir: Union[str, Path]) -> list[Path]:
    """The event files directly in ``run_dir``, oldest first; refused (``InputError``) when there is none, naming
    the run folders below it that have some.

    Example:
        >>> import tempfile
        >>> event_files(tempfile.mkdtemp())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        inr.errors.InputError: .../...: no TensorBoard event file (events.out.tfevents.*) in it
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InputError(f"{run_dir}: {'a file, not a run directory' if run_dir.exists() else 'no such directory'}")
    files = sorted(run_dir.glob(EVENTS), key=lambda p: (p.stat().st_mtime, p.name))
    if not files:
        below = sorted({p.parent.relative_to(run_dir).as_posix() for p in run_dir.glob(f"*/**/{EVENTS}")})
        hint = f"; runs below it: {', '.join(below[:5])}" + (" ..." if len(below) > 5 else "") if below else ""
        raise InputError(f"{run_dir}: no TensorBoard event file ({EVENTS}) in it{hint}")
    return files


def decode_png(data: bytes) -> np.ndarray:
    """A PNG's bytes -> (H, W) uint8 when gray, else (H, W, 3): TensorBoard stores a one-channel image as three
    equal channels, which are one again here.

    Example:
        >>> import imageio.v3 as iio
        >>> gray = np.arange(6, dtype=np.uint8).reshape(2, 3)
        >>> decode_png(iio.imwrite("<bytes>", np.stack([gray] * 3, -1), extension=".png")).tolist()
        [[0, 1, 2], [3, 4, 5]]
    """
    import imageio.v3 as iio

    pixels = np.asarray(iio.imread(io.BytesIO(data), extension=".png"))
    if pixels.ndim == 3:
        pixels = pixels[..., :3]  # (H, W, 4) -> (H, W, 3): no transparency is logged
        if pixels.shape[-1] == 1 or (pixels == pixels[..., :1]).all():
            return pixels[..., 0]
    return pixels


def read_ntk_log(run_dir: Union[str, Path]) -> NTKLog:
    """The ``ntk/*`` scalars and kernel slices of the run in ``run_dir`` (``InputError`` when it has no event file
    or logged no ``ntk/drift``)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    log = NTKLog()
    for path in event_files(run_dir):
        acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "images": 0})
        try:
            acc.Reload()
        except Exception as exc:  # a truncated or foreign file: tensorboard raises its own DataLossError & co.
            raise InputError(f"{path}: not a readable TensorBoard event file ({type(exc).__name__}: {exc})") from exc
        tags = acc.Tags()
        for tag in tags.get("scalars", []):
            match = EIGENVALUE.match(tag)
            if tag == DRIFT:
                log.drift.update((e.step, e.value) for e in acc.Scalars(tag))
            elif match:
                log.eigenvalues.setdefault(int(match[1]), {}).update((e.step, e.value) for e in acc.Scalars(tag))
        if SLICE in tags.get("images", []):
            log.slices.update((e.step, decode_png(e.encoded_image_string)) for e in acc.Images(SLICE))
    if not log.drift:
        raise InputError(f"{run_dir}: no {DRIFT} in its event file; was the run trained with NTKCallback?")
    return log


def pick_steps(steps: list[int], count: int) -> list[int]:
    """``count`` of the sorted ``steps``, evenly spaced by index, the first and the last always among them.

    Example:
        >>> pick_steps([0, 100, 200, 300, 400], 3)
        [0, 200, 400]
        >>> pick_steps([0, 100], 3)
        [0, 100]
    """
    steps = sorted(steps)
    if count >= len(steps):
        return steps
    if count < 2:
        return steps[-1:]
    return sorted({steps[round(i * (len(steps) - 1) / (count - 1))] for i in range(count)})


def draw_ntk(log: NTKLog, slices: int = 3, title: str = TITLE):
    """The figure: one panel per chosen kernel slice (``pick_steps``), then the drift, then the eigenvalues (log
    scale, λ_0 and the last labelled). Built on ``matplotlib.figure.Figure``: no pyplot state."""
    from matplotlib.figure import Figure

    shown = pick_steps(list(log.slices), slices)
    fig = Figure(figsize=(3.8 * (len(shown) + 2), 3.8))
    axes = fig.subplots(1, len(shown) + 2, squeeze=False)[0]
    for ax, step in zip(axes, shown):
        image = log.slices[step]
        if image.ndim == 2:  # (h, w) of the plane through x_c over [0, 1)², rows = v_y
            ax.imshow(image, cmap="gray", vmin=0, vmax=255, extent=(0, 1, 1, 0), interpolation="nearest")
            ax.set_xlabel("v_x")
            ax.set_ylabel("v_y")
        else:  # a 1D task's profile, already a plot
            ax.imshow(image)
            ax.set_axis_off()
        ax.set_title(f"Θ(x_c, v), step {step}")
    drift_ax, eig_ax = axes[len(shown)], axes[len(shown) + 1]
    steps = sorted(log.drift)
    drift_ax.plot(steps, [log.drift[s] for s in steps], marker="o")
    drift_ax.set_title("‖K_t − K₀‖_F / ‖K₀‖_F")
    drift_ax.set_xlabel("step")
    order = sorted(log.eigenvalues)
    for i in order:
        at = sorted(log.eigenvalues[i])
        label = f"λ_{i}" if i in (order[0], order[-1]) else None
        eig_ax.plot(
            at, [log.eigenvalues[i][s] for s in at], marker=".", label=label, color="0.45" if i == order[-1] and i else None
        )
    if order:
        eig_ax.set_yscale("log")
        eig_ax.legend(loc="lower right")
    eig_ax.set_title("top eigenvalues of K_t / N")
    eig_ax.set_xlabel("step")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def ntk_figure(run_dir: Union[str, Path], slices: int = 3, title: str = TITLE):
    """``draw_ntk(read_ntk_log(run_dir))``: the figure of the ``NTKCallback`` run logged in ``run_dir``."""
    return draw_ntk(read_ntk_log(run_dir), slices, title)


def write_figure(fig, out: Union[str, Path], dpi: int = 100) -> Path:
    """The figure as a PNG at ``out``, written atomically (whole or absent)."""
    from inr.io.files import atomic_write

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(out) as f:
        fig.savefig(f, format="png", dpi=dpi)
    return out


def main(argv: Optional[list[str]] = None) -> None:
    from inr.io.command_line import CommandParser

    parser = CommandParser(
        prog="python -m inr.callbacks.ntk_figure",
        description="Draw an NTKCallback run's kernel slices, drift and top eigenvalues from its event file (PNG).",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run's log directory, holding events.out.tfevents.*")
    parser.add_argument("-o", "--out", required=True, help="output .png path")
    parser.add_argument("--slices", type=int, default=3, help="kernel slices shown: the first, the last, evenly between")
    parser.add_argument("--title", default=TITLE, help="the figure's title ('' for none)")
    parser.add_argument("--dpi", type=int, default=100, help="pixels per inch of the PNG")
    args = parser.parse_args(argv)
    if Path(args.out).suffix.lower() != ".png":
        parser.error(f"--out {args.out}: the figure is written as PNG; give a .png path")
    if args.slices < 1 or args.dpi < 1:
        parser.error("--slices and --dpi must be ≥ 1")
    try:
        fig = ntk_figure(args.run_dir, args.slices, args.title)
    except InputError as exc:
        parser.error(str(exc))
    print(write_figure(fig, args.out, args.dpi))


if __name__ == "__main__":
    main()
