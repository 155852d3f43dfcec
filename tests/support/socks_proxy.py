"""A real SOCKS5 proxy for tests: Debian's microsocks, on a free loopback port, asking for a user
name and password (RFC 1929), its connections to the targets made from an address of its own
(`-b`, 127.0.2.x), so that a site can tell a request that came through it from one that did not.
It logs each connection it makes ("connected to HOST:PORT", the host as it was asked for: a name
means the proxy resolved it). Stopped by itself when the test ends (and with the test run).

`MICROSOCKS` is None where the binary is absent (apt-get install microsocks); tests then skip,
saying so.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from support.forward_proxy import _die_with_parent, _free_port, listening

__all__ = ["MICROSOCKS", "SocksProxy", "socks_proxy"]

MICROSOCKS = shutil.which("microsocks") or (
    "/usr/bin/microsocks" if Path("/usr/bin/microsocks").is_file() else None
)


@dataclass
class SocksProxy:
    port: int
    log: Path
    source: str
    """The address its connections to the targets come from."""

    def url(self, scheme: str = "socks5") -> str:
        return f"{scheme}://127.0.0.1:{self.port}"

    def connected(self) -> list[str]:
        """HOST:PORT of each connection it made, as the client asked for it."""
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return re.findall(r"connected to (\S+)", text)


@contextlib.contextmanager
def socks_proxy(
    directory: Path, username: str, password: str, source: str = "127.0.2.9"
) -> Iterator[SocksProxy]:
    """microsocks on 127.0.0.1, asking for `username` and `password`, connecting from
    `source`."""
    assert MICROSOCKS is not None
    port = _free_port()
    log = directory / "microsocks.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                MICROSOCKS,
                "-i",
                "127.0.0.1",
                "-p",
                str(port),
                "-u",
                username,
                "-P",
                password,
                "-b",
                source,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )
    with listening(process, port, "microsocks", log):
        yield SocksProxy(port, log, source)
