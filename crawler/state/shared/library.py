"""The worker's side of library.lua: loading it into the server, and each of its functions as a
typed call.

Times and durations are whole microseconds: the server's TIME for times (`now_us`, `next_due_us`),
the worker's monotonic clock for the durations it sends (`delay_us`, `interval_us`), so no clock
but the server's is ever compared with another (library.lua says why).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from crawler.errors import SharedStateError
from crawler.state.shared.resp import ReplyError, RespConnection

__all__ = [
    "DEFAULT_BUCKETS",
    "FORMAT",
    "LIBRARY_VERSION",
    "Claim",
    "ClaimedHost",
    "ClusterStatus",
    "Offer",
    "Release",
    "SharedCrawl",
    "claim_from_reply",
    "library_code",
    "load_library",
    "url_digest",
]

FORMAT = "1"
"""The library's and the shared state's format; library.lua's FORMAT says the same."""

DEFAULT_BUCKETS = 1 << 18
"""Seen-set buckets: a bucket stays an intset (about 9 bytes a URL) up to 512 digests, so this
many hold about 130 million URLs compactly (past that a bucket costs about 6 times more)."""


LIBRARY_PARTS = ("library.lua", "fresh.lua")
"""The library's source files, loaded as one library in this order (fresh.lua uses
library.lua's helpers)."""


def _library_source() -> str:
    files = resources.files(__package__)
    return "\n".join(files.joinpath(name).read_text(encoding="utf-8") for name in LIBRARY_PARTS)


LIBRARY_VERSION = f"{FORMAT}-{hashlib.sha256(_library_source().encode()).hexdigest()[:16]}"
"""The state's format and a digest of library.lua: two workers whose code differs in any way
cannot share a crawl, since the server holds one copy of the functions."""


def library_code(version: str = LIBRARY_VERSION) -> str:
    """library.lua as it is loaded: its version written in."""
    return _library_source().replace(
        "local LIBRARY = 'unversioned'", f"local LIBRARY = '{version}'"
    )


def url_digest(url: str, buckets: int) -> tuple[int, int]:
    """(bucket, digest): the URL's 64-bit digest, as a signed integer (so the server keeps it in
    an intset), and the bucket it goes in. Exact in practice: 100 million URLs make about 3 in
    10,000 expected colliding pairs."""
    digest = int.from_bytes(
        hashlib.blake2b(url.encode("utf-8"), digest_size=8).digest(), "big", signed=True
    )
    return digest % buckets, digest


async def load_library(connection: RespConnection) -> None:
    """Load library.lua into the server unless it has it; SharedStateError when the server's
    library is of another format (a worker of another version loaded it: replacing it would
    break that worker's crawl)."""
    try:
        found = await connection.execute("FCALL", "crawler_format", 0)
    except ReplyError as error:
        if "not found" not in str(error).lower():
            raise SharedStateError(
                f"state server {connection.address} cannot run the crawl's functions: {error} "
                "(Valkey, or Redis 7.0 or later, is needed)"
            ) from None
        try:
            await connection.execute("FUNCTION", "LOAD", library_code())
        except ReplyError as load_error:
            if "already exists" not in str(load_error):  # another worker loaded it meanwhile
                raise SharedStateError(
                    f"state server {connection.address} refused the crawl's functions: {load_error}"
                ) from None
        found = await connection.execute("FCALL", "crawler_format", 0)
    if found != LIBRARY_VERSION.encode():
        raise SharedStateError(
            f"state server {connection.address} runs the crawl functions of version "
            f"{found.decode(errors='replace')}, this worker version {LIBRARY_VERSION}: every "
            "worker of a crawl must run the same version of the crawler (stop the workers of "
            "the other version, then unload their functions: FUNCTION DELETE crawler)"
        )


@dataclass(frozen=True, slots=True)
class Offer:
    """A URL to queue if never met: its host's origin and its queue item (crawler.state.codec)."""

    url: str
    origin: str
    item: str


@dataclass(frozen=True, slots=True)
class Release:
    """A held host let go (crawler_release): its next start `delay_us` from the server's now."""

    origin: str
    delay_us: int
    interval_us: int
    """The host's interval, which a reaping waits."""
    timing: str
    """The host's record for its next holder."""
    robots: str = ""
    """Its robots.txt entry as just fetched, version `robots_at` ('' when unchanged)."""
    robots_at: str = ""
    unused: tuple[str, ...] = ()
    """The leases of claimed URLs not fetched, which end."""
    requeued: tuple[str, ...] = ()
    """URLs back to the head of the host's queue, in order (that one among them)."""

    def args(self, worker: str) -> list[object]:
        return [
            worker,
            self.origin,
            max(0, self.delay_us),
            max(0, self.interval_us),
            self.timing,
            self.robots,
            self.robots_at,
            "\n".join(self.unused),  # queue items are JSON: no newline in one
            *self.requeued,
        ]


@dataclass(frozen=True, slots=True)
class ClaimedHost:
    origin: str
    items: tuple[str, ...]
    """The leased URLs' queue items, in queue order: `done` each, or give it back with
    `release`."""
    timing: str
    """The host's timing record as the last holder left it; '' for a host never released."""
    robots_at: str
    """The version of the host's stored robots.txt entry; '' when none is stored."""
    wait_us: int = 0
    """From the server's decision until the host's next allowed start (0: due now)."""


@dataclass(frozen=True, slots=True)
class Claim:
    now_us: int
    """The server's TIME when it decided."""
    next_due_us: int | None
    """The earliest next start left in the schedule, None when no host is scheduled."""
    hosts: tuple[ClaimedHost, ...]
    seeds: int = 0
    """How many seeds the crawl has: every worker's scope is all of them."""
    pending: int = 0
    """The crawl's URLs queued, after the claim."""
    scheduled: int = 0
    """The crawl's hosts in the schedule, after the claim."""


@dataclass(frozen=True, slots=True)
class ClusterStatus:
    now_us: int
    pending: int
    """URLs queued, not leased."""
    leased: int
    """URLs leased to workers and not done."""
    scheduled: int
    """Hosts in the schedule: due, waiting for their next start, or held."""
    due: int
    held: int
    live_workers: int
    workers: int
    """Registered workers, the dead not yet reaped included."""
    next_due_us: int | None
    pages_started: int
    """Page requests started by the whole crawl (what limits.max_pages counts)."""


def _int_or_none(value: bytes) -> int | None:
    return int(float(value)) if value else None


def claim_from_reply(reply: Any) -> Claim:
    """crawler_claim's reply as a `Claim`."""
    hosts = tuple(
        ClaimedHost(
            origin.decode(),
            tuple(item.decode() for item in items),
            timing.decode(),
            robots_at.decode(),
            int(wait),
        )
        for origin, items, timing, robots_at, wait in zip(
            reply[5::5], reply[6::5], reply[7::5], reply[8::5], reply[9::5], strict=True
        )
    )
    return Claim(
        int(reply[0]), _int_or_none(reply[1]), hosts, int(reply[2]), int(reply[3]), int(reply[4])
    )


class SharedCrawl:
    """One worker's calls into one crawl's shared state: `prefix` names the crawl's keys."""

    def __init__(self, connection: RespConnection, prefix: str, worker: str) -> None:
        self.connection = connection
        self.prefix = prefix
        self.worker = worker

    async def _call(self, function: str, *args: object) -> Any:
        try:
            return await self.connection.execute("FCALL", function, 0, self.prefix, *args)
        except ReplyError as error:
            raise SharedStateError(
                f"state server {self.connection.address}: {function}: {error}"
            ) from None

    async def open(self, buckets: int = DEFAULT_BUCKETS) -> int:
        """Make the crawl's run record if new; the crawl's bucket count (the first worker's)."""
        reply = await self._call("crawler_open", FORMAT, buckets, await self.server_run_id())
        assert isinstance(reply, list)
        return int(reply[1])

    async def server_run_id(self) -> str:
        """The server process's run_id: a new one means it restarted."""
        try:
            info = await self.connection.execute("INFO", "server")
        except ReplyError as error:
            raise SharedStateError(f"state server {self.connection.address}: {error}") from None
        for line in info.decode(errors="replace").splitlines():
            if line.startswith("run_id:"):
                return str(line.split(":", 1)[1].strip())
        raise SharedStateError(f"state server {self.connection.address} gives no run_id")

    async def recover(self, default_interval_us: int) -> bool:
        """After the server restarted: reap every worker, hold every host an interval (once per
        restart); True when this call did it."""
        run_id = await self.server_run_id()
        return bool(await self._call("crawler_recover", run_id, max(0, default_interval_us)) == 1)

    async def has_crawl(self) -> bool:
        """Whether the server holds the crawl's run record (a server restarted without its data
        does not)."""
        found = await self.connection.execute("HEXISTS", f"{self.prefix}run", "format")
        return bool(found == 1)

    async def heartbeat(self, ttl_ms: int, info: str = "") -> int:
        """The worker is alive for `ttl_ms` more; the server's TIME."""
        return int(await self._call("crawler_heartbeat", self.worker, ttl_ms, info))

    async def offer(self, offers: Sequence[Offer], buckets: int) -> list[bool]:
        """Queue each URL never met before; True for those."""
        if not offers:
            return []
        args: list[object] = []
        for offer in offers:
            bucket, digest = url_digest(offer.url, buckets)
            args += (bucket, digest, offer.origin, offer.item)
        reply = await self._call("crawler_offer", *args)
        assert isinstance(reply, bytes)
        return [flag == 0x31 for flag in reply]

    async def claim(
        self,
        lease_us: int,
        most: int,
        *,
        max_pages: int = 0,
        max_pages_per_host: int = 0,
        ahead_us: int = 0,
        per_host: int = 1,
    ) -> Claim:
        """Hold up to `most` hosts due within `ahead_us`, for `lease_us`, each with its next
        `per_host` URLs leased."""
        reply = await self._call(
            "crawler_claim",
            self.worker,
            lease_us,
            most,
            max_pages,
            max_pages_per_host,
            ahead_us,
            per_host,
        )
        return claim_from_reply(reply)

    async def release(self, release: Release) -> bool:
        """Let the held host go; False when it was not held by this worker any more."""
        return bool(await self._call("crawler_release", *release.args(self.worker)) == 1)

    async def hold(
        self, origin: str, interval_us: int, timing: str, robots: str, robots_at: str
    ) -> bool:
        """Keep the held host, and record its interval, timing record and robots.txt entry (''
        when unchanged); False when it was not held by this worker any more."""
        reply = await self._call(
            "crawler_hold", self.worker, origin, interval_us, timing, robots, robots_at
        )
        return bool(reply == 1)

    async def robots(self, origins: Sequence[str]) -> list[str]:
        """Each host's stored robots.txt entry, '' when none is."""
        if not origins:
            return []
        reply = await self._call("crawler_robots", *origins)
        return [entry.decode() for entry in reply]

    async def done(self, items: Sequence[str]) -> int:
        if not items:
            return 0
        reply = await self._call("crawler_done", self.worker, *items)
        assert isinstance(reply, int)
        return reply

    async def reap(self, default_interval_us: int) -> int:
        reply = await self._call("crawler_reap", max(0, default_interval_us))
        assert isinstance(reply, int)
        return reply

    async def leave(self, default_interval_us: int) -> int:
        """Leave the crawl: URLs still leased go back to their queues, hosts still held wait an
        interval; how many URLs went back."""
        reply = await self._call("crawler_leave", self.worker, max(0, default_interval_us))
        assert isinstance(reply, int)
        return reply

    async def status(self) -> ClusterStatus:
        reply = await self._call("crawler_status")
        assert isinstance(reply, list)
        now, pending, leased, scheduled, due, held, live, workers, next_due, started = reply
        return ClusterStatus(
            int(now),
            pending,
            leased,
            scheduled,
            due,
            held,
            live,
            workers,
            _int_or_none(next_due),
            started,
        )

    def __repr__(self) -> str:
        return f"SharedCrawl({self.connection.address}, prefix={self.prefix!r}, {self.worker})"
