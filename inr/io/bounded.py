"""Reading a user's file within bounds: the sizes a file declares — a header's shape, an archive member's, a JSON
document's length — checked before anything is allocated or decompressed, and refused in one line that says
what reading it would take.

A compressed file (a ``.nii.gz``, a deflated PNG, an ``.npz``, a gzip HDF5 dataset) can declare and hold a
thousand times its size: a few KiB that inflate to gigabytes. Every reader therefore reads the header first,
estimates the memory of reading and converting the data (the readers' own factors, measured), and refuses
it with ``inr.errors.check_memory`` (more than half of what the process may allocate) before touching the data.
"""

from __future__ import annotations

import io
import json
import math
import os
import struct
import zipfile
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


NPY_MAX_HEADER = 10_000  # bytes: numpy's bound on the header of a file it does not trust (np.load's max_header_size)
NPY_LENGTH_FIELD = {(1, 0): "<H", (2, 0): "<I"}  # the header's length field of each format version numpy writes


def npy_header(stream: IO[bytes], source: str) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of the ``.npy`` stream's header (numpy's format, versions 1 and 2), the stream left at its data;
    refused in one line saying what is wrong with it: no magic string, another version, a header longer than numpy
    reads from an untrusted file or cut short, one that does not parse, a negative dimension, Python objects.

    Example:
        >>> import io
        >>> header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (-5, 3), }".ljust(117) + b"\\n"
        >>> npy_header(io.BytesIO(b"\\x93NUMPY\\x01\\x00" + struct.pack("<H", 118) + header), "a.npy")
        Traceback (most recent call last):
        ...
        inr.errors.InputError: a.npy: its .npy header declares a negative dimension, shape (-5, 3)
    """
    start = stream.read(8)
    if len(start) < 8 or not start.startswith(b"\x93NUMPY"):
        raise InputError(f"{source}: not a .npy array (it does not start with numpy's magic string)")
    version = (start[6], start[7])
    if version not in NPY_LENGTH_FIELD:
        raise InputError(f"{source}: .npy format version {version[0]}.{version[1]}; versions 1.0 and 2.0 are read")
    length_field = NPY_LENGTH_FIELD[version]
    field = stream.read(struct.calcsize(length_field))
    length = struct.unpack(length_field, field)[0] if len(field) == struct.calcsize(length_field) else None
    if length is not None and length > NPY_MAX_HEADER:
        raise InputError(
            f"{source}: its .npy header is {length:,} bytes long, more than the {NPY_MAX_HEADER:,} numpy reads from a file "
            "it does not trust"
        )
    text = stream.read(length or 0)
    if length is None or len(text) < length:
        raise InputError(f"{source}: its .npy header is cut short (the file ends inside it)")
    read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}[version]
    try:
        shape, _, dtype = read(io.BytesIO(field + text))
    except (ValueError, SyntaxError, TypeError) as exc:
        raise InputError(f"{source}: its .npy header does not parse ({first_line(exc)})") from None
    if any(int(s) < 0 for s in shape):
        raise InputError(f"{source}: its .npy header declares a negative dimension, shape {tuple(shape)}")
    if dtype.hasobject:
        raise InputError(f"{source}: its .npy header declares Python objects ({dtype}), which only pickle reads; not loaded")
    return tuple(int(s) for s in shape), dtype


def check_npy_data(source: str, shape: Sequence[int], dtype: np.dtype, held: int) -> None:
    """Refuse an array whose header declares more data than follows it (a truncated file, or a lying header):
    numpy would fail with 'mmap length is greater than file size' or 'cannot reshape'."""
    needed = math.prod(shape) * dtype.itemsize
    if held < needed:
        raise InputError(
            f"{source}: its .npy header declares {shape_text(shape)} {dtype} ({needed:,} bytes) but {held:,} bytes of data "
            "follow it; the file is truncated or its header wrong"
        )


def npy_file_header(path: Union[str, Path], source: str) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of a ``.npy`` file's header (``npy_header``), checked against the data the file holds."""
    with open(path, "rb") as stream:
        shape, dtype = npy_header(stream, source)
        held = os.fstat(stream.fileno()).st_size - stream.tell()
    check_npy_data(source, shape, dtype, held)
    return shape, dtype


def open_npz(path: Union[str, Path], source: str) -> Any:
    """``np.load`` of an ``.npz`` (no pickles), refused in one line when the file is not a zip archive (numpy would
    take it for a pickle and say so)."""
    if not zipfile.is_zipfile(path):
        raise InputError(f"{source}: not a readable .npz archive (not a zip file)")
    return np.load(path, allow_pickle=False)


def npz_member_header(archive: Any, name: str, source: str) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of array ``name`` of an opened ``np.load(….npz)``, read from its member's header only and
    checked against the member's size in the zip directory."""
    members = archive.zip.namelist()
    member = f"{name}.npy" if f"{name}.npy" in members else name
    label = f"{source}: array {name!r}"
    with archive.zip.open(member) as stream:
        shape, dtype = npy_header(stream, label)
        held = archive.zip.getinfo(member).file_size - stream.tell()
    check_npy_data(label, shape, dtype, held)
    return shape, dtype


def check_npz_member(archive: Any, name: str, source: str, bytes_beyond: float, advice: str) -> None:
    """Refuse array ``name`` of an ``.npz`` before it is inflated: its values at their own size plus ``bytes_beyond``
    per value (the conversions after reading)."""
    shape, dtype = npz_member_header(archive, name, source)
    check_declared(source, f"array {name!r} of {shape_text(shape)} {dtype}", shape, dtype.itemsize + bytes_beyond, advice)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (200 characters at most), or its type's name when it has none:
    a reader's refusal stays one line.

    Example:
        >>> first_line(ValueError("Header info length (20084) is large\\nTo allow loading, ..."))
        'Header info length (20084) is large'
    """
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


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
