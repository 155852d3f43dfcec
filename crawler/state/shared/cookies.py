"""`SharedCookies`: one cookie jar for all the workers of a shared crawl (fetch.cookies), kept in
the server (library.lua's `cookies`), so that a session one worker opened is every worker's, and
the next run's.

When: at each tick (crawler.state.shared.schedule), in the tick's one round trip. The cookies
this worker's answers set since the last tick go first, before its offers; the others' changes
are read last, after its claim. So a URL found on a page whose answer set a cookie, offered in
the tick that carried the cookie, is claimed by some worker in a later command than the one that
stored the cookie, and that worker's read of the jar, after its claim, has it before it starts
the URL: the login cookie comes with the links of the page behind the login. Sending each
Set-Cookie at once would cost a round trip a cookie, and order nothing better.

Which wins: the server's order of writes. A worker skips its own writes when reading back, and
a cookie it changed since its last write (still to be sent), which will be written later and win.
"""

from __future__ import annotations

import json
from typing import Any

from crawler.http.cookies import CookieJar

__all__ = ["SharedCookies"]


class SharedCookies:
    """The commands that carry `jar`'s changes to the server and the others' back."""

    def __init__(self, jar: CookieJar, worker: str) -> None:
        self.jar = jar
        jar.sharing = True
        self.worker = worker
        self.seen = 0
        """The server's last change number this worker has read up to."""
        self._sending: dict[str, dict[str, Any] | None] = {}
        self._unsent: dict[str, dict[str, Any] | None] = {}

    def put(self, prefix: str) -> list[object] | None:
        """The command sending this worker's changes since the last (None: none)."""
        self._sending = {**self._unsent, **dict(self.jar.take_changes())}
        self._unsent = {}
        if not self._sending:
            return None
        args: list[object] = []
        for key, row in self._sending.items():
            args += (key, "" if row is None else json.dumps(row))
        return ["FCALL", "crawler_cookies_put", 0, prefix, self.worker, *args]

    def unsent(self) -> None:
        """The last `put` may not have reached the server: its changes go again with the next
        (the jar's later ones over them)."""
        self._unsent, self._sending = self._sending, {}

    def read(self, prefix: str) -> list[object]:
        """The command reading the others' changes since the last read."""
        return ["FCALL", "crawler_cookies_since", 0, prefix, self.seen]

    def take(self, reply: Any) -> int:
        """Apply what `read` brought back; how many of the others' changes."""
        self.seen = int(reply[0])
        taken = 0
        for key, value in zip(reply[1::2], reply[2::2], strict=True):
            writer, _, row = value.decode().partition("\n")
            name = key.decode()
            if writer == self.worker or name in self._unsent or self.jar.noted(name):
                continue
            try:
                self.jar.apply(name, json.loads(row) if row else None)
            except ValueError:
                continue  # a row this version cannot read: that cookie is set again
            taken += 1
        return taken

    def __repr__(self) -> str:
        return f"SharedCookies({self.jar!r}, read to change {self.seen})"
