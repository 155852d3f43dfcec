"""A sitemap's bytes in, its URLs out (sitemaps.org protocol 0.9).

Pure, and bounded whatever the file holds. `read_sitemap(body, url)` reads:
- an XML `<urlset>`: each `<url>`'s `<loc>`, with `<lastmod>` (W3C Datetime, as epoch seconds),
  `<changefreq>` and `<priority>` when given;
- an XML `<sitemapindex>`: each `<sitemap>`'s `<loc>` and `<lastmod>` (the sitemaps it names; the
  caller reads those in turn, to a depth of its choosing);
- a text sitemap: one URL a line;
- any of them gzip-compressed (told by the gzip magic bytes, not by the name or the headers,
  which servers get wrong both ways).

The caps are the protocol's: at most `max_urls` entries (50,000) and `max_bytes` uncompressed
bytes (50 MB) a file. A gzip bomb is decompressed no further than `max_bytes`, in chunks, and
the XML parser is fed as it goes, so memory stays bounded by a chunk and the entries kept: a
file past a cap is read up to it, and `SitemapRead.cut` says which one. The XML parser is the
standard library's expat, which fetches no external entity and, since expat 2.4, refuses the
entity expansion of a "billion laughs".

Where a sitemap may point (sitemaps.org, "Sitemap file location"): a sitemap lists only URLs
under its own directory, on its own scheme, host and port (http://example.com/catalog/s.xml:
only http://example.com/catalog/...); an index lists sitemaps of its own site. Other entries
are refused with that rule (`SitemapRead.refused`), unless `also_allowed(url)` says the listed
host's own robots.txt named this sitemap (the protocol's cross-submission, which the caller knows
of).
"""

from __future__ import annotations

import datetime
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal, cast
from xml.etree.ElementTree import Element, ParseError, XMLPullParser

from crawler.urls import InvalidUrlError, normalize_url, origin_of

__all__ = [
    "MAX_BYTES",
    "MAX_URLS",
    "SitemapEntry",
    "SitemapRead",
    "parse_lastmod",
    "read_sitemap",
]

MAX_URLS = 50_000
"""Entries a sitemap file may hold (sitemaps.org)."""
MAX_BYTES = 50 * 1024 * 1024
"""Uncompressed bytes a sitemap file may hold (sitemaps.org); also how far a gzipped one is
decompressed."""
CHUNK = 64 * 1024
"""Bytes decompressed and parsed at a time."""
MAX_LOC_CHARS = 2048
"""The protocol's longest URL."""
GZIP_MAGIC = b"\x1f\x8b"

Kind = Literal["urlset", "index", "text"]


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    url: str
    """Normal form (crawler.urls.normalize_url)."""
    lastmod: float | None = None
    """Epoch seconds, UTC; None when absent or unreadable."""
    changefreq: str | None = None
    priority: float | None = None


@dataclass(frozen=True, slots=True)
class SitemapRead:
    kind: Kind | None
    """None when the file is no sitemap (its `error` says why)."""
    entries: tuple[SitemapEntry, ...]
    """The URLs of a urlset or a text sitemap; the sitemaps of an index."""
    skipped: tuple[tuple[str, str], ...] = ()
    """(the entry as written, why it is no usable URL)."""
    refused: tuple[tuple[str, str], ...] = ()
    """(normal URL, the location rule): entries this sitemap may not list."""
    cut: str | None = None
    """Why reading stopped before the end (a cap), None when the whole file was read."""
    error: str | None = None
    """Why the file could not be read as a sitemap (from where it went wrong: the entries
    before it stand)."""


def read_sitemap(
    body: bytes,
    url: str,
    *,
    max_urls: int = MAX_URLS,
    max_bytes: int = MAX_BYTES,
    also_allowed: Callable[[str], bool] | None = None,
) -> SitemapRead:
    """Read the sitemap fetched from the normal URL `url` (see the module doc)."""
    reader = _Reader(url, max_urls, max_bytes, also_allowed)
    chunks = _chunks(body, max_bytes)
    try:
        first = next(chunks, b"")
    except _BadGzipError as error:
        return SitemapRead(None, (), error=f"gzip data damaged: {error}")
    if not first.lstrip().startswith(b"<"):
        return reader.text(first, chunks)
    return reader.xml(first, chunks)


def parse_lastmod(text: str) -> float | None:
    """W3C Datetime (YYYY, YYYY-MM, YYYY-MM-DD, with a time and a zone, seconds and fractions
    optional) as epoch seconds; a time without a zone is read as UTC. None when unreadable."""
    text = text.strip()
    try:
        if len(text) == 4:
            moment = datetime.datetime(int(text), 1, 1)
        elif len(text) == 7 and text[4] == "-":
            moment = datetime.datetime(int(text[:4]), int(text[5:]), 1)
        else:
            moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()


def _chunks(body: bytes, max_bytes: int) -> Iterator[bytes]:
    """The file's uncompressed bytes in chunks, no more than `max_bytes` of them and one more
    byte (so that the reader can tell a file that goes on past the cap)."""
    if not body.startswith(GZIP_MAGIC):
        for start in range(0, min(len(body), max_bytes + 1), CHUNK):
            yield body[start : min(start + CHUNK, max_bytes + 1)]
        return
    inflate = zlib.decompressobj(wbits=31)
    given = 0
    pending = body
    while given <= max_bytes:
        try:
            chunk = inflate.decompress(pending, min(CHUNK, max_bytes + 1 - given))
        except zlib.error as error:
            raise _BadGzipError(str(error)) from error
        pending = inflate.unconsumed_tail
        if not chunk:
            return
        given += len(chunk)
        yield chunk


class _BadGzipError(Exception):
    pass


class _Reader:
    def __init__(
        self,
        url: str,
        max_urls: int,
        max_bytes: int,
        also_allowed: Callable[[str], bool] | None,
    ) -> None:
        self._url = url
        self._origin = origin_of(url)
        self._directory = url[: url.rindex("/") + 1] if "/" in url[len(self._origin) :] else url
        self._max_urls = max_urls
        self._max_bytes = max_bytes
        self._also_allowed = also_allowed
        self._entries: list[SitemapEntry] = []
        self._skipped: list[tuple[str, str]] = []
        self._refused: list[tuple[str, str]] = []
        self._kind: Kind | None = None

    def _result(self, cut: str | None = None, error: str | None = None) -> SitemapRead:
        return SitemapRead(
            self._kind,
            tuple(self._entries),
            tuple(self._skipped),
            tuple(self._refused),
            cut,
            error,
        )

    def _full(self) -> bool:
        return len(self._entries) >= self._max_urls

    def _take(
        self, loc: str, lastmod: float | None, changefreq: str | None, priority: float | None
    ) -> None:
        written = loc.strip()
        if not written:
            return
        if len(written) > MAX_LOC_CHARS:
            self._skipped.append((written[:100] + "…", f"longer than {MAX_LOC_CHARS} characters"))
            return
        try:
            normal = normalize_url(written)
        except InvalidUrlError as error:
            self._skipped.append((written, f"not a URL: {error.reason}"))
            return
        if self._kind == "index":
            inside = origin_of(normal) == self._origin
            rule = "a sitemap index names sitemaps of its own site only"
        else:
            inside = normal.startswith(self._directory)
            rule = f"outside the sitemap's location ({self._directory})"
        if not inside and not (self._also_allowed is not None and self._also_allowed(normal)):
            self._refused.append((normal, rule))
            return
        self._entries.append(SitemapEntry(normal, lastmod, changefreq, priority))

    def text(self, first: bytes, chunks: Iterator[bytes]) -> SitemapRead:
        self._kind = "text"
        rest = b""
        given = 0
        try:
            for chunk in (first, *chunks) if first else ():
                given += len(chunk)
                if given > self._max_bytes:
                    # Past the cap: the line the cap cut is not a URL anyone wrote.
                    chunk = chunk[: len(chunk) - (given - self._max_bytes)]
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    if self._full():
                        return self._result(cut=f"more than {self._max_urls} URLs")
                    self._take(line.decode("utf-8", "replace"), None, None, None)
        except _BadGzipError as error:
            return self._result(error=f"gzip data damaged: {error}")
        if given > self._max_bytes:
            return self._result(cut=f"more than {self._max_bytes} bytes")
        if rest.strip():
            if self._full():
                return self._result(cut=f"more than {self._max_urls} URLs")
            self._take(rest.decode("utf-8", "replace"), None, None, None)
        return self._result()

    def xml(self, first: bytes, chunks: Iterator[bytes]) -> SitemapRead:
        parser: XMLPullParser[Element] = XMLPullParser(events=("start", "end"))
        depth = 0
        fields: dict[str, str] = {}
        given = 0
        try:
            for chunk in (first, *chunks):
                given += len(chunk)
                if given > self._max_bytes:
                    return self._result(cut=f"more than {self._max_bytes} bytes")
                parser.feed(chunk)
                for read in parser.read_events():
                    # Only start and end events were asked for: (event, an element) each.
                    event, element = cast(tuple[str, Element], read)
                    name = element.tag.rsplit("}", 1)[-1]
                    if event == "start":
                        depth += 1
                        if depth == 1:
                            if name == "urlset":
                                self._kind = "urlset"
                            elif name == "sitemapindex":
                                self._kind = "index"
                            else:
                                return self._result(error=f"not a sitemap: the root is <{name}>")
                        continue
                    depth -= 1
                    if depth == 2:
                        fields[name] = (element.text or "").strip()
                    elif depth == 1:
                        if self._full():
                            return self._result(cut=f"more than {self._max_urls} URLs")
                        self._entry(fields)
                        fields = {}
                        element.clear()
            parser.close()
        except ParseError as error:
            return self._result(error=f"malformed XML: {error}")
        except _BadGzipError as error:
            return self._result(error=f"gzip data damaged: {error}")
        return self._result()

    def _entry(self, fields: dict[str, str]) -> None:
        loc = fields.get("loc")
        if loc is None:
            self._skipped.append(("", "an entry without <loc>"))
            return
        lastmod = parse_lastmod(fields["lastmod"]) if "lastmod" in fields else None
        changefreq = fields.get("changefreq") or None
        try:
            priority: float | None = float(fields["priority"]) if "priority" in fields else None
        except ValueError:
            priority = None
        if priority is not None and not 0.0 <= priority <= 1.0:
            priority = None
        self._take(loc, lastmod, changefreq, priority)
