"""Classes of signals to meta-learn an initialisation over, available offline, and the reading of a user's own:
natural-image crops, generated text images, CT phantoms of random ellipses, procedural shapes' occupancy.

Each generator returns a stack (S, *shape, C) float32 in [0, 1], drawn from seeds, so a class is reproducible
and its training and test signals are disjoint by construction (``TEST_SEEDS`` apart; ``check_disjoint`` also
compares their contents):

- ``natural``: square crops of scikit-image's bundled photographs, R to 2R pixels a side resized to R (the scale of
  learnit's 64²–128² crops), training crops from ``NATURAL_TRAIN`` and test crops from the other photographs
  (``NATURAL_TEST``): no photograph is seen on both sides;
- ``text``: ``inr.data.text.render_text_image`` of one seed per signal;
- ``ct``: phantoms of random ellipses (``ellipse_phantom``, as learnit's CT set; phantominator's renderer) or the
  paper's perturbed Shepp–Logan phantoms (``inr.data.phantoms``), one channel;
- ``shape``: occupancy on an R³ grid of a randomly rotated tube around a random torus knot
  (``inr.geometry.procedural``), recentred as the paper's meshes, inside = winding number > ½.

A user's directory (``read_directory``) gives the same classes from files: photographs to crop, images taken whole
(text), grey images or ``.npy`` arrays in [0, 1] (CT ground truths), meshes or ``.npy`` volumes (shapes).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from inr.data.image import IMAGE_EXTENSIONS, convert_channels, read_image, resize_image, to_unit_float
from inr.data.measurements import read_array
from inr.data.mesh import MESH_EXTENSIONS, check_mesh, read_mesh_file
from inr.data.phantoms import shepp_logan_phantom
from inr.data.text import render_text_image
from inr.errors import InputError
from inr.extras import require
from inr.geometry import contains, normalize_vertices, torus_knot_tube

KINDS = ("natural", "text", "ct", "shape")
# the offset between a class's training and test seeds: test signal i is drawn from seed TEST_SEEDS + seed + i
TEST_SEEDS = 1_000_000
# scikit-image's bundled photographs (public domain or CC0, skimage.data), split once: none is on both sides
NATURAL_TRAIN = ("astronaut", "brick", "cell", "chelsea", "clock", "coffee", "grass", "hubble_deep_field", "moon", "retina")
NATURAL_TEST = ("camera", "coins", "gravel", "immunohistochemistry", "rocket")
# random ellipse phantoms: a body ellipse and 6–12 inner ones adding or removing density (learnit's CT class)
INNER_ELLIPSES = (6, 12)
# procedural shapes: (p, q) of the knot ((1, 0): a torus) and the ranges of the tube's settings
KNOTS = ((1, 0), (2, 3), (3, 2), (2, 5), (3, 4))


def photograph(name: str) -> Tensor:
    """One of scikit-image's bundled photographs as (H, W, 3) float32 in [0, 1] (grey ones repeated to RGB)."""
    photos = require("skimage.data", extra="photos", what="scikit-image's photographs")
    array = np.asarray(getattr(photos, name)())
    image = to_unit_float(array, f"skimage.data.{name}")
    return torch.from_numpy(convert_channels(image if image.ndim == 3 else image[..., None], "rgb", name))


def random_crops(photos: Sequence[Tensor], count: int, size: int, seed: int) -> Tensor:
    """``count`` square crops (count, R, R, 3), R = ``size``: a photograph drawn at random, a side s of R to 2R
    pixels (at most the photograph's shorter side), a random position, resized to R (antialiased).

    Example:
        >>> random_crops([torch.rand(100, 120, 3)], 2, 16, seed=0).shape
        torch.Size([2, 16, 16, 3])
    """
    rng = np.random.default_rng(seed)
    crops = []
    for _ in range(count):
        photo = photos[int(rng.integers(len(photos)))]
        height, width = photo.shape[:2]
        side = int(rng.integers(min(size, height, width), min(2 * size, height, width) + 1))
        top, left = int(rng.integers(height - side + 1)), int(rng.integers(width - side + 1))
        crops.append(resize_image(photo[top : top + side, left : left + side], [size, size]))
    return torch.stack(crops)


def text_images(seeds: Sequence[int], size: int) -> Tensor:
    """One generated text image per seed, (S, R, R, 3)."""
    return torch.stack([render_text_image(size, seed) for seed in seeds])


def ellipse_phantom(size: int, seed: int) -> Tensor:
    """A phantom of random ellipses (R, R) float32 in [0, 1]: a body ellipse of density 0.4–0.7, semi-axes
    0.6–0.9 of the field, and 6–12 inner ellipses of density −0.3…+0.4, semi-axes 0.05–0.4, centres within ±0.5,
    any angle; rows [A, a, b, x₀, y₀, φ°] of phantominator's ellipse table, summed and clipped to [0, 1].

    Example:
        >>> p = ellipse_phantom(32, seed=0)
        >>> tuple(p.shape), float(p.min()) >= 0.0, float(p.max()) <= 1.0, float(p.std()) > 0.05
        ((32, 32), True, True, True)
    """
    ct_shepp_logan = require("phantominator", extra="phantoms", what="ellipse phantoms").ct_shepp_logan

    rng = np.random.default_rng(seed)
    body = [rng.uniform(0.4, 0.7), rng.uniform(0.6, 0.9), rng.uniform(0.6, 0.9), 0.0, 0.0, rng.uniform(0, 180)]
    count = int(rng.integers(INNER_ELLIPSES[0], INNER_ELLIPSES[1] + 1))
    inner = np.stack(
        [
            rng.uniform(-0.3, 0.4, count),
            rng.uniform(0.05, 0.4, count),
            rng.uniform(0.05, 0.4, count),
            rng.uniform(-0.5, 0.5, count),
            rng.uniform(-0.5, 0.5, count),
            rng.uniform(0, 180, count),
        ],
        axis=1,
    )
    phantom = ct_shepp_logan((size, size), E=np.concatenate([np.array([body]), inner]))
    return torch.from_numpy(np.clip(phantom, 0.0, 1.0).astype(np.float32))


def phantoms(seeds: Sequence[int], size: int, phantom: str = "ellipses") -> Tensor:
    """One phantom per seed, (S, R, R, 1): ``ellipses`` (``ellipse_phantom``) or ``shepp_logan`` (the paper's)."""
    if phantom == "ellipses":
        return torch.stack([ellipse_phantom(size, seed) for seed in seeds])[..., None]
    if phantom == "shepp_logan":
        return torch.stack([shepp_logan_phantom((size, size), seed=seed) for seed in seeds])[..., None]
    raise InputError(f"data.phantom: unknown phantom {phantom!r}; choose ellipses or shepp_logan")


def rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random rotation (3, 3): the Q of a Gaussian matrix's QR, signs fixed (Mezzadri 2007)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def procedural_shape(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A closed mesh (vertices in [0, 1]³, triangles): a tube around a random (p, q) torus knot of random radii,
    ribs and flutes, randomly rotated, recentred as the paper's meshes (``normalize_vertices``)."""
    rng = np.random.default_rng(seed)
    p, q = KNOTS[int(rng.integers(len(KNOTS)))]
    verts, faces = torus_knot_tube(
        p=p,
        q=q,
        major=1.0,
        minor=0.0 if q == 0 else rng.uniform(0.3, 0.5),
        tube=rng.uniform(0.35, 0.6) if q == 0 else rng.uniform(0.22, 0.32),
        rib_count=int(rng.integers(4, 40)),
        rib_depth=rng.uniform(0.0, 0.2),
        flute_count=int(rng.integers(3, 8)),
        flute_depth=rng.uniform(0.0, 0.15),
        segments=192,
        sides=16,
    )
    return normalize_vertices(verts @ rotation(rng).T)[0], faces


def occupancy(verts: np.ndarray, faces: np.ndarray, size: int) -> Tensor:
    """Inside (1) or outside (0) of a closed mesh at the R³ grid's points v = i/R, (R, R, R, 1) in the grid's
    (z, y, x) axes; the mesh's vertices are in x, y, z."""
    axis = np.arange(size) / size
    z, y, x = np.meshgrid(axis, axis, axis, indexing="ij")
    points = np.stack([x, y, z], axis=-1).reshape(-1, 3)  # (R³, 3) in x, y, z
    inside = contains(points, verts, faces)
    return torch.from_numpy(inside.reshape(size, size, size, 1).astype(np.float32))


def shapes(seeds: Sequence[int], size: int) -> Tensor:
    """One procedural shape's occupancy per seed, (S, R, R, R, 1)."""
    return torch.stack([occupancy(*procedural_shape(seed), size) for seed in seeds])


def signal_hash(signal: Tensor) -> str:
    """A digest of a signal's values, to find the same signal on both sides of a split."""
    return hashlib.sha1(signal.detach().to(torch.float32).contiguous().numpy().tobytes()).hexdigest()


def check_disjoint(
    train: Sequence[Tensor], test: Sequence[Tensor], train_names: Sequence[str], test_names: Sequence[str]
) -> None:
    """Refuse (one line) test signals that are also training signals: a held-out score must be of unseen signals."""
    seen = {signal_hash(s): name for s, name in zip(train, train_names)}
    both = [(name, seen[h]) for s, name in zip(test, test_names) if (h := signal_hash(s)) in seen]
    if both:
        example = both[0][0] if both[0][0] == both[0][1] else f"{both[0][0]} = {both[0][1]}"
        raise InputError(
            f"data.test: {len(both)} of its {len(test)} signals are also training signals (e.g. {example}); "
            "train and test signals must be disjoint"
        )


# --- a user's directory ---------------------------------------------------------------------------------
def directory_files(directory: str | Path, kind: str, key: str) -> list[Path]:
    """The files of ``directory`` a class reads, sorted by name; refused when there are none."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InputError(f"data.{key} {folder}: not a directory")
    extensions = {
        "natural": IMAGE_EXTENSIONS,
        "text": IMAGE_EXTENSIONS,
        "ct": (*IMAGE_EXTENSIONS, ".npy"),
        "shape": (*MESH_EXTENSIONS, ".npy"),
    }[kind]
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in extensions)
    if not files:
        raise InputError(f"data.{key} {folder}: no {kind} files in it ({', '.join(extensions)})")
    return files


def read_ct_truth(path: Path, size: int) -> Tensor:
    """A CT ground truth (R, R, 1): a grey image, or a 2-D ``.npy`` array of values in [0, 1], resized to R."""
    if path.suffix.lower() == ".npy":
        array = read_array(path, "CT ground truth")
        if array.ndim != 2:
            raise InputError(f"{path}: a CT ground truth is a 2-D array, got shape {array.shape}")
        if array.min() < 0 or array.max() > 1:
            raise InputError(f"{path}: ground-truth values must lie in [0, 1], found [{array.min():.3g}, {array.max():.3g}]")
        image = torch.from_numpy(array.astype(np.float32))[..., None]
    else:
        image = read_image(path, "gray")
    return resize_image(image, size)


def read_shape(path: Path, size: int) -> Tensor:
    """A shape's occupancy (R, R, R, 1): a mesh (recentred as the paper's, inside by winding number) or a 3-D
    ``.npy`` array (values above ½ inside, resampled to R³ by its nearest voxels)."""
    if path.suffix.lower() == ".npy":
        array = read_array(path, "occupancy volume")
        if array.ndim != 3:
            raise InputError(f"{path}: an occupancy volume is a 3-D array, got shape {array.shape}")
        volume = torch.from_numpy(np.asarray(array, dtype=np.float32))[None, None]  # (1, 1, D, H, W)
        return (F.interpolate(volume, size=(size,) * 3, mode="nearest")[0, 0] > 0.5).to(torch.float32)[..., None]
    verts, faces = read_mesh_file(path)
    check_mesh(verts, faces, str(path))
    return occupancy(normalize_vertices(verts)[0], faces, size)


def read_directory(directory: str | Path, kind: str, size: int, key: str) -> tuple[list[Tensor], list[str]]:
    """The signals of a user's directory for ``kind``, each (*shape, C), and their names. ``natural``: the
    photographs themselves ((H, W, 3), cropped later); ``text``: images centre-cropped and resized to R²."""
    files = directory_files(directory, kind, key)
    if kind == "natural":
        signals = [read_image(p, "rgb") for p in files]
    elif kind == "text":
        signals = [resize_image(read_image(p, "rgb"), size) for p in files]
    elif kind == "ct":
        signals = [read_ct_truth(p, size) for p in files]
    else:
        signals = [read_shape(p, size) for p in files]
    for path, signal in zip(files, signals):
        if float(signal.max() - signal.min()) == 0.0:
            raise InputError(f"{path}: the signal is constant at {size} per axis; nothing to learn from it")
    return signals, [p.name for p in files]


def natural_photographs(names: Sequence[str]) -> list[Tensor]:
    """The named bundled photographs (``photograph``)."""
    return [photograph(name) for name in names]


def grid_side(kind: str, resolution: int | None) -> int:
    """The grid side of a class: the given resolution, or 64 (images, phantoms) or 32 (shapes, R³)."""
    side = resolution if resolution is not None else (32 if kind == "shape" else 64)
    if isinstance(side, bool) or not isinstance(side, int) or side < 8:
        raise InputError(f"data.resolution must be an int ≥ 8, got {resolution}")
    if kind == "shape" and side**3 > 2**21:
        raise InputError(f"data.resolution {side}: {side}³ = {side**3:,} voxels per shape; at most 128³ for a class of shapes")
    return side


def signal_count(count: int, key: str) -> int:
    """A number of signals ≥ 1 and below the test seeds' offset."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count < TEST_SEEDS:
        raise InputError(f"data.{key} must be an int from 1 to {TEST_SEEDS - 1:,}, got {count}")
    return count


def channels_of(kind: str) -> int:
    """C of a class's signals: 3 (colour images) or 1 (phantoms, occupancy)."""
    return 3 if kind in ("natural", "text") else 1


def points_of(kind: str, side: int) -> int:
    """Grid points of one signal: R² or R³."""
    return side ** (3 if kind == "shape" else 2)


def ndim_of(kind: str) -> int:
    return 3 if kind == "shape" else 2
