"""The `crawl` command as a user runs it: a subprocess of this interpreter, its exit status and
what it wrote."""

from __future__ import annotations

import asyncio
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


async def run_crawl(*args: str, timeout: float = 120) -> tuple[int, str, str]:
    """`python -m crawler ARGS` to its end, awaited on this process's event loop (which may
    serve what it crawls): (exit status, stdout, stderr)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "crawler",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=timeout)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def start_crawl(*args: str) -> asyncio.subprocess.Process:
    """`crawl` started in a subprocess, its output dropped but for stderr (to read on a failure),
    while this process's event loop serves what it crawls."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "crawler",
        *args,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def crawl_beside_servers(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """`crawl` in a subprocess while this process's event loop serves the LoopbackWeb it crawls."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "crawler",
        *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    given = stdin.encode() if stdin is not None else None
    out, err = await asyncio.wait_for(process.communicate(given), timeout=60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()
