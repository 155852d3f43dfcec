"""What a test reads of the files a crawl leaves: an SQLite file's WAL."""

from __future__ import annotations

from pathlib import Path


def wal_bytes(path: Path) -> int:
    """The size of the WAL beside the SQLite file `path`; 0 when there is none."""
    wal = path.with_name(path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0
