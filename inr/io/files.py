"""Files that are either whole or absent: write to a temporary file beside the target, fsync, rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Union


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
