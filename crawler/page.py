"""What a fetched HTML page lets the crawl do, and what it says. Pure: bytes and headers in, a
`Page` out, with one selectolax parse.

The rules (SPEC section 7), most restrictive reading first:
- META robots: `<meta name="robots">` and `<meta name="TOKEN">` for our own product token; names
  and values case-insensitive, words separated by commas (or spaces). `noindex`, `nofollow`,
  `none` (both), `nosnippet`; `index`, `follow` and `all` are the defaults and change nothing.
  Several tags add up.
- X-Robots-Tag headers: the same words, and the `AGENT: words` form, which applies only when AGENT
  is our token; an agent prefix holds for the words after it in the same header. Several headers
  add up.
- In-page sections (crawler/exclusion.py): Ultraseek `<!-- robots content="..." -->` ...
  `<!-- /robots -->`, Google Search Appliance `googleoff`/`googleon` and Yandex `<noindex>` in
  both forms. They act on their own stretch of the document only: its text is not indexed
  (noindex), its links are not followed (nofollow, also an `<a>` opened inside), its text is kept
  out of snippets (`googleoff: snippet`).
- Across META tags and headers, any noindex makes the page noindex and any nofollow makes it
  nofollow. A noindex page still has its links followed (unless nofollow); a nofollow page is
  indexed, and its links are kept apart in `Page.nofollow_links`. A link marked
  `rel="nofollow"`, `ugc` or `sponsored` is not followed unless `PageRules.follow_rel_nofollow`.
  A URL linked both ways on one page is followed.

Text is what a reader without scripts sees in the body: no script, style, template, iframe,
noembed or noframes content, nothing inside a noindex section. The encoding is sniffed by
crawler/charset.py; bytes that do not decode become U+FFFD.

How it stays one parse: one traversal of the tree's elements and comments finds the links, the
META tags, the title and the section markers. A section is then a stretch of the tree (the
subtrees between its two marker comments): a noindex stretch is cut from the tree before the text
is read in one C call; a nofollow stretch marks the links in it. The one exception is the element
form of Yandex's `<noindex>`: the parser nests it as an element (and closes it early, e.g. at the
end of a `<p>` it sits in), while Yandex reads its tags as markers in the source. A page that has
one (rare) has those tags turned into the comment form in its source and is parsed again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from crawler.charset import sniff_encoding
from crawler.exclusion import (
    NOFOLLOW,
    NOINDEX,
    NOSNIPPET,
    Marker,
    Stretch,
    directives_of,
    marker_of,
    stretches_of,
    x_robots_directives,
    yandex_tags_as_comments,
)
from crawler.urls import InvalidUrlError, LinkResolver

__all__ = [
    "NOFOLLOW",
    "NOINDEX",
    "NOSNIPPET",
    "Page",
    "PageRules",
    "directives_of",
    "read_page",
    "sniff_encoding",
    "x_robots_directives",
]

_REL_NOFOLLOW = frozenset({"nofollow", "ugc", "sponsored"})


@dataclass(frozen=True, slots=True)
class PageRules:
    """The slice of config the page step needs."""

    token: str = "crawler"
    """Our product token: `<meta name=TOKEN>` and `X-Robots-Tag: TOKEN: ...` speak to us."""
    follow_rel_nofollow: bool = False


@dataclass(frozen=True, slots=True)
class Page:
    title: str | None
    links: tuple[str, ...]
    """Links the page lets us follow: normal, each once, in document order."""
    nofollow_links: tuple[str, ...] = ()
    """Links on the page we may not follow (and that are not also linked in a followable way)."""
    text: str = ""
    """Visible, indexable body text; empty when the page is noindex."""
    nosnippet_text: str = ""
    """Indexable text the page keeps out of snippets."""
    description: str | None = None
    language: str | None = None
    index: bool = True
    follow: bool = True
    index_reason: str | None = None
    """Why not `index`: each source that said noindex, e.g. 'meta robots: noindex'."""
    follow_reason: str | None = None
    sections: int = 0
    """In-page exclusion sections opened (no-op `index`/`follow`/`all` ones not counted)."""
    unusable_links: int = 0
    """hrefs that are not crawlable http(s) URLs (mailto:, javascript:, malformed)."""
    encoding: str = "utf-8"
    """The Python codec the body was read with."""


def _reason(sources: Sequence[tuple[str, int]], flag: int) -> str | None:
    said = [label for label, flags in sources if flags & flag]
    return "; ".join(said) if said else None


# --- the tree ------------------------------------------------------------------------------------


def _tag_ids() -> dict[str, int]:
    """lexbor's ids of the tags the page step looks at, read from lexbor itself."""
    sample = LexborHTMLParser(
        "<html><head><base><meta><title></title><style></style><script></script><template>"
        "</template></head><body><!----><a></a><area><iframe></iframe><noembed></noembed>"
        "<noframes></noframes></body></html>"
    )
    root = sample.root
    assert root is not None
    return {node.tag or "": node.tag_id or 0 for node in root.traverse()}


_IDS = _tag_ids()
_LINK, _META, _TITLE, _BASE, _DROP, _COMMENT = range(6)
_ROLES = {
    _IDS["a"]: _LINK,
    _IDS["area"]: _LINK,
    _IDS["meta"]: _META,
    _IDS["title"]: _TITLE,
    _IDS["base"]: _BASE,
    _IDS["-comment"]: _COMMENT,
    **{
        _IDS[name]: _DROP
        for name in ("script", "style", "template", "iframe", "noembed", "noframes")
    },
}
# lexbor numbers the tags it knows from a fixed table; a tag it does not know (like `noindex`)
# gets its id from the document's own tag table, a pointer value far above that range.
_KNOWN_TAG_LIMIT = 1 << 16

# --- the page ------------------------------------------------------------------------------------


class _Scan:
    """What one traversal of the tree found."""

    __slots__ = ("anchors", "base", "drops", "markers", "metas", "title", "yandex_elements")

    def __init__(self, tree: LexborHTMLParser) -> None:
        anchors: list[LexborNode] = []
        metas: list[LexborNode] = []
        drops: list[LexborNode] = []
        markers: list[Marker] = []
        title: LexborNode | None = None
        base: str | None = None
        yandex_elements = False
        # From the document node: a marker comment may come before <html>, even before a doctype.
        root = tree.root
        document = root.parent if root is not None else None
        # Locals, not attributes or globals: this loop runs for every element of every page.
        role_of = _ROLES.get
        add_anchor = anchors.append
        link, comment, drop, meta, title_role = _LINK, _COMMENT, _DROP, _META, _TITLE
        known_limit = _KNOWN_TAG_LIMIT
        for node in (document or root).traverse() if root is not None else ():
            tag_id = node.tag_id
            role = role_of(tag_id)
            if role is None:
                if tag_id > known_limit and node.tag == "noindex":
                    yandex_elements = True
            elif role == link:
                add_anchor(node)
            elif role == comment:
                marker = marker_of(node)
                if marker is not None:
                    markers.append(marker)
            elif role == drop:
                drops.append(node)
            elif role == meta:
                metas.append(node)
            elif role == title_role:
                if title is None:
                    title = node
            elif base is None:
                base = node.attrs.get("href") or None
        self.anchors = anchors
        self.metas = metas
        self.drops = drops
        self.markers = markers
        self.title = title
        self.base = base
        self.yandex_elements = yandex_elements


def _squeeze(text: str | None) -> str | None:
    if not text:
        return None
    return " ".join(text.split()) or None


def read_page(
    body: bytes,
    url: str,
    *,
    charset: str | None = None,
    x_robots_tag: Sequence[str] = (),
    rules: PageRules = PageRules(),
) -> Page:
    """Read the HTML page fetched from the normal URL `url` (after redirects), with the charset
    and X-Robots-Tag values of its Content-Type and headers."""
    encoding, bom = sniff_encoding(body, charset)
    source: bytes | str = (
        body[bom:] if encoding == "utf-8" else body[bom:].decode(encoding, "replace")
    )
    tree = LexborHTMLParser(source)
    scan = _Scan(tree)
    if scan.yandex_elements:
        tree = LexborHTMLParser(yandex_tags_as_comments(source))
        scan = _Scan(tree)

    token = rules.token.lower()
    sources: list[tuple[str, int]] = []
    description = language = None
    for meta in scan.metas:
        attrs = meta.attributes
        name = (attrs.get("name") or "").strip().lower()
        if name == "robots" or name == token:
            content = attrs.get("content") or ""
            flags = directives_of(content)
            if flags:
                sources.append((f"meta {name}: {content.strip()}", flags))
        elif name == "description":
            description = description or attrs.get("content")
        elif (attrs.get("http-equiv") or "").strip().lower() == "content-language":
            language = language or attrs.get("content")
    sources.extend(
        (f"X-Robots-Tag: {value}", flags)
        for value, flags in x_robots_directives(x_robots_tag, token)
    )
    page_flags = 0
    for _, flags in sources:
        page_flags |= flags
    index = not page_flags & NOINDEX
    follow = not page_flags & NOFOLLOW
    root = tree.root
    if root is not None:
        language = root.attrs.get("lang") or language

    for node in scan.drops:
        node.decompose()
    stretches, sections = stretches_of(scan.markers) if scan.markers else ([], 0)

    links, nofollow_links, unusable = _links(scan, url, follow, stretches, rules)

    text = nosnippet_text = ""
    if index:
        hidden: list[str] = []
        for stretch in stretches:
            if stretch.flags & NOINDEX:
                for node in stretch.subtrees:
                    node.decompose()
            elif stretch.flags & NOSNIPPET:
                for node in stretch.subtrees:
                    hidden.append(node.text(separator=" ", strip=True, skip_empty=True))
                    node.decompose()
        body_node = tree.body
        if body_node is not None:
            text = body_node.text(separator=" ", strip=True, skip_empty=True)
        if page_flags & NOSNIPPET:
            hidden.append(text)
            text = ""
        nosnippet_text = " ".join(part for part in hidden if part)

    title_node = scan.title
    return Page(
        title=_squeeze(title_node.text()) if title_node is not None else None,
        links=links,
        nofollow_links=nofollow_links,
        text=text,
        nosnippet_text=nosnippet_text,
        description=_squeeze(description),
        language=(language or "").strip() or None,
        index=index,
        follow=follow,
        index_reason=_reason(sources, NOINDEX),
        follow_reason=_reason(sources, NOFOLLOW),
        sections=sections,
        unusable_links=unusable,
        encoding=encoding,
    )


def _links(
    scan: _Scan,
    url: str,
    follow: bool,
    stretches: Sequence[Stretch],
    rules: PageRules,
) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """(followable links, links not to follow, unusable hrefs) of the page's anchors."""
    resolve = LinkResolver(url)
    if scan.base is not None:
        with contextlib.suppress(InvalidUrlError):  # an unusable <base> is ignored
            resolve = LinkResolver(resolve(scan.base))
    nofollow_roots: set[int] = set()
    nofollow_opened: set[int] = set()
    for stretch in stretches:
        if stretch.flags & NOFOLLOW:
            nofollow_roots.update(node.mem_id for node in stretch.subtrees)
            # An <a> opened inside the section is inside, though its end comes after the close.
            nofollow_opened.update(node.mem_id for node in stretch.opened)
    obey_rel = not rules.follow_rel_nofollow
    followed: dict[str, None] = {}
    held_back: dict[str, None] = {}
    unusable = 0
    for anchor in scan.anchors:
        attrs = anchor.attributes
        href = attrs.get("href")
        if not href:
            continue
        try:
            link = resolve(href)
        except InvalidUrlError:
            unusable += 1
            continue
        allowed = follow
        if allowed and obey_rel:
            rel = attrs.get("rel")
            if rel and not _REL_NOFOLLOW.isdisjoint(rel.lower().split()):
                allowed = False
        if allowed and nofollow_opened and anchor.mem_id in nofollow_opened:
            allowed = False
        if allowed and nofollow_roots:
            node: LexborNode | None = anchor
            while node is not None:
                if node.mem_id in nofollow_roots:
                    allowed = False
                    break
                node = node.parent
        if allowed:
            followed[link] = None
        else:
            held_back[link] = None
    return (
        tuple(followed),
        tuple(link for link in held_back if link not in followed),
        unusable,
    )
