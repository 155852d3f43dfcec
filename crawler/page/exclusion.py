"""The signals a page gives about itself: the robots directive words (META robots and
X-Robots-Tag), and in-page exclusion sections as stretches of the parsed tree. Pure; the parse
and the traversal that finds the marker comments are crawler.page.read's.

Sections, each a stretch of the document in source order:
- Ultraseek comment tags `<!-- robots content="noindex|nofollow|none|index|follow|all" -->`
  ... `<!-- /robots -->`;
- Google Search Appliance `<!--googleoff: index|anchor|snippet|all-->` ... `<!--googleon: ...-->`;
- Yandex `<!--noindex-->` ... `<!--/noindex-->` and its element form `<noindex>` ... `</noindex>`,
  which `yandex_tags_as_comments` turns into the comment form in the source.
A `/robots` or `/noindex` closes the latest open section of its kind; googleoff/googleon count
per word, so nested offs need as many ons; a section left open runs to the end of the document.
`anchor` is recognised and changes nothing: it stops a link's text from describing the linked
page, and the crawl never indexes link text for the linked page.

A stretch between two markers is the maximal subtrees strictly between the two comment nodes,
plus the elements opened inside it whose end lies after it (they hold the closing marker).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from selectolax.lexbor import LexborNode

__all__ = [
    "NOAI",
    "NOFOLLOW",
    "NOIMAGEAI",
    "NOINDEX",
    "NOSNIPPET",
    "Marker",
    "MarkerWord",
    "Stretch",
    "directives_of",
    "marker_of",
    "marker_word",
    "stretches_of",
    "x_robots_directives",
    "yandex_tags_as_comments",
]

NOINDEX = 1
NOFOLLOW = 2
NOSNIPPET = 4
# Usage words (crawler.usage): they say what the page may be used for, not what we may do with
# it, so they never act on a section.
NOAI = 8
NOIMAGEAI = 16
_SECTION_FLAGS = NOINDEX | NOFOLLOW | NOSNIPPET

_WORD_FLAGS = {
    "noindex": NOINDEX,
    "nofollow": NOFOLLOW,
    "none": NOINDEX | NOFOLLOW,
    "nosnippet": NOSNIPPET,
    "noai": NOAI,
    "noimageai": NOIMAGEAI,
}
_WORD_SEPARATORS = re.compile(r"[\s,]+")
# X-Robots-Tag directives that take a value after a colon, so the colon names no agent.
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)


def directives_of(words: str) -> int:
    """NOINDEX | NOFOLLOW | NOSNIPPET | NOAI | NOIMAGEAI flags of a META robots content or
    X-Robots-Tag list."""
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


# Where a `<noindex>` tag may start, or something the tokenizer would not read one in and that
# must be left as it is: a comment, or the raw text of script, style, title, textarea and xmp.
# A tag name ends where the tokenizer ends it: at whitespace, `/` or `>`.
_TAG_NAME_END = rb"(?=[\t\n\f\r />])"
_YANDEX_STARTS = re.compile(
    rb"<(?:(!--)|(script|style|title|textarea|xmp)"
    + _TAG_NAME_END
    + rb"|(/?)noindex"
    + _TAG_NAME_END
    + rb"[^>]*>)",
    re.IGNORECASE,
)
_RAW_TEXT_ENDS = {
    name: re.compile(rb"</" + name + rb"\s*>", re.IGNORECASE)
    for name in (b"script", b"style", b"title", b"textarea", b"xmp")
}


def yandex_tags_as_comments(source: bytes | str) -> bytes:
    """`source` with each `<noindex>`/`</noindex>` tag written as its comment form; a str is
    read as the parser would read it, UTF-8 bytes. This runs on the rare page that has one."""
    if isinstance(source, str):
        source = source.encode("utf-8", "surrogatepass")
    parts: list[bytes] = []
    copied = at = 0
    search = _YANDEX_STARTS.search
    while (found := search(source, at)) is not None:
        start = found.start()
        if found.group(1) is not None:
            end = source.find(b"-->", found.end())
            at = end + 3 if end >= 0 else start + 1  # an unclosed comment skips nothing
        elif found.group(2) is not None:
            close = _RAW_TEXT_ENDS[found.group(2).lower()].search(source, found.end())
            at = close.end() if close is not None else start + 1
        else:
            parts += (source[copied:start], b"<!--" + found.group(3) + b"noindex-->")
            copied = at = found.end()
    parts.append(source[copied:])
    return b"".join(parts)


# --- section markers -----------------------------------------------------------------------------

# A marker's action, and the kinds of section (a close ends the latest open one of its kind).
# crawler.page._pagescan.c knows these numbers.
_OPEN, _CLOSE, _OFF, _ON = range(4)
ROBOTS_SECTION, YANDEX_SECTION, GOOGLE_SECTION = range(3)
_ROBOTS_SECTION = re.compile(
    r"robots\s+content\s*=\s*[\"']?([^\"']*)[\"']?\s*$|(/)\s*robots\s*$", re.IGNORECASE
)
_GOOGLE_SECTION = re.compile(r"google(off|on)\s*:\s*([a-z]+)\s*$", re.IGNORECASE)
_GOOGLE_WORDS = {"index": NOINDEX, "snippet": NOSNIPPET, "anchor": 0, "all": NOINDEX | NOSNIPPET}
_MARKER_STARTS = ("robots", "google", "noindex")
_MARKER_INITIALS = frozenset("rRgGnN/")


MarkerWord = tuple[int, int, int]
"""What a marker comment says: (action, kind, flags)."""


@dataclass(frozen=True, slots=True)
class Marker:
    node: LexborNode
    action: int
    kind: int
    """ROBOTS_SECTION, YANDEX_SECTION or GOOGLE_SECTION."""
    flags: int


def marker_of(node: LexborNode) -> Marker | None:
    content = node.comment_content
    word = marker_word(content) if content else None
    return None if word is None else Marker(node, *word)


def marker_word(content: str) -> MarkerWord | None:
    """What the comment `content` (stripped) says, if it is a section marker."""
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
        return action, GOOGLE_SECTION, _GOOGLE_WORDS[match.group(2).lower()]
    words = content.lower().replace(" ", "")
    if words == "noindex":
        return _OPEN, YANDEX_SECTION, NOINDEX
    if words == "/noindex":
        return _CLOSE, YANDEX_SECTION, 0
    match = _ROBOTS_SECTION.match(content)
    if match is None:
        return None
    if match.group(2):
        return _CLOSE, ROBOTS_SECTION, 0
    return _OPEN, ROBOTS_SECTION, directives_of(match.group(1)) & _SECTION_FLAGS


@dataclass(frozen=True, slots=True)
class _Range:
    """The stretch of the document from `start` to `end` (None: to its end), and what holds in
    it."""

    start: LexborNode
    end: LexborNode | None
    flags: int


def _ranges(markers: Sequence[Marker]) -> tuple[list[_Range], int]:
    """The stretches between consecutive markers where a section is in force, and the number of
    sections opened."""
    open_sections: list[Marker] = []
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
class Stretch:
    """A `_Range` as parts of the tree."""

    flags: int
    subtrees: list[LexborNode]
    """The maximal subtrees wholly inside."""
    opened: list[LexborNode]
    """Elements whose start tag is inside but whose end is not: they hold the end marker."""


def _stretch(section: _Range, root_id: int) -> Stretch:
    """The nodes strictly after `section.start` and before `section.end` in document order;
    `root_id` is the document's <html> element's mem_id."""
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
    stretch = Stretch(section.flags, subtrees, opened)
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
        while node.mem_id in holders or node.mem_id == root_id:
            opened.append(node)
            child = node.child
            if child is None:
                return stretch
            node = child
        if node.mem_id == end_id:
            return stretch
        subtrees.append(node)
    return stretch


def stretches_of(markers: Sequence[Marker], root: LexborNode) -> tuple[list[Stretch], int]:
    """The stretches of the tree where a section is in force, in document order, and the number
    of sections opened (no-op `index`/`follow`/`all` ones not counted). `root` is the document's
    <html> element."""
    ranges, opened = _ranges(markers)
    return [_stretch(section, root.mem_id) for section in ranges], opened
