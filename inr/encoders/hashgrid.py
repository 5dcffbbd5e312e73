"""Multiresolution hash encoding (Müller et al. 2022, Instant-NGP) in vectorised PyTorch for 1D/2D/3D inputs."""

from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from inr.encoders.base import Encoder
from inr.errors import InputError

# π_1 = 1, π_2 = 2654435761, π_3 = 805459861: Müller et al. 2022, eq. 4; the same factors as tiny-cuda-nn's
# coherent_prime_hash (common_device.h), evaluated in uint32 arithmetic.
PRIMES = (1, 2654435761, 805459861)
UINT32_MASK = 0xFFFFFFFF
# table init U(−1e-4, 1e-4): Müller et al. 2022, sec. 4 ("initialize the hash table entries using the
# uniform distribution U(−10⁻⁴, 10⁻⁴)"); tiny-cuda-nn grid.h initialize_params uses the same bounds.
INIT_BOUND = 1e-4


def growth_factor(base_resolution: int, finest_resolution: float, n_levels: int) -> float:
    """b = exp((ln N_max − ln N_min) / (L − 1)), Müller et al. 2022 eq. 3 (b = 1 for a single level).

    Example:
        >>> round(growth_factor(16, 256, 5), 6)
        2.0
    """
    if n_levels == 1:
        return 1.0
    return math.exp((math.log(finest_resolution) - math.log(base_resolution)) / (n_levels - 1))


def level_resolutions(n_levels: int, base_resolution: int, per_level_scale: float) -> list[int]:
    """N_l = ⌊N_min · b^l⌋ for l = 0..L−1 (Müller et al. 2022 eq. 2).

    A relative 1e-9 is added before the floor so that a product that is an integer in exact arithmetic
    (16 · 2^4 computed as 255.99999999…) is not floored one below.

    Example:
        >>> level_resolutions(4, 16, 1.5)
        [16, 24, 36, 54]
    """
    return [int(math.floor(base_resolution * per_level_scale**l * (1 + 1e-9))) for l in range(n_levels)]


def spatial_hash(pos: Tensor) -> Tensor:
    """h(x) = (⊕_k x_k π_k) mod 2³², the XOR of the integer coordinates times the primes, in uint32.

    ``pos``: non-negative integer positions (..., d), d ≤ 3, int64 -> (...,) int64 in [0, 2³²).
    Products are exact in int64 (x_k < 2³¹, π_k < 2³²) and the low 32 bits of a XOR are the XOR of the
    low 32 bits, so masking once at the end equals tiny-cuda-nn's wrapping uint32 arithmetic.

    Example:
        >>> int(spatial_hash(torch.tensor([1, 1])))  # 1 ^ 2654435761
        2654435760
    """
    h = pos[..., 0] * PRIMES[0]
    for k in range(1, pos.shape[-1]):
        h = torch.bitwise_xor(h, pos[..., k] * PRIMES[k])
    return h & UINT32_MASK


class _Blend(torch.autograd.Function):
    """y_b = Σ_c w_bc θ[i_bc]: the weighted sum of table rows over each bag b of 2^d corners.

    The forward is ``F.embedding_bag``; the backward scatters with ``index_add_`` (∂y/∂θ) and gathers
    (∂y/∂w, only when the coordinates need a gradient). On CPU this is about 4× faster than
    embedding_bag's own backward, which sorts the indices (benchmarks/hashgrid.py measures the encoding).
    """

    @staticmethod
    def forward(ctx, table: Tensor, index: Tensor, weights: Tensor) -> Tensor:
        ctx.save_for_backward(table, index, weights)
        return F.embedding_bag(index, table, per_sample_weights=weights, mode="sum")  # (B, 2^d) -> (B, F)

    @staticmethod
    def backward(ctx, grad: Tensor):
        table, index, weights = ctx.saved_tensors
        grad_table = grad_weights = None
        if ctx.needs_input_grad[0]:
            rows = (weights[..., None] * grad[:, None, :]).reshape(-1, table.shape[1])  # (B, 2^d, F) -> (B·2^d, F)
            # index_add_ takes a slow path for int32 indices, so widen them here (backward only)
            grad_table = torch.zeros_like(table).index_add_(0, index.reshape(-1).long(), rows)
        if ctx.needs_input_grad[2]:
            grad_weights = (table[index] * grad[:, None, :]).sum(-1)  # (B, 2^d, F) -> (B, 2^d)
        return grad_table, None, grad_weights


def blend(table: Tensor, index: Tensor, weights: Tensor) -> Tensor:
    """y_b = Σ_c w_bc table[i_bc] for bags (B, 2^d) of rows ``index`` and ``weights`` -> (B, F).

    Example:
        >>> blend(torch.eye(3), torch.tensor([[0, 2]]), torch.tensor([[0.25, 0.75]]))
        tensor([[0.2500, 0.0000, 0.7500]])
    """
    return _Blend.apply(table, index, weights)


def _corners(pairs: list[Tensor], combine, out: Optional[Tensor] = None) -> Tensor:
    """Combine per-axis pairs (lower, upper) (..., 2) over the d axes into the 2^d cell corners (..., 2^d).

    Corner c takes the upper value on axis k when bit (d−1−k) of c is set (axis 0 is the most significant
    bit), so index and weight tensors built by this function line up corner by corner. The last
    combination is written into ``out`` when given (a contiguous (..., 2^d) tensor).
    """
    result = pairs[0]
    for i, pair in enumerate(pairs[1:], start=2):
        target = out.view(*out.shape[:-1], -1, 2) if out is not None and i == len(pairs) else None
        result = combine(result[..., :, None], pair[..., None, :], out=target).flatten(-2)  # (..., 2^k, 2) -> (..., 2^(k+1))
    if out is not None and result.data_ptr() != out.data_ptr():  # d = 1: nothing was combined
        out.copy_(result)
        return out
    return result


class HashGridEncoding(Encoder):
    """y = ⊕_l Σ_c w_c(x) θ_l[h_l(c)], the concatenation over L levels of multilinearly interpolated
    F-wide table entries, out_dim = n_levels · n_features_per_level.

    Level l has resolution N_l = ⌊N_min · b^l⌋: the input x ∈ [0,1]^d is scaled to x·N_l, the cell's 2^d
    corners c ∈ {0..N_l}^d are looked up in the level's table and blended with the multilinear weights
    w_c = Π_k (1 − |x_k N_l − c_k|). A level whose (N_l + 1)^d vertices fit into 2^log2_hashmap_size
    entries indexes them densely, c_0 + c_1 (N_l+1) + c_2 (N_l+1)² (no collisions, a table of exactly
    (N_l+1)^d rows); finer levels use the spatial hash ``spatial_hash(c) mod T``, T = 2^log2_hashmap_size.

    Names and defaults follow tiny-cuda-nn's ``HashGrid`` encoding. The growth factor b is
    ``per_level_scale``; given ``finest_resolution`` N_max instead, b = exp((ln N_max − ln N_min)/(L−1))
    (eq. 3), and with neither, tiny-cuda-nn's default b = 2.0. Differences from tiny-cuda-nn, on purpose:
    the vertex grid is the paper's (vertices at x = c / N_l, no half-cell offset), dense tables are not
    padded to a multiple of 8, and inputs are clamped to [0, 1] rather than wrapped.

    All levels and points are computed at once (dense levels as one block, hashed ones as another); the
    blend is a single weighted gather whose backward scatters straight into the table (``blend``).

    Args:
        in_dim: input dimensions d ∈ {1, 2, 3}.
        n_levels: L. n_features_per_level: F. log2_hashmap_size: log₂ T. base_resolution: N_min.
        per_level_scale: b; ``finest_resolution``: N_max, from which b is computed (give one of the two).

    Example:
        >>> enc = HashGridEncoding(in_dim=2, n_levels=4, log2_hashmap_size=10, base_resolution=4, finest_resolution=32)
        >>> enc.resolutions.tolist(), enc.dense_levels, enc.out_dim, enc(torch.rand(5, 2)).shape
        ([4, 8, 16, 32], 3, 8, torch.Size([5, 8]))
    """

    def __init__(
        self,
        in_dim: int = 3,
        n_levels: int = 16,
        n_features_per_level: int = 2,
        log2_hashmap_size: int = 19,
        base_resolution: int = 16,
        per_level_scale: Optional[float] = None,
        finest_resolution: Optional[int] = None,
    ) -> None:
        super().__init__()
        if in_dim not in (1, 2, 3):
            raise InputError(f"HashGridEncoding: in_dim must be 1, 2 or 3, got {in_dim}")
        if n_levels < 1 or n_features_per_level < 1 or base_resolution < 1 or not 1 <= log2_hashmap_size <= 30:
            raise InputError(
                "HashGridEncoding: need n_levels ≥ 1, n_features_per_level ≥ 1, base_resolution ≥ 1 and "
                f"1 ≤ log2_hashmap_size ≤ 30, got {n_levels}, {n_features_per_level}, {base_resolution}, {log2_hashmap_size}"
            )
        if finest_resolution is not None:
            if finest_resolution < base_resolution:
                raise InputError(f"HashGridEncoding: finest_resolution {finest_resolution} < base_resolution {base_resolution}")
            b = growth_factor(base_resolution, finest_resolution, n_levels)
            if per_level_scale is not None and not math.isclose(per_level_scale, b, rel_tol=1e-6):
                raise InputError(
                    f"HashGridEncoding: give per_level_scale or finest_resolution, not both ({per_level_scale} vs {b:.6g} implied)"
                )
            per_level_scale = b
        per_level_scale = 2.0 if per_level_scale is None else float(per_level_scale)  # tiny-cuda-nn default
        if per_level_scale < 1.0:
            raise InputError(f"HashGridEncoding: per_level_scale must be ≥ 1, got {per_level_scale}")
        self.in_dim, self.n_levels, self.n_features_per_level = in_dim, n_levels, n_features_per_level
        self.out_dim = n_levels * n_features_per_level
        self.log2_hashmap_size, self.base_resolution, self.per_level_scale = log2_hashmap_size, base_resolution, per_level_scale
        self.hashmap_size = 2**log2_hashmap_size

        resolutions = level_resolutions(n_levels, base_resolution, per_level_scale)
        if max(resolutions) >= 2**31:
            raise InputError(
                f"HashGridEncoding: finest level resolution {max(resolutions)} exceeds 2^31; lower per_level_scale or n_levels"
            )
        dense = [(n + 1) ** in_dim <= self.hashmap_size for n in resolutions]
        sizes = [(n + 1) ** in_dim if d else self.hashmap_size for n, d in zip(resolutions, dense)]
        if sum(sizes) >= 2**31:  # row indices are int32
            raise InputError(f"HashGridEncoding: {sum(sizes)} table rows exceed 2^31; lower log2_hashmap_size or n_levels")
        # levels are sorted coarse to fine, so the dense ones are a prefix
        self.dense_levels = sum(dense)
        offsets = [0] + list(torch.tensor(sizes).cumsum(0).tolist())
        self.register_buffer("resolutions", torch.tensor(resolutions, dtype=torch.int64), persistent=False)
        self.register_buffer("level_sizes", torch.tensor(sizes, dtype=torch.int64), persistent=False)
        self.register_buffer("level_offsets", torch.tensor(offsets[:-1], dtype=torch.int64), persistent=False)
        # dense strides (N_l + 1)^k per axis k, (L, d)
        strides = (torch.tensor(resolutions, dtype=torch.int64)[:, None] + 1) ** torch.arange(in_dim)
        self.register_buffer("dense_strides", strides, persistent=False)
        self.params = nn.Parameter(torch.empty(offsets[-1], n_features_per_level))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.uniform_(self.params, -INIT_BOUND, INIT_BOUND)

    def level_table(self, level: int) -> Tensor:
        """The rows of level ``level``'s table, (T_l, F)."""
        start = int(self.level_offsets[level])
        return self.params[start : start + int(self.level_sizes[level])]

    def corner_indices(self, cell: Tensor, levels: range, hashed: bool, out: Optional[Tensor] = None) -> Tensor:
        """Table rows of the 2^d corners of each cell, for a block of levels that are all dense or all
        hashed: lower corners (L', N, d) int64 -> (L', N, 2^d) int32 (written into ``out`` if given).

        Dense: o_l + Σ_k c_k (N_l + 1)^k. Hashed: o_l + (⊕_k c_k π_k mod 2³²) mod T, where o_l is the level's
        first row. T is a power of two, so "mod 2³², then mod T" is ``& (T − 1)``, and because the low bits
        of a XOR are the XOR of the low bits, each axis term is reduced before the XOR: the 2^d-wide
        tensors then hold values below 2³¹ and are int32, half the memory traffic of int64.
        """
        sl = slice(levels.start, levels.stop)
        offsets = self.level_offsets[sl].to(torch.int32)[:, None, None]  # (L', 1, 1)
        if hashed:
            low = self.hashmap_size - 1
            pairs = [
                torch.stack([cell[..., k] * PRIMES[k], (cell[..., k] + 1) * PRIMES[k]], -1).bitwise_and_(low).to(torch.int32)
                for k in range(self.in_dim)
            ]  # d × (L', N, 2)
            return _corners(pairs, torch.bitwise_xor, out).add_(offsets)
        strides = self.dense_strides[sl][:, None, :]  # (L', 1, d)
        pairs = [
            torch.stack([cell[..., k] * strides[..., k], (cell[..., k] + 1) * strides[..., k]], -1).to(torch.int32)
            for k in range(self.in_dim)
        ]
        pairs[0] = pairs[0] + offsets  # adding o_l on one axis adds it to every corner, at 1/2^(d−1) the cost
        return _corners(pairs, torch.add, out)

    def corners_and_weights(self, v: Tensor, levels: Optional[range] = None) -> tuple[Tensor, Tensor]:
        """Rows and multilinear weights of the 2^d cell corners on the contiguous ``levels`` (default all):
        (N, d) in [0,1] -> rows (L', N, 2^d) int32 and weights (L', N, 2^d), w_c = Π_k (1 − |x_k N_l − c_k|).

        Level-major on purpose: the table rows of one level are then looked up (and, in the backward,
        accumulated) together, which keeps them in cache. Weights are computed for all levels at once; the
        rows for the dense levels (a prefix, being the coarse ones) and for the hashed ones are each
        computed in one pass, straight into one (L', N, 2^d) tensor.
        """
        levels = range(self.n_levels) if levels is None else levels
        res = self.resolutions[levels.start : levels.stop][:, None, None]  # (L', 1, 1)
        pos = v[None, :, :] * res.to(v.dtype)  # (N, d) -> (L', N, d), x·N_l
        # the upper boundary x = 1 falls in the last cell (weight 1 on its upper corner)
        cell = torch.minimum(pos.detach().floor(), (res - 1).to(v.dtype))
        frac = pos - cell  # (L', N, d) in [0, 1]
        weights = _corners([torch.stack([1 - frac[..., k], frac[..., k]], -1) for k in range(self.in_dim)], torch.mul)
        cell = cell.long()
        index = torch.empty(weights.shape, dtype=torch.int32, device=v.device)  # (L', N, 2^d)
        split = min(max(self.dense_levels, levels.start), levels.stop) - levels.start  # first hashed level, relative
        if split > 0:
            self.corner_indices(cell[:split], range(levels.start, levels.start + split), False, out=index[:split])
        if split < len(levels):
            self.corner_indices(cell[split:], range(levels.start + split, levels.stop), True, out=index[split:])
        return index, weights

    def encode(self, v: Tensor, levels: Optional[range] = None) -> Tensor:
        """Features of the contiguous levels ``levels`` (default all): (..., d) -> (..., L'·F)."""
        lead = v.shape[:-1]
        v = v.reshape(-1, self.in_dim).clamp(0.0, 1.0)
        index, weights = self.corners_and_weights(v, levels)  # (L', N, 2^d)
        n_levels, corners = index.shape[0], index.shape[-1]
        out = blend(self.params, index.view(-1, corners), weights.reshape(-1, corners))  # (L'·N, 2^d) -> (L'·N, F)
        out = out.view(n_levels, len(v), -1).transpose(0, 1)  # (L'·N, F) -> (N, L', F)
        return out.reshape(*lead, -1)  # (N, L', F) -> (..., L'·F)

    def forward(self, v: Tensor) -> Tensor:
        if v.shape[-1] != self.in_dim:
            raise ValueError(f"HashGridEncoding expects coordinates (..., {self.in_dim}), got {tuple(v.shape)}")
        return self.encode(v)

    def extra_repr(self) -> str:
        return (
            f"in_dim={self.in_dim}, out_dim={self.out_dim}, n_levels={self.n_levels}, "
            f"n_features_per_level={self.n_features_per_level}, log2_hashmap_size={self.log2_hashmap_size}, "
            f"base_resolution={self.base_resolution}, per_level_scale={self.per_level_scale:.6g}, "
            f"dense_levels={self.dense_levels}, params={self.params.numel()}"
        )
