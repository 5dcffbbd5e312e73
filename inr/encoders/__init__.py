"""Coordinate encodings: every one an ``Encoder`` with ``in_dim`` and ``out_dim``."""
from inr.encoders.base import Encoder
from inr.encoders.fourier import BasicEncoding, FourierEncoding, GaussianEncoding, PositionalEncoding, fourier_features
from inr.encoders.identity import IdentityEncoding
from inr.encoders.hashgrid import HashGridEncoding
from inr.encoders.nerf import NeRFEncoding
from inr.encoders.composite import CompositeEncoding, EncoderPart

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
]
