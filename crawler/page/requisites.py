"""A page's requisites: what a browser loads to show it (wget's --page-requisites). Pure: a parsed
tree or a stylesheet's text in, normal URLs out, in document order, each once, at most `limit`.

From HTML: `<link rel=stylesheet>` (not an alternate one, which a browser does not load),
`rel=icon` (and apple-touch-icon), `rel=preload` with an `as` and `rel=modulepreload` (their
`imagesrcset` too); `<img src srcset>`, `<picture><source srcset>`, `<input type=image src>`,
`<script src>`, `<video poster>`, `<iframe>`/`<frame src>`, `<embed src>`, `<object data>`, a
`background` attribute, and the `url()`s of `<style>` elements and `style` attributes. With
`media`: `<audio>`/`<video>`/`<source>`/`<track>` sources too. Every candidate of a srcset is
taken, not the one a browser of some width would pick: a replay may be of any width.

From CSS: `@import` (a string or a `url()`) and every `url()` (backgrounds, fonts, cursors), each
resolved against the stylesheet's own URL; comments and strings elsewhere are skipped.

What does not resolve to an http(s) URL (`data:`, `javascript:`, a malformed one) is dropped.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable

from selectolax.lexbor import LexborHTMLParser, LexborNode

from crawler.page.charset import decode, sniff_encoding
from crawler.urls import InvalidUrlError, LinkResolver

__all__ = [
    "css_references",
    "css_requisites",
    "html_requisites",
    "maybe_css_urls",
    "requisites_of",
    "srcset_urls",
]

Resolve = Callable[[str], str]

_WHITESPACE = "\t\n\f\r "
_STRING = r""""(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?"""
_CSS_TOKEN = re.compile(
    r"/\*.*?(?:\*/|\Z)"  # a comment
    rf"|@import[{_WHITESPACE}]*(?P<import>{_STRING})"
    rf"|url\([{_WHITESPACE}]*(?:(?P<quoted>{_STRING})|(?P<bare>(?:[^\"'()\\{_WHITESPACE}]|\\.)*))"
    rf"[{_WHITESPACE}]*\)"
    rf"|{_STRING}",  # a string elsewhere: what it holds is no reference
    re.IGNORECASE | re.DOTALL,
)
_ESCAPE = re.compile(r"\\(?:([0-9A-Fa-f]{1,6})[\t\n\f\r ]?|(\n)|(.))", re.DOTALL)


def _unescape(text: str) -> str:
    """A CSS string's or URL's escapes read: `\\26 ` is `&`, `\\(` is `(`, an escaped newline is
    nothing."""
    if "\\" not in text:
        return text

    def one(match: re.Match[str]) -> str:
        hex_digits, newline, other = match.groups()
        if hex_digits is not None:
            code = int(hex_digits, 16)
            return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
        return "" if newline is not None else other

    return _ESCAPE.sub(one, text)


def _unquote(token: str) -> str:
    """A CSS string token's value (its closing quote may be missing: the sheet ended)."""
    quote = token[0]
    body = token[1:-1] if len(token) > 1 and token[-1] == quote else token[1:]
    return _unescape(body)


def css_references(css: str) -> list[str]:
    """The URLs a stylesheet (or a style attribute) refers to, as written: its `@import`s and
    `url()`s in order, empty ones left out."""
    found: list[str] = []
    for match in _CSS_TOKEN.finditer(css):
        imported, quoted, bare = match.group("import", "quoted", "bare")
        if imported is not None:
            value = _unquote(imported)
        elif quoted is not None:
            value = _unquote(quoted)
        elif bare is not None:
            value = _unescape(bare)
        else:
            continue
        value = value.strip(_WHITESPACE)
        if value:
            found.append(value)
    return found


def srcset_urls(srcset: str) -> list[str]:
    """The URLs of a `srcset` (or `imagesrcset`), as the HTML standard splits it: candidates
    apart by commas, a URL's own commas kept, descriptors (`2x`, `480w`) dropped."""
    urls: list[str] = []
    position, end = 0, len(srcset)
    while True:
        while position < end and srcset[position] in _WHITESPACE + ",":
            position += 1
        if position >= end:
            return urls
        start = position
        while position < end and srcset[position] not in _WHITESPACE:
            position += 1
        url = srcset[start:position]
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            depth = 0
            while position < end:
                char = srcset[position]
                position += 1
                if char == "(":
                    depth += 1
                elif char == ")":
                    depth = max(0, depth - 1)
                elif char == "," and depth == 0:
                    break
        if url:
            urls.append(url)


_ELEMENTS = (
    "link[href], img, source, input[src], script[src], video, audio, track[src], iframe[src], "
    "frame[src], embed[src], object[data]"
)
_SELECTOR = _ELEMENTS + ", style, [style], [background]"
"""With the elements, those whose CSS or `background` may name a URL: looked for only when the
page's source holds `url(` or `background` (`maybe_css_urls`), a match over every element
that most pages spare."""


def maybe_css_urls(source: bytes) -> bool:
    """Whether the page's `source` may hold a URL in CSS or in a `background` attribute (a
    search with IGNORECASE would take ten times as long as the lower case copy)."""
    if b"url(" in source or b"ackground" in source:
        return True
    lower = source.lower()
    return b"url(" in lower or b"background" in lower


_ICON_RELS = frozenset({"icon", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon"})
_MEDIA_AS = frozenset({"audio", "video", "track"})


def _link_refs(node: LexborNode, media: bool) -> Iterable[str]:
    attributes = node.attributes
    rel = set((attributes.get("rel") or "").lower().split())
    href = attributes.get("href") or ""
    if "stylesheet" in rel and "alternate" not in rel:
        return (href,)
    if rel & _ICON_RELS or "modulepreload" in rel:
        return (href,)
    if "preload" in rel:
        kind = (attributes.get("as") or "").strip().lower()
        if not kind or (kind in _MEDIA_AS and not media):
            return ()
        return (href, *srcset_urls(attributes.get("imagesrcset") or ""))
    return ()


def _element_refs(node: LexborNode, media: bool) -> Iterable[str]:
    """What `node`, one of `_SELECTOR`'s, makes the browser load (its style's excepted)."""
    tag = node.tag
    attributes = node.attributes
    if tag == "link":
        return _link_refs(node, media)
    if tag == "img":
        return (attributes.get("src") or "", *srcset_urls(attributes.get("srcset") or ""))
    if tag == "source":
        parent = node.parent
        if parent is not None and parent.tag == "picture":
            return srcset_urls(attributes.get("srcset") or "")
        return (attributes.get("src") or "",) if media else ()
    if tag == "input":
        kind = (attributes.get("type") or "").strip().lower()
        return (attributes.get("src") or "",) if kind == "image" else ()
    if tag in ("script", "iframe", "frame", "embed"):
        return (attributes.get("src") or "",)
    if tag == "object":
        return (attributes.get("data") or "",)
    if tag == "video":
        poster = attributes.get("poster") or ""
        return (poster, attributes.get("src") or "") if media else (poster,)
    if tag in ("audio", "track"):
        return (attributes.get("src") or "",) if media else ()
    return ()


def requisites_of(
    tree: LexborHTMLParser,
    resolve: Resolve,
    *,
    media: bool = False,
    limit: int = 100,
    css_urls: bool = True,
) -> tuple[str, ...]:
    """The requisites of the page `tree`, resolved by `resolve` (the page's base: its URL, or
    its `<base href>`): normal URLs, each once, at most `limit`. `css_urls` False: the source
    holds none in CSS or a `background` attribute (`maybe_css_urls`), none is looked for."""
    found: dict[str, None] = {}

    def take(refs: Iterable[str], resolve_ref: Resolve) -> bool:
        for ref in refs:
            ref = ref.strip(_WHITESPACE)
            if not ref or ref.startswith("#"):
                continue
            try:
                url = resolve_ref(ref)
            except InvalidUrlError:
                continue
            found[url] = None
            if len(found) >= limit:
                return False
        return True

    for node in tree.css(_SELECTOR if css_urls else _ELEMENTS):
        attributes = node.attributes
        refs: list[str] = list(_element_refs(node, media))
        if node.tag == "style":
            refs += css_references(node.text(deep=True) or "")
        style = attributes.get("style")
        if style:
            refs += css_references(style)
        background = attributes.get("background")
        if background:
            refs.append(background)
        if refs and not take(refs, resolve):
            break
    return tuple(found)


def css_requisites(
    body: bytes, url: str, *, charset: str | None = None, limit: int = 100
) -> tuple[str, ...]:
    """The requisites of the stylesheet `body` fetched from the normal URL `url`: its imports
    and `url()`s resolved against `url`, each once, at most `limit`."""
    text = body.decode(charset if charset and _known(charset) else "utf-8", "replace")
    resolve = LinkResolver(url)
    found: dict[str, None] = {}
    for ref in css_references(text):
        if ref.startswith("#"):
            continue
        try:
            found[resolve(ref)] = None
        except InvalidUrlError:
            continue
        if len(found) >= limit:
            break
    return tuple(found)


def _known(charset: str) -> bool:
    try:
        "".encode(charset)
    except LookupError:
        return False
    return True


def html_requisites(
    body: bytes,
    url: str,
    *,
    charset: str | None = None,
    media: bool = False,
    limit: int = 100,
) -> tuple[str, ...]:
    """The requisites of an HTML document fetched as a requisite (a frame's): parsed on its own,
    its `<base href>` obeyed."""
    encoding, bom = sniff_encoding(body, charset)
    tree = LexborHTMLParser(decode(body[bom:], encoding))
    resolve: Resolve = LinkResolver(url)
    base = tree.css_first("base[href]")
    if base is not None:
        with contextlib.suppress(InvalidUrlError):  # an unusable <base> is ignored
            resolve = LinkResolver(resolve(base.attributes.get("href") or ""))
    return requisites_of(tree, resolve, media=media, limit=limit)
