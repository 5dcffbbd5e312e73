"""The paper's 3D NeRF comparison in one command: a radiance field with each input mapping, learned from the
posed views of the synthetic scene, scored on held-out views against two image baselines.

    python -m inr.experiments.view_synthesis                       # nerf.yaml as it stands, every mapping
    python -m inr.experiments.view_synthesis --steps 300 --methods none,gaussian --out /tmp/vs
    python -m inr.experiments.view_synthesis --seeds 3              # every network row with seeds 0, 1, 2
    python -m inr.experiments.view_synthesis --base-config nerf_lego.yaml --seeds 3   # NeRF's lego at 100² (CPU)
    python -m inr.experiments.view_synthesis --paper --estimate-only  # the notebook's lego run: its expected time

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

``--paper`` runs the notebook's own protocol (``protocols.PROTOCOLS["nerf_paper"]``) on its scene, NeRF's lego
(``nerf_lego.yaml`` unless ``--base-config`` names another): 400² views, 1024 rays × 128 samples per step,
50,000 steps (``--steps`` for fewer), a 3 × 256 ReLU MLP, Adam 1e-2 without a mapping, 5e-3 basic, 5e-4 the Fourier
mappings, its frequencies as they are (the views are the notebook's: no grid rule); the config's softplus density
is kept (the notebook's ReLU leaves a field whose density starts below zero everywhere empty: docs/nerf.md). A
GPU job: it prints its expected time first, from a few timed steps.

``--seeds S`` trains every network row with seeds 0 … S−1 (the run's seed: initialisation, batches, and the
encoder's draw) on the same views; the table then reads mean ± sample std over the seeds of each seed's score
(``results.json`` keeps every seed's row and its per-view PSNRs). The baselines draw nothing and appear once.

Prints a Markdown table: held-out PSNR (one seed: mean ± sample std over the held-out views, each view's PSNR as
the notebook computes it) and SSIM (all held-out views rendered whole), PSNR of 8 training views, the relative error
of the held-out views at DC and, pooled, in the lower and upper half of 8 radial frequency bands (2D spectra per
view and channel, ``inr.spectral.spectral_summary``), the training time, ms per step and parameters. ``--out``
also holds the renders of the first seed (``renders.npz``) and ``views.png`` (held-out views per row).
"""

from __future__ import annotations

import json
from argparse import ArgumentError
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
from jsonargparse import ArgumentParser

from inr.errors import InputError
from inr.experiments import comparison
from inr.experiments.comparison import Baseline, Comparison, Context
from inr.experiments.results import DETAILS
from inr.experiments.runner import Column
from inr.io.files import atomic_write
from inr.io.progress import reporting
from inr.methods.protocols import PROTOCOLS, paper_row
from inr.methods.registry import Setting

if TYPE_CHECKING:  # torch, the rays and train.py's CLI are imported where a row uses them: --help needs none
    import torch

ENCODINGS = ("none", "basic", "positional", "positional_rotated", "gaussian", "hashgrid")
NUM_BANDS = 8
# nerf.yaml's views (64², 36° field of view: focal 98.49 px; cameras 3.845 from the scene's centre on average,
# cube [−1.5, 1.5]³): ν = view_nyquist(98.49, 3.845, 1.5) = 38.4 cycles per unit (``Views.protocol`` measures it)
NERF_NYQUIST = 38.422
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


def nerf_setting(nyquist: float = NERF_NYQUIST, seed: int = 0, kind: str = "nerf") -> Setting:
    """Every row is a method of the registry for nerf.yaml's field: 3-D points in the unit cube, the ``kind``
    protocol (``protocols.PROTOCOLS``; "nerf": the notebook's frequencies, moved by the grid rule to views resolving
    ``nyquist`` cycles per unit, its learning rates for a short run, nerf.yaml's 3 × 128 ReLU MLP; "nerf_paper":
    the notebook's run, 3 × 256) with a linear output (the task maps it to density and colour) and the paper's
    initialisation; the hash grid: 12 levels from N = 8 to 128 with Instant-NGP's Adam."""
    p = PROTOCOLS[kind]
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


@dataclass(frozen=True)
class ViewsProtocol:
    """What every row shares: the base config and the overrides of every row (``--steps`` and ``--resolution``
    among them), the steps, the views' Nyquist frequency (``view_nyquist``), how many views are held out and the
    protocol (``nerf``, or ``nerf_paper`` with ``--paper``)."""

    seeds: tuple[int, ...]
    steps: int
    config: str
    overrides: tuple[str, ...]
    nyquist: float
    views: int
    kind: str = "nerf"


class Views(Comparison):
    name, doc = "view_synthesis", __doc__
    methods = ENCODINGS
    columns = COLUMNS
    remainder = "--override"

    def arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--base-config",
            type=Optional[str],
            default=None,
            help="the base config of every network row (null: nerf.yaml; with --paper nerf_lego.yaml)",
        )
        parser.add_argument(
            "--override",
            type=list[str],
            default=[],
            help="config overrides of every row, the last option: --override --data.init_args.resolution 32 …",
        )

    def protocol(self, args: Any) -> ViewsProtocol:
        kind = "nerf_paper" if args.paper else "nerf"
        config = args.base_config or ("nerf_lego.yaml" if args.paper else "nerf.yaml")
        paper = PROTOCOLS["nerf_paper"]
        # the notebook's sizes first, so that --resolution, --steps and --override still replace them
        sizes = ["--data.init_args.resolution", str(paper.resolution), "--data.init_args.batch_size", "1024",
                 "--model.init_args.samples", "128", "--trainer.max_steps", str(paper.steps)]  # fmt: skip
        overrides = [
            *(sizes if args.paper else []),
            *(["--data.init_args.resolution", str(args.resolution)] if args.resolution else []),
            *(["--trainer.max_steps", str(args.steps)] if args.steps is not None else []),
            *args.override,
        ]
        from inr.data.rays import camera_distance, view_nyquist

        p = ViewsProtocol(args.seed_list, 0, config, tuple(overrides), 0.0, 0, kind)
        cli = self.cli(p, [])
        cli.datamodule.setup("fit")
        posed = cli.datamodule.posed
        nyquist = view_nyquist(posed.intrinsics.fx, camera_distance(posed.poses), posed.bound)
        if args.paper and abs(nyquist / paper.nyquist - 1) < 1e-3:
            nyquist = paper.nyquist  # the notebook's own views: its frequencies as they are
        return ViewsProtocol(p.seeds, cli.trainer.max_steps, p.config, p.overrides, nyquist, len(posed.heldout_views), kind)

    def cli(self, p: ViewsProtocol, extra: list[str]) -> Any:
        """The config as train.py builds it (no logger, callbacks or checkpoints: a row writes nothing of its own)."""
        from inr.run.cli import build_cli, condense_config_error, resolve_config_names

        common = ["--config", p.config, "--trainer.logger", "false", "--trainer.callbacks", "null"]
        try:
            return build_cli(resolve_config_names([*common, *extra, *p.overrides]))
        except ArgumentError as exc:  # an unknown or mistyped --override key: one line, not jsonargparse's chain
            raise InputError(f"--override: {condense_config_error(str(exc))}") from None

    def data(self, ctx: Context) -> Any:
        return self.cli(ctx.p, ["--seed_everything", str(ctx.seed)]).datamodule

    def setting(self, ctx: Context) -> Setting:
        return nerf_setting(ctx.p.nyquist, ctx.seed, ctx.p.kind)

    def model(self, ctx: Context) -> Any:
        """The config's model with the method's encoder, network and optimiser, seeded as train.py seeds it."""
        method = [a for key, value in ctx.spec.overlay().items() for a in (f"--model.init_args.{key}", json.dumps(value))]
        return self.cli(ctx.p, ["--seed_everything", str(ctx.seed), *method]).model

    def predict(self, ctx: Context, model: Any) -> tuple[torch.Tensor, Optional[torch.Tensor], float]:
        with reporting("view synthesis: rendering the training and held-out views"):  # minutes at the paper's size
            train_psnr = model.evaluate()["train/psnr"]
            held = model.render_views(model.heldout_poses())
        return held["rgb"].cpu(), held["depth"].cpu(), train_psnr

    def score(self, ctx: Context, prediction: tuple) -> dict[str, Any]:
        """PSNR per view (its mean ``psnr`` and sample std over the views ``view_psnr_std``), SSIM and the DC and
        low/high-band relative errors of the held-out views (V, 3, H, W) against the truth."""
        import torch

        from inr.metrics import psnr, ssim
        from inr.spectral import spectral_summary

        rgb, _, train_psnr = prediction
        truth = ctx.data.heldout_images()
        pred = rgb.float().clamp(0, 1)
        folded = lambda x: x.reshape(-1, *x.shape[2:]).double()  # (V, 3, H, W) -> (3V, H, W): 2D bands per view, pooled
        bands = spectral_summary(folded(pred), folded(truth), num_bands=NUM_BANDS)
        views = torch.tensor([psnr(a, b) for a, b in zip(pred, truth)], dtype=torch.float64)
        return {
            "psnr": float(views.mean()),
            "view_psnr_std": float(views.std()) if len(views) > 1 else float("nan"),
            "view_psnr": views.tolist(),
            "ssim": ssim(pred, truth),
            "train_psnr": train_psnr,
            **{key: float(bands[key]) for key in ("dc", "low", "high")},
            "_truth": truth,
        }

    def baselines(self, ctx: Context) -> list[Baseline]:
        """The training pixels' mean colour, and the training view whose camera centre is nearest to each held-out
        camera: held-out predictions (V, 3, H, W)."""
        import torch

        posed = ctx.data.posed
        train_images = posed.images[posed.train_views]  # (T, H, W, 3)
        held = ctx.data.heldout_images()
        mean = train_images.reshape(-1, 3).mean(0)[None, :, None, None].expand_as(held).contiguous()
        distance = torch.cdist(posed.poses[posed.heldout_views, :3, 3], posed.poses[posed.train_views, :3, 3])  # (V, T)
        nearest = train_images[distance.argmin(1)].permute(0, 3, 1, 2)
        nan = float("nan")
        return [
            Baseline("mean training colour", lambda: (mean, None, nan)),
            Baseline("nearest training view", lambda: (nearest, None, nan)),
        ]

    def keep(self, ctx: Context, row: dict[str, Any], prediction: tuple, scores: dict[str, Any]) -> None:
        """The first seed's held-out renders (and depth) added to ``renders.npz``, with the ground truth."""
        if row["seed"] not in (None, ctx.p.seeds[0]):
            return
        path = ctx.out / "renders.npz"
        renders = dict(np.load(path)) if path.exists() else {}
        rgb, depth, _ = prediction
        name = row["method"].replace(" ", "_")
        renders.update({name: rgb.numpy(), "ground_truth": scores["_truth"].numpy()})
        if depth is not None:
            renders[f"{name}_depth"] = depth.numpy()
        with atomic_write(path, "wb") as f:
            np.savez_compressed(f, **renders)

    def summary(self, p: ViewsProtocol, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One seed: the rows as they are, PSNR ± its spread over the held-out views. Several seeds: each method's
        rows summarised, mean ± sample std over the seeds."""
        if len(p.seeds) > 1:
            return super().summary(p, rows)
        return [
            {
                **{k: v for k, v in r.items() if k not in DETAILS and k != "view_psnr_std"},
                "psnr_std": r["view_psnr_std"],
                "n": len(r["view_psnr"]),
            }
            for r in rows
        ]

    def pairs(self, p: ViewsProtocol, summary: list[dict[str, Any]]) -> list[tuple[str, str]]:
        """Neighbouring network rows and the best against each baseline, paired per seed by the rule of
        docs/results.md (a baseline draws nothing: the seeds of the scene are one pair against it)."""
        return comparison.neighbours_and_best(summary)

    def notes(self, p: ViewsProtocol, summary: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
        """The paper's row (the notebook's lego run), and what its positional number is."""
        return (
            f"{paper_row('nerf_paper')} Its positional number is the notebook's posenc (2^0 … 2^8 per axis); the "
            "package's positional is the notebook's posenc_new (2^linspace(0, 8, 85) − 1 per axis), for which it printed "
            "26.27 dB."
        )

    def title(self, p: ViewsProtocol) -> str:
        if len(p.seeds) > 1:
            return f"mean ± std over seeds {p.seeds[0]}–{p.seeds[-1]} (each seed's score: the mean over {p.views} held-out views)"
        return f"PSNR: mean ± std over {p.views} held-out views, seed {p.seeds[0]}"

    def finish(self, p: ViewsProtocol, rows: list[dict[str, Any]], out: Path) -> None:
        import torch

        views_figure({k: torch.from_numpy(v) for k, v in np.load(out / "renders.npz").items()}, out / "views.png")


def views_figure(renders: dict[str, torch.Tensor], path: Path, max_views: int = 4) -> None:
    """One row per method (its depth apart), ``max_views`` held-out views across."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [k for k in renders if not k.endswith("_depth") and k != "ground_truth"] + ["ground_truth"]
    count = min(max_views, len(renders["ground_truth"]))
    fig, axes = plt.subplots(len(names), count, figsize=(1.6 * count, 1.6 * len(names)), squeeze=False)
    for row, name in enumerate(names):
        for col in range(count):
            ax = axes[row, col]
            ax.imshow(renders[name][col].permute(1, 2, 0).clamp(0, 1).numpy(), interpolation="nearest")
            ax.set_xticks([]), ax.set_yticks([])
            if col == 0:
                ax.set_ylabel(name.replace("_", " "), fontsize=7)
    fig.tight_layout(pad=0.2)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Run the comparison; print and write the table; return the rows (networks, then baselines)."""
    return comparison.main(Views(), argv)


if __name__ == "__main__":
    main()
