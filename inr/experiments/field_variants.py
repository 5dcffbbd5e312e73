"""The rows of the field comparison (``compare_fields``): the image comparison's encoders and networks adapted
to a 1D signal (in_dim = 1) or a 3D volume (in_dim = 3), with the protocol they share.

Adapted means: the same networks, learning rates and Adam settings as ``compare_encoders.VARIANTS``, with
the quantities that depend on the grid following it — BACON's band limit is the training grid's Nyquist
frequency (N/4 cycles per unit), the hash grid's finest level is the training grid's resolution — and a
linear output where the target is a signal in [−1, 1] (a sigmoid cannot reach −1). MFN is left out: the
released input_scale (256) is tuned for its 256² image experiment, and no 1D or density-volume value is
released to adapt it from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Optional

from inr.encoders import BasicEncoding, GaussianEncoding, HashGridEncoding, IdentityEncoding, PositionalEncoding
from inr.experiments.compare_encoders import BACON_FRACTIONS, INSTANT_NGP_ADAM, Variant, hash_levels
from inr.experiments.paper_settings import PAPER_SETTINGS
from inr.networks import BACON, FINER, MLP, SIREN, WIRE, GaussMLP
from inr.tasks.base import NetworkFactory

# The paper's 128 positional frequencies per axis (2d_image_regression.ipynb: 2^linspace(0, scale, 128) − 1)
POSITIONAL_PER_AXIS = 128


@dataclass(frozen=True)
class Domain:
    """What differs between a signal and a volume: grid dimension, default size and steps, the PSNR's
    data range R, the output activation of the MLP rows, the clamp of predictions, and the hash grid's
    coarsest level and level count (the finest is the training grid's resolution)."""

    name: str
    ndim: int
    resolution: int
    steps: int
    min_resolution: int
    data_range: float
    output_activation: str
    clamp: Optional[tuple[float, float]]
    hash_base_resolution: int
    hash_levels: int
    gaussian_sigma: float
    positional_scale: float


DOMAINS = {
    # 1024 samples, 1000 full-batch steps, as configs/signal.yaml; SignalFitting: linear output, R = 2.
    # σ = 10 (the paper's natural-image value) and positional scale 4 (not its 6): the best of
    # `compare_fields --signal --sweep` on the training samples alone (docs/benchmark.md)
    "signal": Domain("signal", 1, 1024, 1000, 16, 2.0, "none", None, 16, 16, 10.0, 4.0),
    # 32³ density (16³ = 4096 training voxels), 300 steps as the CPU image protocol; VolumeFitting(density):
    # sigmoid output, predictions clamped to [0, 1], R = 1. The hash grid's 16 levels from N_min = 16 have no
    # room below a 16³ training grid: 4 levels N = 2, 4, 8, 16 (growth b = 2, the top of Instant-NGP's
    # 1.26–2 range, Müller et al. 2022 sec. 3). σ = 1 and positional scale 3 (not the paper's 10 and 6): the
    # best of `compare_fields --volume --sweep` on the training voxels alone, both at the low end of its range
    "volume": Domain("volume", 3, 32, 300, 16, 1.0, "sigmoid", (0.0, 1.0), 2, 4, 1.0, 3.0),
}


@dataclass(frozen=True)
class FieldProtocol:
    """What every row shares on one domain: its size and steps, the MLP, seeds, the mappings' scales and the
    measurement cadence. ``target_psnr`` None: the linear interpolation's held-out PSNR of the same run."""

    domain: Domain
    resolution: int
    steps: int
    gaussian_sigma: float
    positional_scale: float
    width: int = 256
    depth: int = 3
    init: str = "paper"
    seed: int = 0
    steps_per_epoch: int = 10
    target_psnr: Optional[float] = None
    kind: str = "natural"

    @property
    def settings(self):
        return PAPER_SETTINGS[self.kind]

    @property
    def ndim(self) -> int:
        return self.domain.ndim

    @property
    def train_side(self) -> int:
        """Training samples per axis of the every_other split: ⌈N/2⌉."""
        return (self.resolution + 1) // 2

    @property
    def num_bands(self) -> int:
        """16 bands as the image table, fewer when the training grid's Nyquist ⌊n/2⌋ leaves under 2 cycles per band
        (with 1-cycle bands, band 0 = (0, 1) would hold no DFT bin)."""
        return max(1, min(16, self.train_side // 4))

    @property
    def bacon_bandwidth(self) -> float:
        """B = the training grid's Nyquist frequency, N/4 cycles per unit (bacon train_img.py)."""
        return self.resolution / 4


def paper_mlp(p: FieldProtocol) -> NetworkFactory:
    """The paper's ReLU MLP with the domain's output activation."""
    return partial(
        MLP, width=p.width, depth=p.depth, activation="relu", output_activation=p.domain.output_activation, init=p.init
    )


def hashgrid(p: FieldProtocol) -> HashGridEncoding:
    """tiny-cuda-nn's HashGrid (2 features per level, T = 2^19: every level dense here), finest level = the training grid."""
    d = p.domain
    return HashGridEncoding(
        in_dim=p.ndim,
        n_levels=d.hash_levels,
        log2_hashmap_size=19,
        base_resolution=min(d.hash_base_resolution, p.train_side),
        finest_resolution=p.train_side,
    )


def bacon_limit(p: FieldProtocol) -> int:
    """M = Σ_i round(B f_i), ``BACON.max_frequency``."""
    return sum(round(p.bacon_bandwidth * f) for f in BACON_FRACTIONS)


def raw(p: FieldProtocol) -> IdentityEncoding:
    return IdentityEncoding(in_dim=p.ndim)


# The rows, in table order; the networks' settings and their sources as compare_encoders.VARIANTS.
FIELD_VARIANTS: dict[str, Variant] = {
    "none": Variant(raw, mapping="none", network=paper_mlp),
    "basic": Variant(lambda p: BasicEncoding(in_dim=p.ndim), mapping="basic", network=paper_mlp),
    "positional": Variant(
        lambda p: PositionalEncoding(
            in_dim=p.ndim, num_frequencies=POSITIONAL_PER_AXIS, sigma=2.0**p.positional_scale, endpoint=True, minus_one=True
        ),
        mapping="positional",
        network=paper_mlp,
        describe=lambda p, e: f"scale {p.positional_scale:g}, {POSITIONAL_PER_AXIS} per axis",
    ),
    "gaussian": Variant(
        lambda p: GaussianEncoding(in_dim=p.ndim, num_features=p.settings.num_features, sigma=p.gaussian_sigma, seed=p.seed),
        mapping="gaussian",
        network=paper_mlp,
        describe=lambda p, e: f"σ = {p.gaussian_sigma:g}, m = {e.out_dim // 2}",
    ),
    "siren": Variant(
        raw, lr=5e-4, network=lambda p: partial(SIREN, width=p.width, depth=4), describe=lambda p, e: f"4 × {p.width}, ω₀ = 30"
    ),
    "hashgrid": Variant(
        hashgrid,
        lr=1e-2,
        adam=INSTANT_NGP_ADAM,
        network=lambda p: partial(MLP, width=64, depth=2, output_activation=p.domain.output_activation),
        describe=lambda p, e: f"{e.n_levels} levels × 2, " + hash_levels(p, e),
    ),
    "wire": Variant(
        raw,
        lr=1e-3,
        network=lambda p: partial(WIRE, width=p.width, depth=4, first_omega_0=20.0, hidden_omega_0=20.0, scale=10.0),
        describe=lambda p, e: f"4 × {p.width}, ω₀ = 20, s₀ = 10",
    ),
    "gauss": Variant(
        raw,
        lr=2e-3,
        network=lambda p: partial(GaussMLP, width=p.width, depth=4, scale=10.0),
        describe=lambda p, e: f"4 × {p.width}, s = 10",
    ),
    "finer": Variant(
        raw,
        lr=5e-4,
        network=lambda p: partial(FINER, width=p.width, depth=4, first_omega_0=30.0, hidden_omega_0=30.0),
        describe=lambda p, e: f"4 × {p.width}, ω₀ = 30",
    ),
    "bacon": Variant(
        raw,
        lr=5e-3,
        network=lambda p: partial(BACON, width=p.width, depth=4, bandwidth=p.bacon_bandwidth, filter_fractions=BACON_FRACTIONS),
        describe=lambda p, e: f"4 × {p.width}, band limit {bacon_limit(p)} cycles/unit",
    ),
}
