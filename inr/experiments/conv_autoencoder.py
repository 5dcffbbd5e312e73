"""Trained conv auto-encoders on image patches, per radial frequency band: which frequencies a trained decoder
reconstructs, for each upsampling kind and kernel size, against classical codes of the same size.

    python -m inr.experiments.conv_autoencoder --out docs     # docs/conv_autoencoder.png + a Markdown table

Data: the bundled grey images (astronaut, cameraman) at 256², cut into 32×32 blocks in a checkerboard;
training crops (16×16, any offset) come from one colour of blocks, the held-out patches tile the other.
Model: ``ConvAutoencoder`` — conv 3×3 + two stride-2 convs down to a 4×4 code, then a ``ConvDecoder`` with
two ×2 upsampling stages (zero insertion = a transposed conv, nearest or bilinear) and k×k convs (zero
padding), trained with Adam on MSE for a fixed number of steps per seed.
Measured on the held-out patches: PSNR and Δ_b = ‖F[x̂ − x]‖_b / ‖F[x]‖_b per band of radial frequency
(cycles per patch; energies pooled over patches), the DC bin apart, and the same error on the bins where
the two upsampling stages put copies of the code's DC. Baselines from a code of the same size, in the same
run: PCA (the best affine code in MSE), area-downsampling + bilinear / bicubic interpolation, the patch mean.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np
import torch
from matplotlib.figure import Figure

from inr.data.image import DEFAULT_IMAGE, read_image, resize_image
from inr.experiments.conv.autoencoder import ConvAutoencoder, reconstruct, train_autoencoder
from inr.experiments.conv.patch_metrics import (
    band_groups,
    bins_relative_error,
    copy_bins,
    mean_reconstruct,
    patch_band_errors,
    pca_basis,
    pca_reconstruct,
    resample_reconstruct,
)
from inr.experiments.conv.patches import PatchSet
from inr.experiments.stats import mean_interval
from inr.io.allocator import retain_freed_memory
from inr.io.threads import torch_threads
from inr.metrics import psnr
from inr.run.command import ExperimentParser

IMAGES = (DEFAULT_IMAGE, DEFAULT_IMAGE.parent / "camera.png")
STAGES = 2  # two ×2 upsampling stages: the code is the patch / 4
# training crops the PCA baseline is fitted to; held-out PSNR of 64 components with 5,000 / 20,000 / 80,000
# crops: 32.31 / 32.28 / 32.27 dB, so more would not move the table
PCA_FIT_CROPS = 20_000
MODE_NAMES = {"zero": "transposed conv (zero insertion)", "nearest": "nearest", "bilinear": "bilinear"}


def load_patches(resolution: int, patch: int, block: int) -> PatchSet:
    images = [resize_image(read_image(path, "gray"), resolution)[..., 0] for path in IMAGES]  # (H, W, 1) -> (H, W)
    return PatchSet(images, patch, block)


def measure(rec: torch.Tensor, test: torch.Tensor, edges: torch.Tensor, fine_edges: torch.Tensor, bins: torch.Tensor) -> dict:
    """PSNR (peak 1), per-band errors (``edges`` and ``fine_edges``) and the error on the copy bins of
    reconstructed held-out patches."""
    dc, bands = patch_band_errors(rec, test, edges)
    return {
        "psnr": psnr(rec, test),
        "dc": float(dc),
        "bands": bands.tolist(),
        "fine": patch_band_errors(rec, test, fine_edges)[1].tolist(),
        "copies": bins_relative_error(rec, test, bins),
    }


def baseline_reconstructions(patches: PatchSet, test: torch.Tensor, code_numbers: int) -> dict[str, torch.Tensor]:
    """Classical reconstructions of the held-out patches, each named with the numbers its code holds."""
    train = patches.crops(PCA_FIT_CROPS, torch.Generator().manual_seed(12345))
    mean, basis = pca_basis(train)
    p = patches.patch
    out = {f"PCA, {code_numbers} components": pca_reconstruct(test, mean, basis, code_numbers)}
    for factor in (2, 4):
        for mode in ("bilinear", "bicubic"):
            out[f"area ↓{factor} + {mode} ↑{factor} ({(p // factor) ** 2} numbers)"] = resample_reconstruct(test, factor, mode)
    out["patch mean (1 number)"] = mean_reconstruct(test)
    return out


def run_grid(patches: PatchSet, test: torch.Tensor, args: argparse.Namespace, edges, fine_edges, bins) -> dict[str, list[dict]]:
    """Train one auto-encoder per (mode, kernel, seed); per configuration the per-seed measurements."""
    runs: dict[str, list[dict]] = {}
    for mode, k, seed in itertools.product(args.modes, args.kernels, range(args.seeds)):
        torch.manual_seed(seed)
        model = ConvAutoencoder(1, args.width, args.code_channels, STAGES, args.depth, k, "zeros", mode)
        start = time.perf_counter()
        losses = train_autoencoder(model, patches, args.steps, args.batch_size, args.lr, seed=seed)
        rec = reconstruct(model, test)
        row = measure(rec, test, edges, fine_edges, bins)
        row.update(seconds=time.perf_counter() - start, final_loss=float(losses[-50:].mean()))
        if seed == 0:  # the 2D error spectrum of one seed, for the figure
            residual = torch.fft.fft2((rec - test).double()).abs().square().sum((0, 1))
            row["spectrum"] = (residual / torch.fft.fft2(test.double()).abs().square().sum((0, 1))).sqrt().tolist()
        runs.setdefault(f"{MODE_NAMES[mode]}, k = {k}", []).append(row)
    return runs


def markdown_table(base: dict, runs: dict, names: list[str], code_numbers: int, seeds: int) -> str:
    head = "| reconstruction | held-out PSNR (dB) | Δ DC | " + " | ".join(f"Δ {n}" for n in names) + " | Δ on DC copies |"
    lines = [head, "|---" + "|---:" * (len(names) + 3) + "|"]

    def interval(values: list[float], decimals: int) -> str:
        mean, half, _ = mean_interval(values)
        return f"{mean:.{decimals}f} ± {half:.{decimals}f}"

    for name, runs_of in runs.items():
        cells = [interval([r["psnr"] for r in runs_of], 2), interval([r["dc"] for r in runs_of], 3)]
        cells += [interval([r["bands"][b] for r in runs_of], 3) for b in range(len(names))]
        cells.append(interval([r["copies"] for r in runs_of], 3))
        lines.append(f"| auto-encoder, {name} ({code_numbers} numbers; {seeds} seeds) | " + " | ".join(cells) + " |")
    for name, row in base.items():
        cells = [f"{row['psnr']:.2f}", f"{row['dc']:.3f}"] + [f"{v:.3f}" for v in row["bands"]] + [f"{row['copies']:.3f}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(base: dict, runs: dict, fine_edges: torch.Tensor, kernels: list[int], bins: torch.Tensor, out: Path) -> None:
    # x = 0 is the DC bin, then the centres of the one-cycle bands
    xs = np.concatenate([[0.0], ((fine_edges[:-1] + fine_edges[1:]) / 2).numpy()])
    fig = Figure(figsize=(16, 8), layout="constrained")
    top, bottom = fig.subfigures(2, 1)
    axes = np.atleast_1d(top.subplots(1, len(kernels), sharey=True))
    for ax, k in zip(axes, kernels):
        for name, runs_of in runs.items():
            if not name.endswith(f"k = {k}"):
                continue
            profiles = np.array([[r["dc"]] + r["fine"] for r in runs_of])  # (seeds, 1 + bands)
            stats = np.array([mean_interval(profiles[:, b])[:2] for b in range(profiles.shape[1])])
            mean, half = stats[:, 0], np.nan_to_num(stats[:, 1])
            lower = np.minimum(half, 0.9 * mean)  # a log axis cannot draw a bar below 0
            ax.errorbar(xs, mean, yerr=[lower, half], marker="o", capsize=3, label=f"AE, {name}")
        for name in [n for n in base if n.startswith("PCA") or "bicubic ↑2" in n]:
            if max(base[name]["fine"]) < 1e-6:  # a code as large as the patch: PCA is the identity
                continue
            ax.plot(xs, [base[name]["dc"]] + base[name]["fine"], "--", label=name)
        ax.set(yscale="log", xlabel="radial frequency (cycles per patch; 0: the DC bin)", title=f"decoder kernel {k}×{k}")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("held-out relative error ‖F[x̂ − x]‖_b / ‖F[x]‖_b")
    top.suptitle("trained auto-encoders: mean and 95 % t-interval over seeds; dashed: baselines with a code of the same size")
    maps = [(name, runs_of[0]["spectrum"]) for name, runs_of in runs.items() if name.endswith(f"k = {kernels[0]}")]
    for ax, (name, spectrum) in zip(np.atleast_1d(bottom.subplots(1, len(maps))), maps):
        n = len(spectrum)
        img = ax.imshow(np.fft.fftshift(np.log10(np.asarray(spectrum))), cmap="magma", vmin=-2, vmax=0.5)
        b = bins.numpy()
        ax.scatter((b[:, 1] + n // 2) % n, (b[:, 0] + n // 2) % n, s=50, facecolors="none", edgecolors="cyan", lw=1)  # fftshifted
        ax.set_title(f"{name}, seed 0", fontsize=9)
        ax.set(xlabel="v (DC at the centre)", ylabel="u")
        bottom.colorbar(img, ax=ax, shrink=0.8, label="log₁₀ relative error per bin")
    bottom.suptitle(
        "held-out relative error per DFT bin, Σ_n |F[x̂_n − x_n]|² / Σ_n |F[x_n]|², square root; cyan: copies of the code's DC"
    )
    fig.savefig(out / "conv_autoencoder.png", dpi=100)


def main(argv=None) -> dict:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("--out", default="outputs/conv_autoencoder", help="folder of conv_autoencoder.png and .json")
    parser.add_argument(
        "--modes", nargs="+", default=["zero", "nearest", "bilinear"], choices=list(MODE_NAMES), help="decoder upsampling modes"
    )
    parser.add_argument("--kernels", type=int, nargs="+", default=[3, 5], help="decoder kernel sizes (odd)")
    parser.add_argument("--seeds", type=int, default=3, help="trained auto-encoders per setting")
    parser.add_argument("--steps", type=int, default=1000, help="Adam steps of each auto-encoder")
    parser.add_argument("--batch-size", type=int, default=32, help="patches per step")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate")
    parser.add_argument("--width", type=int, default=16, help="hidden channels of encoder and decoder")
    parser.add_argument("--depth", type=int, default=4, help="decoder convolutions")
    parser.add_argument("--code-channels", type=int, default=4, help="4: a code of ¼ the pixels; 16: as many as the pixels")
    parser.add_argument("--resolution", type=int, default=256, help="side of the images the patches are cut from")
    parser.add_argument("--patch", type=int, default=16, help="patch side (a multiple of 4)")
    parser.add_argument(
        "--block", type=int, default=32, help="side of the blocks patches are drawn from (train and test blocks apart)"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    if any(k < 1 or k % 2 == 0 for k in args.kernels):
        parser.error(f"--kernels must be odd and positive, got {args.kernels}")
    if args.patch % 4 or args.block < args.patch:
        parser.error(f"--patch must be a multiple of 4 (two ×2 stages) and at most --block, got {args.patch} and {args.block}")
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    with torch_threads(args.threads):
        return run(args)


def run(args: argparse.Namespace) -> dict:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    patches = load_patches(args.resolution, args.patch, args.block)
    test = patches.heldout()
    nyquist = args.patch // 2
    edges = torch.tensor([1.0] + [nyquist * i / 4 for i in range(1, 5)], dtype=torch.float64)  # 4 bands above DC
    fine_edges = torch.arange(1, nyquist + 1, dtype=torch.float64)  # bands one cycle wide above DC
    bins = copy_bins(args.patch, args.patch // 4)
    code_numbers = args.code_channels * (args.patch // 4) ** 2
    start = time.perf_counter()
    base = {
        name: measure(rec, test, edges, fine_edges, bins)
        for name, rec in baseline_reconstructions(patches, test, code_numbers).items()
    }
    runs = run_grid(patches, test, args, edges, fine_edges, bins)
    elapsed = time.perf_counter() - start
    names = band_groups(edges.tolist())
    plot(base, runs, fine_edges, args.kernels, bins, out)
    results = {
        "args": vars(args),
        "band_edges": edges.tolist(),
        "fine_edges": fine_edges.tolist(),
        "copy_bins": bins.tolist(),
        "heldout_patches": len(test),
        "baselines": base,
        "runs": runs,
        "seconds": elapsed,
    }
    (out / "conv_autoencoder.json").write_text(json.dumps(results, indent=1))
    print(
        f"{len(test)} held-out {args.patch}×{args.patch} patches; bands in cycles per patch; mean ± 95 % t-interval over seeds; "
        f"{args.steps} steps of batch {args.batch_size} per model; {elapsed:.0f} s in all\n"
    )
    print(markdown_table(base, runs, names, code_numbers, args.seeds))
    print(f"\nfigure: {out / 'conv_autoencoder.png'}")
    return results


if __name__ == "__main__":
    main()
