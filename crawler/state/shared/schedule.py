"""`SharedSchedule`: one worker's buffered conversation with the shared crawl.

The crawl does not wait on the server for each link or URL: offers, releases and done-marks
wait in buffers, and `tick` sends them together with the next claim in one write, one round
trip (../shared/design/distributed.md, section 5.1: a command per link would cost more CPU than
the page step). Order matters, and is kept within a tick: offers first, so that a URL's lease
never ends before the links its page held are queued (else another worker could see nothing
queued, nothing leased, and end the crawl); then releases, before the claim, which may take the
host just let go; then done-marks; then the claim.

The heartbeat says the worker is alive for `heartbeat_ttl` seconds. A worker whose heartbeat
lapsed may have been reaped, its hosts given to others: so it must not start a request after
`alive_until` (counted on its own monotonic clock from when it *sent* the last heartbeat that was
answered), and a crawl that cannot renew it stops.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Sequence

from crawler.errors import SharedStateError
from crawler.state.shared.cookies import SharedCookies
from crawler.state.shared.fresh import SharedFreshness
from crawler.state.shared.library import (
    DEFAULT_BUCKETS,
    Claim,
    ClusterStatus,
    Release,
    SharedCrawl,
    claim_from_reply,
    load_library,
    url_digest,
)
from crawler.state.shared.resp import ReplyError, RespConnection

__all__ = ["GUARD_MARGIN", "RECONNECT_FOR", "SharedSchedule", "WorkerLapsedError", "new_worker_id"]

GUARD_MARGIN = 0.5
"""Seconds before its heartbeat could lapse that a worker stops starting requests."""
EXPIRY_MARGIN = 0.05
"""A heartbeat sent later than this before the last one expires comes too late: the worker may
have been reaped meanwhile (its server-side key gone), and must rejoin rather than renew."""


class WorkerLapsedError(SharedStateError):
    """This worker's heartbeat lapsed (the process was paused, or its loop held, past the TTL):
    the others may have given its hosts and URLs back. It must drop what it held and rejoin."""


RECONNECT_FOR = 120.0
"""Seconds a worker tries to reach its server again after losing it, before it stops."""
RECONNECT_WAIT = (0.1, 2.0)
"""First and longest wait between two tries (doubling)."""


def new_worker_id() -> str:
    """host:pid:random: a restarted process is a new worker, and its predecessor is reaped."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class SharedSchedule:
    def __init__(
        self,
        crawl: SharedCrawl,
        buckets: int,
        *,
        heartbeat_ttl: float,
        lease: float,
        default_interval: float,
    ) -> None:
        self.crawl = crawl
        self.buckets = buckets
        self.heartbeat_ttl = heartbeat_ttl
        self.lease = lease
        self.default_interval = default_interval
        self._releases: list[list[object]] = []
        self._holds: list[object] = []
        self._done: list[str] = []
        self._offers: list[object] = []
        self._seeds: list[str] = []
        self.alive_until = 0.0
        """Monotonic time after which this worker may have been reaped."""
        self.expires_at = 0.0
        """When the last heartbeat expires on the server, at the earliest (monotonic)."""
        self.server_time = (0.0, 0.0)
        """The server's TIME in epoch seconds, and this process's monotonic clock then."""
        self._beating: asyncio.Task[None] | None = None
        self._back = asyncio.Event()
        self._back.set()
        self.ticks = 0
        self.recoveries = 0
        self.info = ""
        """What the heartbeat tells of this worker (crawler.monitor.workers), beside its id."""
        self.cookies: SharedCookies | None = None
        """The crawl's cookie jar, shared (fetch.cookies): sent and read at each tick."""
        self.fresh: SharedFreshness | None = None
        """What a recrawl reads and learns (crawler.state.shared.fresh): sent at each tick."""

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        prefix: str,
        heartbeat_ttl: float,
        lease: float,
        default_interval: float,
        buckets: int = DEFAULT_BUCKETS,
        worker: str | None = None,
    ) -> SharedSchedule:
        """Connect, load the library, join the crawl (made if new) and start the heartbeat."""
        connection = await RespConnection.open(url)
        try:
            await load_library(connection)
            crawl = SharedCrawl(connection, prefix, worker or new_worker_id())
            schedule = cls(
                crawl,
                await crawl.open(buckets),
                heartbeat_ttl=heartbeat_ttl,
                lease=lease,
                default_interval=default_interval,
            )
            await schedule.beat()
        except BaseException:
            connection.close()
            raise
        schedule._beating = asyncio.get_running_loop().create_task(schedule._beat_forever())
        return schedule

    # --- buffers -----------------------------------------------------------------------------

    def offer(self, url: str, origin: str, item: str) -> None:
        bucket, digest = url_digest(url, self.buckets)
        self._offers += (bucket, digest, origin, item)

    def release(self, release: Release) -> None:
        self._releases.append(release.args(self.crawl.worker))

    def hold(self, origin: str, interval_us: int, timing: str, robots: str, robots_at: str) -> None:
        """Keep a held host, and tell the server its interval, its timing record and its
        robots.txt entry."""
        self._holds += (origin, interval_us, timing, robots, robots_at)

    def done(self, item: str) -> None:
        self._done.append(item)

    def add_seed(self, url: str) -> None:
        """A URL whose host joins every worker's scope (where a seed's redirects led)."""
        self._seeds.append(url)

    @property
    def buffered(self) -> bool:
        fresh = self.fresh is not None and self.fresh.buffered
        return fresh or bool(
            self._releases or self._holds or self._done or self._offers or self._seeds
        )

    # --- round trips ---------------------------------------------------------------------------

    async def tick(
        self,
        want: int,
        *,
        max_pages: int = 0,
        max_pages_per_host: int = 0,
        ahead: float = 0.0,
        per_host: int = 1,
    ) -> Claim | None:
        """Send what is buffered and, when `want` > 0, claim up to that many hosts due within
        `ahead` seconds, with up to `per_host` URLs each."""
        crawl = self.crawl
        prefix = crawl.prefix
        commands: list[list[object]] = []
        cookies = self.cookies
        put = cookies.put(prefix) if cookies is not None else None
        if put is not None:  # before the offers of the pages whose answers set them
            commands.append(put)
        fresh = self.fresh
        recorded, revisits, ended = fresh.take(prefix) if fresh is not None else ([], [], [])
        commands += recorded  # before the done-marks: a lease ends once its fetch is recorded
        if self._seeds:  # before the offers: no worker reads a page of the host out of scope
            commands.append(["SADD", f"{prefix}seeds", *self._seeds])
        if self._offers:
            commands.append(["FCALL", "crawler_offer", 0, prefix, *self._offers])
        commands += revisits
        if self._holds:
            commands.append(["FCALL", "crawler_hold", 0, prefix, crawl.worker, *self._holds])
        commands += (["FCALL", "crawler_release", 0, prefix, *args] for args in self._releases)
        if self._done:
            commands.append(["FCALL", "crawler_done", 0, prefix, crawl.worker, *self._done])
        commands += ended
        claiming = want > 0 and time.monotonic() < self.alive_until
        claim_at = len(commands)
        if claiming:
            commands.append(
                [
                    "FCALL",
                    "crawler_claim",
                    0,
                    prefix,
                    crawl.worker,
                    round(self.lease * 1e6),
                    want,
                    max_pages,
                    max_pages_per_host,
                    round(ahead * 1e6),
                    per_host,
                ]
            )
        sent = (self._done, self._offers, self._seeds)
        self._releases, self._done, self._offers, self._seeds = [], [], [], []
        self._holds = []
        if not commands:
            return None
        hearing = fresh.read(prefix) if fresh is not None else None
        if hearing is not None:  # after the claim: the lastmods heard of its URLs (as cookies)
            commands.append(hearing)
        heard_at = len(commands) - 1
        if cookies is not None:  # after the claim: the cookies its URLs' finders stored
            commands.append(cookies.read(prefix))
        self.ticks += 1
        try:
            replies = await crawl.connection.pipeline(commands)
        except SharedStateError:
            # The server may not have them: offers and done-marks are sent again once it is back
            # (both are idempotent). Releases are void then (`recover`).
            self._done = sent[0] + self._done
            self._offers = sent[1] + self._offers
            self._seeds = sent[2] + self._seeds
            if cookies is not None:
                cookies.unsent()
            if fresh is not None:
                fresh.unsent()
            raise
        for reply in replies:
            if isinstance(reply, ReplyError):
                if str(reply).startswith("NOWORKER"):
                    raise WorkerLapsedError(f"state server {crawl.connection.address}: {reply}")
                raise SharedStateError(f"state server {crawl.connection.address}: {reply}")
        if cookies is not None:
            cookies.take(replies[-1])
        if fresh is not None and hearing is not None:
            fresh.take_heard(replies[heard_at])
        return claim_from_reply(replies[claim_at]) if claiming else None

    async def read_cookies(self) -> None:
        """Take the crawl's cookie jar as the server holds it (on joining the crawl)."""
        if self.cookies is None:
            return
        try:
            reply = await self.crawl.connection.execute(*self.cookies.read(self.crawl.prefix))
        except ReplyError as error:
            raise SharedStateError(
                f"state server {self.crawl.connection.address}: {error}"
            ) from None
        self.cookies.take(reply)

    async def beat(self) -> None:
        """Renew the heartbeat; WorkerLapsedError when the last one may have expired already."""
        sent = time.monotonic()
        if self.expires_at and sent >= self.expires_at - EXPIRY_MARGIN:
            raise WorkerLapsedError(
                f"this worker's heartbeat lapsed ({sent - self.expires_at + self.heartbeat_ttl:.1f}"
                f" s since the last, for a TTL of {self.heartbeat_ttl:g} s)"
            )
        server_us = await self.crawl.heartbeat(
            round(self.heartbeat_ttl * 1000), self.info or self.crawl.worker
        )
        self.alive_until = sent + self.heartbeat_ttl - GUARD_MARGIN
        self.expires_at = sent + self.heartbeat_ttl
        # The server's TIME was read somewhere between sending and hearing back: the middle.
        self.server_time = (server_us / 1e6, (sent + time.monotonic()) / 2)

    async def _beat_forever(self) -> None:
        """Renew the heartbeat three times a TTL, and reap dead workers once a TTL. While the
        server is lost, wait for `recover`."""
        beats = 0
        while True:
            await asyncio.sleep(self.heartbeat_ttl / 3)
            await self._back.wait()
            try:
                await self.beat()
                beats += 1
                if beats % 3 == 0:
                    await self.crawl.reap(round(self.default_interval * 1e6))
            except WorkerLapsedError:
                self._back.clear()  # the claim loop rejoins (`recover`)
            except SharedStateError:
                if not self.lost:
                    raise

    @property
    def lost(self) -> bool:
        """The connection to the server is gone (the server stopped, or the network)."""
        return self.crawl.connection.closed

    async def recover(self, url: str) -> None:
        """After the server was lost, or this worker's heartbeat lapsed: stop counting as alive,
        reach the server again if need be (for up to RECONNECT_FOR seconds), and rejoin the
        crawl. A server that restarted may have lost its
        last writes, claims among them: the first worker back reaps every worker and holds every
        host a full interval (crawler_recover). Whatever happened, this worker gives back what
        it held (`leave`: its hosts wait an interval, its leased URLs go back to their queues)
        and starts afresh; the releases it had not sent are void. SharedStateError when the
        server stays away, or came back without the crawl (its data lost)."""
        self.alive_until = self.expires_at = 0.0
        self._back.clear()
        self.recoveries += 1
        if not self.lost:  # the heartbeat lapsed, the server is there: rejoin
            await self.crawl.leave(round(self.default_interval * 1e6))
            self._releases = []
            await self.beat()
            self._back.set()
            return
        deadline = time.monotonic() + RECONNECT_FOR
        wait, longest = RECONNECT_WAIT
        address = self.crawl.connection.address
        while True:
            try:
                connection = await RespConnection.open(url, timeout=min(5.0, self.heartbeat_ttl))
                break
            except SharedStateError:
                if time.monotonic() + wait > deadline:
                    raise SharedStateError(
                        f"the state server {address} was lost and did not come back in "
                        f"{RECONNECT_FOR:g} s"
                    ) from None
                await asyncio.sleep(wait)
                wait = min(longest, wait * 2)
        self.crawl.connection = connection
        await load_library(connection)
        if not await self.crawl.has_crawl():
            raise SharedStateError(
                f"the state server {address} came back without this crawl's state: was its "
                "persistence off (appendonly no)? The crawl cannot go on from it"
            )
        interval_us = round(self.default_interval * 1e6)
        if self.cookies is not None:
            self.cookies.seen = 0  # the server may have lost changes: the whole jar again
        await self.crawl.recover(interval_us)
        await self.crawl.leave(interval_us)
        self._releases = []
        await self.beat()
        self._back.set()

    def check_alive(self) -> None:
        """SharedStateError when the heartbeat task died or the worker may have been reaped."""
        beating = self._beating
        if beating is not None and beating.done() and not beating.cancelled():
            error = beating.exception()
            raise SharedStateError(f"the heartbeat to the state server stopped: {error}")
        now = time.monotonic()
        if self.expires_at and now >= self.expires_at - EXPIRY_MARGIN:
            raise WorkerLapsedError(
                f"no heartbeat reached the state server {self.crawl.connection.address} for "
                f"{self.heartbeat_ttl:g} s: this worker may have been given up by the others"
            )

    async def status(self) -> ClusterStatus:
        return await self.crawl.status()

    async def seeds(self, new: Sequence[str]) -> list[str]:
        """Add `new` to the crawl's seeds; every worker's seeds so far."""
        key = f"{self.crawl.prefix}seeds"
        commands: list[list[object]] = [["SADD", key, url] for url in new]
        commands.append(["SMEMBERS", key])
        replies = await self.crawl.connection.pipeline(commands)
        for reply in replies:
            if isinstance(reply, ReplyError):
                raise SharedStateError(f"state server {self.crawl.connection.address}: {reply}")
        return sorted(seed.decode() for seed in replies[-1])

    async def close(self) -> None:
        """Send what is buffered, leave the crawl (what this worker still holds or leases goes
        back), and close the connection."""
        if self._beating is not None:
            self._beating.cancel()
            await asyncio.gather(self._beating, return_exceptions=True)
        try:
            if not self.crawl.connection.closed:
                await self.tick(0)
                await self.crawl.leave(round(self.default_interval * 1e6))
        finally:
            self.crawl.connection.close()

    def __repr__(self) -> str:
        return f"SharedSchedule({self.crawl!r}, {self.ticks} ticks, {self.recoveries} recoveries)"
