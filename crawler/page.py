"""What a fetched HTML page holds for the crawl: title and links, and what the page lets us do
with them. Pure: bytes in, a `Page` out, one selectolax parse.

Links come from `<a href>` and `<area href>`, resolved against `<base href>` when the page has one
(else the URL the page was fetched from, after redirects), normalised, duplicates dropped, and only
http(s) kept (SPEC section 8). `Page.index` and `Page.follow` carry the page-level rules; the
reading of META robots, X-Robots-Tag and in-page sections (SPEC section 7) decides them here, so
the crawl only ever acts on the two flags.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

from crawler.urls import InvalidUrlError, resolve_url

__all__ = ["Page", "decode_html", "read_page"]


@dataclass(frozen=True, slots=True)
class Page:
    title: str | None
    links: tuple[str, ...]
    """Crawlable links, normal, each once, in document order."""
    index: bool = True
    follow: bool = True
    unusable_links: int = 0
    """hrefs that are not crawlable http(s) URLs (mailto:, javascript:, malformed)."""


def decode_html(body: bytes, charset: str | None) -> str:
    """The page's text: the header's charset when Python knows it, else UTF-8; bytes that do not
    decode become U+FFFD instead of failing the page."""
    encoding = "utf-8"
    if charset:
        try:
            encoding = codecs.lookup(charset).name
        except LookupError:
            encoding = "utf-8"
    return body.decode(encoding, errors="replace")


def read_page(body: bytes, url: str, charset: str | None = None) -> Page:
    """Parse an HTML page fetched from the normal URL `url`."""
    tree = LexborHTMLParser(decode_html(body, charset))
    title_node = tree.css_first("title")
    title = title_node.text(strip=True) if title_node is not None else None
    base = url
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        href = base_node.attributes.get("href")
        if href:
            try:
                base = resolve_url(url, href)
            except InvalidUrlError:
                base = url
    links: dict[str, None] = {}
    unusable = 0
    for node in tree.css("a[href], area[href]"):
        href = node.attributes.get("href")
        if not href:
            continue
        try:
            links[resolve_url(base, href)] = None
        except InvalidUrlError:
            unusable += 1
    return Page(title=title or None, links=tuple(links), unusable_links=unusable)
