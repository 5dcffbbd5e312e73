"""Networks that map encoded coordinates to values; each takes ``(in_dim, out_dim, ...)``."""
from inr.networks.activations import activation_names, make_activation
from inr.networks.conv_decoder import ConvDecoder, ZeroInsertion, zero_insertion
from inr.networks.mlp import MLP
from inr.networks.siren import SIREN, Sine

__all__ = ["MLP", "make_activation", "activation_names", "ConvDecoder", "ZeroInsertion", "zero_insertion", "SIREN", "Sine"]
