"""``AffineEncoding``: another encoding's features scaled and shifted, γ'(v) = a·γ(v) + b."""

from __future__ import annotations

from torch import Tensor

from inr.encoders.base import Encoder


class AffineEncoding(Encoder):
    """γ'(v) = scale·γ(v) + shift, out_dim = γ.out_dim.

    The 3D shape notebook of Tancik et al. 2020 (``3d_shape_occupancy.ipynb``, ``input_encoder``) feeds its
    network ``2v − 1`` without a mapping (``IdentityEncoding`` with scale 2, shift −1) and divides Fourier
    features by ‖a‖ = √m, m = the number of frequencies (scale 1/√m): the input scale that its stax
    initialisation meets. In YAML::

        encoder:
          class_path: inr.encoders.AffineEncoding
          init_args:
            encoder: {class_path: inr.encoders.GaussianEncoding, init_args: {in_dim: 3, num_features: 256, sigma: 12.0}}
            scale: 0.0625

    Example:
        >>> import torch
        >>> from inr.encoders import IdentityEncoding
        >>> AffineEncoding(IdentityEncoding(in_dim=2), scale=2.0, shift=-1.0)(torch.tensor([[0.25, 1.0]]))
        tensor([[-0.5000,  1.0000]])
    """

    def __init__(self, encoder: Encoder, scale: float = 1.0, shift: float = 0.0) -> None:
        super().__init__()
        self.encoder, self.scale, self.shift = encoder, float(scale), float(shift)
        self.in_dim, self.out_dim = encoder.in_dim, encoder.out_dim

    def forward(self, v: Tensor) -> Tensor:
        return self.encoder(v) * self.scale + self.shift

    def extra_repr(self) -> str:
        return f"scale={self.scale:g}, shift={self.shift:g}"
