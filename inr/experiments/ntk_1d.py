"""The 1D NTK figures of Tancik et al. 2020 (Fig. 3) from this framework's encoders and kernels, one command.

    python -m inr.experiments.ntk_1d                 # ≈ 1-2 minutes on a 2-core CPU
    python -m inr.experiments.ntk_1d --out runs/ntk_1d --steps 2000 --width 1024

For each encoding (none, basic, positional, Gaussian σ = 1, 10, 100) of v ∈ [0, 1) on a grid of ``length``
points: the infinite-width NTK of a ReLU MLP on γ(v) (``analytic_ntk``), its profile k(v, ½) and that
profile's spectrum, and the sorted eigenvalues of the kernel matrix (``ntk_1d_kernels.png``). Then a wide
NTK-parametrized ReLU MLP is trained on γ(v) by full-batch gradient descent on L = (1/2N)‖f − y‖² over the
even samples of a power-law signal (``power_law_signal``, α = 1), with a small step η = ``rate``·N/λ_max;
its train and test MSE are plotted against ``predict_gd_mse`` with the analytic kernel and with the
network's own NTK at initialisation (``ntk_1d_dynamics.png``); a table of final errors is printed and saved.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from inr.data.signal import power_law_signal
from inr.encoders import BasicEncoding, Encoder, GaussianEncoding, IdentityEncoding, PositionalEncoding
from inr.ntk import NTKMLP, analytic_ntk, circulant_spectrum, empirical_ntk, kernel_eigh, predict_gd_mse
from inr.run.command import ExperimentParser


@dataclass(frozen=True)
class Setup:
    """Everything the figures depend on."""

    length: int = 256  # grid points on [0, 1); train on the even ones, test on the odd ones
    depth: int = 3  # hidden ReLU layers, as MLP(depth=3)
    width: int = 512  # of the trained network
    weight_std: float = math.sqrt(2.0)  # σ_w = √2 keeps Σ^l(x, x) constant across ReLU layers (He et al. 2015)
    bias_std: float = 0.1
    steps: int = 1000
    log_every: int = 10
    rate: float = 0.25  # η λ_max / N: the fastest mode shrinks by e^{−0.25} per step
    alpha: float = 1.0  # power-law exponent of the target
    num_features: int = 256  # Gaussian m
    seed: int = 0


def make_encoders(s: Setup) -> dict[str, Encoder]:
    """The encodings compared: the four of the paper, Gaussian at three scales."""
    return {
        "none": IdentityEncoding(in_dim=1),
        "basic": BasicEncoding(in_dim=1),
        "positional": PositionalEncoding(in_dim=1, num_frequencies=16, sigma=s.length / 4),
        "gaussian σ=1": GaussianEncoding(in_dim=1, num_features=s.num_features, sigma=1.0, seed=s.seed),
        "gaussian σ=10": GaussianEncoding(in_dim=1, num_features=s.num_features, sigma=10.0, seed=s.seed),
        "gaussian σ=100": GaussianEncoding(in_dim=1, num_features=s.num_features, sigma=100.0, seed=s.seed),
    }


def kernel_views(enc: Encoder, s: Setup) -> dict[str, Tensor]:
    """Infinite-width NTK on the grid: profile k(v, ½), its spectrum |DFT| and the matrix eigenvalues."""
    v = torch.arange(s.length, dtype=torch.float64)[:, None] / s.length  # (N, 1)
    feats = enc.double()(v)
    k = analytic_ntk(feats, feats, s.depth, s.weight_std, s.bias_std)  # (N, N)
    centre = s.length // 2
    profile = k[:, centre]
    # the row about v = ½ rolled to start at offset 0 is the first row of the (for Fourier features) circulant K
    spectrum = circulant_spectrum(torch.roll(profile, -centre)).abs()
    return {"profile": profile, "spectrum": spectrum, "eigenvalues": kernel_eigh(k)[0].clamp_min(0)}


def train_and_predict(enc: Encoder, y: Tensor, s: Setup) -> dict[str, object]:
    """Full-batch GD of a wide network on γ(v) vs the closed-form dynamics; MSE curves on both splits."""
    n_all = len(y)
    v = torch.arange(n_all, dtype=torch.float32)[:, None] / n_all
    x_train, x_test, y_train, y_test = v[::2], v[1::2], y[::2], y[1::2]
    torch.manual_seed(s.seed)
    net = nn.Sequential(enc.float(), NTKMLP(enc.out_dim, 1, s.width, s.depth, s.weight_std, s.bias_std))
    n = len(x_train)
    with torch.no_grad():
        f0_train, f0_test = net(x_train)[:, 0], net(x_test)[:, 0]
    emp_tt, emp_st = empirical_ntk(net, x_train), empirical_ntk(net, x_test, x_train)
    ft, fs = enc.double()(x_train.double()), enc.double()(x_test.double())
    ana_tt = analytic_ntk(ft, ft, s.depth, s.weight_std, s.bias_std)
    ana_st = analytic_ntk(fs, ft, s.depth, s.weight_std, s.bias_std)
    enc.float()
    lr = s.rate * n / float(kernel_eigh(ana_tt)[0][0])
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    steps, observed = [], {"train": [], "test": []}
    for step in range(s.steps + 1):
        if step % s.log_every == 0 or step == s.steps:
            with torch.no_grad():
                steps.append(step)
                observed["train"].append(float(((net(x_train)[:, 0] - y_train) ** 2).mean()))
                observed["test"].append(float(((net(x_test)[:, 0] - y_test) ** 2).mean()))
        if step == s.steps:
            break
        opt.zero_grad()
        (0.5 * ((net(x_train)[:, 0] - y_train) ** 2).sum() / n).backward()  # L = (1/2N)‖f − y‖²
        opt.step()
    t = torch.tensor(steps, dtype=torch.float64)
    out: dict[str, object] = {"lr": lr, "steps": steps, "observed": observed}
    for name, (ktt, kst) in {"analytic": (ana_tt, ana_st), "empirical": (emp_tt, emp_st)}.items():
        pred = predict_gd_mse(ktt.double(), y_train.double(), lr, t, kst.double(), f0_train.double(), f0_test.double())
        out[name] = {
            "train": ((pred.train - y_train.double()) ** 2).mean(1).tolist(),
            "test": ((pred.test - y_test.double()) ** 2).mean(1).tolist(),
        }
    return out


def kernel_figure(views: dict[str, dict[str, Tensor]], s: Setup, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    offset = (torch.arange(s.length) - s.length // 2) / s.length
    freq = torch.arange(s.length // 2 + 1)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for name, view in views.items():
        axes[0].plot(offset, view["profile"] / view["profile"].max(), label=name)
        axes[1].semilogy(freq, (view["spectrum"] / view["spectrum"].max())[: len(freq)].clamp_min(1e-12), label=name)
        axes[2].loglog(torch.arange(1, s.length + 1), (view["eigenvalues"] / view["eigenvalues"][0]).clamp_min(1e-12), label=name)
    axes[0].set(title="NTK profile k(v, ½) / max", xlabel="v − ½")
    axes[1].set(title="|DFT| of the profile / max", xlabel="frequency (cycles per unit)", ylim=(1e-8, 2))
    axes[2].set(title="eigenvalues of K (sorted) / λ_max", xlabel="index", ylim=(1e-8, 2))
    axes[0].legend(fontsize=8)
    fig.suptitle(f"infinite-width NTK of a {s.depth}-hidden-layer ReLU MLP on γ(v), σ_w = {s.weight_std:.3g}, β = {s.bias_std:g}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def dynamics_figure(runs: dict[str, dict], s: Setup, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(15, 8), sharex=True)
    for ax, (name, run) in zip(axes.flat, runs.items()):
        for split, colour in (("train", "tab:blue"), ("test", "tab:orange")):
            ax.semilogy(run["steps"], run["observed"][split], color=colour, label=f"{split} observed")
            ax.semilogy(run["steps"], run["analytic"][split], "--", color=colour, label=f"{split} NTK ∞-width")
            ax.semilogy(run["steps"], run["empirical"][split], ":", color=colour, label=f"{split} NTK at init")
        ax.set(title=f"{name} (η = {run['lr']:.3g})", xlabel="GD step", ylabel="MSE")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"full-batch GD of a width-{s.width} NTK-parametrized ReLU MLP vs the kernel predictions")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(s: Setup, out: Path) -> dict[str, dict]:
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    y = power_law_signal(s.length, alpha=s.alpha, seed=s.seed)
    y = y / y.abs().max()  # peak 1, as SignalDataModule normalises
    encoders = make_encoders(s)
    views = {name: kernel_views(enc, s) for name, enc in encoders.items()}
    kernel_figure(views, s, out / "ntk_1d_kernels.png")
    runs = {name: train_and_predict(enc, y, s) for name, enc in encoders.items()}
    dynamics_figure(runs, s, out / "ntk_1d_dynamics.png")
    rows = []
    for name, r in runs.items():
        rows.append(
            {
                "encoding": name,
                "lr": r["lr"],
                **{
                    f"{split}_{src}": (r[src][split][-1] if src != "observed" else r["observed"][split][-1])
                    for split in ("train", "test")
                    for src in ("observed", "analytic", "empirical")
                },
            }
        )
    (out / "results.json").write_text(json.dumps({"setup": asdict(s), "rows": rows, "runs": runs}, indent=1))
    print(f"final MSE after {s.steps} GD steps (width {s.width}); predictions from the ∞-width NTK and the NTK at init")
    print("| encoding | η | train observed | train ∞-width | train at init | test observed | test ∞-width | test at init |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['encoding']} | {r['lr']:.3g} | {r['train_observed']:.3g} | {r['train_analytic']:.3g} | {r['train_empirical']:.3g} "
            f"| {r['test_observed']:.3g} | {r['test_analytic']:.3g} | {r['test_empirical']:.3g} |"
        )
    print(f"figures: {out / 'ntk_1d_kernels.png'}, {out / 'ntk_1d_dynamics.png'} ({time.perf_counter() - start:.0f} s)")
    return runs


def main(argv: list[str] | None = None) -> dict[str, dict]:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("--out", type=Path, default=Path("runs/ntk_1d"), help="folder of the figures")
    defaults = Setup()
    helps = {
        "length": "grid points on [0, 1); train on the even ones, test on the odd ones (even, ≥ 8)",
        "depth": "hidden ReLU layers of the network and of the kernels",
        "width": "hidden width of the trained network",
        "steps": "full-batch gradient-descent steps",
        "log_every": "steps between two loss measurements",
        "seed": "seed of the target, the Gaussian features and the network",
    }
    for field, text in helps.items():
        parser.add_argument(f"--{field.replace('_', '-')}", type=int, default=getattr(defaults, field), help=text)
    parser.add_argument("--rate", type=float, default=defaults.rate, help="η λ_max / N: per-step decay of the fastest mode")
    args = parser.parse_args(argv)
    if args.length < 8 or args.length % 2 or args.steps < 1 or args.width < 1 or args.log_every < 1:
        parser.error("--length must be even and ≥ 8; --steps, --width, --log-every ≥ 1")
    s = Setup(
        length=args.length,
        depth=args.depth,
        width=args.width,
        steps=args.steps,
        log_every=args.log_every,
        seed=args.seed,
        rate=args.rate,
    )
    return run(s, args.out)


if __name__ == "__main__":
    main()
