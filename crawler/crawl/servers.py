"""`ServerGate`: politeness.per_server in the launch loop. Hosts are grouped by the address their
name resolves to, and a due host starts only when its server may be sent a request too
(crawler.politeness's `ServerPacing` decides); otherwise it waits in the schedule for the
server's next start, parked while the server is at its in-flight cap, or until its name is
resolved (one lookup per name, run as one of the scheduler's tasks)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

from crawler.crawl.clock import CrawlClock
from crawler.crawl.hosts import Host
from crawler.politeness import HostSchedule, ServerPacing

__all__ = ["ServerGate"]


class ServerGate:
    """Whether a due host's server may be sent a request now, and what waits on it meanwhile."""

    __slots__ = (
        "_clock",
        "_parked",
        "_pinned",
        "_reschedule",
        "_resolving",
        "_run",
        "_schedule",
        "servers",
    )

    def __init__(
        self,
        servers: ServerPacing,
        pinned: dict[str, str],
        *,
        schedule: HostSchedule,
        clock: CrawlClock,
        run: Callable[[Coroutine[Any, Any, None]], None],
        reschedule: Callable[[Host, float | None], None],
    ) -> None:
        """`run(work)`: run `work` as one of the crawl's tasks (a lookup keeps the crawl from
        ending). `reschedule(host, None)`: put a host back in the schedule once it may start."""
        self.servers = servers
        self._pinned = pinned
        self._schedule = schedule
        self._clock = clock
        self._run = run
        self._reschedule = reschedule
        self._resolving: set[str] = set()
        """Origins whose name is being looked up."""
        self._parked: dict[str, list[Host]] = {}
        """Per server at its in-flight cap, the hosts due meanwhile: scheduled again when one of
        its requests ends."""

    def allows(self, host: Host, now: float) -> bool:
        """Whether `host`'s server may be sent a request now; if not, the host waits (in the
        schedule for the server's next start, parked while the server is at its in-flight cap,
        or until its name is resolved)."""
        if host.server is None:
            server = self._known_address(host)
            if server is None:
                # One lookup per name, however often the host comes due meanwhile (a link
                # queued to it schedules it again): the lookup's end schedules it.
                if host.origin not in self._resolving:
                    self._resolving.add(host.origin)
                    self._run(self._resolve(host))
                return False
            self._set_server(host, server)
        assert host.server is not None
        at = self.servers.ready_at(host.server, now)
        if at is None:
            self._parked.setdefault(host.server, []).append(host)
            return False
        if at > now:
            self._schedule.put(host.origin, at)
            return False
        return True

    def started(self, server: str, now: float) -> None:
        """A request to `server` starts at `now`."""
        self.servers.on_start(server, now)

    def ended(self, server: str) -> None:
        """A request to `server` ended: the hosts parked while it was at its cap are scheduled
        again."""
        self.servers.on_end(server, self._clock.now())
        for parked in self._parked.pop(server, ()):
            self._reschedule(parked, None)

    def _known_address(self, host: Host) -> str | None:
        """The address of `host`'s name without a lookup: fetch.resolve's, or an IP literal."""
        name = urlsplit(host.origin).hostname or ""
        pinned = self._pinned.get(name)
        if pinned is not None:
            return pinned
        try:
            return str(ipaddress.ip_address(name))
        except ValueError:
            return None

    def _set_server(self, host: Host, server: str) -> None:
        host.server = server
        self.servers.join(server, host.origin)

    async def _resolve(self, host: Host) -> None:
        """Look `host`'s name up once; the first address is its server. A name that does not
        resolve is a group of its own: its fetch says why it fails."""
        parts = urlsplit(host.origin)
        name = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        server = name
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                name, port, type=socket.SOCK_STREAM
            )
            if infos:
                server = str(infos[0][4][0])
        except OSError:
            pass
        self._resolving.discard(host.origin)
        self._set_server(host, server)
        self._reschedule(host, None)

    def __repr__(self) -> str:
        return (
            f"ServerGate({len(self._resolving)} resolving, "
            f"{sum(map(len, self._parked.values()))} hosts parked)"
        )
