"""A URL coming in (a seed, a link, a sitemap's entry, a redirect's target): whether it is for
this crawl (scope, the shape of a trap, depth), whether robots.txt lets it be queued, why not in
words, and where a redirect's chain goes next."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

from crawler.config import LimitsConfig
from crawler.crawl.scope import Scope
from crawler.frontier import QueuedUrl
from crawler.output.records import Skip
from crawler.robots.entry import RobotsEntry
from crawler.stats import SkipReason
from crawler.urls import InvalidUrlError, most_repeats, path_segments, resolve_url

__all__ = [
    "ADDRESS_REFUSED",
    "HOST_GIVEN_UP",
    "HOST_SKIPPED",
    "LONG_URL_KEPT",
    "OVER_MAX_DEPTH",
    "PATH_REPEATS",
    "PATH_TOO_DEEP",
    "ROBOTS_DISALLOWED",
    "TRAP_REASONS",
    "URL_TOO_LONG",
    "Hop",
    "Seen",
    "Stop",
    "long_url_name",
    "out_of_bounds",
    "path_trap",
    "redirect_hop",
    "robots_skip",
    "trap_detail",
    "why_out",
]

ROBOTS_DISALLOWED: SkipReason = "disallowed by robots.txt"
HOST_SKIPPED: SkipReason = "host skipped"
HOST_GIVEN_UP: SkipReason = "host given up"
ADDRESS_REFUSED: SkipReason = "address refused"
"""The host is at an address the crawl does not connect to (crawler.http.addresses)."""
OVER_MAX_DEPTH: SkipReason = "over limits.max_depth"
URL_TOO_LONG: SkipReason = "over limits.max_url_length"
PATH_REPEATS: SkipReason = "over limits.max_path_repeats"
PATH_TOO_DEEP: SkipReason = "over limits.max_path_segments"
TRAP_REASONS = frozenset({URL_TOO_LONG, PATH_REPEATS, PATH_TOO_DEEP})


class Seen(Protocol):
    def __contains__(self, url: str) -> bool: ...


# --- URLs in -------------------------------------------------------------------------------------


def out_of_bounds(url: str, depth: int, *, scope: Scope, limits: LimitsConfig) -> SkipReason | None:
    """Why a normal URL found at `depth` is not for this crawl (out of scope, a trap's shape, too
    deep), or None. Its length is asked before (`Admission.offer`): a URL too long is never kept."""
    reason = scope.reason_out(url)
    if reason is not None:
        return reason
    reason = path_trap(url, limits)
    if reason is not None:
        return reason
    max_depth = limits.max_depth
    if max_depth is not None and depth > max_depth:
        return OVER_MAX_DEPTH
    return None


def path_trap(url: str, limits: LimitsConfig) -> SkipReason | None:
    """Whether `url`'s path has the shape of a crawler trap: too many segments, or a segment (or
    a group of them) repeated (`/a/a/a/`), as relative links that grow a path without end make."""
    segments = path_segments(url)
    if len(segments) > limits.max_path_segments:
        return PATH_TOO_DEEP
    if len(segments) > limits.max_path_repeats and most_repeats(segments) > limits.max_path_repeats:
        return PATH_REPEATS
    return None


LONG_URL_KEPT = 200
"""Characters of a URL over limits.max_url_length kept in its name."""


def long_url_name(url: str) -> str:
    """What stands for a URL over limits.max_url_length in the seen set and in its skip: its
    start and a digest of the whole, so neither keeps 100 KB per link."""
    digest = hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{url[:LONG_URL_KEPT]}...#sha256:{digest}"


def trap_detail(url: str, reason: SkipReason, limits: LimitsConfig) -> str:
    """A skip's detail for the reasons `path_trap` and the URL length give."""
    if reason == URL_TOO_LONG:
        return f"{len(url)} characters; limits.max_url_length is {limits.max_url_length}"
    segments = path_segments(url)
    if reason == PATH_TOO_DEEP:
        return (
            f"{len(segments)} path segments; limits.max_path_segments is {limits.max_path_segments}"
        )
    return (
        f"a path segment or group repeated {most_repeats(segments)} times in a row; "
        f"limits.max_path_repeats is {limits.max_path_repeats}"
    )


def why_out(url: str, reason: SkipReason, depth: int, scope: Scope, limits: LimitsConfig) -> str:
    """A skip's detail for the reason `out_of_bounds` gave."""
    if reason == OVER_MAX_DEPTH:
        return f"found at depth {depth}; limits.max_depth is {limits.max_depth}"
    if reason in (PATH_REPEATS, PATH_TOO_DEEP):
        return trap_detail(url, reason, limits)
    return scope.explain(url, reason)


def robots_skip(entry: RobotsEntry | None, url: str, token: str) -> Skip | None:
    """The skip, with the deciding line, when `url` is disallowed by the rules known for its origin;
    None when allowed or when no rules are known yet (the URL is checked again before its fetch)."""
    if entry is None or entry.blocks:
        return None
    robots = entry.robots
    if robots.can_fetch(url, token):
        return None
    return Skip(url, ROBOTS_DISALLOWED, robots.explain(url, token).message)


# --- redirects ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hop:
    item: QueuedUrl
    """The redirect's target, queued like any URL: robots.txt, scope and politeness apply."""
    seed_moved: bool = False
    """A seed's redirect chain led to a host out of scope, which joins the seeds' hosts: the
    everyday `http://example.org/` -> `https://www.example.org/`."""


@dataclass(frozen=True, slots=True)
class Stop:
    error: str
    """Why the chain ends here, for the record of the URL that redirected."""
    skip: Skip | None = None
    """The target skipped, when a rule skipped it (scope); None when it is unusable or seen."""


def redirect_hop(
    item: QueuedUrl,
    status: int,
    location: str,
    *,
    scope: Scope,
    seen: Seen,
    max_redirects: int,
    limits: LimitsConfig,
    from_seed: bool = False,
) -> Hop | Stop:
    """Where a redirect from `item` goes: the next hop of its chain, or why the chain stops.
    `from_seed`: the chain started at a seed, so its hops may take their hosts into scope."""
    try:
        target = resolve_url(item.url, location)
    except InvalidUrlError as error:
        return Stop(f"redirect to an unusable URL ({error.reason})")
    if len(item.redirected_from) >= max_redirects:
        return Stop(f"more than fetch.max_redirects ({max_redirects}) redirects")
    if len(target) > limits.max_url_length:
        name = long_url_name(target)
        detail = trap_detail(target, URL_TOO_LONG, limits)
        skip = None if name in seen else Skip(name, URL_TOO_LONG, detail)
        return Stop(f"redirect to a URL over limits.max_url_length ({detail})", skip)
    reason = scope.reason_out_of_hosts(target) if item.sitemap else scope.reason_out(target)
    moved = False
    if reason == "out of scope: host" and from_seed:
        # The host would join the seeds' hosts; a pattern may still keep the URL out.
        reason = scope.reason_out_as_seed(target)
        moved = reason is None
    if reason is None:
        reason = path_trap(target, limits)
    if reason is not None:
        # A URL met before is accounted for already: one skip per URL.
        skip = None if target in seen else Skip(target, reason, f"redirect from {item.url}")
        return Stop(f"redirect to {target} not followed: {reason}", skip)
    if target in seen:
        return Stop(f"redirect to {target}, a URL already seen")
    chain = (*item.redirected_from, item.url)
    hop = QueuedUrl(
        target,
        item.depth,
        chain,
        redirect_status=status,
        sitemap=item.sitemap,
        declared_by=item.declared_by,
        lastmod=item.lastmod,
        earlier=item.earlier,
    )
    return Hop(hop, moved)
