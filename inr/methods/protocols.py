"""The protocols every comparison follows, as data: the four input mappings' settings per task, and the paper's
reported results beside them.

Tancik et al. 2020 ran each task of its Table 1 with its own learning rates and mapping scales, read here
from its released notebooks (repository tancik/fourier-feature-networks, ``Experiments/*.ipynb``):

- 2D images (``2d_image_regression.ipynb``, "Paper Experiments" cell)::

      params = {'div2k': {'lr': 1e-3, 'no_enc_lr': 1e-2, 'basic_lr': 1e-2, 'posenc_scale': 6, 'gaussian_scale': 10},
                'text':  {'lr': 1e-3, 'no_enc_lr': 1e-3, 'basic_lr': 1e-3, 'posenc_scale': 5, 'gaussian_scale': 14}}

  (positional and Gaussian take ``lr``), ``network_depth = 4`` stax ``Dense`` layers of 256 (3 hidden ReLU
  layers, then Dense(3) and a sigmoid), ``embedding_size = 256``, ``training_steps = 2000``, ``RES = 512``,
  loss ½·mean((f − y)²), full-batch Adam, stax initialisation (``inr.networks.mlp.paper_init_``).
- 2D CT (``2d_CT.ipynb``): lr 1e-2 none/basic, 1e-3 positional (scale 3) and Gaussian (σ 4), 20 angles.
- 3D MRI (``3d_MRI.ipynb``): lr 2e-3 for every mapping, positional scale 4, Gaussian σ 2 (phantoms).
- 3D shape occupancy (``3d_shape_occupancy.ipynb``): fresh uniform points in the mesh's box every step, lr 5e-4
  for every mapping decayed ×0.1 per 5,000 of 10,000 steps, positional scale 6 (256 // 3 = 85 per axis),
  Gaussian σ 12, ``make_network(8, 256)`` (7 hidden ReLU layers and the logit); its ``input_encoder`` feeds
  "no mapping" as 2v − 1 and divides the Fourier features by ‖a‖ = √m.

Positional frequencies are 2^linspace(0, scale, n) − 1 on each axis (n = ``positional_per_axis``); Gaussian
B ~ N(0, σ²) with m = ``num_features`` rows. The signal and volume protocols are this package's own (chosen
on the training samples alone: docs/benchmark.md), and so is the shape protocol at CPU size (docs/shapes.md). The methods that use these settings are
``inr.methods.registry``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Optional

from inr.errors import InputError

# The four mappings of the paper, in its table order.
MAPPINGS = ("none", "basic", "positional", "gaussian")
# The grid rule (``MappingSettings.at``): no band edge above half the training samples' Nyquist frequency; the
# edge of a Gaussian band is 3σ. Half: the highest the paper puts any band at its own sizes (its natural-image
# positional top, 63 cycles on 256² training pixels: 0.49 ν), so its values stand there; measured against
# other rules in docs/spectral.md ("Settings that follow the grid").
BAND_CAP = 0.5
GAUSSIAN_EDGE = 3.0


@dataclass(frozen=True)
class MappingSettings:
    """One task's settings of the four mappings and the MLP they feed.

    ``lr`` maps each of ``MAPPINGS`` to its Adam learning rate; ``depth`` counts hidden layers (the notebooks'
    ``network_depth`` counts the output layer too); ``resolution`` and ``steps`` are the protocol's own grid
    side and step count; ``test_psnr`` is the held-out PSNR the paper reports for it (dB, mean over
    ``dataset``, Table 1), empty for a protocol of this package's own; ``test_iou`` likewise the IoU it reports
    for a shape protocol. ``nyquist`` is the Nyquist frequency (cycles per unit) of the training samples the
    scales were chosen on; ``at(ν)`` moves them to another grid. The positional encoding's frequencies are
    2^linspace(0, positional_scale, n) − 1, so its top frequency is 2^positional_scale − 1 cycles per unit.

    What the shape notebook adds (defaults: as the image notebooks): ``sampling`` "fresh" trains on new points
    uniform in the domain every step, with no training grid ("grid": samples on a regular grid);
    ``centred_input`` feeds "none" 2v − 1 instead of v; ``normalised_features`` divides the Fourier features by
    ‖a‖ = √m (m frequencies); ``lr_decay`` multiplies the learning rate by that factor per half of ``steps``,
    continuously (None: constant).
    """

    kind: str
    lr: Mapping[str, float]
    positional_scale: float
    gaussian_sigma: float
    test_psnr: Mapping[str, float] = field(default_factory=dict)
    num_features: int = 256
    positional_per_axis: int = 128
    steps: int = 2000
    resolution: int = 512
    width: int = 256
    depth: int = 3
    init: str = "paper"
    test_iou: Mapping[str, float] = field(default_factory=dict)
    sampling: str = "grid"
    centred_input: bool = False
    normalised_features: bool = False
    lr_decay: Optional[float] = None
    dataset: str = field(default="", compare=False)
    nyquist: float = 128.0

    def at(self, nyquist: float) -> MappingSettings:
        """These settings on training samples of Nyquist frequency ν = ``nyquist`` (cycles per unit), by the grid
        rule: each band keeps the paper's cycles per unit, but no band edge lies above ν/2 (``BAND_CAP``) — the
        positional top frequency 2^s − 1 ≤ ν/2, the Gaussian's 3σ ≤ ν/2 (99.7 % of its per-axis frequencies
        below it). At the ν the values were chosen (or given, ``given_bands``) for, they are kept as they are;
        the rule and what was measured with it: docs/spectral.md, "Settings that follow the grid". Refused
        (``InputError``) where the positional band would end under one cycle per unit, below the basic mapping's.

        Example:
            >>> at = PROTOCOLS["natural"].at(32)   # 128² every other pixel: 64² training pixels
            >>> round(2 ** at.positional_scale - 1, 2), round(at.gaussian_sigma, 3)
            (16.0, 5.333)
        """
        if float(nyquist) == self.nyquist:  # the grid these values were chosen (or given) for
            return self
        edge = BAND_CAP * float(nyquist)
        top = min(2.0**self.positional_scale - 1.0, edge)
        if top < 1.0:
            raise InputError(
                f"{self.kind}: training samples of Nyquist {nyquist:g} cycles per unit leave the positional band "
                f"{top:.2g} cycles (at most half the Nyquist), below the basic mapping's 1: use a larger grid, "
                "or give the scale and σ explicitly"
            )
        return replace(
            self,
            nyquist=float(nyquist),
            positional_scale=min(self.positional_scale, math.log2(1.0 + top)),
            gaussian_sigma=min(self.gaussian_sigma, edge / GAUSSIAN_EDGE),
        )

    def learning_rate(self, mapping: str) -> float:
        if mapping not in self.lr:
            raise KeyError(f"no learning rate for mapping {mapping!r}; the mappings are {', '.join(MAPPINGS)}")
        return self.lr[mapping]


_NATURAL_LR = {"none": 1e-2, "basic": 1e-2, "positional": 1e-3, "gaussian": 1e-3}
_SHAPE = MappingSettings(
    kind="shape",
    lr={m: 5e-4 for m in MAPPINGS},
    lr_decay=0.1,
    positional_scale=6.0,
    gaussian_sigma=12.0,
    test_iou={"none": 0.864, "basic": 0.892, "positional": 0.960, "gaussian": 0.973},
    positional_per_axis=85,
    steps=10_000,
    depth=7,
    sampling="fresh",
    centred_input=True,
    normalised_features=True,
    dataset="mean over the Stanford dragon, buddha, armadillo and lucy, 10,000 steps",
)

# View synthesis (3d_simple_nerf.ipynb: no view dependence, no hierarchical sampling). The notebook's rates
# (5e-4 for the mappings, 1e-2 none, 5e-3 basic) are for 50,000 steps; for ~1,000 steps every mapping uses
# 5e-3 and none 1e-2 (its paper-given lead kept). Frequencies in cycles per unit of the scene cube mapped to
# [0, 1]: the notebook's sin(B x) on world units, B up to 2^8 − 1 (posenc_new: 2^linspace(0, 8, 256 // 3) − 1
# per axis) and σ = 26 (256 Gaussian features), on its 3-unit cube (x ∈ [−1.5, 1.5]) are
# (2^8 − 1)·3/2π = 121.8 and 26·3/2π = 12.41 cycles per unit. Its 400² lego views (focal 555.6 px, cameras
# 4.031 from the centre) resolve ν = focal · 3 / (2 · 4.031) = 206.7 cycles per unit: a pixel spans
# 4.031/555.6 world units there (``inr.data.rays.view_nyquist``). The grid rule scales both to the views here.
_NERF = MappingSettings(
    kind="nerf",
    lr={"none": 1e-2, "basic": 5e-3, "positional": 5e-3, "gaussian": 5e-3},
    positional_scale=math.log2(1.0 + (2**8 - 1) * 3 / (2 * math.pi)),
    gaussian_sigma=26 * 3 / (2 * math.pi),
    num_features=256,
    positional_per_axis=256 // 3,
    steps=600,
    resolution=64,
    width=128,
    nyquist=555.5555 * 3 / (2 * 4.031),
)

PROTOCOLS: Mapping[str, MappingSettings] = MappingProxyType(
    {
        "natural": MappingSettings(
            kind="natural",
            lr=_NATURAL_LR,
            positional_scale=6.0,
            gaussian_sigma=10.0,
            test_psnr={"none": 19.32, "basic": 21.72, "positional": 24.95, "gaussian": 25.57},
            dataset="32 DIV2K images, 512² (the notebook's data_div2k.npz)",
        ),
        "text": MappingSettings(
            kind="text",
            lr={"none": 1e-3, "basic": 1e-3, "positional": 1e-3, "gaussian": 1e-3},
            positional_scale=5.0,
            gaussian_sigma=14.0,
            test_psnr={"none": 18.40, "basic": 20.48, "positional": 27.57, "gaussian": 30.47},
            dataset="32 text images, 512² (the notebook's data_2d_text.npz)",
        ),
        # Table 1's CT column on Shepp–Logan phantoms (its second column, ATLAS brain slices, is for data not
        # bundled here: none 15.44, basic 16.95, positional 19.55, gaussian 19.88); 256 // 2 frequencies per axis
        "ct": MappingSettings(
            kind="ct",
            lr=_NATURAL_LR,
            positional_scale=3.0,
            gaussian_sigma=4.0,
            test_psnr={"none": 16.75, "basic": 23.31, "positional": 26.89, "gaussian": 28.33},
            steps=1000,
            nyquist=256.0,  # the loss sees the field on the whole 512² grid
            dataset="Shepp–Logan phantoms, 512², 20 angles",
        ),
        # 256 // 3 = 85 frequencies per axis
        "mri": MappingSettings(
            kind="mri",
            lr={m: 2e-3 for m in MAPPINGS},
            positional_scale=4.0,
            gaussian_sigma=2.0,
            test_psnr={"none": 26.14, "basic": 28.58, "positional": 32.23, "gaussian": 34.51},
            positional_per_axis=85,
            steps=1000,
            resolution=96,
            nyquist=48.0,  # the whole 96³ grid
            dataset="ATLAS brain volumes, 96³",
        ),
        # Inpainting and super-resolution are not in the paper: its natural-image settings (chosen at Nyquist 128)
        "inpaint": MappingSettings(kind="inpaint", lr=_NATURAL_LR, positional_scale=6.0, gaussian_sigma=10.0, steps=1000),
        "superres": MappingSettings(kind="superres", lr=_NATURAL_LR, positional_scale=6.0, gaussian_sigma=10.0, steps=1000),
        # A 1D signal of 1024 samples and a 32³ density: σ and the positional scale are the best of
        # `compare_fields --signal/--volume --sweep` on the training samples alone; the natural-image rates
        "signal": MappingSettings(
            kind="signal", lr=_NATURAL_LR, positional_scale=4.0, gaussian_sigma=10.0, steps=1000, resolution=1024, nyquist=256.0
        ),
        "volume": MappingSettings(
            kind="volume", lr=_NATURAL_LR, positional_scale=3.0, gaussian_sigma=1.0, steps=300, resolution=32, nyquist=8.0
        ),
        "nerf": _NERF,
        # The notebook's own run of that row ("Paper Experiments"): lego at 400², 50,000 steps of 1024 rays × 128
        # samples, make_network(4, 256) (3 hidden ReLU layers of 256 and Dense(4)), Adam 1e-2 without a mapping, 5e-3
        # basic, 5e-4 the Fourier mappings; its Table 1 row "3D NeRF" (the positional number is the notebook's
        # posenc, 2^0 … 2^8 per axis; its posenc_new, this package's positional, printed 26.265)
        "nerf_paper": replace(
            _NERF,
            kind="nerf_paper",
            lr={"none": 1e-2, "basic": 5e-3, "positional": 5e-4, "gaussian": 5e-4},
            steps=50_000,
            resolution=400,
            width=256,
            test_psnr={"none": 22.41, "basic": 23.16, "positional": 25.60, "gaussian": 25.48},
            dataset="NeRF's Blender lego at 400², 100 training views, 13 test views, 50,000 steps",
        ),
        # 3D shape occupancy (3d_shape_occupancy.ipynb): Table 1's "3D Shape (IoU)" row, the mean over four
        # Stanford meshes; 256 // 3 = 85 frequencies per axis, make_network(8, 256) = 7 hidden layers + the logit
        "shape": _SHAPE,
        # The shape protocol at CPU size (this package's: docs/shapes.md): 4 × 128, 400 steps, a constant 1e-3. In a
        # few hundred steps the notebook's 5e-4, or any ×0.1-per-half-run decay, left the rows at their all-outside
        # start (IoU 0 for none, basic and positional after 400 steps of 1e-3 decayed so)
        "shape_cpu": replace(
            _SHAPE,
            kind="shape_cpu",
            lr={m: 1e-3 for m in MAPPINGS},
            lr_decay=None,
            steps=400,
            width=128,
            depth=4,
            test_iou={},
            dataset="",
        ),
    }
)
# The paper's own protocols (the others are this package's)
PAPER_SETTINGS: Mapping[str, MappingSettings] = MappingProxyType(
    {k: v for k, v in PROTOCOLS.items() if v.test_psnr or v.test_iou}
)
# The image kinds of the 2D image protocol
KINDS = ("natural", "text")


def given_bands(settings: MappingSettings, sigma: Optional[float], scale: Optional[float], nyquist: float) -> MappingSettings:
    """``settings`` on training samples of Nyquist frequency ``nyquist``, with σ and the positional scale replaced
    by the values given (None: the grid rule's); given values are used as they are."""
    if sigma is not None and scale is not None:
        return replace(settings, nyquist=float(nyquist), gaussian_sigma=float(sigma), positional_scale=float(scale))
    at = settings.at(nyquist)
    return replace(
        at,
        gaussian_sigma=at.gaussian_sigma if sigma is None else float(sigma),
        positional_scale=at.positional_scale if scale is None else float(scale),
    )


def settings_table() -> str:
    """The image protocols as Markdown, for the docs and ``compare_encoders --print-settings``.

    Example:
        >>> print(settings_table().splitlines()[2])
        | natural | 1e-02 | 1e-02 | 1e-03 | 1e-03 | 6 | 10 | 256 | 2000 | 512² | 3 × 256 ReLU, sigmoid | stax (Glorot normal, N(0, 0.01²) biases) |
    """
    lines = [
        "| kind | lr none | lr basic | lr positional | lr Gaussian | PE scale | σ | features m | steps | resolution | network | init |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in (PROTOCOLS[k] for k in KINDS):
        lrs = " | ".join(f"{s.lr[m]:.0e}" for m in MAPPINGS)
        lines.append(
            f"| {s.kind} | {lrs} | {s.positional_scale:g} | {s.gaussian_sigma:g} | {s.num_features} | {s.steps} "
            f"| {s.resolution}² | {s.depth} × {s.width} ReLU, sigmoid | stax (Glorot normal, N(0, 0.01²) biases) |"
        )
    return "\n".join(lines)


def paper_row(kind: str) -> str:
    """The paper's Table 1 row for ``kind`` as one line, to print under a table of the same task.

    Example:
        >>> paper_row("ct")
        'The paper (Tancik et al. 2020, Table 1; Shepp–Logan phantoms, 512², 20 angles) reports PSNR (dB): none 16.75, basic 23.31, positional 26.89, gaussian 28.33.'
        >>> paper_row("shape")
        'The paper (Tancik et al. 2020, Table 1; mean over the Stanford dragon, buddha, armadillo and lucy, 10,000 steps) reports IoU: none 0.864, basic 0.892, positional 0.960, gaussian 0.973.'
    """
    s = PAPER_SETTINGS[kind]
    scores, what, spec = (s.test_iou, "IoU", ".3f") if s.test_iou else (s.test_psnr, "PSNR (dB)", ".2f")
    numbers = ", ".join(f"{m} {scores[m]:{spec}}" for m in MAPPINGS)
    return f"The paper (Tancik et al. 2020, Table 1; {s.dataset}) reports {what}: {numbers}."
