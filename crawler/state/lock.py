"""One crawl per data directory: an OS lock on DIR/lock.

`flock` belongs to the open file, so the kernel lets go of it when the process ends, however it
ends: a crawl killed with SIGKILL leaves the file behind but never a stale lock. The file holds
the process id of the holder, for the message a second crawl gets. Readers (`crawl search`,
`crawl export`) take no lock: SQLite's WAL lets them read while a crawl writes.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from crawler.errors import StateError

__all__ = ["LOCK_NAME", "DataDirLock"]

LOCK_NAME = "lock"


class DataDirLock:
    """Held from construction until `release()` (or the end of a `with` block, or the process)."""

    def __init__(self, directory: Path) -> None:
        """Raises StateError when another crawl holds the directory or it cannot be made."""
        self.directory = directory
        self.path = directory / LOCK_NAME
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise StateError(f"cannot lock data directory {directory}: {error.strerror}") from error
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = self._holder()
            os.close(self._fd)
            self._fd = None
            if isinstance(error, BlockingIOError):
                raise StateError(
                    f"data directory {directory} is in use by another crawl{holder}; wait for it "
                    "to end or give another --data directory"
                ) from error
            raise StateError(f"cannot lock data directory {directory}: {error.strerror}") from error
        os.ftruncate(self._fd, 0)
        os.write(self._fd, f"{os.getpid()}\n".encode())

    def _holder(self) -> str:
        assert self._fd is not None
        try:
            text = os.pread(self._fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            return ""
        return f" (process {text})" if text.isdigit() else ""

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Let go of the lock. Idempotent. The file stays: removing it would race a crawl that
        has just opened it."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the only descriptor ends the flock

    def __enter__(self) -> DataDirLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"DataDirLock({self.directory}, {'held' if self.held else 'released'})"
