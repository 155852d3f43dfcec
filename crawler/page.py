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
- In-page sections, each a stretch of the document in source order:
  - Ultraseek comment tags `<!-- robots content="noindex|nofollow|none|index|follow|all" -->`
    ... `<!-- /robots -->`;
  - Google Search Appliance `<!--googleoff: index|anchor|snippet|all-->` ... `<!--googleon: ...-->`;
  - Yandex `<!--noindex-->` ... `<!--/noindex-->` and its element form `<noindex>` ... `</noindex>`.
  Sections repeat and nest; a `/robots` or `/noindex` closes the latest open section of its kind;
  googleoff/googleon count per word, so nested offs need as many ons. A section left open runs to
  the end of the document. Text in a noindex section is not indexed; links in a nofollow section
  are not followed; `googleoff: snippet` text is indexed but never shown in a snippet. `anchor`
  is recognised and changes nothing: it stops a link's text from describing the linked page,
  and the crawl never indexes link text for the linked page.
- Any noindex anywhere makes the page noindex, any nofollow makes it nofollow. A noindex page
  still has its links followed (unless nofollow); a nofollow page is indexed, and its links are
  kept apart in `Page.nofollow_links`. A link marked `rel="nofollow"`, `ugc` or `sponsored` is not
  followed unless `PageRules.follow_rel_nofollow`. A URL linked both ways on one page is followed.

Text is what a reader without scripts sees in the body: no script, style, template, iframe,
noembed or noframes content, nothing inside a noindex section. The encoding comes from a byte
order mark, else the Content-Type charset, else a `<meta charset>` in the first 1024 bytes (where
the HTML standard stops looking), else UTF-8 when the bytes are UTF-8 and windows-1252 when not;
bytes that do not decode become U+FFFD.

How it stays one parse: one traversal of the tree's elements and comments finds the links, the
META tags, the title and the section markers. A section between two markers is then a range of
the tree: the maximal subtrees strictly between the two comment nodes. A noindex range is cut
from the tree before the text is read in one C call; a nofollow range marks the links under it.
The one exception is the element form of Yandex's `<noindex>`: the parser nests it as an element
(and closes it early, e.g. at the end of a `<p>` it sits in), while Yandex reads its tags as
markers in the source. A page that has one (rare) has those tags turned into the comment form in
its source and is parsed again.
"""

from __future__ import annotations

import codecs
import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

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

NOINDEX = 1
NOFOLLOW = 2
NOSNIPPET = 4

_WORD_FLAGS = {
    "noindex": NOINDEX,
    "nofollow": NOFOLLOW,
    "none": NOINDEX | NOFOLLOW,
    "nosnippet": NOSNIPPET,
}
_WORD_SEPARATORS = re.compile(r"[\s,]+")
# X-Robots-Tag directives that take a value after a colon, so the colon names no agent.
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
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


# --- directives ----------------------------------------------------------------------------------


def directives_of(words: str) -> int:
    """NOINDEX | NOFOLLOW | NOSNIPPET flags of a META robots content or X-Robots-Tag list."""
    flags = 0
    for word in _WORD_SEPARATORS.split(words.lower()):
        flags |= _WORD_FLAGS.get(word, 0)
    return flags


def x_robots_directives(values: Sequence[str], token: str) -> list[tuple[str, int]]:
    """For each X-Robots-Tag header value that speaks to us: (the value, its flags)."""
    token = token.lower()
    found: list[tuple[str, int]] = []
    for value in values:
        flags = 0
        agent: str | None = None
        for item in value.split(","):
            name, colon, rest = item.partition(":")
            if colon:
                key = name.strip().lower()
                if key in _VALUED_DIRECTIVES:
                    continue
                if key not in _WORD_FLAGS and key not in ("index", "follow", "all"):
                    agent, item = key, rest
            if agent is None or agent == token:
                flags |= directives_of(item)
        if flags:
            found.append((value.strip(), flags))
    return found


def _reason(sources: Sequence[tuple[str, int]], flag: int) -> str | None:
    said = [label for label, flags in sources if flags & flag]
    return "; ".join(said) if said else None


# --- encoding ------------------------------------------------------------------------------------

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
PRESCAN_BYTES = 1024
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:\-]+)", re.IGNORECASE)
# The Encoding Standard reads these labels as the supersets browsers decode them with.
_SUPERSETS = {
    "ascii": "cp1252",
    "iso8859-1": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "gb2312": "gbk",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
}


def _codec(label: str) -> str | None:
    try:
        info = codecs.lookup(label.strip().strip("\"'"))
    except LookupError:
        return None
    # base64, rot13 and the like are codecs too, but cannot read text.
    if not getattr(info, "_is_text_encoding", True):
        return None
    return _SUPERSETS.get(info.name, info.name)


def _is_utf8(body: bytes) -> bool:
    if body.isascii():
        return True
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as error:
        # A body cut at the size cap may end inside a character.
        return error.reason == "unexpected end of data" and error.start >= len(body) - 3
    return True


def sniff_encoding(body: bytes, header_charset: str | None = None) -> tuple[str, int]:
    """(Python codec, length of the byte order mark) for an HTML body."""
    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            return bom_codec, len(bom)
    declared = _codec(header_charset) if header_charset else None
    if declared is not None:
        return declared, 0
    head = body[:PRESCAN_BYTES]
    if b"charset" in head.lower():
        match = _META_CHARSET.search(head)
        declared = _codec(match.group(1).decode("ascii")) if match is not None else None
        if declared is not None:
            # A document that says UTF-16 inside itself was read as ASCII to find it: it isn't.
            return ("utf-8" if declared.startswith("utf-16") else declared), 0
    return ("utf-8" if _is_utf8(body) else "cp1252"), 0


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
_HTML_ID = _IDS["html"]
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

# A `<noindex>` tag, or what the tokenizer would not read as one and must be left as it is: a
# comment, or the raw text of script, style, title, textarea and xmp.
_YANDEX_TAG = r"<!--.*?-->|<(script|style|title|textarea|xmp)\b.*?</\1\s*>|<(/?)noindex\b[^>]*>"
_YANDEX_TAG_BYTES = re.compile(_YANDEX_TAG.encode(), re.IGNORECASE | re.DOTALL)
_YANDEX_TAG_TEXT = re.compile(_YANDEX_TAG, re.IGNORECASE | re.DOTALL)


def _bytes_as_comment(match: re.Match[bytes]) -> bytes:
    if match.group(2) is None:
        return match.group(0)
    return b"<!--" + match.group(2) + b"noindex-->"


def _text_as_comment(match: re.Match[str]) -> str:
    if match.group(2) is None:
        return match.group(0)
    return "<!--" + match.group(2) + "noindex-->"


def _yandex_tags_as_comments(source: bytes | str) -> bytes | str:
    if isinstance(source, bytes):
        return _YANDEX_TAG_BYTES.sub(_bytes_as_comment, source)
    return _YANDEX_TAG_TEXT.sub(_text_as_comment, source)


# --- section markers -----------------------------------------------------------------------------

_OPEN, _CLOSE, _OFF, _ON = range(4)
_ROBOTS_SECTION = re.compile(
    r"robots\s+content\s*=\s*[\"']?([^\"']*)[\"']?\s*$|(/)\s*robots\s*$", re.IGNORECASE
)
_GOOGLE_SECTION = re.compile(r"google(off|on)\s*:\s*([a-z]+)\s*$", re.IGNORECASE)
_GOOGLE_WORDS = {"index": NOINDEX, "snippet": NOSNIPPET, "anchor": 0, "all": NOINDEX | NOSNIPPET}
_MARKER_STARTS = ("robots", "google", "noindex")
_MARKER_INITIALS = frozenset("rRgGnN/")


@dataclass(frozen=True, slots=True)
class _Marker:
    node: LexborNode
    action: int
    kind: str
    """'robots', 'noindex' or 'google'."""
    flags: int


def _marker(node: LexborNode) -> _Marker | None:
    content = node.comment_content
    # Most comments are not markers (`<!-- wp:paragraph -->`): one character tells most of them.
    if not content or content[0] not in _MARKER_INITIALS:
        return None
    head = content[:16].lower()
    if head[0] == "/":  # a close, or `<!-- /wp:paragraph -->`
        head = head[1:].lstrip()
    if not head.startswith(_MARKER_STARTS):
        return None
    if head.startswith("google"):
        match = _GOOGLE_SECTION.match(content)
        if match is None or match.group(2).lower() not in _GOOGLE_WORDS:
            return None
        action = _OFF if match.group(1).lower() == "off" else _ON
        return _Marker(node, action, "google", _GOOGLE_WORDS[match.group(2).lower()])
    words = content.lower().replace(" ", "")
    if words == "noindex":
        return _Marker(node, _OPEN, "noindex", NOINDEX)
    if words == "/noindex":
        return _Marker(node, _CLOSE, "noindex", 0)
    match = _ROBOTS_SECTION.match(content)
    if match is None:
        return None
    if match.group(2):
        return _Marker(node, _CLOSE, "robots", 0)
    return _Marker(node, _OPEN, "robots", directives_of(match.group(1)))


@dataclass(frozen=True, slots=True)
class _Range:
    """The stretch of the document from `start` to `end` (None: to its end), and what holds in
    it."""

    start: LexborNode
    end: LexborNode | None
    flags: int


def _ranges(markers: Sequence[_Marker]) -> tuple[list[_Range], int]:
    """The stretches between consecutive markers where a section is in force, and the number of
    sections opened."""
    open_sections: list[_Marker] = []
    google_off = {NOINDEX: 0, NOSNIPPET: 0}
    opened = 0
    ranges: list[_Range] = []
    for at, marker in enumerate(markers):
        if marker.action == _OPEN:
            open_sections.append(marker)
            opened += marker.flags != 0
        elif marker.action == _CLOSE:
            for back in range(len(open_sections) - 1, -1, -1):
                if open_sections[back].kind == marker.kind:
                    del open_sections[back]
                    break
        else:
            step = 1 if marker.action == _OFF else -1
            for flag in google_off:
                if marker.flags & flag:
                    google_off[flag] = max(0, google_off[flag] + step)
            opened += marker.action == _OFF and marker.flags != 0
        flags = 0
        for section in open_sections:
            flags |= section.flags
        for flag, count in google_off.items():
            if count:
                flags |= flag
        if flags:
            end = markers[at + 1].node if at + 1 < len(markers) else None
            ranges.append(_Range(marker.node, end, flags))
    return ranges, opened


@dataclass(frozen=True, slots=True)
class _Stretch:
    """A `_Range` as parts of the tree."""

    flags: int
    subtrees: list[LexborNode]
    """The maximal subtrees wholly inside."""
    opened: list[LexborNode]
    """Elements whose start tag is inside but whose end is not: they hold the end marker."""


def _stretch(section: _Range) -> _Stretch:
    """The nodes strictly after `section.start` and before `section.end` in document order."""
    holders: set[int] = set()
    end_id = -1
    if section.end is not None:
        end_id = section.end.mem_id
        holder = section.end.parent
        while holder is not None:
            holders.add(holder.mem_id)
            holder = holder.parent
    subtrees: list[LexborNode] = []
    opened: list[LexborNode] = []
    stretch = _Stretch(section.flags, subtrees, opened)
    node: LexborNode | None = section.start
    while node is not None:
        following = node.next
        while following is None:
            node = node.parent
            if node is None:
                return stretch
            following = node.next
        node = following
        # <html> is never cut as a whole (lexbor refuses): a stretch takes its children instead.
        while node.mem_id in holders or node.tag_id == _HTML_ID:
            opened.append(node)
            child = node.child
            if child is None:
                return stretch
            node = child
        if node.mem_id == end_id:
            return stretch
        subtrees.append(node)
    return stretch


# --- the page ------------------------------------------------------------------------------------


class _Scan:
    """What one traversal of the tree found."""

    __slots__ = ("anchors", "base", "drops", "markers", "metas", "title", "yandex_elements")

    def __init__(self, tree: LexborHTMLParser) -> None:
        anchors: list[LexborNode] = []
        metas: list[LexborNode] = []
        drops: list[LexborNode] = []
        markers: list[_Marker] = []
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
                marker = _marker(node)
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
        tree = LexborHTMLParser(_yandex_tags_as_comments(source))
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
    ranges, sections = _ranges(scan.markers) if scan.markers else ([], 0)
    stretches = [_stretch(section) for section in ranges]

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
    stretches: Sequence[_Stretch],
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
