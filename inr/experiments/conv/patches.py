"""Patches of images for training auto-encoders: a checkerboard split of blocks, random training crops and
the held-out patches, all by tensor indexing.

Each image (H, W) is cut into blocks of ``block``×``block`` pixels; block (i, j) is held out when i + j is
odd (a checkerboard, so both halves cover every part of the image) and used for training otherwise.
Training crops of ``patch``×``patch`` pixels lie wholly inside one training block (any offset); held-out
patches tile the held-out blocks without overlap. No held-out pixel is ever seen in training.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import torch
from torch import Tensor


def block_origins(shape: Sequence[int], block: int, held_out: bool) -> Tensor:
    """Top-left corners (n, 2) of the whole ``block``×``block`` blocks of an (H, W) image whose
    (row + column) block index is odd (``held_out``) or even.

    Example:
        >>> block_origins((4, 6), 2, held_out=False).tolist()
        [[0, 0], [0, 4], [2, 2]]
    """
    rows, cols = int(shape[0]) // block, int(shape[1]) // block
    i, j = torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij")
    keep = (i + j) % 2 == int(held_out)
    return torch.stack([i[keep], j[keep]], dim=1) * block


def gather_patches(image: Tensor, origins: Tensor, patch: int) -> Tensor:
    """The ``patch``×``patch`` windows of an image (H, W) at top-left corners (n, 2) -> (n, patch, patch)."""
    d = torch.arange(patch, device=image.device)
    rows = origins[:, 0, None, None] + d[None, :, None]  # (n, p, 1)
    cols = origins[:, 1, None, None] + d[None, None, :]  # (n, 1, p)
    return image[rows, cols]


class PatchSet:
    """Training crops and held-out patches of a list of grey images (each (H, W), values in [0, 1]).

    Args:
        images: the images (H_i, W_i); each must hold at least one training and one held-out block.
        patch: side of a patch.
        block: side of a checkerboard block (≥ ``patch``).

    Example:
        >>> ps = PatchSet([torch.arange(64.0).reshape(8, 8)], patch=2, block=4)
        >>> ps.heldout().shape, ps.crops(5, torch.Generator().manual_seed(0)).shape
        (torch.Size([8, 1, 2, 2]), torch.Size([5, 1, 2, 2]))
    """

    def __init__(self, images: Sequence[Tensor], patch: int = 32, block: int = 64) -> None:
        if block < patch:
            raise ValueError(f"block ({block}) must be at least the patch size ({patch})")
        self.images = [im.float() for im in images]
        self.patch, self.block = patch, block
        self.train_origins = [block_origins(im.shape, block, held_out=False) for im in self.images]
        self.test_origins = [block_origins(im.shape, block, held_out=True) for im in self.images]
        for n, (a, b) in enumerate(zip(self.train_origins, self.test_origins)):
            if len(a) == 0 or len(b) == 0:
                raise ValueError(
                    f"image {n} of shape {tuple(self.images[n].shape)} holds no training or no held-out block of {block}×{block}"
                )

    def heldout(self) -> Tensor:
        """Every held-out patch, tiling the held-out blocks without overlap: (N, 1, patch, patch)."""
        per_block = self.block // self.patch
        d = torch.arange(per_block) * self.patch
        offsets = torch.stack(torch.meshgrid(d, d, indexing="ij"), dim=-1).reshape(-1, 2)  # (per_block², 2)
        out = []
        for image, origins in zip(self.images, self.test_origins):
            corners = (origins[:, None, :] + offsets[None, :, :]).reshape(-1, 2)  # (blocks · per_block², 2)
            out.append(gather_patches(image, corners, self.patch))
        return torch.cat(out)[:, None]

    def crops(self, count: int, generator: Optional[torch.Generator] = None) -> Tensor:
        """``count`` random training crops (count, 1, patch, patch): an image, a training block of it and an
        offset inside the block, each uniform."""
        which = torch.randint(len(self.images), (count,), generator=generator)
        slack = self.block - self.patch + 1
        out = torch.empty(count, self.patch, self.patch)
        for n, (image, origins) in enumerate(zip(self.images, self.train_origins)):
            chosen = torch.nonzero(which == n).squeeze(1)
            blocks = origins[torch.randint(len(origins), (len(chosen),), generator=generator)]
            corners = blocks + torch.randint(slack, (len(chosen), 2), generator=generator)
            out[chosen] = gather_patches(image, corners, self.patch)
        return out[:, None]
