"""crawler.state: every store keeps its interface's rules, in memory and on SQLite alike, and the
SQLite ones keep them across a close, a reopen and a kill."""

from __future__ import annotations

import dataclasses
import mmap
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.config import StateConfig
from crawler.errors import StateError
from crawler.frontier import QueuedUrl
from crawler.pace import HostPace
from crawler.politeness import HostRules, HostTiming
from crawler.robots.entry import RobotsEntry
from crawler.robots.rates import RequestRate, TimeWindow
from crawler.robots.txt import RobotsOptions, RobotsTxt
from crawler.state import (
    STATE_NAME,
    CrawlState,
    DataDirLock,
    MemoryCrawlState,
    open_state,
    state_files,
)
from crawler.state.db import SCHEMA_VERSION
from crawler.state.seen import _DigestFilter
from crawler.state.starts import FLUSH_STARTS, unpack_starts
from crawler.stats import CrawlStats, DeferredHost
from crawler.usage.tdmrep import read_tdmrep

A = "http://a.test"
B = "https://b.test:8443"
C = "http://c.test"
OPTIONS = RobotsOptions()

Opener = Callable[[], CrawlState]


def sqlite_opener(directory: Path, working_set: int = 3) -> Opener:
    """Opens the state in `directory` afresh each call: a new process's view of it."""
    return lambda: open_state(directory, StateConfig(working_set=working_set), OPTIONS)


@pytest.fixture(params=["memory", "sqlite"])
def state(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CrawlState]:
    opened = MemoryCrawlState() if request.param == "memory" else sqlite_opener(tmp_path)()
    yield opened
    opened.close()


@pytest.fixture
def reopen(tmp_path: Path) -> Opener:
    return sqlite_opener(tmp_path)


def item(path: str, origin: str = A, **fields: object) -> QueuedUrl:
    return QueuedUrl(f"{origin}/{path}", **fields)  # type: ignore[arg-type]


def drain(state: CrawlState, origin: str) -> list[str]:
    urls = []
    while (queued := state.frontier.pop(origin)) is not None:
        state.frontier.done(queued)
        urls.append(queued.url)
    return urls


# --- Frontier ------------------------------------------------------------------------------------


def test_urls_of_one_origin_come_out_in_order_past_the_working_set(state: CrawlState) -> None:
    for n in range(10):
        state.frontier.push(A, item(str(n)))
    assert state.frontier.pending(A) == 10
    assert drain(state, A) == [f"{A}/{n}" for n in range(10)]


def test_pushes_between_pops_keep_their_order(state: CrawlState) -> None:
    frontier = state.frontier
    expected = []
    popped = []
    for n in range(12):
        frontier.push(A, item(str(n)))
        expected.append(f"{A}/{n}")
        if n % 3 == 2:
            queued = frontier.pop(A)
            assert queued is not None
            popped.append(queued.url)
            frontier.done(queued)
    assert popped + drain(state, A) == expected


def test_pop_leases_and_done_ends_the_lease(state: CrawlState) -> None:
    frontier = state.frontier
    frontier.push(A, item("1"))
    frontier.push(A, item("2"))
    first = frontier.pop(A)
    assert first == item("1")
    assert (len(frontier), frontier.pending(A), frontier.leased()) == (1, 1, 1)
    frontier.done(first)
    assert frontier.leased() == 0
    with pytest.raises(ValueError, match="not leased"):
        frontier.done(first)


def test_a_leased_url_given_back_is_next_with_its_new_attempts(state: CrawlState) -> None:
    frontier = state.frontier
    for n in range(5):
        frontier.push(A, item(str(n)))
    first = frontier.pop(A)
    assert first is not None
    frontier.push_front(A, first.retried())
    assert frontier.leased() == 0
    again = frontier.pop(A)
    assert again == item("0", attempts=1)
    frontier.done(again)
    assert drain(state, A) == [f"{A}/{n}" for n in range(1, 5)]


def test_push_front_of_a_new_url_comes_out_next_even_when_the_rest_is_on_disk(
    state: CrawlState,
) -> None:
    for n in range(8):
        state.frontier.push(A, item(str(n)))
    state.commit()
    state.frontier.push_front(A, item("first"))
    assert state.frontier.pending(A) == 9
    assert drain(state, A) == [f"{A}/first"] + [f"{A}/{n}" for n in range(8)]


def test_origins_are_kept_apart_and_an_emptied_one_disappears(state: CrawlState) -> None:
    frontier = state.frontier
    frontier.push(A, item("1"))
    frontier.push(B, item("1", B))
    frontier.push(A, item("2"))
    assert (frontier.pending(A), frontier.pending(B), len(frontier)) == (2, 1, 3)
    assert set(frontier.origins()) == {A, B}
    assert drain(state, B) == [f"{B}/1"]
    assert list(frontier.origins()) == [A]
    assert frontier.pop(C) is None
    assert frontier.pending(C) == 0


ORIGINS = st.sampled_from([A, B, C])
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("push"), ORIGINS),
        st.tuples(st.just("push_front"), ORIGINS),
        st.tuples(st.just("pop"), ORIGINS),
        st.tuples(st.just("done"), st.integers(0, 5)),
        st.tuples(st.just("give back"), st.integers(0, 5)),
        st.tuples(st.just("commit"), ORIGINS),
    ),
    max_size=50,
)


@settings(max_examples=60, deadline=None)
@given(OPERATIONS, st.sampled_from(["memory", "sqlite"]))
def test_frontier_is_a_deque_per_origin_with_leases_and_loses_nothing(
    operations: list[tuple[str, object]], kind: str
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        state = MemoryCrawlState() if kind == "memory" else sqlite_opener(Path(directory), 2)()
        frontier = state.frontier
        model: dict[str, deque[QueuedUrl]] = {}
        leased: list[tuple[str, QueuedUrl]] = []
        for number, (operation, argument) in enumerate(operations):
            if operation in ("push", "push_front"):
                origin = str(argument)
                new = QueuedUrl(f"{origin}/{number}", depth=number % 3)
                queue = model.setdefault(origin, deque())
                if operation == "push":
                    frontier.push(origin, new)
                    queue.append(new)
                else:
                    frontier.push_front(origin, new)
                    queue.appendleft(new)
            elif operation == "pop":
                origin = str(argument)
                expected = model[origin].popleft() if model.get(origin) else None
                assert frontier.pop(origin) == expected
                if expected is not None:
                    leased.append((origin, expected))
            elif operation in ("done", "give back") and leased:
                origin, queued = leased.pop(int(str(argument)) % len(leased))
                if operation == "done":
                    frontier.done(queued)
                else:
                    frontier.push_front(origin, queued.retried())
                    model.setdefault(origin, deque()).appendleft(queued.retried())
            elif operation == "commit":
                state.commit()
            assert len(frontier) == sum(len(queue) for queue in model.values())
            assert frontier.leased() == len(leased)
            assert set(frontier.origins()) == {key for key, queue in model.items() if queue}
        for origin, queue in model.items():
            assert [queued.url for queued in queue] == drain(state, origin)
        state.close()


@settings(max_examples=40, deadline=None)
@given(OPERATIONS)
def test_reopened_frontier_queues_what_was_queued_or_leased_pushes_in_order(
    operations: list[tuple[str, object]],
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        opener = sqlite_opener(Path(directory), 2)
        state = opener()
        frontier = state.frontier
        pushed: dict[str, list[str]] = {}
        leased: list[QueuedUrl] = []
        done: set[str] = set()
        for number, (operation, argument) in enumerate(operations):
            if operation in ("push", "push_front"):
                origin = str(argument)
                new = QueuedUrl(f"{origin}/{number}")
                if operation == "push":
                    frontier.push(origin, new)
                    pushed.setdefault(origin, []).append(new.url)
                else:
                    frontier.push_front(origin, new)
            elif operation == "pop":
                queued = frontier.pop(str(argument))
                if queued is not None:
                    leased.append(queued)
            elif operation == "done" and leased:
                queued = leased.pop(int(str(argument)) % len(leased))
                frontier.done(queued)
                done.add(queued.url)
        queued_before = {origin: frontier.pending(origin) for origin in (A, B, C)}
        leased_by_origin = {origin: 0 for origin in (A, B, C)}
        for queued in leased:
            leased_by_origin[queued.url.rsplit("/", 1)[0]] += 1
        state.close()  # commits; the leases were never ended
        state = opener()
        for origin in (A, B, C):
            assert (
                state.frontier.pending(origin) == queued_before[origin] + leased_by_origin[origin]
            )
            urls = drain(state, origin)
            assert not done & set(urls)
            in_push_order = [url for url in urls if url in pushed.get(origin, [])]
            assert in_push_order == [url for url in pushed.get(origin, []) if url not in done]
        assert state.frontier.leased() == 0
        state.close()


def test_reopened_frontier_keeps_the_fields_and_the_given_back_attempts(reopen: Opener) -> None:
    state = reopen()
    hop = QueuedUrl(f"{A}/c", 2, (f"{A}/a", f"{A}/b"), 1, 301)
    state.frontier.push(A, hop)
    state.frontier.push(A, item("plain"))
    popped = state.frontier.pop(A)
    assert popped == hop
    state.frontier.push_front(A, popped.retried())
    state.close()
    state = reopen()
    state.frontier.push_front(A, item("new first"))  # nothing of A is in memory yet
    assert state.frontier.pop(A) == item("new first")
    assert state.frontier.pop(A) == QueuedUrl(f"{A}/c", 2, (f"{A}/a", f"{A}/b"), 2, 301)
    assert state.frontier.pop(A) == item("plain")
    state.close()


# --- SeenSet -------------------------------------------------------------------------------------


def test_seen_set_admits_each_url_once(state: CrawlState) -> None:
    seen = state.seen
    assert seen.add(f"{A}/x") is True
    assert seen.add(f"{A}/x") is False
    state.commit()
    assert seen.add(f"{A}/x") is False
    assert seen.add(f"{A}/y") is True
    assert f"{A}/x" in seen and f"{A}/y" in seen and f"{A}/z" not in seen
    assert len(seen) == 2


def test_seen_set_tells_apart_urls_with_the_same_hash(reopen: Opener) -> None:
    # Two URLs with one CRC-32 (1931101371): the set compares the URLs themselves.
    first, second = "http://a.test/29685295", "http://a.test/32060020"
    state = reopen()
    assert state.seen.add(first)
    state.commit()
    assert second not in state.seen
    assert state.seen.add(second)
    state.close()
    state = reopen()
    assert first in state.seen and second in state.seen and len(state.seen) == 2
    assert not state.seen.add(second)
    state.close()


def test_seen_set_queries_the_table_only_for_a_hash_it_may_hold(reopen: Opener) -> None:
    state = reopen()
    for n in range(500):
        state.seen.add(f"{A}/page{n}")
    state.close()
    state = reopen()  # nothing in memory: what the table holds comes back through the filter
    queries: list[str] = []
    state.seen._db.connection.set_trace_callback(queries.append)  # type: ignore[attr-defined]
    assert all(f"{A}/page{n}" in state.seen for n in range(500))
    assert len(queries) == 500
    assert not any(state.seen.add(f"{A}/page{n}") for n in range(500))
    queries.clear()
    fresh = [f"{B}/other{n}" for n in range(500)]
    assert all(state.seen.add(url) for url in fresh)
    # 1,000 hashes light at most 1,000 of 2**27 bits: a new URL all but never needs a query.
    assert len(queries) <= 1
    state.close()


def test_digest_filter_holds_what_was_added_and_little_else() -> None:
    digests = [zlib.crc32(f"{A}/{n}".encode()) for n in range(2_000)]
    kept = _DigestFilter()
    for digest in digests[:1_000]:
        kept.add(digest)
    assert all(digest in kept for digest in digests[:1_000])
    assert sum(digest in kept for digest in digests[1_000:]) <= 2
    assert 0 not in kept and 2**32 - 1 not in kept
    kept.add(2**32 - 1)
    kept.add(0)
    assert 2**32 - 1 in kept and 0 in kept


def test_digest_filter_works_where_memory_cannot_be_mapped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(*args: object) -> None:
        raise OSError("no anonymous mappings")

    monkeypatch.setattr(mmap, "mmap", refused)
    kept = _DigestFilter()
    kept.add(1 << 20)
    assert 1 << 20 in kept and (1 << 20) + 32 not in kept  # the next bit: the next 32 hashes


# --- robots.txt, host timing, the run -------------------------------------------------------------

ROBOTS_BODY = (
    b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /private\r\nCrawl-delay: 2.5\r\n"
    b"Visit-time: 0600-0845\r\nRequest-rate: 1/5 1000-1200\r\n# \xff\xfe not UTF-8\r\n"
)


def robots_entries() -> list[RobotsEntry]:
    parsed = RobotsTxt.parse(ROBOTS_BODY)
    return [
        RobotsEntry(A, parsed, 100.0, 86_500.0, "status 200", hops=(f"{A}/robots.txt",)),
        RobotsEntry(B, RobotsTxt.allow_all("status 404: unavailable"), 1.0, 2.0, "status 404"),
        RobotsEntry(C, RobotsTxt.disallow_all("status 503"), 3.0, 63.0, "status 503", True, 2),
        RobotsEntry("http://d.test", parsed, 5.0, 70.0, "timeout; using the copy", True, 1, True),
    ]


def test_robots_entries_come_back_answering_alike(state: CrawlState, reopen: Opener) -> None:
    for entry in robots_entries():
        state.robots.put(entry)
    if state.durable:
        state.close()
        state = reopen()
    for entry in robots_entries():
        back = state.robots.get(entry.origin)
        assert back is not None
        assert (back.fetched_at, back.expires_at, back.reason) == (
            entry.fetched_at,
            entry.expires_at,
            entry.reason,
        )
        assert (back.unreachable, back.failures, back.stale, back.hops) == (
            entry.unreachable,
            entry.failures,
            entry.stale,
            entry.hops,
        )
        for path in ("/", "/private/x", "/robots.txt"):
            assert back.robots.can_fetch(path, "PoliteBot") == entry.robots.can_fetch(
                path, "PoliteBot"
            )
            assert back.robots.explain(path, "x").message == entry.robots.explain(path, "x").message
        assert back.robots.crawl_delay("PoliteBot") == entry.robots.crawl_delay("PoliteBot")
        assert back.robots.visit_time("PoliteBot") == entry.robots.visit_time("PoliteBot")
        assert back.robots.request_rates("x") == entry.robots.request_rates("x")
    assert state.robots.get("http://unknown.test") is None
    assert {entry.origin for entry in state.robots} == {e.origin for e in robots_entries()}
    state.close()


def test_an_origin_never_stored_is_answered_without_a_query(reopen: Opener) -> None:
    state = reopen()
    state.robots.put(robots_entries()[0])
    state.timings.put(HostTiming(B))
    state.close()
    state = reopen()  # a new process: what the tables hold is known, nothing is cached
    queries: list[str] = []
    state.seen._db.connection.set_trace_callback(queries.append)  # type: ignore[attr-defined]
    assert state.robots.get(C) is None and state.timings.get(C) is None
    assert queries == []
    entry = state.robots.get(A)
    assert entry is not None and entry.origin == A
    assert state.timings.get(B) == HostTiming(B)
    assert len(queries) == 2
    state.close()


def test_host_timing_comes_back_as_put_with_nothing_in_flight(
    state: CrawlState, reopen: Opener
) -> None:
    rules = HostRules(
        2.5,
        (RequestRate(1, 5.0, TimeWindow(36_000, 43_200)), RequestRate(10, 60.0)),
        (TimeWindow(79_200, 14_400),),
    )
    timing = HostTiming(A, rules, 10.5, 20.0, 2, 7, 9.0, 9.5, 0.75, 3)
    state.timings.put(HostTiming(B))
    state.timings.put(timing)
    timing.in_flight = 1
    timing.requests += 1  # changed in place after the put, then put again
    state.timings.put(timing)
    if state.durable:
        state.close()
        state = reopen()
    back = state.timings.get(A)
    assert back is not None
    assert back.in_flight == (0 if state.durable else 1)
    back.in_flight = timing.in_flight
    assert back == timing
    assert state.timings.get(B) == HostTiming(B)
    assert state.timings.get(C) is None
    assert {t.origin for t in state.timings} == {A, B}
    state.close()


def test_the_run_record_keeps_seeds_figures_deferrals_and_how_it_ended(reopen: Opener) -> None:
    state = reopen()
    run = state.run
    assert (run.runs(), run.clean(), run.stats(), run.deferred(), run.seeds()) == (
        0,
        True,
        None,
        (),
        (),
    )
    run.begin_run()
    run.add_seeds([f"{A}/", f"{B}/"])
    stats = CrawlStats(started_at=1000.0, elapsed=12.5, pages=7, requests=9, bytes=1234)
    stats.statuses[200] += 6
    stats.statuses[404] += 1
    stats.skips["disallowed by robots.txt"] += 2
    stats.errors["timeout"] += 1
    stats.page_rules["indexed"] += 5
    stats.queued = 99  # live: not kept
    run.save_stats(stats)
    waiting = (DeferredHost(C, 5000.0, 3, "outside its Visit-time (06:00-08:45 UTC)"),)
    run.save_deferred(waiting)
    state.commit()
    state.close()  # closing commits; a run not ended is not clean
    state = reopen()
    run = state.run
    assert (run.runs(), run.clean()) == (1, False)
    run.add_seeds([f"{B}/", f"{C}/"])
    assert run.seeds() == (f"{A}/", f"{B}/", f"{C}/")
    back = run.stats()
    assert back is not None
    stats.queued = 0
    assert back == stats
    assert run.deferred() == waiting
    run.begin_run()
    run.end_run()
    state.close()
    state = reopen()
    assert (state.run.runs(), state.run.clean()) == (2, True)
    assert state.run.seeds() == (f"{A}/", f"{B}/", f"{C}/")
    state.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_run_record_keeps_where_seeds_redirected_each_once(kind: str, reopen: Opener) -> None:
    state = reopen() if kind == "sqlite" else MemoryCrawlState()
    run = state.run
    assert run.seed_moves() == ()
    run.add_seed_move(f"{A}/", f"{B}/")
    run.add_seed_move(f"{A}/", f"{C}/")
    run.add_seed_move(f"{A}/", f"{B}/")
    assert run.seed_moves() == ((f"{A}/", f"{B}/"), (f"{A}/", f"{C}/"))
    if kind == "sqlite":
        state.close()
        state = reopen()
        assert state.run.seed_moves() == ((f"{A}/", f"{B}/"), (f"{A}/", f"{C}/"))
    state.close()


# --- durability ----------------------------------------------------------------------------------

KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from crawler.config import StateConfig
from crawler.frontier import QueuedUrl
from crawler.robots.txt import RobotsOptions
from crawler.state import open_state

state = open_state(Path(sys.argv[1]), StateConfig(working_set=2), RobotsOptions())
for n in range(5):
    url = f"http://a.test/{n}"
    state.seen.add(url)
    state.frontier.push("http://a.test", QueuedUrl(url))
first = state.frontier.pop("http://a.test")
state.commit()
state.frontier.done(first)  # not committed: lost with the process
for n in range(5, 5000):  # past the write buffer: written, never committed
    url = f"http://a.test/{n}"
    state.seen.add(url)
    state.frontier.push("http://a.test", QueuedUrl(url))
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
def test_a_kill_loses_exactly_what_was_not_committed(tmp_path: Path, reopen: Opener) -> None:
    killed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED_WRITER), str(tmp_path)], check=False
    )
    assert killed.returncode == -signal.SIGKILL
    state = reopen()
    assert len(state.seen) == 5 and len(state.frontier) == 5 and state.frontier.leased() == 0
    assert drain(state, A) == [f"{A}/{n}" for n in range(5)]
    state.close()


def test_a_file_that_is_not_a_state_is_refused_naming_it(tmp_path: Path, reopen: Opener) -> None:
    (tmp_path / STATE_NAME).write_bytes(b"this is not a database, just text" * 100)
    with pytest.raises(StateError, match=f"{tmp_path / STATE_NAME} is damaged or is not a crawl"):
        reopen()


def test_a_newer_schema_is_refused(tmp_path: Path, reopen: Opener) -> None:
    reopen().close()
    connection = sqlite3.connect(tmp_path / STATE_NAME)
    connection.execute("PRAGMA user_version = 99")
    connection.close()
    with pytest.raises(
        StateError, match=f"schema version 99; this crawler reads version {SCHEMA_VERSION}"
    ):
        reopen()


def older_state_with_one_url(tmp_path: Path, reopen: Opener, version: int) -> None:
    """A state holding one queued URL, made into the shape schema `version` had."""
    state = reopen()
    state.seen.add(f"{A}/kept")
    state.frontier.push(A, QueuedUrl(f"{A}/kept", 1))
    state.close()
    connection = sqlite3.connect(tmp_path / STATE_NAME)
    if version < 2:
        connection.execute("DROP TABLE held")
    if version < 3:
        connection.execute("ALTER TABLE queue DROP COLUMN extra")
        connection.execute("DROP TABLE fetches")
    if version < 4:
        connection.execute("ALTER TABLE timings DROP COLUMN pace")
    if version < 5:
        connection.execute("ALTER TABLE robots DROP COLUMN tdmrep")
    if version < 6:
        connection.execute("DROP TABLE starts")
        connection.execute("DROP TABLE start_origins")
    connection.execute("DROP TABLE page_history")
    connection.execute("DROP TABLE lastmod_trust")
    connection.execute(f"PRAGMA user_version = {version}")
    connection.commit()
    connection.close()


def test_a_version_1_state_gains_the_held_table_and_keeps_its_urls(
    tmp_path: Path, reopen: Opener
) -> None:
    older_state_with_one_url(tmp_path, reopen, 1)
    state = reopen()
    assert drain(state, A) == [f"{A}/kept"]
    state.held.hold(f"{A}/deep", 4)
    state.close()
    state = reopen()
    assert state.held.within(None) == [(f"{A}/deep", 4)]
    state.close()
    connection = sqlite3.connect(tmp_path / STATE_NAME)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    connection.close()


def test_a_version_2_state_gains_the_queue_extra_column_and_the_fetch_log(
    tmp_path: Path, reopen: Opener
) -> None:
    older_state_with_one_url(tmp_path, reopen, 2)
    state = reopen()
    sitemap = QueuedUrl(f"{A}/sitemap.xml", 0, sitemap=2, declared_by=A)
    state.frontier.push(A, sitemap)
    state.frontier.push(A, QueuedUrl(f"{A}/listed", 1, lastmod=1_700_000_000.5))
    state.close()
    state = reopen()
    items = []
    while (item := state.frontier.pop(A)) is not None:
        items.append(item)
        state.frontier.done(item)
    assert items == [
        QueuedUrl(f"{A}/kept", 1),
        sitemap,
        QueuedUrl(f"{A}/listed", 1, lastmod=1_700_000_000.5),
    ]
    state.close()


def test_a_version_3_state_gains_the_hosts_pace(tmp_path: Path, reopen: Opener) -> None:
    state = reopen()
    state.timings.put(HostTiming(A, requests=4, pages=3))
    state.commit()
    state.close()
    older_state_with_one_url(tmp_path, reopen, 3)
    state = reopen()
    timing = state.timings.get(A)
    assert timing is not None and (timing.requests, timing.pages) == (4, 3)
    assert timing.pace == HostPace()  # a row written before the pace was kept
    timing.pace.learned, timing.pace.refusals = 2.5, 3
    state.timings.put(timing)
    state.commit()
    state.close()
    state = reopen()
    kept = state.timings.get(A)
    assert kept is not None and (kept.pace.learned, kept.pace.refusals) == (2.5, 3)
    state.close()


def test_a_version_4_state_gains_the_origins_tdmrep(tmp_path: Path, reopen: Opener) -> None:
    state = reopen()
    state.robots.put(RobotsEntry(A, RobotsTxt.parse("User-agent: *\nAllow: /\n"), 1.0, 2.0, "ok"))
    state.commit()
    state.close()
    older_state_with_one_url(tmp_path, reopen, 4)
    state = reopen()
    entry = state.robots.get(A)
    assert entry is not None and entry.tdmrep is None  # a row written before TDMRep was asked
    reservation = read_tdmrep(b'[{"location": "/x/", "tdm-reservation": 1}]', "status 200")
    state.robots.put(dataclasses.replace(entry, tdmrep=reservation))
    state.commit()
    state.close()
    state = reopen()
    kept = state.robots.get(A)
    assert kept is not None and kept.tdmrep == reservation
    signal = kept.tdmrep.signal_for(f"{A}/x/page")
    assert signal is not None and signal.reading().refuses() == ("ai-input", "ai-train")
    state.close()


def test_a_version_5_state_gains_the_start_log(tmp_path: Path, reopen: Opener) -> None:
    older_state_with_one_url(tmp_path, reopen, 5)
    state = reopen()
    assert drain(state, A) == [f"{A}/kept"]
    state.starts.add(A, 100.0, 1.0, 2.0)
    state.close()
    assert start_rows(tmp_path) == [(A, 100.0, 1.0, 2.0)]


def start_rows(directory: Path) -> list[tuple[str, float, float, float]]:
    """Every start the state file holds, in time order."""
    connection = sqlite3.connect(directory / STATE_NAME)
    try:
        rows = connection.execute(
            "SELECT origin, data FROM starts JOIN start_origins ON start_origins.id = origin_id"
        ).fetchall()
    finally:
        connection.close()
    starts = [(origin, *start) for origin, data in rows for start in unpack_starts(data)]
    return sorted(starts, key=lambda start: start[1])


def test_request_starts_are_kept_with_their_origin_across_runs(
    tmp_path: Path, reopen: Opener
) -> None:
    b = "http://b.test"
    state = reopen()
    state.starts.add(A, 10.0, 0.5, 0.5)
    state.starts.add(b, 10.2, 2.0, 3.0)
    state.commit()
    state.starts.add(A, 10.5, 0.5, 0.5)
    state.close()
    state = reopen()  # the next run numbers a new origin on from those kept
    state.starts.add("http://c.test", 20.0, 1.0, 1.0)
    state.starts.add(b, 21.0, 2.0, 2.5)
    state.close()
    assert start_rows(tmp_path) == [
        (A, 10.0, 0.5, 0.5),
        (b, 10.2, 2.0, 3.0),
        (A, 10.5, 0.5, 0.5),
        ("http://c.test", 20.0, 1.0, 1.0),
        (b, 21.0, 2.0, 2.5),
    ]


def test_starts_gather_between_flushes_and_a_close_writes_the_last(
    tmp_path: Path, reopen: Opener
) -> None:
    state = reopen()
    state.starts.add(A, 1.0, 0.5, 0.5)
    state.commit()
    assert start_rows(tmp_path) == []  # a second's worth is not yet worth a row
    for n in range(FLUSH_STARTS):
        state.starts.add(A, 2.0 + n, 0.5, 0.5)
    state.commit()
    assert len(start_rows(tmp_path)) == FLUSH_STARTS + 1
    state.starts.add(A, 1e6, 0.5, 0.75)
    state.close()
    assert start_rows(tmp_path)[-1] == (A, 1e6, 0.5, 0.75)


def test_held_urls_keep_the_least_depth_and_go_when_released(state: CrawlState) -> None:
    held = state.held
    held.hold(f"{A}/x", 5)
    held.hold(f"{A}/x", 7)
    held.hold(f"{A}/y", 3)
    held.hold(f"{A}/x", 4)
    assert held.depth(f"{A}/x") == 4 and held.depth(f"{A}/none") is None
    assert held.within(3) == [(f"{A}/y", 3)]
    assert sorted(held.within(None)) == [(f"{A}/x", 4), (f"{A}/y", 3)]
    held.release(f"{A}/y")
    held.release(f"{A}/never")
    assert held.within(None) == [(f"{A}/x", 4)] and len(held) == 1


def test_state_files_lists_what_exists(tmp_path: Path, reopen: Opener) -> None:
    assert state_files(tmp_path) == []
    state = reopen()
    assert tmp_path / STATE_NAME in state_files(tmp_path)
    state.close()


# --- the lock ------------------------------------------------------------------------------------


def test_a_second_lock_on_a_directory_is_refused_until_the_first_is_released(
    tmp_path: Path,
) -> None:
    with DataDirLock(tmp_path / "data") as held:
        assert held.held
        with pytest.raises(StateError) as refused:
            DataDirLock(tmp_path / "data")
        message = str(refused.value)
        assert f"data directory {tmp_path / 'data'} is in use by another crawl" in message
        assert f"(process {os.getpid()})" in message
    assert not held.held
    DataDirLock(tmp_path / "data").release()


@pytest.mark.slow
def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from crawler.state import DataDirLock; "
            "lock = DataDirLock(Path(sys.argv[1])); print('held', flush=True); time.sleep(60)",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    with pytest.raises(StateError, match=f"process {holder.pid}"):
        DataDirLock(tmp_path)
    holder.kill()
    holder.wait()
    DataDirLock(tmp_path).release()


# --- a damaged state on resume (issue 17): refused before anything is written ----------------


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def _filled_state(directory: Path) -> None:
    state = open_state(directory, StateConfig(), RobotsOptions())
    for origin in range(20):
        for n in range(100):
            url = f"https://h{origin}.test/page/{n}"
            if state.seen.add(url):
                state.frontier.push(f"https://h{origin}.test", QueuedUrl(url, 1))
    state.close()


def test_an_empty_state_file_is_refused_not_taken_for_a_new_one(tmp_path: Path) -> None:
    (tmp_path / STATE_NAME).write_bytes(b"")
    with pytest.raises(StateError) as caught:
        open_state(tmp_path, StateConfig(), RobotsOptions())
    message = str(caught.value)
    assert message.startswith(f"crawl state {tmp_path / STATE_NAME} is empty (0 bytes)")
    assert "nothing in the data directory was changed" in message
    assert "--fresh" in message
    assert _files(tmp_path) == {STATE_NAME: b""}


@pytest.mark.parametrize("damage", ["garbage", "truncated", "page"])
def test_a_damaged_state_file_is_refused_and_left_as_it_was(tmp_path: Path, damage: str) -> None:
    _filled_state(tmp_path)
    path = tmp_path / STATE_NAME
    data = bytearray(path.read_bytes())
    if damage == "garbage":
        data = bytearray(b"\x8f\x13 not a database " * 4096)
    elif damage == "truncated":
        del data[len(data) // 2 :]
    else:  # one b-tree page of the queue overwritten, the file's header intact
        page = 4096
        data[3 * page : 4 * page] = b"\xa5" * page
    path.write_bytes(bytes(data))
    before = _files(tmp_path)
    with pytest.raises(StateError) as caught:
        open_state(tmp_path, StateConfig(), RobotsOptions())
    message = str(caught.value)
    assert message.startswith(f"crawl state {path} is damaged or is not a crawl state (")
    assert "--fresh" in message
    assert len(message) < len(str(path)) + 400
    # Not written to, and no -wal or -shm files left behind by the check.
    assert _files(tmp_path) == before


def test_a_queued_requisite_stays_one_when_the_frontier_is_reopened(reopen: Opener) -> None:
    state = reopen()
    requisite = QueuedUrl(f"{A}/style.css", requisite_of=f"{A}/page")
    state.frontier.push(A, requisite)
    state.frontier.push(A, item("page"))
    state.close()
    state = reopen()
    assert state.frontier.pop(A) == requisite
    assert state.frontier.pop(A) == item("page")
    state.close()
