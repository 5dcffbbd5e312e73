"""Reading a user's file within bounds: the sizes a file declares — a header's shape, an archive member's, a JSON
document's length — checked before anything is allocated or decompressed, and refused in one line that says
what reading it would take.

A compressed file (a ``.nii.gz``, a deflated PNG, an ``.npz``, a gzip HDF5 dataset) can declare and hold a
thousand times its size: a few KiB that inflate to gigabytes. Every reader therefore reads the header first,
estimates the memory of reading and converting the data (the readers' own factors, measured), and refuses
it with ``inr.errors.check_memory`` (more than half of the memory available) before touching the data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Union

import numpy as np

from inr.errors import InputError, check_memory

MAX_JSON_BYTES = 64 * 2**20  # a camera path of 100,000 poses is about 40 MiB of JSON; scenes' transforms far less


def shape_text(shape: Sequence[int]) -> str:
    """Example:
    >>> shape_text((3, 256, 256))
    '3×256×256'
    """
    return "×".join(str(int(s)) for s in shape)


def check_declared(
    source: str, what: str, shape: Sequence[int], bytes_per_value: float, advice: str, declared_by: str = "its header"
) -> None:
    """Refuse ``what`` of ``shape`` (as ``declared_by`` says) when reading it, at ``bytes_per_value`` bytes per value,
    would not fit: ``<source>: <what> (its header) needs an estimated … GiB, more than …; <advice>``.

    Example:
        >>> check_declared("scan.nii.gz", "a 100000×100000×100000 float32 volume", (10**5,) * 3, 20, "crop it")
        Traceback (most recent call last):
        ...
        inr.errors.InputError: scan.nii.gz: a 100000×100000×100000 float32 volume (its header) needs an estimated ...
    """
    count = math.prod(int(s) for s in shape)
    check_memory(f"{source}: {what} ({declared_by})", int(count * bytes_per_value), advice=advice)


def npy_header(stream: IO[bytes], source: str) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of the ``.npy`` stream's header (numpy's format, versions 1 and 2), the stream left at its data."""
    try:
        version = np.lib.format.read_magic(stream)
        read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read is None:
            raise ValueError(f"unsupported .npy format version {version}")
        shape, _, dtype = read(stream)
    except (ValueError, OSError, SyntaxError) as exc:
        raise InputError(f"{source}: not a readable .npy array ({type(exc).__name__}: {exc})") from None
    return tuple(int(s) for s in shape), dtype


def npz_member_header(archive: Any, name: str, source: str) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of array ``name`` of an opened ``np.load(….npz)``, read from its member's header only."""
    members = archive.zip.namelist()
    member = f"{name}.npy" if f"{name}.npy" in members else name
    with archive.zip.open(member) as stream:
        return npy_header(stream, f"{source}: array {name!r}")


def check_npz_member(archive: Any, name: str, source: str, bytes_beyond: float, advice: str) -> None:
    """Refuse array ``name`` of an ``.npz`` before it is inflated: its values at their own size plus ``bytes_beyond``
    per value (the conversions after reading)."""
    shape, dtype = npz_member_header(archive, name, source)
    check_declared(source, f"array {name!r} of {shape_text(shape)} {dtype}", shape, dtype.itemsize + bytes_beyond, advice)


def read_json(path: Union[str, Path], what: str, label: str = "", max_bytes: int = MAX_JSON_BYTES) -> Any:
    """The JSON document at ``path`` (``what`` names it in messages, ``label`` prefixes them: ``--camera_path x.json``),
    refused in one line when it is missing, larger than ``max_bytes`` (before it is read), nested beyond the parser's
    recursion limit, not text or not JSON."""
    path = Path(path)
    head = label or str(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputError(f"{head}: file not found") from None
    if path.is_dir():
        raise InputError(f"{head}: is a directory, not {what}")
    if size > max_bytes:
        raise InputError(f"{head}: {size / 2**20:.1f} MiB, more than the {max_bytes / 2**20:.1f} MiB {what} may have")
    try:
        return json.loads(path.read_text())
    except RecursionError:
        raise InputError(f"{head}: nested too deeply to be {what}") from None
    except UnicodeDecodeError:
        raise InputError(f"{head}: not a text file") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{head}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
    except OSError as exc:
        raise InputError(f"{head}: cannot be read ({exc.strerror or exc})") from None
