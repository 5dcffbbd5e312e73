"""The paper's 3D NeRF comparison in one command: a radiance field with each input mapping, learned from the
posed views of the synthetic scene, scored on held-out views against two image baselines.

    python -m inr.experiments.view_synthesis                       # nerf.yaml as it stands, every mapping
    python -m inr.experiments.view_synthesis --steps 300 --encodings none gaussian --out /tmp/vs
    python -m inr.experiments.view_synthesis --seeds 3              # every network row with seeds 0, 1, 2

Every network row is ``train.py --config nerf.yaml`` (data, renderer, steps, batch) with only the encoder,
network and optimiser replaced by a method of the registry (``nerf_setting``): the Gaussian row is the config
itself. Rows ``none``, ``basic``, ``positional``, ``gaussian`` are the four mappings of Tancik et al. 2020
(Table 1, 3D NeRF; 3d_simple_nerf.ipynb: no view dependence, no hierarchical sampling) on a 3×W ReLU MLP with
the paper's initialisation; the notebook's frequencies (positional ``posenc_new``: 2^linspace(0, 8, 85) − 1
per axis; Gaussian σ = 26, 256 features) moved to these views by the registry's grid rule (ν of the views
here against the notebook's 400² lego views: ``inr.data.rays.view_nyquist``). ``positional_rotated`` is the
positional encoding in the notebook's rotated frame (``posenc_new_rotated``): the synthetic scene's boxes,
checkerboard and stripes are axis-aligned, which favours an axis-aligned basis. ``hashgrid`` is a
multiresolution hash encoding with a 2×64 MLP (Müller et al. 2022). Baselines, from the same data: the mean
colour of the training pixels, and the training view whose camera is nearest, shown as it is.

``--seeds S`` trains every network row with seeds 0 … S−1 (the run's seed: initialisation, batches, and the
encoder's draw) on the same views; the table then reads mean ± sample std over the seeds of each seed's score
(``results.json`` keeps every seed's row and its per-view PSNRs). The baselines draw nothing and appear once.

Prints a Markdown table: held-out PSNR (one seed: mean ± sample std over the held-out views, each view's PSNR as
the notebook computes it) and SSIM (all held-out views rendered whole), PSNR of 8 training views,
the relative error of the held-out views at DC and, pooled, in the lower and upper half of 8 radial frequency
bands (2D spectra per view and channel, ``inr.spectral.spectral_summary``), the training time, ms per step and parameters. ``--out`` also writes
``results.md``, ``results.json``, the renders (``renders.npz``) and ``views.png`` (held-out views per row).
"""

from __future__ import annotations

import argparse
import json
import time
from argparse import ArgumentError
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from inr.data.rays import camera_distance, view_nyquist
from inr.errors import InputError
from inr.experiments.methods import METHODS, Setting
from inr.experiments.protocols import PROTOCOLS
from inr.experiments.runner import (
    Column,
    ExperimentParser,
    RowProgress,
    command,
    markdown_table,
    prepare_out,
    quiet_trainer,
    silence_lightning,
    summarise,
    trained_numbers,
    write_results,
)
from inr.io.allocator import retain_freed_memory
from inr.io.threads import torch_threads
from inr.metrics import psnr, ssim
from inr.run.cli import build_cli, condense_config_error, resolve_config_names
from inr.spectral import spectral_summary

ENCODINGS = ("none", "basic", "positional", "positional_rotated", "gaussian", "hashgrid")
NUM_BANDS = 8
# nerf.yaml's views (64², 36° field of view: focal 98.49 px; cameras 3.845 from the scene's centre on average,
# cube [−1.5, 1.5]³): ν = view_nyquist(98.49, 3.845, 1.5) = 38.4 cycles per unit (``data_nyquist`` measures it)
NERF_NYQUIST = 38.422


def nerf_setting(nyquist: float = NERF_NYQUIST, seed: int = 0) -> Setting:
    """Every row is a method of the registry for nerf.yaml's field: 3-D points in the unit cube, the "nerf"
    protocol (``protocols.PROTOCOLS``: the notebook's frequencies, moved by the grid rule to views resolving
    ``nyquist`` cycles per unit, its learning rates for a short run), nerf.yaml's 3 × 128 ReLU MLP with a linear
    output (the task maps it to density and colour) and the paper's initialisation; the hash grid: 12 levels
    from N = 8 to 128 with Instant-NGP's Adam."""
    p = PROTOCOLS["nerf"]
    return Setting(
        in_dim=3,
        train_side=128,
        resolvable=nyquist,
        protocol=p,
        output_activation="none",
        width=p.width,
        depth=p.depth,
        init=p.init,
        hash_levels=12,
        hash_base=8,
        steps=p.steps,
        seed=seed,
    )


NERF_SETTING = nerf_setting()
COLUMNS = (
    Column("method", "method", "s"),
    Column("setting", "setting", "s"),
    Column("held-out PSNR (dB)", "psnr", ".2f"),
    Column("held-out SSIM", "ssim", ".3f"),
    Column("train PSNR (dB)", "train_psnr", ".2f"),
    Column("DC error", "dc", ".3f"),
    Column("low-band error", "low", ".3f"),
    Column("high-band error", "high", ".3f"),
    Column("time (s)", "seconds", ".0f"),
    Column("ms/step", "ms_per_step", ".0f"),
    Column("params", "params", ","),
)


def overrides(name: str, setting: Setting = NERF_SETTING) -> list[str]:
    """Command-line overrides of nerf.yaml for one method: its encoder, network and optimiser from the registry."""
    spec = METHODS[name].resolve(setting)
    return [arg for key, value in spec.overlay().items() for arg in (f"--model.init_args.{key}", json.dumps(value))]


def common_args(args: argparse.Namespace) -> list[str]:
    common = ["--config", args.config, "--trainer.logger", "false", "--trainer.callbacks", "null"]
    if args.steps is not None:
        common += ["--trainer.max_steps", str(args.steps)]
    return common


def data_nyquist(args: argparse.Namespace) -> float:
    """ν of the config's views (``view_nyquist`` of their focal length, camera distance and scene cube)."""
    try:
        dm = build_cli(resolve_config_names([*common_args(args), *args.override])).datamodule
    except ArgumentError as exc:  # an unknown or mistyped --override key: one line, not jsonargparse's chain
        raise InputError(f"--override: {condense_config_error(str(exc))}") from None
    dm.setup("fit")
    posed = dm.posed
    return view_nyquist(posed.intrinsics.fx, camera_distance(posed.poses), posed.bound)


def build(name: str, args: argparse.Namespace, setting: Setting = NERF_SETTING):
    """Model, DataModule and a bare Trainer of one row, from the config as train.py builds them, seeded with the
    setting's seed. The Trainer is made here (the config's steps only: no logger, callbacks or checkpoints) so
    that a row writes nothing, not even the run's config.yaml, which the CLI's own Trainer would save into the
    current directory."""
    seeded = ["--seed_everything", str(setting.seed)]
    try:
        cli = build_cli(resolve_config_names([*common_args(args), *seeded, *overrides(name, setting), *args.override]))
    except ArgumentError as exc:  # an unknown or mistyped --override key: one line, not jsonargparse's chain
        raise InputError(f"--override: {condense_config_error(str(exc))}") from None
    return cli.model, cli.datamodule, quiet_trainer(cli.trainer.max_steps)


def score(pred: torch.Tensor, truth: torch.Tensor) -> dict[str, float]:
    """PSNR per view (its mean and sample std over the views, ``psnr``/``psnr_std``; ``n`` views), SSIM and the
    low/high-band relative errors of views (V, 3, H, W) against the truth."""
    pred = pred.float().clamp(0, 1)
    folded = lambda x: x.reshape(-1, *x.shape[2:]).double()  # (V, 3, H, W) -> (3V, H, W): 2D bands per view, pooled
    bands = spectral_summary(folded(pred), folded(truth), num_bands=NUM_BANDS)
    views = torch.tensor([psnr(p, t) for p, t in zip(pred, truth)], dtype=torch.float64)
    return {
        "psnr": float(views.mean()),
        "psnr_std": float(views.std()) if len(views) > 1 else float("nan"),
        "n": len(views),
        "view_psnr": views.tolist(),
        "ssim": ssim(pred, truth),
        "dc": float(bands["dc"]),
        "low": float(bands["low"]),
        "high": float(bands["high"]),
    }


def baselines(dm) -> dict[str, torch.Tensor]:
    """Held-out predictions (V, 3, H, W) of the two baselines: the training pixels' mean colour, and the
    training view whose camera centre is nearest to each held-out camera."""
    posed = dm.posed
    train_images = posed.images[posed.train_views]  # (T, H, W, 3)
    held = dm.heldout_images()
    mean = train_images.reshape(-1, 3).mean(0)
    distance = torch.cdist(posed.poses[posed.heldout_views, :3, 3], posed.poses[posed.train_views, :3, 3])  # (V, T)
    nearest = train_images[distance.argmin(1)].permute(0, 3, 1, 2)
    return {"mean training colour": mean[None, :, None, None].expand_as(held).contiguous(), "nearest training view": nearest}


def run(args: argparse.Namespace, rows: list[dict]) -> tuple[list[dict], dict[str, torch.Tensor]]:
    renders = {}
    truth = None
    nyquist = data_nyquist(args)
    seeds = range(args.seeds)
    progress = RowProgress(len(args.encodings) * len(seeds))
    for name, seed in ((name, seed) for name in args.encodings for seed in seeds):
        torch.manual_seed(seed)
        setting = nerf_setting(nyquist, seed)
        model, dm, trainer = build(name, args, setting)
        start = time.perf_counter()
        trainer.fit(model, datamodule=dm)
        seconds = time.perf_counter() - start
        summary = model.evaluate()
        model.eval()
        held = model.render_views(model.heldout_poses())
        truth = dm.heldout_images()
        if seed == 0:  # the figure and renders.npz show the first seed's views
            renders[name], renders[f"{name} depth"] = held["rgb"].cpu(), held["depth"].cpu()
        params = trained_numbers(model)
        rows.append(
            {
                "method": name,
                "kind": "model",
                "seed": seed,
                "setting": METHODS[name].resolve(setting).describe,
                "steps": trainer.global_step,
                **score(held["rgb"].cpu(), truth),
                "train_psnr": summary["train/psnr"],
                "seconds": seconds,
                "ms_per_step": 1000 * seconds / max(trainer.global_step, 1),
                "params": params,
            }
        )
        label = name if len(seeds) == 1 else f"{name} (seed {seed})"
        progress.row(label, f"held-out PSNR {rows[-1]['psnr']:.2f} dB, {seconds:.0f} s")
    if truth is None:
        raise InputError("--encodings: choose at least one")
    for name, pred in baselines(dm).items():
        rows.append(
            {
                "method": name,
                "kind": "baseline",
                "seed": None,
                "setting": "",
                "steps": 0,
                **score(pred, truth),
                "train_psnr": float("nan"),
                "seconds": float("nan"),
                "ms_per_step": float("nan"),
                "params": 0,
            }
        )
        renders[name] = pred
    renders["ground truth"] = truth
    return rows, renders


SCORES = ("psnr", "ssim", "train_psnr", "dc", "low", "high", "seconds", "ms_per_step", "params")


def table(rows: list[dict]) -> str:
    """One seed per row: the rows as they are (PSNR ± its spread over the held-out views). Several seeds: each
    method's rows summarised, mean ± sample std over the seeds."""
    seeded = [r["seed"] for r in rows if r["kind"] == "model"]
    if len(set(seeded)) <= 1:
        return markdown_table(rows, COLUMNS)
    return markdown_table(summarise(rows, SCORES), COLUMNS)


def views_figure(renders: dict[str, torch.Tensor], path: Path, max_views: int = 4) -> None:
    """One row per method (and depth of the best network), ``max_views`` held-out views across."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [k for k in renders if not k.endswith(" depth")]
    count = min(max_views, len(renders["ground truth"]))
    fig, axes = plt.subplots(len(names), count, figsize=(1.6 * count, 1.6 * len(names)), squeeze=False)
    for row, name in enumerate(names):
        for col in range(count):
            ax = axes[row, col]
            ax.imshow(renders[name][col].permute(1, 2, 0).clamp(0, 1).numpy(), interpolation="nearest")
            ax.set_xticks([]), ax.set_yticks([])
            if col == 0:
                ax.set_ylabel(name, fontsize=7)
    fig.tight_layout(pad=0.2)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("--config", default="nerf.yaml", help="the base config of every network row")
    parser.add_argument(
        "--encodings", nargs="+", default=list(ENCODINGS), choices=ENCODINGS, help="the rows (methods of the registry)"
    )
    parser.add_argument("--steps", type=int, default=None, help="training steps of every row (default: the config's)")
    parser.add_argument("--seeds", type=int, default=1, help="train every network row with seeds 0 … S−1: mean ± std")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--out", type=Path, default=None, help="directory for results.md, results.json, renders.npz, views.png")
    parser.add_argument(
        "--override",
        nargs=argparse.REMAINDER,
        default=[],
        help="further config overrides for every row, e.g. --data.init_args.resolution 32",
    )
    args = parser.parse_args(argv)
    if args.steps is not None and args.steps < 1:
        raise InputError(f"--steps must be ≥ 1, got {args.steps}")
    if args.seeds < 1:
        raise InputError(f"--seeds must be ≥ 1, got {args.seeds}")
    return args


def main(argv: Optional[list[str]] = None) -> list[dict]:
    rows: list[dict] = []
    return command(lambda: _main(argv, rows), lambda: table(rows) if rows else "")


def _main(argv: Optional[list[str]], rows: list[dict]) -> list[dict]:
    silence_lightning()
    args = parse_args(argv)
    out = prepare_out(args.out)
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    with torch_threads(args.threads):
        rows, renders = run(args, rows)
    views = next((r["n"] for r in rows if r["kind"] == "model"), 0)
    spread = (
        f"mean ± std over seeds 0–{args.seeds - 1} (each seed's score: the mean over {views} held-out views)"
        if args.seeds > 1
        else f"PSNR: mean ± std over {views} held-out views, seed 0"
    )
    text = f"{spread}\n\n{table(rows)}"
    print(text)
    if out is not None:
        write_results(out, text, {"args": {k: str(v) for k, v in vars(args).items()}, "rows": rows})
        np.savez_compressed(out / "renders.npz", **{k.replace(" ", "_"): v.numpy() for k, v in renders.items()})
        views_figure(renders, out / "views.png")
    return rows


if __name__ == "__main__":
    main()
