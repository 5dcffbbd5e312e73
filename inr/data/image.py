"""Images as targets: reading (8/16-bit, gray/RGB/RGBA) and ``ImageDataModule``.

Conversions, on purpose: integer images are scaled by their type's maximum (255, 65535) into [0, 1]
(16-bit colour PNGs are decoded by pypng, since Pillow would reduce them to 8 bits);
float images must already lie in [0, 1]; an alpha channel is composited onto a white background; with
``channels="rgb"`` (default) a grayscale image is repeated into three channels, with ``channels="gray"``
colour is reduced to luminance Y = 0.299 R + 0.587 G + 0.114 B (ITU-R BT.601), and ``channels="keep"``
keeps what the file holds (gray → 1 channel, RGB → 3, RGBA → 4 without compositing).
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path
from typing import Any, Literal, Optional, Union

import imageio.v3 as iio
import numpy as np
import torch
from torch import Tensor

from inr.data.module import GridDataModule
from inr.data.paths import check_file, resolve_data_path
from inr.errors import InputError
from inr.io.bounded import check_declared, first_line
from inr.resources import DATA_DIR
from inr.sizes import grid_size

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")
DEFAULT_IMAGE = DATA_DIR / "astronaut.png"
CONSTANT_TOLERANCE = 1e-6  # below a 16-bit quantisation step, 1 / 65535 ≈ 1.5e-5


def integers_to_unit(array: np.ndarray, source: str) -> np.ndarray:
    """Integer pixels -> [0, 1] float32: 8- and 16-bit unsigned types by their maximum (255, 65535); any other
    integer type (int32, int64, uint32: what numpy makes of 8-bit data by default) by the bit depth its values
    fit, 8 or 16, since dividing 0…255 by 2³¹ − 1 would give a black image.

    Example:
        >>> integers_to_unit(np.array([0, 255], dtype=np.int32), "x").tolist()
        [0.0, 1.0]
    """
    if array.dtype in (np.uint8, np.uint16):
        return array.astype(np.float32) / np.iinfo(array.dtype).max
    lo, hi = (int(array.min()), int(array.max())) if array.size else (0, 0)
    if lo < 0 or hi > 65535:
        raise InputError(
            f"{source}: {array.dtype} pixel values span [{lo}, {hi}]; integer images must hold 8-bit (0…255) or "
            "16-bit (0…65535) values"
        )
    return array.astype(np.float32) / (255.0 if hi <= 255 else 65535.0)


def to_unit_float(array: np.ndarray, source: str) -> np.ndarray:
    """Scale an integer or float array into [0, 1] float32 by its dtype (integers: ``integers_to_unit``)."""
    if array.dtype == np.bool_:
        return array.astype(np.float32)
    if np.issubdtype(array.dtype, np.integer):
        return integers_to_unit(array, source)
    if np.issubdtype(array.dtype, np.floating):
        out = array.astype(np.float32)
        if not np.isfinite(out).all():
            raise InputError(f"{source}: contains NaN or infinite values")
        if out.min() < 0 or out.max() > 1:
            raise InputError(f"{source}: float image values must lie in [0, 1], found [{out.min():.3g}, {out.max():.3g}]")
        return out
    raise InputError(f"{source}: unsupported pixel type {array.dtype}")


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_GRAY = 0  # colour type of a single-channel PNG (PNG spec, IHDR)
# channels of each PNG colour type as decoded (a palette expands to RGB, or RGBA with transparency)
PNG_CHANNELS = {0: 1, 2: 3, 3: 4, 4: 2, 6: 4}
# Memory of reading an image beyond its stored values, in bytes per value over max(C, 3) channels, for the check of
# its declared size before any pixel is decoded (inr.io.bounded). Measured with tracemalloc (read_image, then
# resize_image): an 8-bit RGB PNG peaks at 27 bytes a pixel, a 16-bit RGBA PNG (pypng) at 52, a 16-bit RGB TIFF at
# 30; the float32 image and its converted copy.
IMAGE_BYTES_PER_VALUE = 12
# Pillow modes whose stored channels are not gray or RGB(A) values, and what Pillow converts them to; read as stored,
# a CMYK JPEG's four channels were taken for RGB + alpha (a blank white image, K = 0 read as transparent)
PILLOW_TARGET = {"CMYK": "RGB", "YCbCr": "RGB", "P": "RGB", "PA": "RGBA", "1": "L"}
PILLOW_REFUSED = {"LAB": "CIE L*a*b*", "HSV": "HSV"}
# TIFF photometric interpretations (TIFF 6.0, tag 262) tifffile returns as the values they mean: 1 min-is-black, 2 RGB.
# The others hold what tifffile returns as stored: palette indices, inverted gray, CMYK inks, YCbCr, L*a*b*.
TIFF_AS_STORED = (1, 2)
TIFF_PHOTOMETRIC = {0: "min-is-white", 3: "palette", 4: "mask", 5: "CMYK (separated)", 6: "YCbCr", 8: "CIE L*a*b*"}


def png_header(path: Path) -> Optional[tuple[int, int, int, int]]:
    """(width, height, bit depth, colour type) from a PNG's IHDR chunk (bytes 16 to 25), None for other files."""
    with open(path, "rb") as f:
        head = f.read(26)
    if len(head) < 26 or not head.startswith(PNG_SIGNATURE) or head[12:16] != b"IHDR":
        return None
    width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    return width, height, head[24], head[25]


def png_depth_and_colour(path: Path) -> Optional[tuple[int, int]]:
    """(bit depth, colour type) from a PNG's IHDR chunk, None for other files."""
    header = png_header(path)
    return None if header is None else header[2:]


def tiff_header(path: Path) -> Optional[tuple[int, tuple[int, ...], int]]:
    """(pages, the first page's shape, bytes per value) of a TIFF, from its directory entries (no pixel decoded);
    None when tifffile cannot read them (the decoder then says why)."""
    try:
        import tifffile

        with tifffile.TiffFile(path) as tif:
            pages = list(tif.pages)
            return len(pages), tuple(int(s) for s in pages[0].shape), int(pages[0].dtype.itemsize)
    except Exception:  # tifffile raises many types for files that are not TIFF
        return None


def image_header(path: Path) -> Optional[tuple[int, int, int, int, int]]:
    """(frames, height, width, channels, bytes per value) as the file's header declares them, read without decoding
    a pixel: a PNG's IHDR, a TIFF's directories, Pillow's header parse for the other formats; None when the header
    does not read (the decoder then says why)."""
    suffix = path.suffix.lower()
    if suffix == ".png":
        header = png_header(path)
        if header is None:
            return None
        width, height, depth, colour = header
        return 1, height, width, PNG_CHANNELS.get(colour, 4), 2 if depth == 16 else 1
    if suffix in (".tif", ".tiff"):
        header = tiff_header(path)
        if header is None:
            return None
        pages, shape, itemsize = header
        channels = shape[2] if len(shape) == 3 else 1
        return pages, shape[0], shape[1] if len(shape) > 1 else 1, channels, itemsize
    from PIL import Image

    try:
        with Image.open(path) as image:
            frames = int(getattr(image, "n_frames", 1))  # a GIF's frames, counted without decoding them
            return frames, image.height, image.width, len(image.getbands()), 2 if image.mode.startswith("I;16") else 1
    except Image.DecompressionBombError as exc:
        count = re.search(r"\((\d+) pixels\)", str(exc))
        raise pillow_limit(path, int(count.group(1)) if count else None) from None
    except Exception:  # Pillow raises many types for files that are not images
        return None


def pillow_limit(path: Path, pixels: Optional[int]) -> InputError:
    """The refusal of an image within memory but beyond Pillow's decompression-bomb bound (2 × MAX_IMAGE_PIXELS)."""
    from PIL import Image

    size = f"{pixels:,} pixels" if pixels is not None else "its size"
    return InputError(
        f"{path}: {size}, beyond Pillow's decompression-bomb limit of {2 * Image.MAX_IMAGE_PIXELS:,}; downsample it first"
    )


def check_image_size(path: Path, what: str = "image") -> None:
    """Refuse an image whose header declares more pixels than memory holds once read and converted, before any is
    decoded (a deflated PNG of zeros inflates a thousandfold)."""
    header = image_header(path)
    if header is None:
        return
    frames, height, width, channels, itemsize = header
    shape = (frames, height, width, max(channels, 3))
    if what == "image":
        described = f"a {width}×{height} image of {channels} channel{'s' if channels > 1 else ''} of {8 * itemsize} bits"
    else:
        described = f"{frames} frames of {width}×{height}"
    check_declared(str(path), described, shape, itemsize + IMAGE_BYTES_PER_VALUE, "downsample it first")


def read_png16(path: Path) -> np.ndarray:
    """A 16-bit colour (or gray+alpha) PNG as uint16 (H, W, C) through pypng: Pillow, imageio's PNG reader,
    reduces such files to 8 bits."""
    import png

    width, height, rows, info = png.Reader(filename=str(path)).asDirect()
    array = np.vstack([np.asarray(row, dtype=np.uint16) for row in rows])  # (H, W·C)
    if info["bitdepth"] != 16:  # an sBIT chunk: pypng returns the significant bits only; back to the 16-bit scale
        array = np.round(array * (65535 / (2 ** info["bitdepth"] - 1))).astype(np.uint16)
    return array.reshape(height, width, info["planes"])  # (H, W·C) -> (H, W, C)


def pillow_mode(path: Path) -> Optional[str]:
    """Pillow's mode of an image file (``L``, ``RGB``, ``CMYK``, ``P``, …) from its header; None when Pillow does
    not read the file."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.mode
    except Exception:  # Pillow raises many types for files it does not read; the decoder then says why
        return None


def tiff_photometric(path: Path) -> Optional[int]:
    """The first page's photometric interpretation (TIFF tag 262) of a TIFF, None when tifffile does not read it."""
    try:
        import tifffile

        with tifffile.TiffFile(path) as tif:
            return int(tif.pages[0].photometric)
    except Exception:  # tifffile raises many types for files that are not TIFF
        return None


def pillow_decode(path: Path, mode: str) -> np.ndarray:
    """The pixels of an image whose stored channels are not gray or RGB(A) values, as Pillow converts them: CMYK and
    YCbCr to RGB (Pillow un-inverts Adobe's inverted CMYK JPEGs when decoding, then R = (255 − C)(255 − K) / 255),
    a palette to RGB (RGBA with transparency), min-is-white TIFFs and bilevel ones to L; L*a*b* and HSV refused."""
    from PIL import Image

    if mode in PILLOW_REFUSED:
        raise InputError(f"{path}: its pixels are {PILLOW_REFUSED[mode]} colour, not RGB; convert it to RGB first")
    with Image.open(path) as image:
        target = PILLOW_TARGET.get(mode, mode)
        if mode == "P" and "transparency" in image.info:
            target = "RGBA"
        return np.asarray(image if target == mode else image.convert(target))


def decode_image(path: Path) -> np.ndarray:
    """The pixels of an image file (integer type kept) as gray, gray + alpha, RGB or RGBA values: 16-bit colour PNGs
    through pypng; colours stored otherwise (CMYK, YCbCr, a TIFF palette, min-is-white) through Pillow's conversion
    (``pillow_decode``); everything else as imageio reads it."""
    kind = png_depth_and_colour(path) if path.suffix.lower() == ".png" else None
    if kind is not None and kind[0] == 16 and kind[1] != PNG_GRAY:
        return read_png16(path)
    mode = pillow_mode(path)
    if path.suffix.lower() in (".tif", ".tiff"):  # imageio reads TIFFs through tifffile, which keeps values as stored
        photometric = tiff_photometric(path)
        if photometric is not None and photometric not in TIFF_AS_STORED:
            if mode is None:
                name = TIFF_PHOTOMETRIC.get(photometric, f"photometric interpretation {photometric}")
                raise InputError(f"{path}: a {name} TIFF that Pillow does not convert (16-bit?); convert it to RGB or gray first")
            return pillow_decode(path, mode)
    elif mode is None:
        # Pillow reads every format named here but TIFF: its own error says why this file is none of them (imageio
        # would first try each of its plugins)
        from PIL import Image

        Image.open(path).close()
    elif mode in PILLOW_TARGET or mode in PILLOW_REFUSED:
        return pillow_decode(path, mode)
    return np.asarray(iio.imread(path))


def read_image(path: Union[str, Path], channels: Literal["rgb", "gray", "keep"] = "rgb") -> Tensor:
    """Read an image file into a float32 tensor (H, W, C) in [0, 1] with the conversions of this module."""
    path = Path(path)
    check_file(path, IMAGE_EXTENSIONS, "image")
    check_image_size(path)
    try:
        array = decode_image(path)
    except InputError:
        raise
    except Exception as exc:  # imageio and pypng raise many types for undecodable files
        if type(exc).__name__ == "DecompressionBombError":  # within memory, beyond Pillow's own bound
            header = image_header(path)
            raise pillow_limit(path, header[1] * header[2] if header else None) from None
        raise InputError(f"{path}: {undecodable(path, exc)}") from None
    if array.ndim == 2:
        array = array[:, :, None]
    if array.ndim != 3 or array.shape[2] not in (1, 2, 3, 4):
        raise InputError(f"{path}: expected a single 2D image (H, W[, C]), got array of shape {array.shape}")
    if array.shape[0] < 2 or array.shape[1] < 2:
        raise InputError(f"{path}: image of size {array.shape[1]}×{array.shape[0]} is too small to fit")
    image = to_unit_float(array, str(path))
    return torch.from_numpy(convert_channels(image, channels, str(path)))


def undecodable(path: Path, exc: Exception) -> str:
    """What is wrong with an image that did not decode: a PNG's compressed metadata chunk beyond Pillow's bound on
    inflating it (a decompression bomb in a zTXt, iTXt or iCCP chunk), else the decoder's own words."""
    if path.suffix.lower() == ".png" and isinstance(exc, ValueError):
        from PIL import PngImagePlugin

        chunk = png_inflating_chunk(path, PngImagePlugin.MAX_TEXT_CHUNK)
        if chunk is not None:
            return (
                f"its {chunk} chunk inflates beyond {PngImagePlugin.MAX_TEXT_CHUNK / 2**20:g} MiB, Pillow's bound on a PNG "
                "metadata chunk (a decompression bomb); re-save the image without its metadata"
            )
        if "text chunks" in str(exc):
            limit = PngImagePlugin.MAX_TEXT_MEMORY / 2**20
            return f"its text chunks inflate beyond {limit:g} MiB together, Pillow's bound (a decompression bomb)"
    tiff = path.suffix.lower() in (".tif", ".tiff")
    if pillow_mode(path) is None and not (tiff and tiff_photometric(path) is not None):
        return f"not a readable image (its contents are no {path.suffix[1:].upper()} or other format Pillow reads)"
    return f"not a readable image ({type(exc).__name__}: {first_line(exc)})"


def png_inflating_chunk(path: Path, limit: int) -> Optional[str]:
    """The tag of the first zTXt, compressed iTXt or iCCP chunk of a PNG that inflates beyond ``limit`` bytes, None
    when none does (PNG 1.2 §11.3.4: each holds a keyword, a NUL, flags, then a zlib stream)."""
    with open(path, "rb") as f:
        f.seek(len(PNG_SIGNATURE))
        while len(head := f.read(8)) == 8:
            length, tag = int.from_bytes(head[:4], "big"), head[4:]
            if tag not in (b"zTXt", b"iTXt", b"iCCP"):
                f.seek(length + 4, 1)  # the data and the CRC
                continue
            data = f.read(length)
            f.seek(4, 1)
            start = data.find(b"\0") + 1  # after the keyword
            if tag == b"iTXt":
                if data[start : start + 1] != b"\x01":  # not compressed
                    continue
                start = data.find(b"\0", data.find(b"\0", start + 2) + 1) + 1  # past the language and translated keyword
            else:
                start += 1  # the compression method
            try:
                inflated = zlib.decompressobj().decompress(data[start:], limit + 1)
            except zlib.error:
                continue
            if len(inflated) > limit:
                return tag.decode()
    return None


def convert_channels(image: np.ndarray, channels: str, source: str) -> np.ndarray:
    """(H, W, C) with C ∈ {1 gray, 2 gray+alpha, 3 RGB, 4 RGBA} -> the requested channel layout."""
    if channels == "keep":
        return image
    if image.shape[2] in (2, 4):  # composite onto white: c' = α c + (1 − α)
        alpha = image[:, :, -1:]
        image = image[:, :, :-1] * alpha + (1.0 - alpha)
    if channels == "rgb":
        return np.repeat(image, 3, axis=2) if image.shape[2] == 1 else image
    if channels == "gray":
        if image.shape[2] == 1:
            return image
        weights = np.array([0.299, 0.587, 0.114], dtype=np.float32)  # ITU-R BT.601 luma
        return (image @ weights)[:, :, None]
    raise InputError(f"{source}: unknown channels mode {channels!r}; choose rgb, gray or keep")


def resize_image(image: Tensor, resolution: Union[int, list[int], None], crop_square: bool = True) -> Tensor:
    """(H, W, C) -> resized (h, w, C). An int r centre-crops to a square (if ``crop_square``) and resizes to
    r×r; a pair [h, w] resizes to exactly that. Antialiased bilinear (torchvision)."""
    from torchvision.transforms.v2 import functional as TF

    if resolution is None:
        return image
    size = grid_size(resolution, 2)
    chw = image.permute(2, 0, 1)  # (H, W, C) -> (C, H, W)
    if isinstance(resolution, int) and crop_square:
        side = min(chw.shape[1:])
        chw = TF.center_crop(chw, [side, side])
    if chw.shape[1:] != size:
        chw = TF.resize(chw, size, antialias=True).clamp(0, 1)
    return chw.permute(1, 2, 0).contiguous()


def image_files(path: Union[str, Path, list]) -> list[Path]:
    """The image files a ``path`` names: itself, each file of a list, or the image files of a directory (by name).

    Example:
        >>> [p.name for p in image_files(DATA_DIR)][:1]
        ['astronaut.png']
    """
    if isinstance(path, (list, tuple)):
        if not path:
            raise InputError("data.path: the list of images is empty")
        return [resolve_data_path(p) for p in path]
    resolved = resolve_data_path(path)
    if not resolved.is_dir():
        return [resolved]
    files = sorted(p for p in resolved.iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS and p.is_file())
    if not files:
        raise InputError(f"{resolved}: the directory holds no image ({', '.join(IMAGE_EXTENSIONS)})")
    return files


class ImageDataModule(GridDataModule):
    """An image (PNG/JPEG/TIFF/BMP) as a 2D grid of colours; coordinates (y, x) = (row / H, col / W).

    Several images of one size (after ``resolution``) are the targets of a stacked model's members, one each
    (``inr.tasks.members``): ``values`` holds them side by side, (N, T·C).

    Args:
        path: the image file; a list of files or a directory of images: one target per file (by name for a
            directory). Default ``data/astronaut.png``.
        resolution: ``None`` (native), an int r (centre square crop, then r×r) or [h, w].
        channels: ``rgb`` | ``gray`` | ``keep`` (see the module docstring).
        split, batch_size, steps_per_epoch, eval_chunk, seed: as in ``GridDataModule``.

    Example:
        >>> dm = ImageDataModule(resolution=64, split="every_other")
        >>> dm.shape, dm.out_channels, len(dm.train_index), dm.train_shape
        ((64, 64), 3, 1024, (32, 32))
    """

    def __init__(
        self,
        path: Union[str, list[str], None] = None,
        resolution: Union[int, list[int], None] = None,
        channels: Literal["rgb", "gray", "keep"] = "rgb",
        split: str = "every_other",
        **kwargs: Any,
    ) -> None:
        super().__init__(split=split, **kwargs)
        self.files = image_files(path) if path is not None else [DEFAULT_IMAGE]
        self.path, self.targets = self.files[0], len(self.files)  # the (first) image; T targets
        self.resolution, self.channels = resolution, channels

    def describe(self) -> str:
        if len(self.files) == 1:
            return str(self.files[0])
        return f"{self.files[0]} and {len(self.files) - 1} more images"

    def member_data(self, k: int) -> GridDataModule:
        view = super().member_data(k)
        if view is not self:
            view.files, view.path = [self.files[k]], self.files[k]
        return view

    def load_values(self) -> Tensor:
        images = [self.load_image(path) for path in self.files]
        for path, image in zip(self.files[1:], images[1:]):
            if image.shape != images[0].shape:
                raise InputError(
                    f"{path}: {image.shape[1]}×{image.shape[0]}×{image.shape[2]} after resizing, but {self.files[0]} is "
                    f"{images[0].shape[1]}×{images[0].shape[0]}×{images[0].shape[2]}; the images of one run share one size (set data.resolution)"
                )
        return images[0] if len(images) == 1 else torch.cat(images, dim=-1)  # T × (H, W, C) -> (H, W, T·C)

    def load_image(self, path: Path) -> Tensor:
        """One file as the target (H, W, C): read, checked, cropped and resized."""
        if self.resolution is not None:
            size = grid_size(self.resolution, 2)
            self.check_size(size[0] * size[1] * len(self.files), 4, 2)
        image = read_image(path, self.channels)
        if float(image.max() - image.min()) == 0.0:
            raise InputError(f"{path}: the image is constant (every pixel {float(image.flatten()[0]):.3g}); nothing to fit")
        image = resize_image(image, self.resolution)
        # resampling leaves rounding noise (~1e-9) on a flat crop; real contrast is at least one 16-bit step (1.5e-5)
        if float(image.max() - image.min()) < CONSTANT_TOLERANCE:
            raise InputError(f"{path}: the image is constant after cropping and resizing to {self.resolution}; nothing to fit")
        return image  # (H, W, C)
