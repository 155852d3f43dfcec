"""warcio's own checker over a crawl's WARC files: the tests that read an archive run it first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def warcio_checks(files: list[Path]) -> None:
    """`warcio check` passes every file in `files` (each record's digests, each gzip member)."""
    check = subprocess.run(
        [sys.executable, "-c", "from warcio.cli import main; main()", "check", *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
