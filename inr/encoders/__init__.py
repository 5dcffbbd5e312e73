"""Coordinate encodings: every one an ``Encoder`` with ``in_dim`` and ``out_dim``."""

from inr.encoders.affine import AffineEncoding
from inr.encoders.base import Encoder
from inr.encoders.composite import CompositeEncoding, EncoderPart
from inr.encoders.fourier import BasicEncoding, FourierEncoding, GaussianEncoding, PositionalEncoding, fourier_features
from inr.encoders.hashgrid import HashGridEncoding
from inr.encoders.identity import IdentityEncoding
from inr.encoders.nerf import NeRFEncoding

__all__ = [
    "Encoder",
    "IdentityEncoding",
    "FourierEncoding",
    "BasicEncoding",
    "PositionalEncoding",
    "GaussianEncoding",
    "fourier_features",
    "HashGridEncoding",
    "NeRFEncoding",
    "CompositeEncoding",
    "EncoderPart",
    "AffineEncoding",
]
