"""crawler.crawl.decide for sitemaps: which sitemaps a robots.txt names are taken, which met are
refused, and the record a sitemap read leaves, as tables. No server, no event loop."""

from __future__ import annotations

from typing import Any

import pytest

from crawler.config import SitemapsConfig
from crawler.crawl.decide import (
    OVER_SITEMAP_DEPTH,
    OVER_SITEMAP_FILES,
    SitemapsNamed,
    sitemap_record,
    sitemap_refusal,
    sitemaps_named,
)
from crawler.crawl.scope import Scope
from crawler.output.records import PageRecord, Skip
from crawler.page.sitemap import SitemapEntry, SitemapRead
from crawler.robots.entry import RobotsEntry
from crawler.robots.txt import RobotsTxt

NOW = 1_700_000_000.0
SITE = "https://example.org"
ROBOTS = f"{SITE}/robots.txt"


def entry(text: str, *, unreachable: bool = False) -> RobotsEntry:
    robots = RobotsTxt.parse(text.encode()) if not unreachable else RobotsTxt.disallow_all("x")
    return RobotsEntry(SITE, robots, NOW, NOW + 60, "status 200", unreachable)


NAMING = entry(
    "User-agent: *\nDisallow:\n"
    "Sitemap: /a.xml\nSitemap: https://cdn.example/b.xml\nSitemap: http://[bad/c.xml\n"
)


# --- sitemaps_named ------------------------------------------------------------------------------


def test_the_sitemaps_named_are_resolved_against_the_robots_txt() -> None:
    named = sitemaps_named(NAMING, SITE, SitemapsConfig(), queued=0)
    assert named is not None
    assert named.robots_url == ROBOTS
    assert named.urls == (f"{SITE}/a.xml", "https://cdn.example/b.xml")
    [(value, why)] = named.unusable
    assert value == "http://[bad/c.xml" and why
    assert (named.named, named.room) == (3, None)


@pytest.mark.parametrize(
    ("config", "given", "expected"),
    [
        # Sitemaps off, or no rules to read them from: none.
        (SitemapsConfig(enabled=False), NAMING, None),
        (SitemapsConfig(), entry("", unreachable=True), None),
        # None named: /sitemap.xml only when asked to try it.
        (SitemapsConfig(), entry("User-agent: *\nDisallow:\n"), SitemapsNamed(ROBOTS, ())),
        (
            SitemapsConfig(try_default=True),
            entry("User-agent: *\nDisallow:\n"),
            SitemapsNamed(ROBOTS, (f"{SITE}/sitemap.xml",), named=1),
        ),
    ],
)
def test_sitemaps_named(
    config: SitemapsConfig, given: RobotsEntry, expected: SitemapsNamed | None
) -> None:
    assert sitemaps_named(given, SITE, config, queued=0) == expected


@pytest.mark.parametrize(
    ("max_files", "queued", "urls", "room"),
    [
        (5, 0, 2, None),
        (2, 0, 2, 2),  # the unusable third is past the room: not even tried
        (5, 4, 1, 1),  # files queued before in this run count
        (5, 5, 0, 0),
        (5, 9, 0, 0),
    ],
)
def test_sitemaps_named_stop_at_max_files(
    max_files: int, queued: int, urls: int, room: int | None
) -> None:
    named = sitemaps_named(NAMING, SITE, SitemapsConfig(max_files=max_files), queued)
    assert named is not None
    assert (len(named.urls), named.room, named.named) == (urls, room, 3)


# --- sitemap_refusal -----------------------------------------------------------------------------

SCOPE = Scope.for_seeds((f"{SITE}/",))


@pytest.mark.parametrize(
    ("url", "level", "files", "expected"),
    [
        (f"{SITE}/a.xml", 1, 0, None),
        (f"{SITE}/a.xml", 3, 999, None),
        (
            "https://cdn.example/b.xml",
            1,
            0,
            Skip(
                "https://cdn.example/b.xml",
                "out of scope: host",
                f"a sitemap named in {ROBOTS}: "
                + SCOPE.explain("https://cdn.example/b.xml", "out of scope: host"),
            ),
        ),
        (
            f"{SITE}/deep.xml",
            4,
            0,
            Skip(
                f"{SITE}/deep.xml",
                OVER_SITEMAP_DEPTH,
                f"a sitemap at level 4, named in {ROBOTS}; sitemaps.max_depth is 3",
            ),
        ),
        (
            f"{SITE}/more.xml",
            2,
            1000,
            Skip(
                f"{SITE}/more.xml",
                OVER_SITEMAP_FILES,
                f"a sitemap named in {ROBOTS}: {SITE} has led to sitemaps.max_files (1000) "
                "sitemaps in this run",
            ),
        ),
    ],
)
def test_sitemap_refusal(url: str, level: int, files: int, expected: Skip | None) -> None:
    refusal = sitemap_refusal(
        url, level, SITE, ROBOTS, scope=SCOPE, config=SitemapsConfig(), files=files
    )
    assert refusal == expected


# --- sitemap_record ------------------------------------------------------------------------------


def record(**fields: Any) -> PageRecord:
    base: dict[str, Any] = {
        "url": f"{SITE}/a.xml",
        "final_url": f"{SITE}/a.xml",
        "status": 200,
        "fetched_at": NOW,
        "depth": 0,
    }
    return PageRecord(**{**base, **fields})


ENTRIES = (SitemapEntry(f"{SITE}/1"), SitemapEntry(f"{SITE}/2"))


@pytest.mark.parametrize(
    ("read", "truncated", "expected"),
    [
        (
            SitemapRead("urlset", ENTRIES),
            False,
            {"index_reason": "a sitemap: 2 entries", "follow": True, "cut": None, "error": None},
        ),
        (
            SitemapRead(
                "index", ENTRIES, skipped=(("x", "no URL"),), refused=((f"{SITE}/3", "rule"),)
            ),
            False,
            {"index_reason": "a sitemap index: 2 entries, 1 refused, 1 unusable", "follow": True},
        ),
        (
            SitemapRead(None, (), error="not XML"),
            False,
            {
                "index_reason": "no sitemap: 0 entries",
                "follow": False,
                "follow_reason": "not XML",
                "error": "not XML",
            },
        ),
        # Cut by the download's cap: whatever broke at the cut is the cut.
        (
            SitemapRead("text", ENTRIES, error="a line cut in two"),
            True,
            {
                "index_reason": "a text sitemap: 2 entries",
                "cut": "more than sitemaps.max_bytes (1024 bytes)",
                "error": None,
            },
        ),
        (
            SitemapRead("urlset", ENTRIES, cut="more than 2 entries"),
            True,
            {"cut": "more than 2 entries", "error": None},
        ),
    ],
)
def test_sitemap_record(read: SitemapRead, truncated: bool, expected: dict[str, Any]) -> None:
    made = sitemap_record(record(), read, truncated=truncated, max_bytes=1024)
    assert made.links == tuple(entry.url for entry in read.entries)
    assert {key: getattr(made, key) for key in expected} == expected
