"""The structured NTK of an MLP: Θ = Σ_l (A_l A_lᵀ) ⊙ (G_l G_lᵀ) from layer inputs and output gradients.

For a linear layer z = s_w W a + s_b b inside f, ∂f_o/∂W = s_w g_o aᵀ and ∂f_o/∂b = s_b g_o with
g_o = ∂f_o/∂z, so that layer's share of Θ_{oo′}(x, x′) = Σ_θ ∂_θ f_o(x) ∂_θ f_{o′}(x′) is

    (s_w² a(x)·a(x′) + s_b²) · g_o(x)·g_{o′}(x′),

a product of two small Gram matrices. Summing over layers gives Θ without ever forming the Jacobian
(N × P per output); the cost per layer is N₁N₂(n_in + O·n_out) instead of N₁N₂·O·n_in·n_out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn
from torch.func import jvp

from inr.networks.activations import ELEMENTWISE_ACTIVATIONS
from inr.ntk.ntk_mlp import NTKLinear


def is_elementwise(module: nn.Module) -> bool:
    """True for a parameter-free activation that acts on each entry alone."""
    known = isinstance(module, ELEMENTWISE_ACTIVATIONS) or getattr(module, "elementwise", False) is True
    return known and not any(True for _ in module.parameters())


def _is_linear(module: nn.Module) -> bool:
    return isinstance(module, (nn.Linear, NTKLinear))


def _flatten(module: nn.Module) -> Iterator[nn.Module]:
    """The modules a plain ``nn.Sequential`` (possibly nested) applies, in order."""
    if isinstance(module, nn.Sequential) and type(module).forward is nn.Sequential.forward:
        for child in module:
            yield from _flatten(child)
    else:
        yield module


@dataclass
class MLPLayer:
    """One linear map and the elementwise activations that follow it (before the next linear map)."""

    linear: nn.Module
    activations: list[nn.Module] = field(default_factory=list)

    @property
    def weight(self) -> Tensor:
        return self.linear.weight

    @property
    def scales(self) -> tuple[float, float]:
        """(s_w, s_b): the factors of W and b in z = s_w W a + s_b b; 0 for a frozen or absent parameter."""
        lin = self.linear
        s_w, s_b = (lin.weight_scale, lin.bias_scale) if isinstance(lin, NTKLinear) else (1.0, 1.0)
        s_w = s_w if lin.weight.requires_grad else 0.0
        s_b = s_b if lin.bias is not None and lin.bias.requires_grad else 0.0
        return float(s_w), float(s_b)

    def weight_matrix(self) -> Tensor:
        """The effective matrix s_w W of the forward pass, (n_out, n_in), whether W is trained or not."""
        lin = self.linear
        return lin.weight * lin.weight_scale if isinstance(lin, NTKLinear) else lin.weight


@dataclass
class MLPStructure:
    """``model(x) = layers(prefix(x))``: a fixed input map (an encoder, say) followed by an MLP chain."""

    prefix: list[nn.Module]
    layers: list[MLPLayer]

    def encode(self, x: Tensor) -> Tensor:
        for module in self.prefix:
            x = module(x)
        return x

    def prefix_parameter_ids(self) -> set[int]:
        return {id(p) for m in self.prefix for p in m.parameters() if p.requires_grad}


def mlp_structure(model: nn.Module) -> MLPStructure:
    """Split ``model`` into an input map and a trailing chain of linear layers and elementwise activations.

    ``model`` is a task whose ``coordinate_network()`` gives (encoder, network) — an ``INRModule`` whose field is
    network(encoder(v)) — or any ``nn.Sequential``; the chain is the longest
    tail made of ``nn.Linear`` / ``NTKLinear`` and elementwise activations, and it must start with a linear
    layer. Raises ``ValueError`` (with the reason) when there is none.
    """
    chain = getattr(model, "coordinate_network", None)
    if callable(chain):  # a task (duck-typed: the NTK sits below the tasks and does not import them)
        parts = chain()
        if parts is None:
            raise ValueError(f"{type(model).__name__} overrides its field; the structured NTK needs network(encoder(x))")
        encoder, network = parts
        modules = [encoder, *_flatten(network)]
    elif isinstance(model, nn.Sequential) and type(model).forward is nn.Sequential.forward:
        modules = list(_flatten(model))
    else:
        raise ValueError(f"{type(model).__name__} is neither an INRModule nor an nn.Sequential of linear layers and activations")
    start = len(modules)
    while start > 0 and (_is_linear(modules[start - 1]) or is_elementwise(modules[start - 1])):
        start -= 1
    while start < len(modules) and not _is_linear(modules[start]):  # leading activations join the input map
        start += 1
    if start == len(modules):
        last = type(modules[-1]).__name__ if modules else "nothing"
        raise ValueError(
            f"{type(model).__name__} does not end in linear layers and elementwise activations (last module: {last})"
        )
    layers: list[MLPLayer] = []
    for module in modules[start:]:
        if _is_linear(module):
            layers.append(MLPLayer(module))
        else:
            layers[-1].activations.append(module)
    return MLPStructure(prefix=modules[:start], layers=layers)


@torch.no_grad()
def mlp_features(structure: MLPStructure, x: Tensor) -> tuple[list[Tensor], list[Tensor]]:
    """Layer inputs A_l (N, n_in) and output gradients G_l = ∂f/∂z_l (N, O, n_out) for every linear layer.

    Forward: a_{l+1} = φ_l(z_l) with φ_l′(z_l) from one forward-mode product (valid as φ_l is elementwise).
    Backward: G_L = diag φ_L′(z_L); G_l = (G_{l+1} · s_w W_{l+1}) ⊙ φ_l′(z_l).
    """
    inputs, slopes = [], []
    h = structure.encode(x)
    for layer in structure.layers:
        inputs.append(h)
        z = layer.linear(h)
        if layer.activations:

            def act(u: Tensor, acts=layer.activations) -> Tensor:
                for a in acts:
                    u = a(u)
                return u

            h, slope = jvp(act, (z,), (torch.ones_like(z),))  # φ′(z) elementwise
        else:
            h, slope = z, None
        slopes.append(slope)
    n, out_dim = h.shape
    eye = torch.eye(out_dim, dtype=h.dtype, device=h.device).expand(n, out_dim, out_dim)  # (N, O, O)
    grads: list[Tensor] = [None] * len(structure.layers)  # type: ignore[list-item]
    g = eye if slopes[-1] is None else eye * slopes[-1][:, None, :]
    grads[-1] = g
    for l in range(len(structure.layers) - 2, -1, -1):
        g = g @ structure.layers[l + 1].weight_matrix()  # (N, O, n_{l+1}) @ (n_{l+1}, n_l) -> (N, O, n_l)
        if slopes[l] is not None:
            g = g * slopes[l][:, None, :]
        grads[l] = g
    return inputs, grads


def structured_block(
    structure: MLPStructure,
    feats1: tuple[list[Tensor], list[Tensor]],
    feats2: tuple[list[Tensor], list[Tensor]],
    full: bool,
) -> Tensor:
    """Θ between two sets of points from their features: (N1, N2), or (N1, N2, O, O) when ``full``."""
    (a1s, g1s), (a2s, g2s) = feats1, feats2
    theta = None
    for layer, a1, a2, g1, g2 in zip(structure.layers, a1s, a2s, g1s, g2s):
        s_w, s_b = layer.scales
        if s_w == 0.0 and s_b == 0.0:
            continue
        aa = (s_w**2) * (a1 @ a2.T) + s_b**2  # (N1, N2)
        if full:
            term = aa[:, :, None, None] * torch.einsum("iak,jbk->ijab", g1, g2)  # (N1, N2, O, O)
        else:
            term = aa * (g1.flatten(1) @ g2.flatten(1).T)  # Σ_o g_o·g′_o: (N1, O·n) @ (O·n, N2)
        theta = term if theta is None else theta.add_(term)
    if theta is None:  # every layer frozen
        n1, n2, o = len(a1s[0]), len(a2s[0]), g1s[-1].shape[1]
        theta = a1s[0].new_zeros((n1, n2, o, o) if full else (n1, n2))
    return theta
