"""What a shared crawl's recrawl keeps in the server (crawler/state/shared/fresh.lua and
crawler.state.shared.fresh), against a real Valkey server on loopback: the fetch log and change
histories any worker reads back, a revisit queued once per fetch whoever offers it, the crawl's
recrawl pass, and the sitemap lastmods every worker hears."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import pytest
from support.keyvalue import StateServer

from crawler.freshness import ChangeHistory, LastmodTrust
from crawler.frontier import Earlier, QueuedUrl
from crawler.state.shared.fresh import SharedFreshness, version_of
from crawler.state.shared.library import SharedCrawl, load_library
from crawler.state.shared.resp import RespConnection

pytestmark = pytest.mark.loopback

BUCKETS = 64
ORIGIN = "http://a.example"
_prefixes = itertools.count()


@pytest.fixture
async def connection(server: StateServer) -> AsyncIterator[RespConnection]:
    opened = await RespConnection.open(server.url)
    await load_library(opened)
    yield opened
    opened.close()


async def worker(connection: RespConnection, prefix: str, name: str) -> SharedCrawl:
    crawl = SharedCrawl(connection, prefix, name)
    await crawl.open(BUCKETS)
    await crawl.heartbeat(10_000)
    return crawl


async def send(crawl: SharedCrawl, fresh: SharedFreshness) -> list[object]:
    """What `fresh` holds, sent as a tick would, and the lastmods heard read back."""
    before, offers, after = fresh.take(crawl.prefix)
    reading = fresh.read(crawl.prefix)
    commands = [*before, *offers, *after, *([reading] if reading else [])]
    replies = await crawl.connection.pipeline(commands)
    if reading:
        fresh.take_heard(replies[-1])
    return replies


def fetched(path: str, at: float, etag: str) -> tuple[QueuedUrl, Earlier]:
    return QueuedUrl(f"{ORIGIN}{path}", 1), Earlier(at, 200, etag, None, "digest")


async def test_any_worker_reads_back_what_another_fetched_and_learned(
    connection: RespConnection,
) -> None:
    prefix = f"fresh{next(_prefixes)}:"
    one, two = await worker(connection, prefix, "w1"), await worker(connection, prefix, "w2")
    writer = SharedFreshness("w1")
    writer.fetches.add(*fetched("/a", 1000.0, '"a1"'))
    writer.fetches.add(*fetched("/b", 1001.0, '"b1"'))
    writer.store.revisited(f"{ORIGIN}/a", 60.0, True)
    writer.store.revisited(f"{ORIGIN}/a", 30.0, False)
    writer.store.listed(f"{ORIGIN}/b", "daily", 0.8)
    writer.store.set_trust(ORIGIN, LastmodTrust("trusted", 3, 999.0, "right 3 times"))
    await send(one, writer)
    writer.store.revisited(f"{ORIGIN}/a", 10.0, True)  # counts add up, whoever sends them
    await send(one, writer)

    reader = SharedFreshness("w2")
    await reader.load(two)
    assert [(item.url, item.depth, item.earlier) for item in reader.fetches.latest()] == [
        (f"{ORIGIN}/a", 1, Earlier(1000.0, 200, '"a1"', None, "digest")),
        (f"{ORIGIN}/b", 1, Earlier(1001.0, 200, '"b1"', None, "digest")),
    ]
    pages = {page.url: page for page in reader.store.histories()}
    assert pages[f"{ORIGIN}/a"].changes == ChangeHistory(3, 2, 100.0, 70.0)
    assert (pages[f"{ORIGIN}/b"].changefreq, pages[f"{ORIGIN}/b"].priority) == ("daily", 0.8)
    assert reader.store.trust(ORIGIN) == LastmodTrust("trusted", 3, 999.0, "right 3 times")


async def test_a_revisit_is_queued_once_per_fetch_whoever_offers_it(
    connection: RespConnection,
) -> None:
    prefix = f"revisit{next(_prefixes)}:"
    one, two = await worker(connection, prefix, "w1"), await worker(connection, prefix, "w2")
    first, second = SharedFreshness("w1"), SharedFreshness("w2")
    item, found = fetched("/a", 1000.0, '"a1"')
    first.fetches.add(item, found)
    await send(one, first)
    version = version_of(found)
    first.revisit(item.url, ORIGIN, "item-a", version)
    second.revisit(item.url, ORIGIN, "item-a", version)
    assert (await send(one, first))[0] == b"1"
    assert (await send(two, second))[0] == b"0"  # queued already against that fetch
    assert (await one.status()).pending == 1
    # Fetched again meanwhile: an offer decided on the fetch before is stale.
    first.fetches.add(item, Earlier(2000.0, 304, '"a1"', None, "digest"))
    first.revisit_ended(item.url)
    await send(one, first)
    second.revisit(item.url, ORIGIN, "item-a", version)
    assert (await send(two, second))[0] == b"0"
    second.revisit(item.url, ORIGIN, "item-a", repr(2000.0))
    assert (await send(two, second))[0] == b"1"
    assert (await one.status()).pending == 2
    claim = await two.claim(lease_us=60_000_000, most=1, per_host=5)
    assert claim.hosts[0].items == ("item-a", "item-a")


async def test_the_recrawl_pass_is_the_crawls_until_it_is_over(
    connection: RespConnection,
) -> None:
    prefix = f"pass{next(_prefixes)}:"
    one = await worker(connection, prefix, "w1")
    first = SharedFreshness("w1")
    began, new = await first.begin_pass(one)
    assert new
    two = await worker(connection, prefix, "w2")
    second = SharedFreshness("w2")
    # The first worker is alive: the second takes part in its pass, decided at its time.
    assert await second.begin_pass(two) == (began, False)
    # A lastmod one worker hears, every other does; its own it does not take back.
    first.store.heard(f"{ORIGIN}/a", 500.0)
    assert first.store.lastmod_heard(f"{ORIGIN}/a") == 500.0
    first.loaded = second.loaded = True
    await send(one, first)
    await send(two, second)
    assert first.store.lastmod_heard(f"{ORIGIN}/a") is None  # used once, not heard again
    assert second.store.lastmod_heard(f"{ORIGIN}/a") == 500.0
    await first.pass_over(one)
    later, new = await second.begin_pass(two)
    assert new and later > began
    third = SharedFreshness("w3")
    third.loaded = True
    await send(two, third)
    assert third.store.lastmods == {}  # the pass before's lastmods are forgotten
    # Nothing queued, and the other worker gone: a pass left open is begun afresh.
    await one.leave(1_000_000)
    assert (await second.begin_pass(two))[1]
