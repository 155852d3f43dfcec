"""Running the pieces of a benchmark: the loopback test web's server (support/testweb.py) and the
tools measured (our `crawl`, the rivals), each in a process of its own that is never left running.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = [
    "ServeError",
    "last_json_line",
    "run_tool",
    "run_tool_measured",
    "start_server",
    "stop_server",
    "tail",
]

TESTWEB = Path(__file__).resolve().parent / "testweb.py"
READY_TIMEOUT_S = 30.0
STDERR_TAIL_LINES = 15


class ServeError(Exception):
    """The test web server did not come up."""


def start_server(root: Path, log: Path, errors_path: Path) -> subprocess.Popen[str]:
    errors = errors_path.open("w")
    server = subprocess.Popen(
        [sys.executable, str(TESTWEB), "serve", str(root), "--log", str(log)],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
    )
    errors.close()
    assert server.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT_S
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([server.stdout], [], [], left)
        line = server.stdout.readline() if readable else ""
        if line.strip() == "ready":
            return server
        if server.poll() is not None or not readable:
            break
    stop_server(server)
    message = errors_path.read_text().strip().splitlines()[-5:]
    raise ServeError("test web server did not start: " + (" | ".join(message) or "no output"))


def stop_server(server: subprocess.Popen[str]) -> None:
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    if server.stdout:
        server.stdout.close()


def run_tool(command: list[str], work: Path, name: str, timeout: float) -> tuple[int | None, float]:
    """Run one tool in `work`, its output in files there; (exit status, or None when it was
    stopped after `timeout`; wall seconds). However this ends, the tool is not left running."""
    status, wall, _ = run_tool_measured(command, work, name, timeout)
    return status, wall


def run_tool_measured(
    command: list[str],
    work: Path,
    name: str,
    timeout: float,
    file_peaks: dict[Path, int] | None = None,
) -> tuple[int | None, float, float]:
    """`run_tool`, and the tool's peak resident memory in MiB: the largest VmHWM of its process
    read while it ran (0.0 when it could not start). Not the reaped child's ru_maxrss: Linux keeps
    that across fork and exec, so a tool would report at least this script's own peak.
    `file_peaks`: files (a WAL, say) whose largest size seen while the tool ran is kept there, in
    bytes, read as often as the memory (every 20 ms)."""
    started = time.monotonic()
    peaks = file_peaks if file_peaks is not None else {}
    with (work / f"{name}.out").open("w") as out, (work / f"{name}.err").open("w") as err:
        try:
            tool = subprocess.Popen(
                command, stdout=out, stderr=err, cwd=work, start_new_session=True
            )
        except OSError as error:
            err.write(f"cannot run {command[0]}: {error}\n")
            return 127, time.monotonic() - started, 0.0
        status: int | None = None
        peak_kib = 0
        try:
            while time.monotonic() - started < timeout:
                peak_kib = max(peak_kib, _high_water_kib(tool.pid))
                for path, peak in peaks.items():
                    with contextlib.suppress(OSError):
                        peaks[path] = max(peak, path.stat().st_size)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    status = tool.wait(timeout=0.02)
                    break
        finally:
            # Its own session: a Ctrl-C reaches us, not it, and we end it and its children.
            end_group(tool)
    return status, time.monotonic() - started, peak_kib / 1024


def _high_water_kib(pid: int) -> int:
    """The peak resident set of process `pid` so far (VmHWM), 0 once it has exited."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


END_STEPS = ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0))


def end_group(
    process: subprocess.Popen[Any], steps: tuple[tuple[int, float], ...] = END_STEPS
) -> None:
    """End `process`, started in a session of its own, with its children: each signal of
    `steps` to its process group in turn, waiting its grace, until it has exited."""
    for sig, grace in steps:
        if process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace)


def tail(path: Path, lines: int = STDERR_TAIL_LINES) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def last_json_line(path: Path) -> dict[str, Any] | None:
    for line in reversed(tail(path, 5).splitlines()):
        with contextlib.suppress(ValueError):
            report = json.loads(line)
            if isinstance(report, dict):
                return report
    return None
