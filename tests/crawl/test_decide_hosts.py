"""crawler.crawl.decide, a due host's side: what its next queued URL leads to (`next_request`),
what its robots.txt answer makes of it (`robots_fate`), and which URLs a recrawl queues again or
a sitemap spares, as tables. No server, no event loop."""

from __future__ import annotations

from dataclasses import replace

import pytest

from crawler.crawl.decide import (
    BLOCKED,
    GIVE_UP,
    OBEY,
    OVER_BUDGET,
    PAGE,
    REQUISITE,
    SITEMAP,
    NextRequest,
    RobotsFate,
    due_again,
    next_due,
    next_request,
    robots_fate,
    unchanged_by_lastmod,
)
from crawler.crawl.scope import Scope
from crawler.frontier import Earlier, QueuedUrl
from crawler.output.records import Skip
from crawler.robots.entry import RobotsEntry
from crawler.robots.txt import RobotsTxt

NOW = 1_700_000_000.0
SITE = "https://example.org"
RULES = RobotsTxt.parse("User-agent: *\nDisallow: /private\n")
ALLOWED = RobotsEntry(SITE, RULES, NOW, NOW + 60, "status 200")
PAGE_URL = QueuedUrl(f"{SITE}/page", 1)
PRIVATE = QueuedUrl(f"{SITE}/private/page", 1)
SITEMAP_URL = QueuedUrl(f"{SITE}/sitemap.xml", 0, sitemap=1, declared_by=SITE)
REQUISITE_URL = QueuedUrl(f"{SITE}/style.css", requisite_of=f"{SITE}/page")


# --- next_request: what a due host's next URL leads to -------------------------------------------


@pytest.mark.parametrize(
    ("item", "pages", "limit", "expected"),
    [
        (PAGE_URL, 0, None, PAGE),
        (PAGE_URL, 10_000, None, PAGE),  # no per-host budget
        (PAGE_URL, 4, 5, PAGE),
        (PAGE_URL, 5, 5, OVER_BUDGET),
        (PAGE_URL, 6, 5, OVER_BUDGET),
        (SITEMAP_URL, 0, None, SITEMAP),
        (SITEMAP_URL, 5, 5, OVER_BUDGET),
        # The budget is asked first: a URL past it stays queued, disallowed or not.
        (PRIVATE, 5, 5, OVER_BUDGET),
        # A page requisite is no page: the page budget does not hold it back.
        (REQUISITE_URL, 0, None, REQUISITE),
        (REQUISITE_URL, 5, 5, REQUISITE),
    ],
)
def test_next_request(
    item: QueuedUrl, pages: int, limit: int | None, expected: NextRequest
) -> None:
    assert next_request(item, ALLOWED, pages, limit, "PoliteBot") is expected


def test_a_url_robots_txt_disallows_now_is_a_skip_with_its_line() -> None:
    skip = next_request(PRIVATE, ALLOWED, 0, 5, "PoliteBot")
    detail = "disallowed by line 2 'Disallow: /private' in the group (line 1: User-agent: *)"
    assert skip == Skip(PRIVATE.url, "disallowed by robots.txt", detail)


def test_a_sitemap_robots_txt_disallows_is_a_skip_too() -> None:
    sitemap = replace(SITEMAP_URL, url=f"{SITE}/private/sitemap.xml")
    assert isinstance(next_request(sitemap, ALLOWED, 0, None, "PoliteBot"), Skip)


def test_a_requisite_robots_txt_disallows_is_a_skip_past_the_budget_too() -> None:
    requisite = replace(REQUISITE_URL, url=f"{SITE}/private/style.css")
    assert isinstance(next_request(requisite, ALLOWED, 5, 5, "PoliteBot"), Skip)


# --- robots_fate: what a robots.txt answer makes of its host --------------------------------------


def unreachable(error: str, failures: int, retry_in: float, *, stale: bool = False) -> RobotsEntry:
    robots = RULES if stale else RobotsTxt.disallow_all("unreachable")
    entry = RobotsEntry(SITE, robots, NOW, NOW + retry_in, "unreachable", True, failures, stale)
    return replace(entry, error=error)


@pytest.mark.parametrize(
    ("entry", "since", "expected"),
    [
        (ALLOWED, None, OBEY),
        (
            RobotsEntry(SITE, RobotsTxt.allow_all("status 404"), NOW, NOW + 60, "status 404"),
            None,
            OBEY,
        ),
        # Unreachable, with the last good copy: its rules stand meanwhile.
        (unreachable("connection", 3, 60, stale=True), NOW - 10, OBEY),
        # Unreachable, nothing to crawl by: wait for the next try...
        (unreachable("connection", 1, 60), NOW, BLOCKED),
        (unreachable("connection", 5, 800), NOW, BLOCKED),
        # ... until it would come past robots.give_up_after (900 s here) since the first failure.
        (unreachable("connection", 6, 901), NOW, GIVE_UP),
        (unreachable("status 503", 2, 1000), NOW, GIVE_UP),
        # A name that does not resolve: its second try is its last.
        (unreachable("dns", 1, 60), NOW, BLOCKED),
        (unreachable("dns", 2, 180), NOW, GIVE_UP),
        # An address fetch.block_private_addresses refuses: given up at once.
        (unreachable("blocked", 1, 60), NOW, GIVE_UP),
    ],
)
def test_robots_fate(entry: RobotsEntry, since: float | None, expected: RobotsFate) -> None:
    assert robots_fate(entry, since, 900.0) is expected


# --- recrawls: due again, spared by a sitemap's lastmod ------------------------------------------

SCOPE = Scope.for_seeds((f"{SITE}/",), deny=(r"/private/",))
FETCHED = Earlier(NOW - 86_400, 200, None, None, "d1")


@pytest.mark.parametrize(
    ("item", "after", "expected"),
    [
        (QueuedUrl(f"{SITE}/a", 1, earlier=FETCHED), 3600.0, True),
        (QueuedUrl(f"{SITE}/a", 1, earlier=FETCHED), 86_400.0, True),  # exactly due
        (QueuedUrl(f"{SITE}/a", 1, earlier=FETCHED), 86_401.0, False),  # not yet
        # Out of the scope the seeds give now: left.
        (QueuedUrl(f"{SITE}/private/a", 1, earlier=FETCHED), 3600.0, False),
        (QueuedUrl("https://other.example/a", 1, earlier=FETCHED), 3600.0, False),
        # A sitemap is asked only whether its host is in scope, as when it was named.
        (
            QueuedUrl(f"{SITE}/private/sitemap.xml", 0, sitemap=1, earlier=FETCHED),
            3600.0,
            True,
        ),
    ],
)
def test_due_again(item: QueuedUrl, after: float, expected: bool) -> None:
    assert due_again(item, NOW - after, SCOPE) is expected


@pytest.mark.parametrize(
    ("fetched_at", "considered", "expected"),
    [
        (NOW, None, NOW + 3600.0),  # no pass yet: an interval after the fetch
        (NOW, NOW - 10.0, NOW + 3600.0),  # fetched since the URLs due were queued
        (NOW, NOW + 3600.0, NOW + 7200.0),  # due as they were queued, and not fetched since
        # Due when they were queued and not fetched since (spared, skipped): an interval after.
        (NOW - 7200.0, NOW, NOW + 3600.0),
        (NOW - 7200.0, NOW - 600.0, NOW + 3000.0),
    ],
)
def test_next_due(fetched_at: float, considered: float | None, expected: float) -> None:
    assert next_due(fetched_at, 3600.0, considered) == expected


@pytest.mark.parametrize(
    ("lastmod", "expected"),
    [
        (None, False),  # not listed with a lastmod: asked for
        (NOW - 90_000, True),  # unchanged since before the last fetch
        (NOW - 86_400, True),
        (NOW - 3600, False),  # changed since
    ],
)
def test_unchanged_by_lastmod(lastmod: float | None, expected: bool) -> None:
    assert unchanged_by_lastmod(lastmod, FETCHED) is expected
