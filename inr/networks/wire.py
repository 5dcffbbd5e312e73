"""WIRE: an MLP with the complex Gabor wavelet activation of Saragadam et al. 2023, in real arithmetic."""

from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from inr.networks.layers import check_positive, check_sizes, flush_negligible, layer_stack, scalar


class ComplexLinear(nn.Module):
    """z = W h + b with complex W, b stored as real parameters: (N, 2n) -> (N, 2m), layout [real | imaginary].

    ``real_output=True`` returns only Re z, (N, m), and has a real bias (the imaginary one would never
    receive a gradient). Initialised as
    PyTorch's complex ``nn.Linear``: real and imaginary parts of W and b each U(−1/√n, 1/√n), n = in_features.
    Real parameters (rather than complex dtypes) keep every tool of the framework working unchanged:
    optimizers (Adam on complex parameters is Adam on their real and imaginary parts anyway), mixed
    precision, DDP, checkpoints.

    Example:
        >>> lin = ComplexLinear(2, 3)
        >>> lin(torch.zeros(5, 4)).shape, lin.weight.shape
        (torch.Size([5, 6]), torch.Size([2, 3, 2]))
    """

    def __init__(self, in_features: int, out_features: int, real_output: bool = False) -> None:
        super().__init__()
        self.in_features, self.out_features, self.real_output = in_features, out_features, real_output
        bound = 1.0 / math.sqrt(in_features)
        self.weight = nn.Parameter(torch.empty(2, out_features, in_features).uniform_(-bound, bound))  # [Re W, Im W]
        self.bias = nn.Parameter(torch.empty(1 if real_output else 2, out_features).uniform_(-bound, bound))

    def block_weight(self) -> Tensor:
        """The real matrix acting on [Re h | Im h]: [[Re W, −Im W], [Im W, Re W]] (top row only for a real output)."""
        re, im = self.weight
        top = torch.cat([re, -im], dim=1)  # Re z = Re W Re h − Im W Im h
        if self.real_output:
            return top
        return torch.cat([top, torch.cat([im, re], dim=1)], dim=0)  # Im z = Im W Re h + Re W Im h

    def forward(self, h: Tensor) -> Tensor:
        out = self.pair(*h.chunk(2, dim=-1))  # (N, 2n) -> 2 × (N, n)
        return out[0] if self.real_output else torch.cat(out, dim=-1)  # (N, m) real, or (N, 2m)

    def pair(self, re_h: Tensor, im_h: Tensor) -> tuple[Tensor, ...]:
        """(Re z, Im z) from (Re h, Im h), each (N, ·); only (Re z,) for a real output.

        Three real products instead of four (Gauss's trick): with k₁ = (Re W + Im W) Re h,
        Re z = k₁ − Im W (Re h + Im h) + Re b and Im z = k₁ + Re W (Im h − Re h) + Im b. The block matrix does
        the same arithmetic as four products; this saves a quarter of the layer's multiply-adds.
        """
        re, im = self.weight
        if self.real_output:  # Re z = Re W Re h − Im W Im h + b
            return (F.linear(re_h, re, self.bias[0]) - F.linear(im_h, im),)
        k1 = F.linear(re_h, re + im)
        return k1 - F.linear(re_h + im_h, im, -self.bias[0]), k1 + F.linear(im_h - re_h, re, self.bias[1])

    def extra_repr(self) -> str:
        return f"{self.in_features} -> {self.out_features} (complex), real_output={self.real_output}"


class ComplexGabor(nn.Module):
    """ψ(z) = exp(iω₀z − |s₀z|²) = e^{−ω₀ Im z − s₀²|z|²} (cos ω₀Re z + i sin ω₀Re z), z = [Re z | Im z].

    The modulus e^{−ω₀ y − s₀²(x² + y²)} is at most e^{ω₀²/(4s₀²)} (its maximum over y), so the activation
    cannot overflow. ``real_input=True`` takes a real z, (N, m), as the first layer produces. ``trainable=True``
    learns ω₀ and s₀ as scalars (the released code's ``trainable``).

    Example:
        >>> out = ComplexGabor(omega_0=1.0, scale=1.0)(torch.tensor([[0.5, 0.0]]))  # z = 0.5
        >>> torch.allclose(out, torch.tensor([[math.exp(-0.25) * math.cos(0.5), math.exp(-0.25) * math.sin(0.5)]]))
        True
    """

    def __init__(self, omega_0: float = 20.0, scale: float = 10.0, trainable: bool = False, real_input: bool = False) -> None:
        super().__init__()
        self.omega_0, self.scale = scalar(omega_0, trainable), scalar(scale, trainable)
        self.real_input = real_input

    def forward(self, z: Tensor) -> Tensor:
        out = self.real(z) if self.real_input else self.pair(*z.chunk(2, dim=-1))  # (N, 2m) -> 2 × (N, m)
        return torch.cat(out, dim=-1)

    def real(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """(Re ψ, Im ψ) of a real z: Im z = 0, so ψ = e^{−s₀²z²} (cos ω₀z + i sin ω₀z)."""
        modulus = flush_negligible(torch.exp(-(self.scale * z).square()))
        phase = self.omega_0 * z
        return modulus * torch.cos(phase), modulus * torch.sin(phase)

    def pair(self, re: Tensor, im: Tensor) -> tuple[Tensor, Tensor]:
        """(Re ψ, Im ψ) from (Re z, Im z): fused (``GaborFunction``) when ω₀ and s₀ are fixed numbers."""
        if isinstance(self.omega_0, float) and isinstance(self.scale, float):
            return GaborFunction.apply(re, im, self.omega_0, self.scale)
        modulus = flush_negligible(torch.exp(-self.omega_0 * im - (self.scale**2) * (re.square() + im.square())))
        phase = self.omega_0 * re
        return modulus * torch.cos(phase), modulus * torch.sin(phase)

    def extra_repr(self) -> str:
        return f"omega_0={float(self.omega_0):g}, scale={float(self.scale):g}, trainable={isinstance(self.scale, nn.Parameter)}"


class GaborFunction(torch.autograd.Function):
    """(u, v) = (Re ψ, Im ψ) = e^a (cos p, sin p), a = −ω₀ y − s₀²(x² + y²), p = ω₀ x, for z = x + iy, fixed ω₀, s₀.

    One function instead of a dozen autograd nodes: it saves x, y, u, v and writes its results in place, so a
    step makes about half the passes over the (N, m) activations. With A = g_u u + g_v v, B = g_v u − g_u v:
        backward  ∂L/∂x = −2s₀² x A + ω₀ B,   ∂L/∂y = −(ω₀ + 2s₀² y) A
        forward mode (ẋ, ẏ):  ȧ = −2s₀²(x ẋ + y ẏ) − ω₀ ẏ,  ṗ = ω₀ ẋ,  (u̇, v̇) = (u ȧ − v ṗ, v ȧ + u ṗ)
    The backward is made of differentiable out-of-place operations (second derivatives work), and torch.func
    transforms (vmap, jacrev, jvp: the NTK tools) apply. tests/networks/test_wire.py checks both
    derivatives against finite differences in float64 and the values against complex arithmetic.
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(x: Tensor, y: Tensor, omega_0: float, scale: float) -> tuple[Tensor, Tensor]:
        modulus = flush_negligible(
            x.square().add_(y.square()).mul_(-(scale**2)).add_(y, alpha=-omega_0).exp_(), inplace=True
        )  # e^a
        phase = x * omega_0
        return torch.cos(phase).mul_(modulus), phase.sin_().mul_(modulus)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        x, y, ctx.omega_0, ctx.scale = inputs
        u, v = output
        ctx.save_for_backward(x, y, u, v)
        ctx.save_for_forward(x, y, u, v)

    @staticmethod
    def backward(ctx, grad_u: Tensor, grad_v: Tensor) -> tuple[Optional[Tensor], ...]:
        x, y, u, v = ctx.saved_tensors
        w, s2 = ctx.omega_0, ctx.scale**2
        a = torch.addcmul(grad_u * u, grad_v, v)  # A
        b = torch.addcmul(grad_v * u, grad_u, v, value=-1.0)  # B
        return torch.addcmul(b * w, x, a, value=-2 * s2), torch.addcmul(a * -w, y, a, value=-2 * s2), None, None

    @staticmethod
    def jvp(ctx, dx: Optional[Tensor], dy: Optional[Tensor], *_) -> tuple[Tensor, Tensor]:
        x, y, u, v = ctx.saved_tensors
        w, s2 = ctx.omega_0, ctx.scale**2
        dx = torch.zeros_like(x) if dx is None else dx
        dy = torch.zeros_like(y) if dy is None else dy
        da = (x * dx + y * dy) * (-2 * s2) - w * dy
        dp = w * dx
        return u * da - v * dp, v * da + u * dp


class WIRE(nn.Sequential):
    """f(x) = Re(W_{D+1} ψ(z_D) + b_{D+1}), z_i = W_i ψ(z_{i−1}) + b_i, z_1 = W_1 x + b_1, ψ(z) = e^{iω₀z − |s₀z|²}.

    Saragadam et al. 2023 ("WIRE: Wavelet Implicit Neural Representations", CVPR; code ``vishwa91/wire``,
    ``modules/wire.py``): every neuron is a complex Gabor wavelet, a sinusoid of frequency ω₀ under a Gaussian
    window of width ∝ 1/s₀, so it is compact in both space and frequency. The first layer (W_1, z_1) is real,
    the later ones complex, and the output is the real part. ``depth`` = D Gabor layers. As in the released
    code, a complex layer counts as two real numbers per unit, so the hidden width is ⌊width/√2⌋ complex units
    (181 for width 256), keeping the parameter count near that of a real MLP of ``width``.

    Initialisation: PyTorch's default, as the released code (real first layer W, b ~ U(−1/√n, 1/√n); complex
    layers: real and imaginary parts each U(−1/√n, 1/√n)). Defaults: ω₀ = 20 and s₀ = 10 — the values of
    FINER's WIRE baseline (``liuzhen0212/FINER``, ``run_wire.sh``); WIRE's ``wire_image_denoise.py`` suggests
    ω₀ = 20, s₀ = 30 for image representation and 4, 4 for denoising. Coordinates in [−1, 1] (linspace(−1, 1)
    in the released scripts; ``rescale_input`` maps the task's [0, 1) there). The released scripts use Adam
    lr 5e-3 – 2e-2 (FINER's sweep peaks at 5e-3 and collapses to ≈12 dB from 2e-2 on); on this framework's
    default image 5e-3 already stalls near 10.5 dB and the registry (``inr.methods.registry``, ``configs/methods/wire.yaml``) uses 1e-3.
    WIRE's super-resolution script uses ω₀ = 8, s₀ = 6 (``wire_SISR.py``).

    When to use: signals with sharp, localised features, denoising and inverse problems, where a global sine
    rings. Known failure modes: it stalls at learning rates the released scripts use (see above) and with
    large ω₀ or s₀; fitted on every other pixel, its values between the training pixels can be far off
    (docs/architectures.md); with a large s₀ most first-layer neurons start in the window's tails
    (e^{−s₀²z²} ≈ 0 for |z| ≳ 3/s₀), so few neurons carry signal and fine detail comes late.

    Example:
        >>> net = WIRE(2, 3, width=16, depth=3)
        >>> net(torch.zeros(5, 2)).shape, net.hidden_width
        (torch.Size([5, 3]), 11)
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        width: int = 256,
        depth: int = 4,  # 4 Gabor layers: FINER's WIRE baseline (train_image.py hidden_layers=3 after the first)
        first_omega_0: float = 20.0,  # ω₀: liuzhen0212/FINER run_wire.sh FIRSTOMEGA=20
        hidden_omega_0: float = 20.0,  # run_wire.sh HIDDENOMEGA=20
        scale: float = 10.0,  # s₀: run_wire.sh SCALE=10 (vishwa91/wire get_INR default scale=10)
        trainable: bool = False,  # ω₀, s₀ fixed: vishwa91/wire ComplexGaborLayer(trainable=False)
        output_activation: str = "none",
        rescale_input: bool = True,
    ) -> None:
        check_sizes("WIRE", in_dim, out_dim, width, depth)
        check_positive("WIRE", first_omega_0=first_omega_0, hidden_omega_0=hidden_omega_0, scale=scale)
        hidden = max(1, int(width / math.sqrt(2)))  # complex units = two reals each (modules/wire.py INR)

        def layer(i: int, fan_in: int) -> list[nn.Module]:
            if i == 0:  # the first layer is real (modules/wire.py: is_first -> dtype float); its Gabor output is complex
                return [nn.Linear(fan_in, hidden), ComplexGabor(first_omega_0, scale, trainable, real_input=True)]
            return [ComplexLinear(fan_in, hidden), ComplexGabor(hidden_omega_0, scale, trainable)]

        def head(fan_in: int) -> nn.Module:
            return ComplexLinear(fan_in, out_dim, real_output=True)

        super().__init__(*layer_stack(in_dim, hidden, depth, layer, head, rescale_input, output_activation))
        self.in_dim, self.out_dim, self.width, self.depth, self.hidden_width = in_dim, out_dim, width, depth, hidden

    def forward(self, x: Tensor) -> Tensor:
        # the complex activations travel as (Re, Im) pairs of (N, m) tensors, never concatenated
        h: Tensor = x
        pair: tuple[Tensor, ...] = ()
        for module in self:
            if isinstance(module, ComplexGabor):
                pair = module.real(h) if module.real_input else module.pair(*pair)
            elif isinstance(module, ComplexLinear):
                pair = module.pair(*pair)
                if module.real_output:
                    h = pair[0]
            else:
                h = module(h)
        return h
