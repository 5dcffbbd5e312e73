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
``inr.experiments.methods``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Optional

# The four mappings of the paper, in its table order.
MAPPINGS = ("none", "basic", "positional", "gaussian")


@dataclass(frozen=True)
class MappingSettings:
    """One task's settings of the four mappings and the MLP they feed.

    ``lr`` maps each of ``MAPPINGS`` to its Adam learning rate; ``depth`` counts hidden layers (the notebooks'
    ``network_depth`` counts the output layer too); ``resolution`` and ``steps`` are the protocol's own grid
    side and step count; ``test_psnr`` is the held-out PSNR the paper reports for it (dB, mean over
    ``dataset``, Table 1), empty for a protocol of this package's own; ``test_iou`` likewise the IoU it reports
    for a shape protocol.

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
            dataset="ATLAS brain volumes, 96³",
        ),
        # Inpainting and super-resolution are not in the paper: its natural-image settings
        "inpaint": MappingSettings(kind="inpaint", lr=_NATURAL_LR, positional_scale=6.0, gaussian_sigma=10.0, steps=1000),
        "superres": MappingSettings(kind="superres", lr=_NATURAL_LR, positional_scale=6.0, gaussian_sigma=10.0, steps=1000),
        # A 1D signal of 1024 samples and a 32³ density: σ and the positional scale are the best of
        # `compare_fields --signal/--volume --sweep` on the training samples alone; the natural-image rates
        "signal": MappingSettings(
            kind="signal", lr=_NATURAL_LR, positional_scale=4.0, gaussian_sigma=10.0, steps=1000, resolution=1024
        ),
        "volume": MappingSettings(
            kind="volume", lr=_NATURAL_LR, positional_scale=3.0, gaussian_sigma=1.0, steps=300, resolution=32
        ),
        # View synthesis (3d_simple_nerf.ipynb: no view dependence, no hierarchical sampling). The notebook's rates
        # (5e-4 for the mappings, 1e-2 none, 5e-3 basic) are for 50,000 steps; for ~1,000 steps every mapping uses
        # 5e-3 and none 1e-2 (its paper-given lead kept). Frequencies are in cycles per unit of the scene cube mapped
        # to [0, 1]: the notebook's sin(B x) on world units with B up to 2^8 − 1 (positional) or σ = 26 (Gaussian)
        # is, on its 3-unit cube, up to 122 and ≈ 12 cycles per unit at 400² pixels; 64² views resolve about 37
        # cycles per unit (a pixel spans ≈ 0.0135 of the cube at the cameras' distance), so positional tops at
        # 2^4.5 − 1 ≈ 21.6 (128 // 3 = 42 per axis) and the Gaussian σ is 8 (m = 128, configs/nerf.yaml)
        "nerf": MappingSettings(
            kind="nerf",
            lr={"none": 1e-2, "basic": 5e-3, "positional": 5e-3, "gaussian": 5e-3},
            positional_scale=4.5,
            gaussian_sigma=8.0,
            num_features=128,
            positional_per_axis=42,
            steps=600,
            resolution=64,
            width=128,
            init="torch",
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
