"""What a benchmark ran on, for its report: CPU, cores, Python and package versions."""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import platform
from pathlib import Path
from typing import Any


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def version_of(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine(*distributions: str) -> dict[str, Any]:
    """CPU, cores, Python, and the versions of `distributions` (and of crawler)."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        **{name: version_of(name) for name in (*distributions, "crawler")},
    }


def cpu_times() -> tuple[int, int]:
    """(all, stolen) CPU time of the machine so far, in clock ticks, from /proc/stat: on a
    virtual machine the host may run other guests on our cores ("steal"), and a run that lost a
    fifth of its CPU that way measures the host, not the code. (0, 0) where there is no
    /proc/stat."""
    fields = _cpu_fields()
    return sum(fields[:8]), fields[7] if len(fields) > 7 else 0


def steal_share(before: tuple[int, int], after: tuple[int, int]) -> float | None:
    """The share of the machine's CPU time between two `cpu_times()` that the host took for
    other guests; None where it cannot be told."""
    total = after[0] - before[0]
    return (after[1] - before[1]) / total if total > 0 else None


def busy_times() -> tuple[int, int]:
    """(all, busy) CPU time of the machine so far, in clock ticks, from /proc/stat: busy is all
    but idle and iowait, whatever process it went to (a web server, the kernel's writeback of a
    file the tool wrote). (0, 0) where there is no /proc/stat."""
    fields = _cpu_fields()
    every = sum(fields[:8])
    return every, every - sum(fields[3:5])


def _cpu_fields() -> list[int]:
    """The machine's CPU time so far, in clock ticks, from /proc/stat's first line: user nice
    system idle iowait irq softirq steal [guest guest_nice: counted in user, nice]; [] where
    there is no /proc/stat."""
    try:
        with open("/proc/stat") as stat:
            return [int(value) for value in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return []


def busy_share(before: tuple[int, int], after: tuple[int, int]) -> tuple[float, float] | None:
    """Between two `busy_times()`: the machine's busy CPU in core-seconds, and its share of all
    the cores' time (1.0: every core busy throughout); None where it cannot be told."""
    every = after[0] - before[0]
    if every <= 0:
        return None
    busy = after[1] - before[1]
    return busy / os.sysconf("SC_CLK_TCK"), busy / every


def compile_bytecode() -> None:
    """Compile crawler's modules to bytecode now, as `pip install` does for an installed package
    (and as the first run of an editable install does, unless PYTHONDONTWRITEBYTECODE is set, as
    it is on these machines). Without it every run of ours compiled its 200 modules from source:
    0.4 s of CPU in each of its processes (the crawl, its page reader, its index writer), which
    Scrapy, installed with its bytecode, never paid."""
    import compileall

    import crawler

    compileall.compile_dir(Path(crawler.__file__).parent, quiet=2)
