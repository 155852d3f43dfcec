"""What a crawl produces: a `PageRecord` per URL it fetched, a `Skip` per URL it chose not to.

Plain values, shared by the crawl that makes them and the sinks that store them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import operator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from crawler.usage.signals import UsageSignal, signals_json

if TYPE_CHECKING:
    from crawler.http.answer import Response
    from crawler.page.read import Page
    from crawler.stats import SkipReason

__all__ = [
    "TIME_FIELDS",
    "Change",
    "PageRecord",
    "Skip",
    "Unskip",
    "body_digest",
    "compact_json",
    "iso_utc",
    "record_of",
]

Change: TypeAlias = Literal["new", "changed", "unchanged", "gone", "failed"]
"""What a fetch found against the URL's last one: new (no last one), changed, unchanged (a 304,
or the same status and body), gone (a 404 or 410 where there was a page), failed (no answer: what
was there stays)."""


def body_digest(body: bytes) -> str:
    """A body's digest, to tell a page that changed from one served again as it was: BLAKE2b,
    128 bits, hex."""
    return hashlib.blake2b(body, digest_size=16).hexdigest()


compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""JSON text as the crawl writes it everywhere (JSONL, the index, the state): characters as they
are, no spaces."""

TIME_FIELDS = ("fetched_at", "lastmod", "first_seen", "last_changed")
"""A page's times, epoch seconds as they have always been exported; each also as `<name>_iso`,
ISO 8601 in UTC (`iso_utc`), for the reader who wants a date: new fields beside the old ones, so
a program that reads the numbers reads them still."""


def iso_utc(epoch: float | None) -> str | None:
    """`2026-11-27T20:15:03.250Z`; None for no time, or one no calendar holds."""
    if epoch is None:
        return None
    try:
        moment = datetime.fromtimestamp(epoch, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class PageRecord:
    """One fetched URL, after its redirects: what came back and what the crawl did with it."""

    url: str
    """The URL the crawl set out to fetch (first of a redirect chain)."""
    final_url: str
    """The URL whose answer this is: `url` itself, or the last redirect hop fetched."""
    status: int | None
    """HTTP status of the final answer; None when no answer came (see `error`)."""
    fetched_at: float
    """Epoch seconds when the final request started."""
    depth: int
    content_type: str | None = None
    title: str | None = None
    description: str | None = None
    """The page's `<meta name="description">`."""
    language: str | None = None
    """`<html lang>`, else `<meta http-equiv="content-language">`."""
    text: str = ""
    """The visible text the page lets us index: empty when its robots rules say noindex. A page
    whose owner refuses the crawl's purpose keeps it here (`usage_refusal`), for the index to
    keep for other purposes; no export writes it for a purpose refused."""
    nosnippet_text: str = ""
    """Indexable text kept out of snippets: searchable, never shown. The text of nosnippet
    sections (`googleoff: snippet`) and of <nav>, <noscript> and role="navigation" elements
    (snippets come from what the page says, not from its menus or "enable JavaScript" notices);
    all the text of a nosnippet page. Empty unless `index`."""
    headings: str = ""
    """The text of the page's h1-h6 headings and defined terms (dt, dfn), also in `text`; empty
    unless `index`, and on a nosnippet page (its text is all in `nosnippet_text`)."""
    links: tuple[str, ...] = ()
    """The links the page lets us follow, normal, each once, in document order (queued when in
    scope and new to the crawl)."""
    nofollow_links: tuple[str, ...] = ()
    """Links on the page we may not follow: page nofollow, a nofollow section, or rel=nofollow."""
    redirects: tuple[str, ...] = ()
    """URLs fetched before `final_url` in the chain, `url` first."""
    error: str | None = None
    """Why the fetch gave no usable answer: a network failure, or a redirect not followed."""
    size: int = 0
    """Decoded body bytes read."""
    truncated: bool = False
    cut: str | None = None
    """Why the page was not read in full though its body was: the bound it crossed and where
    ('read up to byte 2,560 of 500,000: markup costing more than 25,000,000 steps to build',
    'links: more than 6,000, the first 6,000 read'). `truncated` is the body's size cap."""
    index: bool = False
    """The page's text is in the index: a 2xx HTML answer whose robots rules allow indexing."""
    index_reason: str | None = None
    """Why not `index`: 'meta robots: noindex', 'X-Robots-Tag: none', 'status 404', ..."""
    follow: bool = False
    """The page's links were read for the crawl."""
    follow_reason: str | None = None
    """Why not `follow`: 'meta robots: nofollow', 'not HTML', ..."""
    sections: int = 0
    """In-page exclusion sections the page holds (robots comments, googleoff, noindex)."""
    etag: str | None = None
    """The answer's ETag, for a recrawl's If-None-Match."""
    last_modified: str | None = None
    """The answer's Last-Modified, for a recrawl's If-Modified-Since."""
    digest: str | None = None
    """`body_digest` of a 2xx answer's body."""
    lastmod: float | None = None
    """When a sitemap that listed the URL says it last changed, epoch seconds."""
    change: Change = "new"
    """What this fetch found against the URL's last one (a recrawl's)."""
    usage: tuple[UsageSignal, ...] = ()
    """The owner's usage signals that applied to the page (crawler.usage): its robots.txt lines,
    tdmrep.json rule, headers and META."""
    usage_refusal: str | None = None
    """Why the crawl's purpose may not use the page's text, when its robots rules would have let
    it be indexed: then `index` is false and `index_reason` says the same."""
    main_text: str = ""
    """The page's main content as plain text, a block to a line: `text` without the site's
    navigation, headers, footers, sidebars, related links and comments (crawler.page.main_content).
    Kept and exported as `text` is."""
    markdown: str = ""
    """The main content as Markdown, links absolute."""
    main_fallback: str | None = None
    """Why `main_text` is all of the page's visible text: no main content to find ('under 150
    characters of text', 'no block of text to choose', 'no body')."""
    frame_text: str | None = None
    """The visible text outside the main content, when the page step found main content: the
    index then searches it beside `main_text`, not the whole `text` (None: it searches `text`
    beside `main_text`). Not exported: it is `text` less `main_text`."""
    fields: dict[str, Any] | None = None
    """The user's fields by name (`extract:` and the library's `extract` callable): a value, or
    a list with `all`; None when none were asked for or the page's text was not read. Exported
    as the text is: only for a page indexed for the crawl's purpose."""
    fields_error: str | None = None
    """Why the library's `extract` callable gave no fields for this page (what it raised)."""

    def __reduce__(self) -> tuple[type[PageRecord], tuple[object, ...]]:
        # Pickled as its fields, for the index writer's process (crawler.output.index_writer), as
        # crawler.page.read's Page is: a dataclass's own pickling gathers and sets the fields one
        # by one in Python (a speed-web record: 22 us to dump and 27 to load, against 18 and 24).
        return (PageRecord, _record_fields(self))

    def to_json(self) -> dict[str, Any]:
        # Text is exported only for a page indexed for the crawl's purpose.
        shown = self.index
        return {
            "url": self.url,
            "final_url": self.final_url,
            "status": self.status,
            "fetched_at": round(self.fetched_at, 3),
            "fetched_at_iso": iso_utc(self.fetched_at),
            "depth": self.depth,
            "content_type": self.content_type,
            "title": self.title,
            "description": self.description,
            "language": self.language,
            "index": self.index,
            "index_reason": self.index_reason,
            "follow": self.follow,
            "follow_reason": self.follow_reason,
            "sections": self.sections,
            "text": self.text if shown else "",
            "nosnippet_text": self.nosnippet_text if shown else "",
            "headings": self.headings if shown else "",
            "main_text": self.main_text if shown else "",
            "markdown": self.markdown if shown else "",
            "main_fallback": self.main_fallback,
            "links": list(self.links),
            "nofollow_links": list(self.nofollow_links),
            "redirects": list(self.redirects),
            "error": self.error,
            "size": self.size,
            "truncated": self.truncated,
            "cut": self.cut,
            "etag": self.etag,
            "last_modified": self.last_modified,
            "digest": self.digest,
            "lastmod": self.lastmod,
            "lastmod_iso": iso_utc(self.lastmod),
            "change": self.change,
            "usage": signals_json(self.usage),
            "fields": self.fields if shown else None,
            "fields_error": self.fields_error,
        }


_record_fields = operator.attrgetter(*(field.name for field in dataclasses.fields(PageRecord)))


def unread_reason(status: int | None, answer: Response | None, error: str | None) -> str:
    """Why a fetched URL has no page to index or follow."""
    # Here, not with the module: the index writer's process unpickles records, and needs no HTTP.
    from crawler.http.answer import is_html

    if answer is None:
        return f"status {status}" if status is not None else f"no answer ({error})"
    if not 200 <= answer.status < 300:
        return f"status {answer.status}"
    if not is_html(answer.content_type):
        return f"not HTML ({answer.content_type or 'no Content-Type'})"
    return "empty body"


def record_of(
    *,
    url: str,
    final_url: str,
    redirects: tuple[str, ...],
    depth: int,
    fetched_at: float,
    status: int | None,
    error: str | None,
    answer: Response | None = None,
    page: Page | None = None,
    digest: str | None = None,
    lastmod: float | None = None,
    change: Change = "new",
    usage: tuple[UsageSignal, ...] = (),
    usage_refusal: str | None = None,
    fields: dict[str, Any] | None = None,
    fields_error: str | None = None,
) -> PageRecord:
    """The record of a fetch: of `page` when the answer was a page read for the crawl, else of
    why it was not; `usage_refusal`: why the crawl's purpose may not use the page's text. One
    constructor call, not a record and `replace()`: this runs for every page on the event loop's
    thread, and `replace` costs as much again. `fields`: the callable's, over the page's own."""
    common: dict[str, Any] = {
        "url": url,
        "final_url": final_url,
        "status": answer.status if answer is not None else status,
        "fetched_at": fetched_at,
        "depth": depth,
        "content_type": (answer.content_type or None) if answer is not None else None,
        "redirects": redirects,
        "error": error,
        "size": len(answer.body) if answer is not None else 0,
        "truncated": answer.truncated if answer is not None else False,
        "etag": answer.headers.get("ETag") if answer is not None else None,
        "last_modified": answer.headers.get("Last-Modified") if answer is not None else None,
        "digest": digest,
        "lastmod": lastmod,
        "change": change,
        "usage": usage,
        "fields_error": fields_error,
    }
    if page is None:
        reason = unread_reason(status, answer, error)
        return PageRecord(**common, index_reason=reason, follow_reason=reason)
    return PageRecord(
        **common,
        title=page.title,
        description=page.description,
        language=page.language,
        text=page.text,
        nosnippet_text=page.nosnippet_text,
        headings=page.headings,
        main_text=page.main_text,
        markdown=page.markdown,
        main_fallback=page.main_fallback,
        frame_text=page.frame_text,
        links=page.links,
        nofollow_links=page.nofollow_links,
        index=page.index and usage_refusal is None,
        index_reason=page.index_reason if not page.index else usage_refusal,
        usage_refusal=usage_refusal if page.index else None,
        follow=page.follow,
        follow_reason=page.follow_reason,
        sections=page.sections,
        cut=page.cut,
        fields=page.fields if fields is None else {**(page.fields or {}), **fields},
    )


@dataclass(frozen=True, slots=True)
class Skip:
    """A URL the crawl did not fetch, and why: a decision, not an error."""

    url: str
    reason: SkipReason
    """The kind of decision, for counting: 'disallowed by robots.txt', 'out of scope: host'."""
    detail: str = ""
    """The particulars: the robots.txt line, the limit, the redirect that led here."""

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "reason": self.reason, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Unskip:
    """A skip withdrawn: the URL is queued after all (found again within limits.max_depth, or the
    depth was raised). Its page record, or a new skip, follows when its turn comes."""

    url: str
