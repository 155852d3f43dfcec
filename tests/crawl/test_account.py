"""Every URL the crawl meets is accounted for once: fetched, skipped with its reason and detail,
or still queued; and `met == fetched + skipped + queued`. The servers' own logs say what was
fetched; the index and skips.jsonl say what was skipped."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from support.crawling import make_config, run
from support.loopback import ADDRESSES, LoopbackWeb

from crawler import Crawler
from crawler.config import Config, LimitsConfig
from crawler.state import open_state
from crawler.stats import CrawlStats

pytestmark = pytest.mark.loopback

A, B, C = ADDRESSES[:3]
OUTSIDE = "http://127.0.9.1/outside"
"""Out of scope: never requested."""
INTERNAL = "127.0.9.2"
"""In scope, at an address no seed names nor fetch.allow_addresses lists: never connected to."""


def skip_rows(data_dir: Path) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(data_dir / "index.sqlite") as connection:
        rows = connection.execute("SELECT url, reason, detail FROM skips").fetchall()
    return {url: (reason, detail) for url, reason, detail in rows}


def skip_lines(data_dir: Path) -> list[dict[str, str]]:
    text = (data_dir / "skips.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def adds_up(stats: CrawlStats) -> bool:
    return stats.met == stats.fetched + sum(stats.skips.values()) + stats.queued


def every_kind_config() -> Config:
    return make_config(
        scope={
            "allow_domains": ("nowhere.invalid", C, INTERNAL),
            "deny": ("/denied",),
            "allow": (r"^(?!.*/unallowed)",),
        },
        limits=LimitsConfig(max_depth=2),
        politeness={"min_delay": 0.0, "max_crawl_delay": 5.0, "over_max_crawl_delay": "skip"},
        robots={"retry_initial": 0.05, "retry_max": 0.2, "give_up_after": 3600.0},
        output={"format": "both"},
        # C, not a seed's host, stands for a public one; INTERNAL for one inside the network.
        fetch={"allow_addresses": (C,)},
    )


async def test_a_site_with_every_kind_of_skip_accounts_for_each_url_once(tmp_path: Path) -> None:
    async with LoopbackWeb(A, B, C) as net:
        a, b, c = net[A], net[B], net[C]
        a.robots("User-agent: *\nDisallow: /private\n")
        c.robots("User-agent: *\nCrawl-delay: 60\n")
        # Every kind of link, and most of them twice, on two pages: each URL counts once.
        links = (
            "/1",
            "/private/a",  # robots.txt
            OUTSIDE,  # out of scope: host
            "/denied/x",  # scope.deny
            "/unallowed/x",  # no scope.allow pattern matches
            "/photo.JPG",  # an extension in scope.skip_extensions
            "/gone",  # 404: fetched
            "/moved",  # a redirect out of scope, to OUTSIDE: met already
            "/moved-away",  # a redirect out of scope to a URL met here first
            "/moved-in",  # a redirect within the site
            "http://nowhere.invalid/page",  # its host is given up
            c.url("/"),  # its host asks a Crawl-delay over the cap
            f"http://{INTERNAL}/inside",  # its address is one no seed names
        )
        a.page("/", *links)
        a.page("/1", *links, "/2")
        a.page("/2", "/3", "/private/b")  # depth 2: its links are past limits.max_depth
        a.redirect("/moved", OUTSIDE)
        a.redirect("/moved-away", "http://127.0.9.1/elsewhere")
        a.redirect("/moved-in", "/target")
        a.page("/target", "/1")
        b.robots("")
        seeds = [a.url("/"), "http://[bad/", b.url("/")]
        b.page("/", a.url("/1"), OUTSIDE)
        _records, crawler = await run(every_kind_config(), seeds, data_dir=tmp_path)
    stats = crawler.stats
    assert stats.outcome == "finished"
    requested = [path for path in net.paths(A) if path != "/robots.txt"]
    requested += [path for path in net.paths(B) if path != "/robots.txt"]
    assert sorted(requested) == sorted(
        ["/", "/1", "/2", "/gone", "/moved", "/moved-away", "/moved-in", "/target", "/"]
    )
    assert net.paths(C) == ["/robots.txt"]
    assert stats.fetched == len(requested)
    assert stats.skips == {
        "invalid seed": 1,
        "disallowed by robots.txt": 1,
        "out of scope: host": 2,
        "out of scope: deny pattern": 1,
        "out of scope: no allow pattern": 1,
        "not HTML by its extension": 1,
        "over limits.max_depth": 2,
        "host given up": 1,
        "host skipped": 1,
        "address refused": 1,
    }
    assert stats.queued == 0
    # 3 seeds, 13 links on /, /2 on /1, 2 on /2, 2 redirect targets.
    assert stats.met == 3 + 13 + 1 + 2 + 2 and adds_up(stats)
    rows = skip_rows(tmp_path)
    assert len(rows) == sum(stats.skips.values())
    assert Counter(reason for reason, _ in rows.values()) == stats.skips
    lines = skip_lines(tmp_path)
    assert len(lines) == len(rows) and {line["url"] for line in lines} == set(rows)
    assert "line 2 'Disallow: /private'" in rows[a.url("/private/a")][1]
    assert rows[OUTSIDE][1] == "127.0.9.1 is not a seed's host, nor in an allowed domain"
    assert rows["http://127.0.9.1/elsewhere"] == (
        "out of scope: host",
        f"redirect from {a.url('/moved-away')}",
    )
    assert rows[a.url("/denied/x")][1] == "scope.deny '/denied' matches"
    assert rows[a.url("/unallowed/x")][1] == "no scope.allow pattern matches"
    assert rows[a.url("/photo.JPG")][1] == "extension .jpg is in scope.skip_extensions"
    assert rows[a.url("/3")] == (
        "over limits.max_depth",
        "found at depth 3; limits.max_depth is 2",
    )
    assert rows["http://nowhere.invalid/page"][1].startswith("robots.txt unreachable: dns")
    assert "Crawl-delay 60 s over the cap 5 s" in rows[c.url("/")][1]
    assert rows[f"http://{INTERNAL}/inside"] == (
        "address refused",
        f"{INTERNAL} is at {INTERNAL}, a loopback address, not one a seed names: not connected "
        "to (fetch.allow_addresses lets one in)",
    )
    assert not set(rows) & {a.url(path) for path in requested}


async def test_a_link_past_the_depth_is_crawled_when_found_again_within_it(
    tmp_path: Path,
) -> None:
    """A's /x is first found at depth 2, past limits.max_depth 1, and held; B's front page, later
    (B asks a Crawl-delay), links it at depth 1: it is crawled, its skip withdrawn."""
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("")
        a.page("/", "/1")
        a.page("/1", "/x")
        a.page("/x")
        b.robots("User-agent: *\nCrawl-delay: 0.3\n")
        b.page("/", a.url("/x"))
        config = make_config(limits=LimitsConfig(max_depth=1), output={"format": "index"})
        _records, crawler = await run(config, [a.url("/"), b.url("/")], data_dir=tmp_path)
    assert net.paths(A) == ["/robots.txt", "/", "/1", "/x"]
    assert crawler.stats.skips == {}
    assert crawler.stats.met == 4 and adds_up(crawler.stats)
    assert skip_rows(tmp_path) == {}


async def test_raising_the_depth_on_resume_crawls_the_links_held_for_it(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        a.page("/", "/1")
        a.page("/1", "/2", "/2b")
        a.page("/2", "/3")
        a.page("/2b")
        a.page("/3")
        shallow = make_config(limits=LimitsConfig(max_depth=1), output={"format": "index"})
        seeds = [a.url("/")]
        _records, first = await run(shallow, seeds, data_dir=tmp_path)
        assert net.paths(A) == ["/robots.txt", "/", "/1"]
        assert first.stats.skips == {"over limits.max_depth": 2}
        assert set(skip_rows(tmp_path)) == {a.url("/2"), a.url("/2b")}
        assert adds_up(first.stats)
        # The same depth again: nothing new, the URLs stay held.
        _records, again = await run(shallow, seeds, data_dir=tmp_path)
        assert net.paths(A) == ["/robots.txt", "/", "/1"]
        assert again.stats.skips == {"over limits.max_depth": 2}
        deeper = make_config(limits=LimitsConfig(max_depth=3), output={"format": "index"})
        _records, second = await run(deeper, seeds, data_dir=tmp_path)
    assert net.paths(A)[3:] == ["/2", "/2b", "/3"]
    assert second.stats.skips == {}
    assert second.stats.met == 5 and second.stats.fetched == 5 and adds_up(second.stats)
    assert skip_rows(tmp_path) == {}
    state = open_state(tmp_path, deeper.state, deeper.robots.options())
    try:
        assert len(state.held) == 0
    finally:
        state.close()


async def test_a_stopped_crawl_accounts_for_what_is_left_queued(tmp_path: Path) -> None:
    """limits.max_pages stops the crawl with URLs queued: they are neither fetched nor skipped."""
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        a.page("/", *(f"/{n}" for n in range(10)))
        for n in range(10):
            a.page(f"/{n}")
        config = make_config(limits=LimitsConfig(max_pages=3))
        async with Crawler(config, data_dir=tmp_path) as crawler:
            [record async for record in crawler.crawl([a.url("/")])]
    stats = crawler.stats
    assert stats.outcome == "page limit"
    assert stats.met == 11 and stats.fetched == 3 and stats.queued == 8
    assert adds_up(stats)
