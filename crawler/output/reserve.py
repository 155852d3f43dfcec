"""The room a crawl keeps for its last writes, and the free space it needs to start.

A full disk fails a write of whichever file comes first; what the crawl then holds in memory
(the sinks' last batches, the state's last commit, summary.json) has nowhere to go, and a
resumed crawl would fetch those pages again. So a crawl holds `DiskReserve`: a file of
`output.disk_reserve` bytes, allocated at the start and given back as the crawl ends, for the
writes of the stop: three quarters for the records the sinks kept in memory when the disk
filled (crawler.output.handoff: up to the batches waiting for the writer and the pages in flight
at the fault, some 800 records, 8 MB of index at 3 KB of text a page), then the rest for the
state's last commit, which marks their URLs done, and summary.json. A WARC directory on a
filesystem of its own (DIR/warc a mount, or a symlink to one) gets a reserve there too, all of
it given back with the sinks' share: only the WARC writer's kept batches need it.
`free_space_problem` is the check before a crawl starts (`output.min_free_space`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from crawler.config import OutputConfig
from crawler.output.warc import WARC_DIR

__all__ = ["RESERVE_NAME", "DiskReserve", "free_space_problem", "reserve_for"]

RESERVE_NAME = "disk-reserve"
_BLOCK = 4096


class DiskReserve:
    """DIR/disk-reserve, `size` bytes really allocated (a sparse file would give nothing back).
    Best effort: a disk without that much room holds three quarters of what it has free (a
    crawl resumed on a disk it filled before, with little freed), the rest for the crawl: what
    the sinks may keep at a full disk does not shrink with the disk.
    `sinks_directories`: where sinks write on other filesystems than `directory`'s; each such
    filesystem holds a reserve of `size` too, given back whole with the sinks' share."""

    def __init__(
        self, directory: Path, size: int, *, sinks_directories: Iterable[Path] = ()
    ) -> None:
        self.path = directory / RESERVE_NAME
        self.size = 0
        self.held = False
        self.elsewhere: list[DiskReserve] = []
        if size <= 0:
            return
        devices = {_device(directory)}
        for other in sinks_directories:
            device = _device(other)
            if device is not None and device not in devices:
                devices.add(device)
                self.elsewhere.append(DiskReserve(other, size))
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        except OSError:
            return
        try:
            self._allocate(fd, size)
        finally:
            os.close(fd)
        if not self.held:
            self._unlink()

    def _allocate(self, fd: int, size: int) -> None:
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # what an earlier crawl left counts as free
                room = os.fstatvfs(fd)
                size = min(size, room.f_bavail * room.f_frsize * 3 // 4) // _BLOCK * _BLOCK
                if size > 0:
                    os.posix_fallocate(fd, 0, size)
                    self.size, self.held = size, True
            return
        self.size, self.held = size, True

    def give_sinks_share(self) -> None:
        """Give the sinks' share of the room back, the rest kept for the writes after: the
        state's last commit (crawler.crawl.crawler); that on other filesystems all."""
        for other in self.elsewhere:
            other.release()
        if not self.held:
            return
        with contextlib.suppress(OSError):
            os.truncate(self.path, self.size // 4)

    def release(self) -> bool:
        """Give the room back; True when there was some to give (once)."""
        for other in self.elsewhere:
            other.release()
        held, self.held = self.held, False
        self._unlink()
        return held

    def _unlink(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"DiskReserve({self.path}, {self.size} bytes, {'held' if self.held else 'free'})"


def reserve_for(directory: Path, output: OutputConfig) -> DiskReserve:
    """The reserve of a crawl writing into `directory` (which holds its open sinks): on its
    filesystem, and on its WARC directory's when that is another."""
    warc = [directory / WARC_DIR] if output.warc else []
    return DiskReserve(directory, output.disk_reserve, sinks_directories=warc)


def _device(directory: Path) -> int | None:
    """The filesystem `directory` is on (a symlink followed); None when it cannot be told."""
    try:
        return os.stat(directory).st_dev
    except OSError:
        return None


def free_space_problem(directory: Path, bound: int) -> str | None:
    """What to say when `directory`'s filesystem (that of its nearest existing parent) has fewer
    than `bound` bytes free, not counting a reserve a stopped crawl left; None when it has room."""
    if bound <= 0:
        return None
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        free = shutil.disk_usage(existing).free
    except OSError:
        return None
    reserve = directory / RESERVE_NAME
    with contextlib.suppress(OSError):
        free += reserve.stat().st_blocks * 512
    if free >= bound:
        return None
    return (
        f"the filesystem of data directory {directory} has {_size(free)} free, less than "
        f"output.min_free_space ({_size(bound)}): free space (or lower the bound; 0 turns the "
        "check off) and run the same command again"
    )


def _size(count: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"
