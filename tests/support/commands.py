"""The `crawl` command as a user runs it: a subprocess of this interpreter, its exit status and
what it wrote."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def crawl_command(
    *args: str | bytes, cwd: Path | None = None, stdin: str | None = None
) -> tuple[int, str, str]:
    """`python -m crawler ARGS` to its end (60 s at most): (exit status, stdout, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "crawler", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=60,
        cwd=cwd,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr
