"""The three frequency bottlenecks of convolutional decoders (Tang et al. 2022), measured: figures and a table.

    python -m inr.experiments.conv_bottlenecks --out docs      # docs/conv_{gain,padding,upsampling,training}.png

1. Gain vs radial frequency of randomly initialised circular cascades (depth, weight mean, kernel size at a
   fixed mean and at a mean scaled as 1/k²), Monte-Carlo over initialisations against the exact
   expectation; zero / reflect vs circular padding; ReLU's deviation from the linear prediction.
2. An upsampled spectrum with the predicted copy locations marked (random initialisation).
3. Training on one image: per-band error over steps, conv decoder vs coordinate MLP (one seed each).

The shift study is ``inr.experiments.conv_shift``, trained auto-encoders ``inr.experiments.conv_autoencoder``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import torch
from matplotlib.figure import Figure

from inr.conv_decoders import (
    band_ratio,
    copy_energy_fraction,
    copy_hit_rate,
    copy_locations,
    expected_frobenius_gain,
    expected_gain,
    expected_power_gain,
    linear_deviation,
    radial_profile,
    strongest_frequencies,
)
from inr.data.grid import grid_coordinates
from inr.data.image import DEFAULT_IMAGE, read_image, resize_image
from inr.experiments.conv.training import first_below, fit
from inr.io.allocator import retain_freed_memory
from inr.io.threads import torch_threads
from inr.networks import MLP, ConvDecoder
from inr.run.command import ExperimentParser
from inr.spectral.plots import draw_heatmap, error_norm

SIZE, CHANNELS, BANDS = (32, 32), 8, 16
BASE = dict(depth=4, mean=0.1, kernel_size=3)  # the settings the other sweeps hold fixed
# μ k² held at its value for k = 3 (0.1 · 9): the mean part of Ŵ(0), μ k², is then the same for every k
SCALED_MEAN_K2 = BASE["mean"] * BASE["kernel_size"] ** 2


def gray(resolution: int) -> torch.Tensor:
    return resize_image(read_image(DEFAULT_IMAGE, "gray"), resolution).permute(2, 0, 1)  # (H, W, 1) -> (1, H, W)


# --- 1. gains ---------------------------------------------------------------------------------------
def gain_sweeps(seeds: int) -> dict[str, list[dict]]:
    """For each sweep, per setting: MC spectral-norm profile (mean, sem) and exact √E‖T‖_F² profile.
    ``kernel_size, μ ∝ 1/k²`` sweeps k with μ = ``SCALED_MEAN_K2`` / k²."""
    sweeps = {"depth": [1, 2, 4, 8], "mean": [0.0, 0.01, 0.1], "kernel_size": [1, 3, 5, 7], "kernel_size, μ ∝ 1/k²": [1, 3, 5, 7]}
    out: dict[str, list[dict]] = {}
    for key, values in sweeps.items():
        out[key] = []
        for value in values:
            if key.startswith("kernel_size,"):
                cfg = {**BASE, "kernel_size": value, "mean": SCALED_MEAN_K2 / value**2}
            else:
                cfg = {**BASE, key: value}
            mc, sem = expected_gain(SIZE, cfg["depth"], CHANNELS, cfg["kernel_size"], cfg["mean"], seeds=seeds)
            exact = expected_frobenius_gain(SIZE, cfg["depth"], CHANNELS, cfg["kernel_size"], cfg["mean"]).sqrt()
            p, centres = radial_profile(mc, BANDS)
            e, _ = radial_profile(exact, BANDS)
            s, _ = radial_profile(sem, BANDS)
            out[key].append({"value": value, "cfg": cfg, "mc": p, "sem": s, "exact": e, "centres": centres})
    return out


def padding_study(seeds: int) -> dict[str, dict]:
    """Measured power gain of white noise for circular / zeros / reflect padding (linear decoders), and the
    deviation of ReLU and zero-padding decoders from the linear circular prediction."""
    out: dict[str, dict] = {}
    for mean in (0.0, 0.1):
        for padding in ("circular", "zeros", "reflect"):

            def make(seed, padding=padding, mean=mean):
                torch.manual_seed(seed)
                return ConvDecoder(
                    CHANNELS, CHANNELS, CHANNELS, BASE["depth"], 3, padding, relu=False, weight_mean=mean, bias=False
                ).double()

            gain = expected_power_gain(make, SIZE, CHANNELS, seeds=seeds, inputs=8)
            out[f"{padding} μ={mean}"] = {"profile": radial_profile(gain, BANDS)[0], "padding": padding, "mean": mean}
    deviations: dict[str, list] = {}
    x = torch.randn(8, CHANNELS, *SIZE, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for name, kw in {
        "relu circular": dict(relu=True),
        "linear zeros": dict(padding="zeros"),
        "relu zeros": dict(relu=True, padding="zeros"),
    }.items():
        kw = {"relu": False, **kw}
        for seed in range(seeds):
            torch.manual_seed(seed)
            net = ConvDecoder(CHANNELS, CHANNELS, CHANNELS, BASE["depth"], 3, weight_mean=BASE["mean"], **kw).double()
            dev = linear_deviation(net, x, num_bins=4)
            deviations.setdefault(name, []).append((float(dev["relative"]), dev["power_ratio"]))
    out["deviation"] = {k: (np.mean([d[0] for d in v]), torch.stack([d[1] for d in v]).mean(0)) for k, v in deviations.items()}
    return out


# --- 2. upsampling ----------------------------------------------------------------------------------
def upsampling_study(top: int = 6) -> dict[str, dict]:
    """Predicted copy locations vs the strongest bins of measured output spectra."""
    x = gray(16)[None].double()  # (1, 1, 16, 16), strong low frequencies
    freqs = strongest_frequencies(torch.fft.fft2(x), top)
    nets = {}
    for name, kw in {
        "zero insertion ×2, 2 linear convs": dict(depth=2, upsample=[1], upsample_mode="zero", relu=False),
        "nearest ×2 twice, 3 linear convs": dict(depth=3, upsample=[1, 2], relu=False),
        "nearest ×2 twice, 3 convs + ReLU": dict(depth=3, upsample=[1, 2], relu=True),
    }.items():
        torch.manual_seed(0)
        nets[name] = ConvDecoder(1, 1, 8, kernel_size=3, bias=False, **kw).double()
    cases = {"input": (x, freqs[None], 1)}
    with torch.no_grad():
        for name, net in nets.items():
            cases[name] = (net(x), copy_locations(freqs, (16, 16), net.total_scale), net.total_scale)
    out = {}
    with torch.no_grad():
        for name, (y, predicted, s) in cases.items():
            spectrum = torch.fft.fft2(y)
            energy, bins = copy_energy_fraction(spectrum, predicted, (16, 16)) if s > 1 else (math.nan, math.nan)
            out[name] = {
                "spectrum": spectrum[0, 0],
                "predicted": predicted.reshape(-1, 2),
                "hit": copy_hit_rate(spectrum, predicted),
                "factor": s,
                "energy": energy,
                "bins": bins,
            }
    return out


# --- 3. training ------------------------------------------------------------------------------------
def training_study(steps: int) -> dict[str, dict]:
    """Per-band error over training of a conv decoder (noise code) and a ReLU MLP on one 64×64 grey image."""
    target = gray(64)  # (1, 64, 64)
    torch.manual_seed(0)
    code = torch.randn(1, 8, 8, 8)
    conv = ConvDecoder(8, 1, 32, 4, 3, upsample=[1, 2, 3], output_activation="sigmoid")
    coords = grid_coordinates((64, 64)).reshape(-1, 2)  # (H·W, 2)
    mlp = MLP(2, 1, width=128, depth=3, output_activation="sigmoid")
    runs = {
        "ConvDecoder (noise code, nearest ×2³)": fit(conv, lambda n: n(code)[0], target, steps, 2e-3, every=10, num_bands=BANDS),
        "ReLU MLP on (y, x)": fit(mlp, lambda n: n(coords).T.reshape(1, 64, 64), target, steps, 2e-3, every=10, num_bands=BANDS),
    }
    return {"runs": runs}


# --- figures and table ------------------------------------------------------------------------------
def plot_gains(sweeps, out: Path) -> None:
    fig = Figure(figsize=(17, 4), layout="constrained")
    for ax, (key, rows) in zip(fig.subplots(1, len(sweeps)), sweeps.items()):
        for row in rows:
            c = row["centres"].numpy()
            mc, exact = row["mc"].numpy(), row["exact"].numpy()
            line = ax.semilogy(c, mc / np.nanmean(mc), label=f"{key.split(',')[0]} = {row['value']}")[0]
            ax.semilogy(c, exact / np.nanmean(exact), "--", color=line.get_color(), lw=1)
        if key.startswith("kernel_size,"):
            fixed = f"depth {BASE['depth']}, μ = {SCALED_MEAN_K2:g}/k²"
        else:
            fixed = ", ".join(f"{k} {v}" for k, v in BASE.items() if k != key)
        ax.set(
            title=f"sweep {key.split(',')[0]} ({fixed})",
            xlabel="radial frequency (cycles/sample)",
            ylabel="gain / its mean over bands",
        )
        ax.legend(fontsize=7)
    fig.suptitle(
        "random initialisation, no training. solid: Monte-Carlo E‖T(u,v)‖₂ over initialisations; dashed: exact √E‖T‖_F²; C = 8, 32×32 maps"
    )
    fig.savefig(out / "conv_gain.png", dpi=110)


def plot_padding(padding, centres, out: Path) -> None:
    fig = Figure(figsize=(10, 4), layout="constrained")
    ax, rax = fig.subplots(1, 2)
    c = centres.numpy()
    for name, row in padding.items():
        if name == "deviation":
            continue
        style = "-" if row["mean"] else ":"
        ax.semilogy(c, row["profile"].numpy(), style, label=name)
        circular = padding[f"circular μ={row['mean']}"]["profile"]
        rax.semilogy(c, (row["profile"] / circular).numpy(), style, label=name)
    ax.set(
        title="power gain of white noise (linear, depth 4, C = 8)",
        xlabel="radial frequency (cycles/sample)",
        ylabel="E Σ|F[net(x)]|² / HW",
    )
    rax.set(title="relative to circular padding", xlabel="radial frequency (cycles/sample)", ylabel="gain / circular gain")
    ax.legend(fontsize=7)
    rax.legend(fontsize=7)
    fig.savefig(out / "conv_padding.png", dpi=110)


def plot_upsampling(study, out: Path) -> None:
    fig = Figure(figsize=(17, 4.6), layout="constrained")
    axes = fig.subplots(1, len(study))
    for ax, (name, row) in zip(axes, study.items()):
        spec = row["spectrum"]
        h, w = spec.shape
        img = ax.imshow(np.log10(np.fft.fftshift(spec.abs().numpy()) + 1e-6), cmap="viridis", vmin=-2)
        pts = row["predicted"].numpy()
        ys, xs = (pts[:, 0] + h // 2) % h, (pts[:, 1] + w // 2) % w  # to fftshifted pixel positions
        ax.scatter(xs, ys, s=60, facecolors="none", edgecolors="red", lw=1)
        share = (
            "" if row["factor"] == 1 else f"\nout-of-band energy on copies {row['energy']:.0%} ({row['bins']:.1%} of its bins)"
        )
        ax.set_title(
            f"{name}\nred: predicted copies of the {len(pts) // row['factor'] ** 2} strongest input bins{share}", fontsize=8
        )
        ax.set(xlabel="v (fftshift: DC at the centre)", ylabel="u")
        fig.colorbar(img, ax=ax, shrink=0.8, label="log₁₀ |F|")
    fig.savefig(out / "conv_upsampling.png", dpi=110)


def plot_training(study, out: Path) -> None:
    fig = Figure(figsize=(10.5, 4.4), layout="constrained")
    axes = fig.subplots(1, 2)
    runs = study["runs"]
    norm = error_norm(*[r[k].numpy() for r in runs.values() for k in ("band_errors", "dc_errors")])
    for ax, (name, r) in zip(axes, runs.items()):
        mesh = draw_heatmap(
            ax, r["steps"].numpy(), r["band_edges"].numpy(), r["band_errors"].numpy(), norm, name, dc=r["dc_errors"].numpy()
        )
    fig.colorbar(mesh, ax=axes, label="band relative error")
    fig.suptitle("one 64×64 grey image, one seed each, full-batch Adam")
    fig.savefig(out / "conv_training.png", dpi=110)


def print_table(sweeps, padding, upsampling, training) -> None:
    print("\n== gain: lowest band / highest band (C = 8, 32×32) ==")
    print(f"{'setting':28s} {'MC E‖T‖₂ ratio':>18s} {'exact √E‖T‖_F² ratio':>22s}")
    for key, rows in sweeps.items():
        for row in rows:
            mc, sem = row["mc"], row["sem"]
            ratio = float(band_ratio(mc))
            err = ratio * math.hypot(float(sem[0] / mc[0]), float(sem[-1] / mc[-1]))
            print(f"{key + ' = ' + str(row['value']):28s} {ratio:11.3g} ± {err:<6.2g} {float(band_ratio(row['exact'])):16.3g}")
    print("\n== padding: measured power gain of white noise, lowest / highest band (linear, depth 4) ==")
    for name, row in padding.items():
        if name != "deviation":
            print(f"{name:22s} {float(band_ratio(row['profile'])):10.3g}")
    print(
        "\n== deviation from the linear circular prediction (μ = 0.1, depth 4): relative ‖ΔF‖/‖F‖, measured/linear power in 4 bands =="
    )
    for name, (rel, ratio) in padding["deviation"].items():
        print(f"{name:16s} {rel:8.3g}   {[round(float(r), 3) for r in ratio]}")
    print("\n== upsampling: copies of the 6 strongest input bins (16×16 image) ==")
    print(f"{'':40s} {'top bins on copies':>18s} {'out-of-band energy at copies':>29s} {'their bin share':>16s}")
    for name, row in upsampling.items():
        print(f"{name:40s} {row['hit']:18.0%} {row['energy']:29.1%} {row['bins']:16.1%}")
    print("\n== training: first step each band's error < 0.5 (bands 1, 4, 8, 12, 16 of 16) ==")
    for name, r in training["runs"].items():
        first = first_below(r["band_errors"], r["steps"], 0.5)
        print(
            f"{name:40s} {[float(first[i]) for i in (0, 3, 7, 11, 15)]}  final rel. error {float(r['rel_error'][-1]):.3f}, "
            f"DC {float(r['dc_errors'][-1]):.3f}"
        )


def main(argv=None) -> None:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("--out", default="outputs/conv_bottlenecks", help="folder of the PNGs")
    parser.add_argument("--seeds", type=int, default=16, help="random initialisations per setting")
    parser.add_argument("--steps", type=int, default=400, help="training steps of the heatmap runs")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    retain_freed_memory()  # CPU steps reuse freed activations instead of faulting them in
    with torch_threads(args.threads):
        run(args)


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sweeps, padding = gain_sweeps(args.seeds), padding_study(args.seeds)
    upsampling = upsampling_study()
    training = training_study(args.steps)
    plot_gains(sweeps, out)
    plot_padding(padding, sweeps["depth"][0]["centres"], out)
    plot_upsampling(upsampling, out)
    plot_training(training, out)
    print_table(sweeps, padding, upsampling, training)
    print(
        f"\nfigures: {', '.join(str(out / n) for n in ('conv_gain.png', 'conv_padding.png', 'conv_upsampling.png', 'conv_training.png'))}"
    )


if __name__ == "__main__":
    main()
