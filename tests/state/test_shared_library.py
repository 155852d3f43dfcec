"""The shared state's server-side library (crawler/state/shared/library.lua) and its client, run
against a real Valkey server on loopback (tests/support/keyvalue.py): one clock, the server's,
decides every host's next start; a claimed host is held by one worker; a dead worker's hosts and
URLs come back."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.keyvalue import StateServer, start_server

from crawler.errors import SharedStateError
from crawler.state.shared.library import (
    DEFAULT_BUCKETS,
    Offer,
    Release,
    SharedCrawl,
    library_code,
    load_library,
    url_digest,
)
from crawler.state.shared.resp import RespConnection

pytestmark = pytest.mark.loopback

BUCKETS = 64
SECOND_US = 1_000_000
_prefixes = itertools.count()


@pytest.fixture
async def connection(server: StateServer) -> AsyncIterator[RespConnection]:
    opened = await RespConnection.open(server.url)
    await load_library(opened)
    yield opened
    opened.close()


async def worker(
    connection: RespConnection, prefix: str, name: str, ttl_ms: int = 10_000
) -> SharedCrawl:
    crawl = SharedCrawl(connection, prefix, name)
    assert await crawl.open(BUCKETS) == BUCKETS
    await crawl.heartbeat(ttl_ms)
    return crawl


def new_prefix() -> str:
    return f"test{next(_prefixes)}:"


def offers(origin: str, *paths: str) -> list[Offer]:
    return [Offer(f"{origin}{path}", origin, f"{origin}{path}") for path in paths]


async def test_a_host_is_held_by_one_worker_and_its_next_start_is_the_servers_time_plus_the_delay(
    connection: RespConnection,
) -> None:
    prefix, origin = new_prefix(), "http://a.example"
    first, second = await worker(connection, prefix, "w1"), await worker(connection, prefix, "w2")
    assert await first.offer(offers(origin, "/1", "/2"), BUCKETS) == [True, True]

    claim = await first.claim(lease_us=60 * SECOND_US, most=10)
    assert [(host.origin, host.items, host.timing) for host in claim.hosts] == [
        (origin, (f"{origin}/1",), "")
    ]
    assert (await second.claim(lease_us=60 * SECOND_US, most=10)).hosts == ()  # held

    assert await first.release(Release(origin, 200_000, 200_000, '{"t": 1}'))
    released = await first.status()
    assert released.held == 0 and released.pending == 1 and released.leased == 1
    assert released.next_due_us is not None
    assert released.next_due_us - released.now_us <= 200_000
    assert (await second.claim(lease_us=60 * SECOND_US, most=10)).hosts == ()  # too soon

    await asyncio.sleep(0.25)
    later = await second.claim(lease_us=60 * SECOND_US, most=10)
    assert [(host.items, host.timing) for host in later.hosts] == [((f"{origin}/2",), '{"t": 1}')]
    # Decided by the server's clock: at least the delay after the release.
    assert later.now_us >= released.next_due_us


async def test_only_the_holder_releases_and_an_unused_url_goes_back_to_the_head(
    connection: RespConnection,
) -> None:
    prefix, origin = new_prefix(), "http://b.example"
    holder, other = await worker(connection, prefix, "w1"), await worker(connection, prefix, "w2")
    await holder.offer(offers(origin, "/1", "/2"), BUCKETS)
    (host,) = (await holder.claim(lease_us=SECOND_US, most=1)).hosts

    assert not await other.release(Release(origin, 0, 0, ""))
    assert await holder.release(
        Release(origin, 0, 0, "", unused=host.items, requeued=(*host.items, "local"))
    )

    status = await holder.status()
    assert (status.pending, status.leased, status.held) == (3, 0, 0)
    again = await other.claim(lease_us=SECOND_US, most=1)
    assert [claimed.items for claimed in again.hosts] == [(f"{origin}/1",)]
    assert await connection.execute("LRANGE", f"{prefix}q:{origin}", 0, -1) == [
        b"local",
        f"{origin}/2".encode(),
    ]


async def test_a_url_is_queued_once_and_the_seen_set_stays_compact(
    connection: RespConnection,
) -> None:
    prefix, origin = new_prefix(), "http://c.example"
    crawl = await worker(connection, prefix, "w1")
    urls = offers(origin, *(f"/{n}" for n in range(100)))
    assert await crawl.offer(urls, BUCKETS) == [True] * 100
    assert await crawl.offer(urls[:3] + offers(origin, "/new"), BUCKETS) == [
        False,
        False,
        False,
        True,
    ]
    assert (await crawl.status()).pending == 101
    bucket, _ = url_digest(urls[0].url, BUCKETS)
    encoding = await connection.execute("OBJECT", "ENCODING", f"{prefix}seen:{bucket}")
    assert encoding == b"intset"


async def test_a_dead_workers_urls_go_back_first_and_its_hosts_wait_their_interval(
    connection: RespConnection,
) -> None:
    prefix = new_prefix()
    dying = await worker(connection, prefix, "dying", ttl_ms=100)
    survivor = await worker(connection, prefix, "survivor")
    for origin in ("http://d.example", "http://e.example"):
        await dying.offer(offers(origin, "/1", "/2"), BUCKETS)
    claim = await dying.claim(lease_us=60 * SECOND_US, most=10)
    assert len(claim.hosts) == 2
    # One host released (its request done), one still held when the worker dies.
    await dying.release(Release("http://d.example", 0, SECOND_US, ""))

    await asyncio.sleep(0.2)  # the heartbeat lapses
    assert await survivor.reap(default_interval_us=5 * SECOND_US) == 1
    assert await survivor.reap(default_interval_us=5 * SECOND_US) == 0  # idempotent

    status = await survivor.status()
    assert (status.pending, status.leased, status.held, status.workers) == (4, 0, 0, 1)
    # The released host is due now, its leased URL back first; the held one waits 5 s.
    again = await survivor.claim(lease_us=60 * SECOND_US, most=10)
    assert [(host.origin, host.items) for host in again.hosts] == [
        ("http://d.example", ("http://d.example/1",))
    ]
    assert again.next_due_us is not None
    assert again.next_due_us - again.now_us > 4 * SECOND_US

    with pytest.raises(SharedStateError, match="NOWORKER"):
        await dying.claim(lease_us=SECOND_US, most=1)
    assert not await dying.release(Release("http://e.example", 0, 0, ""))


async def test_page_limits_are_the_crawls_not_the_workers(connection: RespConnection) -> None:
    prefix = new_prefix()
    first, second = await worker(connection, prefix, "w1"), await worker(connection, prefix, "w2")
    for n in range(4):
        await first.offer(offers(f"http://h{n}.example", "/1", "/2"), BUCKETS)
    got = await first.claim(lease_us=SECOND_US, most=2, max_pages=3)
    got_too = await second.claim(lease_us=SECOND_US, most=10, max_pages=3)
    assert len(got.hosts) + len(got_too.hosts) == 3

    prefix = new_prefix()
    crawl = await worker(connection, prefix, "w1")
    await crawl.offer(offers("http://p.example", "/1", "/2", "/3"), BUCKETS)
    for _ in range(2):
        (host,) = (await crawl.claim(lease_us=SECOND_US, most=1, max_pages_per_host=2)).hosts
        await crawl.release(Release(host.origin, 0, 0, ""))
    assert (await crawl.claim(lease_us=SECOND_US, most=1, max_pages_per_host=2)).hosts == ()
    assert (await crawl.status()).pending == 1  # kept for a run with a greater limit


async def test_done_ends_leases_and_only_the_workers_own(connection: RespConnection) -> None:
    prefix, origin = new_prefix(), "http://f.example"
    crawl, other = await worker(connection, prefix, "w1"), await worker(connection, prefix, "w2")
    await crawl.offer(offers(origin, "/1"), BUCKETS)
    (host,) = (await crawl.claim(lease_us=SECOND_US, most=1)).hosts
    assert await other.done(host.items) == 0
    assert await crawl.done([*host.items, "never leased"]) == 1
    assert (await crawl.status()).leased == 0


async def test_workers_claiming_at_once_never_share_a_host(
    server: StateServer, connection: RespConnection
) -> None:
    prefix = new_prefix()
    connections = [await RespConnection.open(server.url) for _ in range(4)]
    try:
        workers = [await worker(opened, prefix, f"w{n}") for n, opened in enumerate(connections)]
        origins = [f"http://race{n}.example" for n in range(200)]
        for origin in origins:
            await workers[0].offer(offers(origin, "/1", "/2"), BUCKETS)
        claims = await asyncio.gather(
            *(crawl.claim(lease_us=60 * SECOND_US, most=7) for crawl in workers * 10)
        )
        claimed = [host.origin for claim in claims for host in claim.hosts]
        assert len(claimed) == len(set(claimed)) == 200
    finally:
        for opened in connections:
            opened.close()


async def test_a_server_with_another_format_of_the_library_is_refused(
    tmp_path: Path,
) -> None:
    other = start_server(tmp_path)
    try:
        connection = await RespConnection.open(other.url)
        older = library_code("0-older")
        await connection.execute("FUNCTION", "LOAD", older)
        with pytest.raises(SharedStateError, match="version 0-older, this worker version 1-"):
            await load_library(connection)
        connection.close()
    finally:
        other.stop()


async def test_a_state_written_in_another_format_is_refused(connection: RespConnection) -> None:
    prefix = new_prefix()
    await connection.execute("HSET", f"{prefix}run", "format", "9")
    with pytest.raises(SharedStateError, match="written in format 9"):
        await SharedCrawl(connection, prefix, "w1").open(DEFAULT_BUCKETS)


async def test_a_host_claimed_ahead_comes_with_the_wait_until_its_next_start(
    connection: RespConnection,
) -> None:
    prefix, origin = new_prefix(), "http://ahead.example"
    first, second = await worker(connection, prefix, "w1"), await worker(connection, prefix, "w2")
    await first.offer(offers(origin, "/1", "/2", "/3"), BUCKETS)
    (host,) = (await first.claim(lease_us=60 * SECOND_US, most=1)).hosts
    assert host.wait_us == 0  # due when claimed
    assert await first.release(Release(origin, 400_000, 400_000, ""))

    assert (await first.claim(lease_us=60 * SECOND_US, most=1, ahead_us=100_000)).hosts == ()
    # Claiming ahead is for the worker that last held the host; another waits until it is due.
    assert (await second.claim(lease_us=60 * SECOND_US, most=1, ahead_us=SECOND_US)).hosts == ()
    ahead = await first.claim(lease_us=60 * SECOND_US, most=1, ahead_us=SECOND_US)
    (claimed,) = ahead.hosts
    # The wait is what is left of the delay on the server's clock, never more than it.
    assert 0 < claimed.wait_us <= 400_000
    # Held now: its lease, not its next start, is its score; nobody else claims it.
    assert (await second.claim(lease_us=60 * SECOND_US, most=1, ahead_us=SECOND_US)).hosts == ()
    assert await first.release(Release(origin, 100_000, 100_000, ""))
    await asyncio.sleep(0.15)
    (due,) = (await second.claim(lease_us=60 * SECOND_US, most=1)).hosts  # due: anyone's
    assert due.wait_us == 0


async def test_a_claim_ahead_leaves_a_held_host_alone_until_its_lease_ends(
    connection: RespConnection,
) -> None:
    prefix, origin = new_prefix(), "http://held.example"
    holder, other = await worker(connection, prefix, "w1"), await worker(connection, prefix, "w2")
    await holder.offer(offers(origin, "/1", "/2"), BUCKETS)
    await holder.claim(lease_us=300_000, most=1)
    # Its lease ends within the other's look-ahead: still held, and its score stays put.
    assert (await other.claim(lease_us=SECOND_US, most=1, ahead_us=SECOND_US)).hosts == ()
    score = await connection.execute("ZSCORE", f"{prefix}due", origin)
    status = await holder.status()
    assert 0 < float(score) - status.now_us <= 300_000


async def test_a_worker_claims_a_fair_share_of_the_hosts(connection: RespConnection) -> None:
    prefix = new_prefix()
    first, second = await worker(connection, prefix, "w1"), await worker(connection, prefix, "w2")
    origins = [f"http://{n}.share.example" for n in range(200)]
    for origin in origins:
        await first.offer(offers(origin, "/"), BUCKETS)
    taken = await first.claim(lease_us=60 * SECOND_US, most=1000)
    # 200 hosts, 2 workers: a share is 200 * 1.25 / 2 = 125.
    assert len(taken.hosts) == 125
    assert len((await second.claim(lease_us=60 * SECOND_US, most=1000)).hosts) == 75


async def test_a_holder_says_what_it_learned_and_a_reaping_waits_that_interval(
    connection: RespConnection,
) -> None:
    """A host kept through its robots.txt is never released: `hold` tells the server its
    interval (which a reaping waits, instead of the longest default) and its robots.txt entry
    (which the next holder reads instead of fetching it again)."""
    prefix, origin = new_prefix(), "http://hold.example"
    dying = await worker(connection, prefix, "w1", ttl_ms=100)
    other = await worker(connection, prefix, "w2")
    await dying.offer(offers(origin, "/1"), BUCKETS)
    await dying.claim(lease_us=60 * SECOND_US, most=1)
    await dying.hold(origin, 200_000, '{"t": 1}', '["robots"]', "1.5")
    assert not await other.hold(origin, 5 * SECOND_US, "", "", "")  # not its to say

    await asyncio.sleep(0.15)
    assert await other.reap(60 * SECOND_US) == 1  # the default interval, a minute: not used
    status = await other.status()
    assert status.next_due_us is not None
    assert status.next_due_us - status.now_us <= 200_000
    await asyncio.sleep(0.2)
    (claimed,) = (await other.claim(lease_us=SECOND_US, most=1)).hosts
    assert (claimed.robots_at, claimed.timing) == ("1.5", '{"t": 1}')
    assert await other.robots([origin]) == ['["robots"]']


async def test_a_host_is_claimed_with_as_many_urls_as_it_may_have_requests_in_flight(
    connection: RespConnection,
) -> None:
    """politeness.per_host_concurrency for the crawl: one worker holds the host, with up to that
    many URLs leased; those it does not start end their leases when it lets the host go."""
    prefix, origin = new_prefix(), "http://several.example"
    holder, other = await worker(connection, prefix, "w1"), await worker(connection, prefix, "w2")
    await holder.offer(offers(origin, "/1", "/2", "/3", "/4"), BUCKETS)
    (host,) = (await holder.claim(lease_us=SECOND_US, most=1, per_host=3)).hosts
    assert host.items == (f"{origin}/1", f"{origin}/2", f"{origin}/3")
    assert (await other.claim(lease_us=SECOND_US, most=1, per_host=3)).hosts == ()  # held
    status = await holder.status()
    assert (status.pending, status.leased, status.pages_started) == (1, 3, 3)

    await holder.done(host.items[:1])
    unused = host.items[1:]
    assert await holder.release(Release(origin, 0, 0, "", unused=unused, requeued=unused))
    status = await holder.status()
    assert (status.pending, status.leased, status.pages_started) == (3, 0, 1)
    (again,) = (await other.claim(lease_us=SECOND_US, most=1, per_host=2, max_pages=2)).hosts
    assert again.items == (f"{origin}/2",)  # one page left under max_pages


async def test_after_a_restart_every_host_waits_even_one_that_looks_never_asked(
    connection: RespConnection,
) -> None:
    """The server may have lost its last writes, a host's first claim among them: so a host the
    server thinks never asked waits too (the default interval, its own being unknown)."""
    prefix, origin = new_prefix(), "http://restart.example"
    crawl = await worker(connection, prefix, "w1")
    await crawl.offer(offers(origin, "/1"), BUCKETS)
    await connection.execute("HSET", f"{prefix}run", "run_id", "the run before the restart")
    assert await crawl.recover(5 * SECOND_US)
    assert not await crawl.recover(5 * SECOND_US)  # once per restart
    status = await crawl.status()
    assert status.next_due_us is not None
    assert status.next_due_us - status.now_us > 4 * SECOND_US
