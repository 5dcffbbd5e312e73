"""An MLP with the Gaussian activation exp(−(s z)²) of Ramasinghe & Lucey 2022."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from inr.networks.layers import check_positive, check_sizes, flush_negligible, layer_stack


class GaussActivation(nn.Module):
    """σ(z) = exp(−(s z)²) = exp(−z² / (2σ²)) with σ = 1/(√2 s): a bump of width ∝ 1/s, in (0, 1].

    Example:
        >>> GaussActivation(scale=2.0)(torch.tensor([0.0, 0.5]))  # exp(0), exp(−1)
        tensor([1.0000, 0.3679])
    """

    def __init__(self, scale: float = 10.0) -> None:
        super().__init__()
        self.scale = float(scale)

    def forward(self, z: Tensor) -> Tensor:
        return GaussFunction.apply(z, self.scale)

    def extra_repr(self) -> str:
        return f"scale={self.scale:g}"


class GaussFunction(torch.autograd.Function):
    """σ(z) = exp(−s² z²) as one autograd node: σ'(z) = −2s² z σ(z), saved σ and z; σ under tiny/ε is set
    to 0 (``flush_negligible``: no subnormal floats in the tails).

    Six passes over the activations per step instead of nine (scale, square, negate, exp and their
    derivatives), with one allocation in the forward pass. The backward is made of differentiable out-of-place
    operations (second derivatives work); forward mode (ż ↦ −2s² z σ ż) and vmap are defined, so the torch.func
    transforms of the NTK tools apply. tests/networks/test_gauss.py checks it against finite differences.
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(z: Tensor, scale: float) -> Tensor:
        return flush_negligible(z.square().mul_(-(scale**2)).exp_(), inplace=True)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        z, ctx.scale = inputs
        ctx.save_for_backward(z, output)
        ctx.save_for_forward(z, output)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:
        z, out = ctx.saved_tensors
        return (grad * out * z) * (-2 * ctx.scale**2), None

    @staticmethod
    def jvp(ctx, dz: Tensor, _) -> Tensor:
        z, out = ctx.saved_tensors
        return (dz * out * z) * (-2 * ctx.scale**2)


class GaussMLP(nn.Sequential):
    """f(x) = W_{D+1} φ_D ∘ … ∘ φ_1(x) + b_{D+1}, φ_i(x) = exp(−(s (W_i x + b_i))²); ``depth`` = D layers.

    Ramasinghe & Lucey 2022 ("Beyond Periodicity: Towards a Unifying Framework for Activations in
    Coordinate-MLPs", ECCV) write the activation exp(−z²/(2σ²)); the implementations used as baselines by
    WIRE (``vishwa91/wire``, ``modules/gauss.py``) and FINER (``liuzhen0212/FINER``, ``models.py``) write
    exp(−(s z)²), i.e. s = 1/(√2 σ), and that is the ``scale`` here. Layer sizes as ``MLP``/``SIREN``.

    Initialisation: PyTorch's default for every layer (W, b ~ U(−1/√n, 1/√n), n the fan-in), as both
    implementations (the paper argues that, unlike a sine, such activations do not depend on a tailored
    initialisation). Defaults: s = 10 (``modules/models.py`` ``get_INR(scale=10)``; FINER's
    ``run_gauss.sh`` uses 30), 4 layers of 256, coordinates in [−1, 1] (``rescale_input`` maps the task's
    [0, 1) there), Adam lr 1e-3 – 5e-3 (WIRE's ``wire_image_denoise.py`` suggests 1e-3 – 2e-3, FINER's
    ``run_gauss.sh`` uses 5e-3).

    When to use: fitting signals without a positional encoding where a sine's global periodicity is unwanted
    (the Gaussian is local: no ringing far from an edge). Known failure modes: s sets the bandwidth like σ of
    Fourier features — too small and fine detail stays blurred, too large and most first-layer neurons sit in
    the flat tails (exp(−(s z)²) ≈ 0) with vanishing gradients, so training stalls; the activation is
    non-negative, so deep stacks drift to a positive mean.

    Example:
        >>> net = GaussMLP(2, 3, width=16, depth=2)
        >>> net(torch.zeros(5, 2)).shape, sum(isinstance(m, GaussActivation) for m in net)
        (torch.Size([5, 3]), 2)
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        width: int = 256,
        depth: int = 4,
        scale: float = 10.0,  # s: vishwa91/wire modules/models.py get_INR(scale=10)
        output_activation: str = "none",
        rescale_input: bool = True,
    ) -> None:
        check_sizes("GaussMLP", in_dim, out_dim, width, depth)
        check_positive("GaussMLP", scale=scale)
        layers = layer_stack(
            in_dim,
            width,
            depth,
            lambda i, fan_in: [nn.Linear(fan_in, width), GaussActivation(scale)],
            lambda fan_in: nn.Linear(fan_in, out_dim),
            rescale_input,
            output_activation,
        )
        super().__init__(*layers)
        self.in_dim, self.out_dim, self.width, self.depth, self.scale = in_dim, out_dim, width, depth, float(scale)
