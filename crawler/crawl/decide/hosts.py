"""A due host: what its next queued URL leads to (a page, a sitemap, a page requisite, a skip,
or the end of its page budget), and what its robots.txt answer makes of it (obey it, wait, or
give the host up)."""

from __future__ import annotations

from enum import Enum

from crawler.crawl.decide.answers import NEVER_RETRIED
from crawler.crawl.decide.urls import robots_skip
from crawler.frontier import QueuedUrl
from crawler.output.records import Skip
from crawler.robots.entry import RobotsEntry

__all__ = [
    "BLOCKED",
    "GIVE_UP",
    "OBEY",
    "OVER_BUDGET",
    "PAGE",
    "PAGE_BUDGET",
    "PERMANENT_FAILURES",
    "PERMANENT_TRIES",
    "REQUISITE",
    "SITEMAP",
    "NextRequest",
    "RobotsFate",
    "gives_up",
    "next_request",
    "robots_fate",
]

PAGE_BUDGET = "reached limits.max_pages_per_host"
"""Not a skip: the host's URLs past its budget stay queued."""
PERMANENT_FAILURES = frozenset({"dns", "tls"})
"""Failures no wait mends: a name that does not resolve, a certificate that fails verification."""
PERMANENT_TRIES = 2


class NextRequest(Enum):
    """What a due host's next queued URL leads to, unless robots.txt disallows it (a `Skip`)."""

    OVER_BUDGET = "over limits.max_pages_per_host"
    """The host has started its page budget: the URL goes back, the host's URLs stay queued."""
    SITEMAP = "a sitemap request"
    PAGE = "a page request"
    REQUISITE = "a page requisite's request"


OVER_BUDGET = NextRequest.OVER_BUDGET
SITEMAP = NextRequest.SITEMAP
PAGE = NextRequest.PAGE
REQUISITE = NextRequest.REQUISITE


def next_request(
    item: QueuedUrl, entry: RobotsEntry, pages: int, limit: int | None, token: str
) -> NextRequest | Skip:
    """What `item`, the next URL of a host that has started `pages` pages (limits.
    max_pages_per_host: `limit`), leads to under the robots.txt `entry` obeyed for `token`: the
    budget is asked first, so that a URL past it stays queued, disallowed or not. A page
    requisite is no page: no page budget holds it back."""
    if limit is not None and pages >= limit and item.requisite_of is None:
        return OVER_BUDGET
    skip = robots_skip(entry, item.url, token)
    if skip is not None:
        return skip
    if item.requisite_of is not None:
        return REQUISITE
    return SITEMAP if item.sitemap else PAGE


class RobotsFate(Enum):
    """What a robots.txt answer makes of its host."""

    OBEY = "obey its rules"
    BLOCKED = "nothing allowed for now: try again once the entry expires"
    GIVE_UP = "give the host up: its URLs become skips"


OBEY = RobotsFate.OBEY
BLOCKED = RobotsFate.BLOCKED
GIVE_UP = RobotsFate.GIVE_UP


def robots_fate(
    entry: RobotsEntry, unreachable_since: float | None, give_up_after: float
) -> RobotsFate:
    """What `entry`, just answered, makes of its host, whose robots.txt has failed to come since
    `unreachable_since` in this run (None: it came)."""
    if not entry.blocks:
        return OBEY
    if unreachable_since is not None and gives_up(entry, unreachable_since, give_up_after):
        return GIVE_UP
    return BLOCKED


def gives_up(entry: RobotsEntry, unreachable_since: float, give_up_after: float) -> bool:
    """Whether an origin whose robots.txt cannot be had (`entry.blocks`) is given up now: at its
    second try when the failure is one no wait mends, else when its next try would come more
    than `give_up_after` seconds after its first failure."""
    if entry.error in NEVER_RETRIED:
        return True
    if entry.error in PERMANENT_FAILURES:
        return entry.failures >= PERMANENT_TRIES
    return entry.expires_at - unreachable_since > give_up_after
