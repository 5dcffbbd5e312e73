"""The inverse problems by name, beside the method registry: how each is measured (``Measurement``: its data for a
seed), the held-out signal a regularisation weight is chosen on, its direct classical reconstruction, the Nyquist
frequency its loss sees (for the grid rule), the paper's run of it, what a reconstruction scores, and the memory a
network's full-grid step on it needs. ``inverse`` and ``table1`` read them; neither imports the other.

    m = Measurement("ct", resolution=128)
    dm = m.data(seed=0)                       # phantom 0's 20 projections (a set-up MeasurementDataModule)
    name, make = classical("ct", dm)          # "filtered back-projection", its reconstruction
    score(make(), dm.values_grid())           # psnr, ssim, dc, low, high

Every classical reconstruction is clipped to [0, 1], the object's known range, as a network's sigmoid bounds its
own. The scores are against the ground truth: PSNR on what the method never saw (``psnr``: the whole grid for CT,
MRI and super-resolution, whose measurements are projections, k-space samples or block means of every pixel; for
inpainting the unobserved pixels alone, with the whole image's beside it as ``full_psnr``), and on the whole grid
SSIM (none for a side under ``inr.metrics.SSIM_MIN_SIDE``, 6), the relative error of the mean (``dc``) and the pooled relative errors of the
lower and upper half of 16 radial bands (``low``, ``high``; ``inr.spectral.spectral_summary``: both fields with
their means removed first). A reconstruction whose variation is under 1 % of the truth's (``COLLAPSED``: every band
error ≥ 0.99) is marked ``collapsed``: the tables leave it out of the means and name it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch

from inr.data import CTDataModule, InpaintingDataModule, MRIDataModule, SuperResolutionDataModule
from inr.data.measurements import MeasurementDataModule
from inr.errors import check_memory
from inr.extras import require
from inr.metrics import psnr
from inr.metrics import ssim as grid_ssim
from inr.operators import baselines
from inr.spectral import spectral_summary
from inr.tasks.memory import activation_bytes_per_point

TASKS = ("ct", "mri", "inpaint", "superres")
DEFAULT_RESOLUTION = {"ct": 128, "mri": 32, "inpaint": 128, "superres": 128}
# The paper's sizes: CT 512² over its 8 test phantoms; MRI 96³ over its 6 test volumes
PAPER_RUNS = {"ct": (512, 8), "mri": (96, 6)}
GRID_LR = 0.1  # grid optimisation, both notebooks
NUM_BANDS = 16
# a reconstruction whose variation about its mean is under this share of the truth's is a constant: collapsed
COLLAPSED = 0.01
# Held-out signals for choosing a weight: a phantom of a seed no table uses, and a photograph bundled with
# scikit-image that no table here reconstructs
HELDOUT_PHANTOM_SEED = 1000
HELDOUT_IMAGE = "coffee.png"
# λ = w ‖A‖²: w is the TV weight of the solver's proximal step (for A the identity, skimage's ``weight``); the
# grid spans sparse-view CT's optimum (w ≈ 1e-4) to strong denoising (0.1)
TV_WEIGHTS = tuple(10.0 ** (k / 2) for k in range(-10, -1))


@dataclass(frozen=True)
class Measurement:
    """How a problem is measured: the task, the grid side, CT's angles, inpainting's observed fraction,
    super-resolution's factor, the image (inpainting, super-resolution; None: data/astronaut.png) and the σ of the
    measurements' noise."""

    task: str
    resolution: int
    angles: int = 20
    keep: float = 0.2
    factor: int = 4
    image: Optional[str] = None
    noise: float = 0.0

    @property
    def ndim(self) -> int:
        return 3 if self.task == "mri" else 2

    @property
    def channels(self) -> int:
        """The field's channels: a phantom's density, an image's colours."""
        return 1 if self.task in ("ct", "mri") else 3

    def data(self, seed: int, image: Optional[str] = None, phantom: Optional[int] = None) -> MeasurementDataModule:
        """The problem for ``seed`` (its phantom, mask and noise), set up; ``image``/``phantom`` replace the signal
        (a held-out one) and keep the seed's operator and noise."""
        phantom = seed if phantom is None else phantom
        r, noise = self.resolution, self.noise
        if self.task == "ct":
            dm = CTDataModule(resolution=r, angles=self.angles, phantom_seed=phantom, noise_std=noise, seed=seed)
        elif self.task == "mri":
            dm = MRIDataModule(resolution=r, phantom_seed=phantom, mask_seed=seed, noise_std=noise, seed=seed)
        elif self.task == "inpaint":
            dm = InpaintingDataModule(path=image or self.image, resolution=r, keep=self.keep, seed=seed, noise_std=noise)
        else:
            dm = SuperResolutionDataModule(path=image or self.image, resolution=r, factor=self.factor, noise_std=noise, seed=seed)
        dm.setup("fit")
        return dm

    def heldout(self, seed: int) -> tuple[MeasurementDataModule, str]:
        """The held-out problem a weight is chosen on: seed ``seed``'s operator and noise, another signal (a phantom
        of seed ``HELDOUT_PHANTOM_SEED``; for images ``HELDOUT_IMAGE`` of scikit-image's photographs); its name."""
        if self.task in ("ct", "mri"):
            return self.data(seed, phantom=HELDOUT_PHANTOM_SEED), f"phantom seed {HELDOUT_PHANTOM_SEED}"
        photos = require("skimage.data", extra="photos", what="scikit-image's photographs")
        return self.data(seed, image=str(Path(photos.__file__).parent / HELDOUT_IMAGE)), HELDOUT_IMAGE

    def nyquist(self) -> float:
        """The Nyquist frequency (cycles per unit) of what the loss sees, for the grid rule: CT and MRI the whole grid
        (the paper's setting: its scales were chosen on the 512² / 96³ grid); super-resolution the low-resolution
        grid (side / factor); inpainting a regular grid of the observed pixels' density (side · keep^(1/d))."""
        side = self.resolution
        if self.task == "superres":
            return side / self.factor / 2
        if self.task == "inpaint":
            return side * self.keep ** (1 / self.ndim) / 2
        return side / 2


def classical(task: str, dm: MeasurementDataModule) -> tuple[str, Callable[[], torch.Tensor]]:
    """The task's direct classical reconstruction: its name, and a function returning it clipped to [0, 1]."""
    op, y = dm.operator.cpu(), dm.measurements
    name, method = {
        "ct": ("filtered back-projection", baselines.filtered_back_projection),
        "mri": ("zero-filled inverse FFT (real part)", baselines.zero_filled_ifft),
        "inpaint": ("cubic interpolation", baselines.cubic_inpaint),
        "superres": ("bicubic interpolation", baselines.cubic_upsample),
    }[task]
    return name, lambda: method(op, y).clamp(0, 1)


def grid_optimisation(dm: MeasurementDataModule, steps: int) -> torch.Tensor:
    """The pixel grid fitted through the operator with Adam (lr 0.1, as both notebooks), for ``steps`` steps."""
    return baselines.grid_optimisation(dm.operator.cpu(), dm.measurements, dm.out_channels, steps, GRID_LR)


def unseen(task: str, dm: MeasurementDataModule) -> Optional[torch.Tensor]:
    """The grid points no measurement of ``dm`` observes directly, (*shape) boolean: inpainting's unobserved pixels;
    None where every point enters the measurements (CT, MRI, super-resolution: the whole grid is held out)."""
    return ~dm.operator.mask.cpu() if task == "inpaint" else None


def collapsed(recon: torch.Tensor, truth: torch.Tensor) -> bool:
    """Whether a reconstruction is a constant: ‖x̂ − mean x̂‖ ≤ ``COLLAPSED`` · ‖x − mean x‖ (per channel, all of them).

    Example:
        >>> truth = torch.linspace(0, 1, 16).reshape(1, 4, 4)
        >>> collapsed(torch.full_like(truth, 0.02), truth), collapsed(truth / 2, truth)
        (True, False)
    """
    spread = lambda x: (x - x.mean(dim=tuple(range(1, x.ndim)), keepdim=True)).flatten(1).norm(dim=1)
    return bool((spread(recon.double()) <= COLLAPSED * spread(truth.double())).all())


def score(recon: torch.Tensor, truth: torch.Tensor, unseen: Optional[torch.Tensor] = None) -> dict[str, float]:
    """PSNR (``inr.metrics.psnr``) of a reconstruction (C, *shape) as its method returns it on the ``unseen`` grid
    points (a (*shape) mask; None: the whole grid), with the whole grid's as ``full_psnr`` where that differs;
    SSIM (NaN for a side under ``inr.metrics.SSIM_MIN_SIDE``) and ``spectral_summary``'s DC, low and high errors (``NUM_BANDS`` radial
    bands) on the whole grid; ``collapsed`` 1.0 for a constant reconstruction (``collapsed``), else 0.0.

    Example:
        >>> truth = torch.linspace(0, 1, 64).reshape(1, 8, 8)
        >>> recon = truth.clone(); recon[:, :4] = 0.5  # the top half never seen, filled with grey
        >>> s = score(recon, truth, unseen=torch.arange(8)[:, None].expand(8, 8) < 4)
        >>> round(s["psnr"] - s["full_psnr"], 2), s["collapsed"]  # the unseen half alone: its error, undiluted
        (-3.01, 0.0)
    """
    recon = recon.float()
    bands = spectral_summary(recon.double(), truth.double(), num_bands=NUM_BANDS)
    ssim = grid_ssim(recon.clamp(0, 1), truth, dims=recon.ndim - 1)
    scores = {"psnr": psnr(recon, truth)}
    if unseen is not None:
        scores = {"psnr": psnr(recon[:, unseen], truth[:, unseen]), "full_psnr": scores["psnr"]}
    return {
        **scores,
        "ssim": float(ssim) if ssim is not None else math.nan,
        **{key: float(bands[key]) for key in ("dc", "low", "high")},
        "collapsed": float(collapsed(recon, truth)),
    }


def choose_tv_weight(m: Measurement, seed: int, iterations: int) -> tuple[float, str]:
    """λ of the TV-regularised reconstruction: the best of ``TV_WEIGHTS`` · ‖A‖² on the held-out problem of ``seed``
    (PSNR against its truth, never the test signal's); (λ, where it was chosen)."""
    dm, where = m.heldout(seed)
    op, truth = dm.operator.cpu(), dm.values_grid()
    scale = baselines.operator_norm(op, dm.out_channels) ** 2
    weight, scores = baselines.choose_tv_weight(op, dm.measurements, truth, [w * scale for w in TV_WEIGHTS], iterations)
    tried = ", ".join(f"{w * scale:.1e}: {p:.2f}" for w, p in zip(TV_WEIGHTS, scores))
    print(f"TV weight: {weight:.1e}, the best on the held-out {where} (PSNR dB by λ: {tried})", file=sys.stderr, flush=True)
    return weight, f"chosen on {where}"


def check_network_memory(models: list[torch.nn.Module], m: Measurement) -> None:
    """Refuse (one line, with the estimate) a problem whose full-grid training step would not fit: every step
    evaluates the field on all R^d points, keeping 2 × the activations a point saves for the backward pass (forward
    and gradients) of the widest of ``models``, beside the grid's coordinates, on the training device."""
    points = m.resolution**m.ndim
    per_point = max(2 * activation_bytes_per_point(model, m.ndim) for model in models) + 4 * (m.ndim + 4)
    available, where = (torch.cuda.mem_get_info()[0], " on the GPU") if torch.cuda.is_available() else (None, "")
    check_memory(
        f"--task {m.task} --resolution {m.resolution}: a network's step on {points:,} grid points",
        int(points * per_point),
        advice="choose a smaller --resolution (or --width)",
        available=available,
        where=where,
    )
