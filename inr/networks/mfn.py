"""Multiplicative filter networks (Fathony et al. 2021): products of filters instead of compositions."""

from __future__ import annotations

import math
from typing import Literal, Optional

import torch
from torch import Tensor, nn

from inr.errors import InputError
from inr.networks.layers import UnitToSymmetric, check_positive, check_sizes, init_uniform_, output_layers


class FourierFilter(nn.Module):
    """g(x) = sin(W x + b): W ~ U(−s/√d, s/√d) (PyTorch's default times s = ``input_scale``), b ~ U(−π, π)."""

    def __init__(self, in_dim: int, width: int, input_scale: float) -> None:
        super().__init__()
        self.input_scale = float(input_scale)
        self.linear = init_uniform_(nn.Linear(in_dim, width), input_scale / math.sqrt(in_dim), math.pi)

    def forward(self, x: Tensor) -> Tensor:
        return torch.sin(self.linear(x))


class GaborFilter(nn.Module):
    """g(x) = exp(−(γ_j/2) ‖x − μ_j‖²) sin(W_j x + b_j) per unit j: a sinusoid under a Gaussian window.

    μ ~ U(−1, 1)^d, window precision γ ~ Gamma(α, β) (shape α, rate β), W ~ U(−1/√d, 1/√d) · ``input_scale``
    · √γ_j (a wide window gets low frequencies), b ~ U(−π, π); μ and γ are trained, γ unconstrained as in
    the released code.
    """

    def __init__(self, in_dim: int, width: int, input_scale: float, alpha: float, beta: float) -> None:
        super().__init__()
        self.input_scale, self.alpha, self.beta = float(input_scale), float(alpha), float(beta)
        self.mu = nn.Parameter(torch.empty(width, in_dim).uniform_(-1.0, 1.0))
        self.gamma = nn.Parameter(torch.distributions.Gamma(float(alpha), float(beta)).sample((width,)))
        self.linear = init_uniform_(nn.Linear(in_dim, width), 1.0 / math.sqrt(in_dim), math.pi)
        with torch.no_grad():
            self.linear.weight.mul_(input_scale * self.gamma.sqrt()[:, None])

    def extra_repr(self) -> str:
        return f"input_scale={self.input_scale:g}, alpha={self.alpha:g}, beta={self.beta:g}"

    def forward(self, x: Tensor) -> Tensor:
        # ‖x − μ‖² = ‖x‖² − 2 x·μ + ‖μ‖², (N, width) without an (N, width, d) difference tensor
        sq_dist = x.square().sum(-1, keepdim=True) - 2 * x @ self.mu.T + self.mu.square().sum(-1)
        return torch.exp(-0.5 * self.gamma * sq_dist) * torch.sin(self.linear(x))


class MultiplicativeFilterNetwork(nn.Module):
    """z_0 = g_0(x), z_i = g_i(x) ⊙ (W_i z_{i−1} + b_i) for i = 1…D, f(x) = W_out z_D + b_out.

    The recursion shared by MFN and BACON, given D + 1 ``filters`` (x -> (N, width)), D ``linears``
    (width → width) and the ``head`` (width → out). There is no activation between layers: the filters alone
    make the network non-linear in x, and a product of sinusoids stays a sum of sinusoids.
    """

    def __init__(
        self,
        filters: list[nn.Module],
        linears: list[nn.Module],
        head: nn.Module,
        input_map: Optional[nn.Module] = None,
        output_activation: str = "none",
    ) -> None:
        if len(filters) != len(linears) + 1:
            raise ValueError(
                f"a multiplicative filter network needs one filter more than linears: {len(filters)}, {len(linears)}"
            )
        super().__init__()
        self.input_map = input_map if input_map is not None else nn.Identity()
        self.filters, self.linears, self.head = nn.ModuleList(filters), nn.ModuleList(linears), head
        self.output = nn.Sequential(*output_layers(output_activation))

    def forward(self, x: Tensor) -> Tensor:
        x = self.input_map(x)
        z = self.filters[0](x)
        for filt, linear in zip(self.filters[1:], self.linears):
            z = filt(x) * linear(z)
        return self.output(self.head(z))


class MFN(MultiplicativeFilterNetwork):
    """f(x) = W_out z_D + b_out, z_0 = g_0(x), z_i = g_i(x) ⊙ (W_i z_{i−1} + b_i), g = sine or Gabor filters.

    Fathony et al. 2021 ("Multiplicative Filter Networks", ICLR; code ``boschresearch/multiplicative-filter-
    networks``, ``mfn/mfn.py``): FourierNet (``filter="fourier"``, g(x) = sin(Wx + b)) and GaborNet
    (``filter="gabor"``, g(x) = e^{−γ‖x−μ‖²/2} sin(Wx + b)). Since a product of sinusoids is a sum of
    sinusoids at the summed frequencies, a FourierNet is a linear combination of exponentially many Fourier
    features; GaborNet the same with Gabor wavelets. ``depth`` = D linear layers, D + 1 filters.

    Initialisation (the released code): each filter's W is PyTorch's default U(−1/√d, 1/√d) times
    input_scale/√(D + 1) (times √γ for Gabor), so that the D + 1 frequencies add up to a spread ∝
    input_scale; b ~ U(−π, π); Gabor windows γ ~ Gamma(α/(D + 1), β), centres μ ~ U(−1, 1). Hidden linear
    layers W ~ U(−√(weight_scale/width), √(weight_scale/width)); their biases and the output layer keep
    PyTorch's default. Defaults (``mfn/experiments/image_rep.py``): 256 wide, D = 3, input_scale = 256,
    weight_scale = 1, α = 6, β = 1, Adam lr 1e-2, coordinates in [−1, 1] (``rescale_input``).

    When to use: image and video fitting (the paper's tasks); GaborNet when features are local.
    Known failure modes: input_scale is a bandwidth like σ of Fourier features — too high and the fit
    interpolates with noise between training samples; nothing bounds the spectrum (BACON does).

    Example:
        >>> net = MFN(2, 3, width=16, depth=2, filter="gabor")
        >>> net(torch.zeros(5, 2)).shape, len(net.filters), len(net.linears)
        (torch.Size([5, 3]), 3, 2)
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        width: int = 256,
        depth: int = 3,  # n_layers=3: mfn/experiments/image_rep.py
        filter: Literal["fourier", "gabor"] = "fourier",
        input_scale: float = 256.0,  # image_rep.py input_scale=256
        weight_scale: float = 1.0,  # image_rep.py weight_scale=1
        alpha: float = 6.0,  # GaborNet alpha=6.0 (mfn/mfn.py)
        beta: float = 1.0,  # GaborNet beta=1.0
        output_activation: str = "none",
        rescale_input: bool = True,
    ) -> None:
        check_sizes("MFN", in_dim, out_dim, width, depth)
        check_positive("MFN", input_scale=input_scale, weight_scale=weight_scale, alpha=alpha, beta=beta)
        if filter not in ("fourier", "gabor"):
            raise InputError(f"MFN filter must be 'fourier' or 'gabor', got {filter!r}")
        scale = input_scale / math.sqrt(depth + 1)  # mfn/mfn.py: input_scale / np.sqrt(n_layers + 1)
        if filter == "fourier":
            filters = [FourierFilter(in_dim, width, scale) for _ in range(depth + 1)]
        else:
            filters = [GaborFilter(in_dim, width, scale, alpha / (depth + 1), beta) for _ in range(depth + 1)]
        bound = math.sqrt(weight_scale / width)
        linears = [init_uniform_(nn.Linear(width, width), bound) for _ in range(depth)]
        input_map = UnitToSymmetric() if rescale_input else None
        super().__init__(filters, linears, nn.Linear(width, out_dim), input_map, output_activation)
        self.in_dim, self.out_dim, self.width, self.depth, self.filter = in_dim, out_dim, width, depth, filter
