"""The crawl's own decisions, as plain functions: whether a URL found is admitted, what a request's
answer leads to (ask again, follow a redirect hop, read the page), whether a failed URL is asked
again, where a redirect goes. Pure: values in, a decision out; the shell (crawler.crawl.answers)
acts on it. No I/O, no clock: time comes in as `now`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

from crawler.config import LimitsConfig
from crawler.crawl.scope import Scope
from crawler.frontier import Earlier, QueuedUrl
from crawler.http.answer import FetchFailure, Response
from crawler.output.records import Change, PageRecord, Skip
from crawler.politeness import parse_retry_after
from crawler.robots.entry import RobotsEntry
from crawler.stats import SkipReason
from crawler.urls import InvalidUrlError, most_repeats, path_segments, resolve_url

__all__ = [
    "HOST_GIVEN_UP",
    "HOST_SKIPPED",
    "PERMANENT_FAILURES",
    "READ",
    "RETRY_STATUSES",
    "ROBOTS_DISALLOWED",
    "AskAgain",
    "Failed",
    "GiveUp",
    "Hop",
    "Read",
    "Redirect",
    "Stop",
    "after_failure",
    "gives_up",
    "judge",
    "out_of_bounds",
    "redirect_hop",
    "robots_skip",
]

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""Answers worth asking again after a backoff; any other is the page's answer."""
ROBOTS_DISALLOWED: SkipReason = "disallowed by robots.txt"
HOST_SKIPPED: SkipReason = "host skipped"
HOST_GIVEN_UP: SkipReason = "host given up"
OVER_MAX_DEPTH: SkipReason = "over limits.max_depth"
URL_TOO_LONG: SkipReason = "over limits.max_url_length"
PATH_REPEATS: SkipReason = "over limits.max_path_repeats"
PATH_TOO_DEEP: SkipReason = "over limits.max_path_segments"
TRAP_REASONS = frozenset({URL_TOO_LONG, PATH_REPEATS, PATH_TOO_DEEP})
PAGE_BUDGET = "reached limits.max_pages_per_host"
"""Not a skip: the host's URLs past its budget stay queued."""
PERMANENT_FAILURES = frozenset({"dns", "tls"})
NEVER_RETRIED = frozenset({"blocked"})
"""Failures no try mends: fetch.block_private_addresses refused the address."""
"""Failures no wait mends: a name that does not resolve, a certificate that fails verification."""
PERMANENT_TRIES = 2


class Seen(Protocol):
    def __contains__(self, url: str) -> bool: ...


# --- URLs in -------------------------------------------------------------------------------------


def out_of_bounds(url: str, depth: int, *, scope: Scope, limits: LimitsConfig) -> SkipReason | None:
    """Why a normal URL found at `depth` is not for this crawl (out of scope, a trap's shape, too
    deep), or None. Its length is asked before (`HostWork.offer`): a URL too long is never kept."""
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


def robots_skip(entry: RobotsEntry | None, url: str, token: str) -> Skip | None:
    """The skip, with the deciding line, when `url` is disallowed by the rules known for its origin;
    None when allowed or when no rules are known yet (the URL is checked again before its fetch)."""
    if entry is None or entry.blocks:
        return None
    robots = entry.robots
    if robots.can_fetch(url, token):
        return None
    return Skip(url, ROBOTS_DISALLOWED, robots.explain(url, token).message)


# --- answers -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Failed:
    """No usable answer yet: worth asking again after a backoff."""

    error: str
    status: int | None = None
    retry_after: float | None = None
    """Seconds the host asked us to wait (Retry-After), 0 for no backoff at all, None for the
    usual backoff."""
    final: bool = False
    """No try can mend it (the address is one fetch.block_private_addresses refuses)."""


@dataclass(frozen=True, slots=True)
class Redirect:
    location: str


@dataclass(frozen=True, slots=True)
class Read:
    """The answer is the URL's: read it (a page, an error page, a redirect without Location)."""


READ = Read()


def judge(answer: Response | FetchFailure, now: float) -> Failed | Redirect | Read:
    """What an answer to a page request leads to."""
    if isinstance(answer, FetchFailure):
        # A kept-alive connection the server closed as the request came is no sign of trouble:
        # asked again at the host's pace, without a backoff (crawler.http.http1).
        return Failed(
            str(answer),
            None,
            0.0 if answer.kind == "closed" else None,
            final=answer.kind in NEVER_RETRIED,
        )
    status = answer.status
    if status in RETRY_STATUSES:
        retry_after = None
        if status in (429, 503):
            retry_after = parse_retry_after(answer.headers.get("Retry-After"), now)
        return Failed(f"status {status}", status, retry_after)
    if 300 <= status < 400:
        location = answer.location
        if location:
            return Redirect(location)
    return READ


@dataclass(frozen=True, slots=True)
class AskAgain:
    item: QueuedUrl
    """The URL with one more attempt counted."""


@dataclass(frozen=True, slots=True)
class GiveUp:
    error: str
    """The record's error: the last failure and how many tries it took."""


def after_failure(item: QueuedUrl, failed: Failed, max_retries: int) -> AskAgain | GiveUp:
    if item.attempts < max_retries and not failed.final:
        return AskAgain(item.retried())
    return GiveUp(f"{failed.error} ({item.attempts + 1} tries)")


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


# --- recrawls ------------------------------------------------------------------------------------

GONE_STATUSES = frozenset({404, 410})


def conditional_headers(earlier: Earlier | None) -> tuple[tuple[str, str], ...]:
    """A recrawl's conditional GET: the validators the last answer gave (RFC 9110, 13.1)."""
    if earlier is None:
        return ()
    headers = []
    if earlier.etag:
        headers.append(("If-None-Match", earlier.etag))
    if earlier.last_modified:
        headers.append(("If-Modified-Since", earlier.last_modified))
    return tuple(headers)


def change_of(earlier: Earlier | None, status: int | None, digest: str | None) -> Change:
    """What a fetch that got `status` (None: no answer) and a body of `digest` found, against
    the URL's last fetch."""
    if earlier is None:
        return "new"
    if status is None:
        return "failed"
    if status == 304:
        return "unchanged"
    if status in GONE_STATUSES:
        return "unchanged" if earlier.status in GONE_STATUSES else "gone"
    if status == earlier.status and digest == earlier.digest:
        return "unchanged"
    return "changed"


def found_by(record: PageRecord, earlier: Earlier | None) -> Earlier:
    """What a recrawl keeps of a fetch, to ask next time whether it changed. An unchanged answer
    (a 304 has no body) keeps what the last one found, with fresh validators if it sent any; a
    failed one keeps it whole (still due); validators of a redirect chain's last hop are not
    sent to its first URL."""
    if earlier is not None and record.change == "failed":
        return earlier
    direct = not record.redirects
    etag = record.etag if direct else None
    last_modified = record.last_modified if direct else None
    if earlier is not None and record.change == "unchanged":
        return Earlier(
            record.fetched_at,
            earlier.status,
            etag or earlier.etag,
            last_modified or earlier.last_modified,
            earlier.digest,
        )
    return Earlier(record.fetched_at, record.status, etag, last_modified, record.digest)


# --- hosts ---------------------------------------------------------------------------------------


def gives_up(entry: RobotsEntry, unreachable_since: float, give_up_after: float) -> bool:
    """Whether an origin whose robots.txt cannot be had (`entry.blocks`) is given up now: at its
    second try when the failure is one no wait mends, else when its next try would come more
    than `give_up_after` seconds after its first failure."""
    if entry.error in NEVER_RETRIED:
        return True
    if entry.error in PERMANENT_FAILURES:
        return entry.failures >= PERMANENT_TRIES
    return entry.expires_at - unreachable_since > give_up_after
