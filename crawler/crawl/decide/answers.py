"""An answer's fate: what a page request's answer leads to (ask again after a backoff, follow a
redirect, read it), whether a failed URL is asked again, and, in a recrawl, which validators to
send and what a fetch found against the last one."""

from __future__ import annotations

from dataclasses import dataclass

from crawler.crawl.scope import Scope
from crawler.frontier import Earlier, QueuedUrl
from crawler.http.answer import FetchFailure, Response
from crawler.output.records import Change, PageRecord
from crawler.politeness import parse_retry_after

__all__ = [
    "GONE_STATUSES",
    "NEVER_RETRIED",
    "PASS_GAP",
    "READ",
    "REFUSAL_STATUSES",
    "RETRY_STATUSES",
    "AskAgain",
    "Failed",
    "GiveUp",
    "Read",
    "Redirect",
    "after_failure",
    "after_refusal",
    "change_of",
    "conditional_headers",
    "due_again",
    "found_by",
    "judge",
    "next_due",
    "unchanged_by_lastmod",
]

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""Answers worth asking again after a backoff; any other is the page's answer."""
REFUSAL_STATUSES = frozenset({429, 503})
"""Answers that refuse a request for now: the server asks for less (crawler.pace)."""
NEVER_RETRIED = frozenset({"blocked"})
"""Failures no try mends: fetch.block_private_addresses refused the address."""


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

    @property
    def refused(self) -> bool:
        """A 429 or 503: throttled, not broken."""
        return self.status in REFUSAL_STATUSES


@dataclass(frozen=True, slots=True)
class Redirect:
    location: str


@dataclass(frozen=True, slots=True)
class Read:
    """The answer is the URL's: read it (a page, an error page, a redirect without Location)."""


READ = Read()


PROXY_REFUSED = (
    "status 407: the proxy asks for credentials (fetch.proxy_username, fetch.proxy_password_env)"
)


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
    if status == 407:
        # The proxy's answer (fetch.proxy), not the site's: no page came, and no try mends it.
        return Failed(PROXY_REFUSED, status, None, final=True)
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
    throttled = ", throttled" if failed.refused else ""
    return GiveUp(f"{failed.error}{throttled} ({item.attempts + 1} tries)")


def after_refusal(
    item: QueuedUrl, failed: Failed, refusal_streak: int, max_refusals: int
) -> AskAgain | None:
    """A refused URL (429, 503) is asked again as it was, its retries unspent, while its host's
    refusals in a row are at most `max_refusals`; None: past them, it is a failure like any."""
    if failed.refused and refusal_streak <= max_refusals:
        return AskAgain(item)
    return None


# --- recrawls ------------------------------------------------------------------------------------

GONE_STATUSES = frozenset({404, 410})


def due_again(item: QueuedUrl, due_before: float, scope: Scope) -> bool:
    """Whether a URL fetched before (`item`, with what that fetch found) is queued again by a
    recrawl pass: last fetched no later than `due_before`, and in the scope the seeds give now."""
    assert item.earlier is not None
    if item.earlier.fetched_at > due_before:
        return False
    out = scope.reason_out_of_hosts(item.url) if item.sitemap else scope.reason_out(item.url)
    return out is None


PASS_GAP = 1.0
"""Seconds at least between two times a crawl kept fresh queues the URLs due: when those it
queued fetched nothing (spared, skipped, their host given up), it does not queue them at once."""


def next_due(fetched_at: float, interval: float, considered: float | None) -> float:
    """When a URL last fetched at `fetched_at` and revisited every `interval` seconds is due
    again, the URLs due having last been queued at `considered` (None: never). A URL that was
    due then and has not been fetched since was considered then (spared by its sitemap's
    lastmod, skipped, its host given up): it is due an interval after."""
    due = fetched_at + interval
    if considered is not None and due <= considered:
        due = considered + interval
    return due


def unchanged_by_lastmod(lastmod: float | None, earlier: Earlier) -> bool:
    """Whether a sitemap read again in a recrawl, listing a URL with `lastmod`, says it has not
    changed since its last fetch (`earlier`)."""
    return lastmod is not None and lastmod <= earlier.fetched_at


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
