"""The settings of Tancik et al. 2020's 2D image regression, as data: one entry per image kind.

Read from the "Paper Experiments" cell of the paper's released ``Experiments/2d_image_regression.ipynb``
(repository tancik/fourier-feature-networks), which trains every mapping on every image of a set with:

    params = {'div2k': {'lr': 1e-3, 'no_enc_lr': 1e-2, 'basic_lr': 1e-2, 'posenc_scale': 6, 'gaussian_scale': 10},
              'text':  {'lr': 1e-3, 'no_enc_lr': 1e-3, 'basic_lr': 1e-3, 'posenc_scale': 5, 'gaussian_scale': 14}}

(positional and Gaussian take ``lr``), ``network_depth = 4`` stax ``Dense`` layers of 256 (3 hidden ReLU
layers, then Dense(3) and a sigmoid), ``embedding_size = 256``, ``training_steps = 2000``, ``RES = 512``,
loss ½·mean((f − y)²), full-batch Adam, every network initialised by stax (``inr.networks.mlp.paper_init_``).
``configs/encoders/*.yaml`` (natural images) and ``configs/encoders/text/*.yaml`` carry the same numbers; a
test checks that they agree with this table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# The four mappings of the paper's image experiments, in its table order.
MAPPINGS = ("none", "basic", "positional", "gaussian")


@dataclass(frozen=True)
class PaperSettings:
    """One image kind's settings. ``lr`` maps each of ``MAPPINGS`` to its Adam learning rate; positional
    frequencies are 2^linspace(0, positional_scale, num_features/2) − 1 per axis; Gaussian B ~ N(0, σ²),
    num_features × 2; ``depth`` counts hidden layers (the notebook's ``network_depth`` counts the output
    layer too); ``test_psnr`` is the held-out PSNR the paper reports (dB, mean over the set, Table 1)."""

    kind: str
    lr: Mapping[str, float]
    positional_scale: float
    gaussian_sigma: float
    test_psnr: Mapping[str, float]
    num_features: int = 256
    steps: int = 2000
    resolution: int = 512
    width: int = 256
    depth: int = 3
    init: str = "paper"
    dataset: str = field(default="", compare=False)

    def learning_rate(self, mapping: str) -> float:
        if mapping not in self.lr:
            raise KeyError(f"no paper learning rate for mapping {mapping!r}; the paper's mappings are {', '.join(MAPPINGS)}")
        return self.lr[mapping]


PAPER_SETTINGS: Mapping[str, PaperSettings] = MappingProxyType(
    {
        "natural": PaperSettings(
            kind="natural",
            lr={"none": 1e-2, "basic": 1e-2, "positional": 1e-3, "gaussian": 1e-3},
            positional_scale=6.0,
            gaussian_sigma=10.0,
            test_psnr={"none": 19.32, "basic": 21.72, "positional": 24.95, "gaussian": 25.57},
            dataset="32 DIV2K images, 512² (the notebook's data_div2k.npz)",
        ),
        "text": PaperSettings(
            kind="text",
            lr={"none": 1e-3, "basic": 1e-3, "positional": 1e-3, "gaussian": 1e-3},
            positional_scale=5.0,
            gaussian_sigma=14.0,
            test_psnr={"none": 18.40, "basic": 20.48, "positional": 27.57, "gaussian": 30.47},
            dataset="32 text images, 512² (the notebook's data_2d_text.npz)",
        ),
    }
)
KINDS = tuple(PAPER_SETTINGS)


def settings_table() -> str:
    """The table as Markdown, for the docs and ``compare_encoders --print-settings``.

    Example:
        >>> print(settings_table().splitlines()[2])
        | natural | 1e-02 | 1e-02 | 1e-03 | 1e-03 | 6 | 10 | 256 | 2000 | 512² | 3 × 256 ReLU, sigmoid | stax (Glorot normal, N(0, 0.01²) biases) |
    """
    lines = [
        "| kind | lr none | lr basic | lr positional | lr Gaussian | PE scale | σ | features m | steps | resolution | network | init |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in PAPER_SETTINGS.values():
        lrs = " | ".join(f"{s.lr[m]:.0e}" for m in MAPPINGS)
        lines.append(
            f"| {s.kind} | {lrs} | {s.positional_scale:g} | {s.gaussian_sigma:g} | {s.num_features} | {s.steps} "
            f"| {s.resolution}² | {s.depth} × {s.width} ReLU, sigmoid | stax (Glorot normal, N(0, 0.01²) biases) |"
        )
    return "\n".join(lines)
