"""A real forward proxy for tests: Debian's tinyproxy, on a free loopback port with a config of
the test's own, asking for Basic credentials, logging every request it relays (CONNECT
included), stopped by itself when the test ends (and with the test run, should that be killed).

`TINYPROXY` is None where the binary is absent (apt-get install tinyproxy); tests then skip,
saying so.
"""

from __future__ import annotations

import contextlib
import ctypes
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TINYPROXY", "ForwardProxy", "forward_proxy"]

TINYPROXY = shutil.which("tinyproxy") or (
    "/usr/bin/tinyproxy" if Path("/usr/bin/tinyproxy").is_file() else None
)
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def listening(process: subprocess.Popen[bytes], port: int, name: str, log: Path) -> Iterator[None]:
    """While `process` (a proxy started on 127.0.0.1:`port`) runs: entered once it accepts
    connections (its `log` in the error if it never does), and stopped on the way out."""
    try:
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start: {log.read_text(errors='replace')}")
            time.sleep(0.02)
        yield
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class ForwardProxy:
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def relayed(self) -> list[str]:
        """The request lines the proxy logged: 'GET http://host:port/path HTTP/1.1', 'CONNECT
        host:port HTTP/1.1'."""
        lines = self.log.read_text(encoding="utf-8", errors="replace").splitlines()
        found = []
        for line in lines:
            _, marker, request = line.partition("Request (file descriptor ")
            if marker:
                found.append(request.partition("): ")[2].strip())
        return found


@contextlib.contextmanager
def forward_proxy(directory: Path, username: str, password: str) -> Iterator[ForwardProxy]:
    """tinyproxy on 127.0.0.1, asking for `username` and `password` (Basic)."""
    assert TINYPROXY is not None
    port = _free_port()
    log = directory / "tinyproxy.log"
    config = directory / "tinyproxy.conf"
    config.write_text(
        f'Port {port}\nListen 127.0.0.1\nTimeout 30\nLogFile "{log}"\nLogLevel Info\n'
        "MaxClients 20\nAllow 127.0.0.0/8\nDisableViaHeader No\n"
        f"BasicAuth {username} {password}\n",
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [TINYPROXY, "-d", "-c", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_die_with_parent,
    )
    with listening(process, port, "tinyproxy", log):
        yield ForwardProxy(port, log)
