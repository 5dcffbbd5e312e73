"""Networks that map encoded coordinates to values; each takes ``(in_dim, out_dim, ...)``."""

from inr.networks.activations import activation_names, make_activation
from inr.networks.bacon import BACON, BandLimitedSineFilter
from inr.networks.conv_decoder import ConvDecoder, ZeroInsertion, zero_insertion
from inr.networks.finer import FINER, FinerSine
from inr.networks.gauss import GaussActivation, GaussMLP
from inr.networks.mfn import MFN, FourierFilter, GaborFilter, MultiplicativeFilterNetwork
from inr.networks.mlp import MLP
from inr.networks.siren import SIREN, Sine
from inr.networks.wire import WIRE, ComplexGabor, ComplexLinear

__all__ = [
    "MLP",
    "make_activation",
    "activation_names",
    "ConvDecoder",
    "ZeroInsertion",
    "zero_insertion",
    "SIREN",
    "Sine",
    "WIRE",
    "ComplexGabor",
    "ComplexLinear",
    "GaussMLP",
    "GaussActivation",
    "FINER",
    "FinerSine",
    "MFN",
    "FourierFilter",
    "GaborFilter",
    "MultiplicativeFilterNetwork",
    "BACON",
    "BandLimitedSineFilter",
]
