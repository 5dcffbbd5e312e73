"""One training process per run directory: an exclusive ``flock`` on ``<run>/train.lock``.

The kernel releases the lock when its process ends in any way (even SIGKILL), so a lock is never stale;
the file holds the owner's pid for the message a second process gets.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Optional

from inr.errors import InputError
from inr.io.files import current_umask

try:
    import fcntl
except ImportError:  # no flock on this platform: runs are not locked
    fcntl = None

LOCK_NAME = "train.lock"


class RunInUse(InputError):
    """Another process holds the run directory's lock."""


class RunLock:
    """``acquire()`` the lock of ``run_dir`` (created if missing) or raise ``RunInUse``; ``release()`` drops it.

    Example:
        >>> import tempfile
        >>> run = tempfile.mkdtemp()
        >>> first = RunLock(run).acquire()
        >>> RunLock(run).acquire()
        Traceback (most recent call last):
        ...
        inr.run.lock.RunInUse: ... is in use by another training process (pid ...); wait for it to end or stop it first
        >>> first.release()
        >>> RunLock(run).acquire().release()
    """

    def __init__(self, run_dir: os.PathLike | str) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME
        self._fd: Optional[int] = None

    def acquire(self) -> RunLock:
        if fcntl is None:
            return self
        self.run_dir.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666 & ~current_umask())
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 32).decode(errors="replace").strip()
                os.close(fd)
                pid = f" (pid {holder})" if holder.isdigit() else ""
                raise RunInUse(
                    f"{self.run_dir} is in use by another training process{pid}; wait for it to end or stop it first"
                ) from None
            # the previous owner may have removed the file between our open and flock: lock the file that is there
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
