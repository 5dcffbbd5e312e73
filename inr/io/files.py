"""Files that are either whole or absent: write to a temporary file beside the target, fsync, rename; and never
written over the command's own input."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Union

from inr.errors import InputError


def current_umask() -> int:
    """The process umask (read by setting and restoring it: POSIX offers no other way)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def fsync_directory(path: Union[str, Path]) -> None:
    """Make a rename in ``path`` durable (the directory entry itself lives in the directory's data)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # a platform without directory handles; the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path: Union[str, Path], mode: str = "wb") -> Iterator[IO]:
    """Open a temporary file in ``path``'s directory; on success fsync it and rename it onto ``path``.

    A crash, a full disk or an exception inside the block leaves ``path`` as it was (the old file or
    none) and removes the temporary file. The result gets the permissions of a newly created file
    (0666 less the umask), not ``mkstemp``'s 0600. The temporary name starts with ``.`` and ends in
    ``.tmp`` so that globs for ``*.ckpt`` or ``*.yaml`` never pick it up.

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
        >>> with atomic_write(target, "w") as f:
        ...     _ = f.write("whole")
        >>> target.read_text()
        'whole'
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_directory(directory)


def refuse_overwriting(
    out: Union[str, Path, None], inputs: Iterable[Union[str, Path, None]], flag: str = "-o", directory: bool = False
) -> None:
    """Refuse, before any work, an output that is one of the command's inputs: writing it (by renaming a whole new
    file over it) would replace the input with its own result, and the input would be lost. The same file is
    found after links are followed (``os.path.samefile``: a hard link, a symlink, ``./x`` for ``x``); an output
    ``directory`` is refused when an input lies inside it or is it. ``None`` (an option not given) is skipped.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp()); _ = (folder / "x.inr").write_bytes(b"")
        >>> refuse_overwriting(folder / "y.png", [folder / "x.inr"])  # another file: nothing to say
        >>> refuse_overwriting(folder / "." / "x.inr", [folder / "x.inr"])
        Traceback (most recent call last):
        ...
        inr.errors.InputError: -o .../x.inr: is the input .../x.inr; writing it would replace the input, so choose another output
    """
    if out is None or not os.path.exists(out):
        return  # a path that does not exist holds no input (and a directory yet to be made, none inside it)
    for given in inputs:
        if given is None or not os.path.exists(given):
            continue
        if os.path.samefile(out, given):
            raise InputError(f"{flag} {out}: is the input {given}; writing it would replace the input, so choose another output")
        if directory and os.path.isdir(out):
            for parent in Path(os.path.realpath(given)).parents:
                if os.path.samefile(parent, out):
                    raise InputError(
                        f"{flag} {out}: holds the input {given}; writing into it could replace it, so choose another folder"
                    )
