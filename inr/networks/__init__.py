"""Networks that map encoded coordinates to values; each takes ``(in_dim, out_dim, ...)``."""

from collections.abc import Callable

from torch import nn

from inr.networks.activations import activation_names, make_activation
from inr.networks.bacon import BACON, BandLimitedSineFilter
from inr.networks.conv_decoder import ConvDecoder, ZeroInsertion, zero_insertion
from inr.networks.finer import FINER, FinerSine
from inr.networks.gauss import GaussActivation, GaussMLP
from inr.networks.mfn import MFN, FourierFilter, GaborFilter, MultiplicativeFilterNetwork
from inr.networks.mlp import MLP
from inr.networks.siren import SIREN, Sine
from inr.networks.wire import WIRE, ComplexGabor, ComplexLinear

# A network is built by the task from the encoder's width: factory(in_dim, out_dim) -> nn.Module.
NetworkFactory = Callable[[int, int], nn.Module]

__all__ = [
    "NetworkFactory",
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
