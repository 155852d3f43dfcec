"""How much of a page the page step reads: the bounds that keep one hostile page from holding the
event loop (the page step runs on it). Pure.

Where the time goes on a hostile page is lexbor's tree building, not our walk: each start tag
walks the stack of open elements for its scope checks, so 100,000 nested `<div>`s cost ~10^10
steps (13-50 s); each attribute is compared with the ones before it on its element, so 100,000
attributes cost ~10^10 too; formatting elements a `</div>` pops stay in the list of active
formatting elements and are rebuilt at the next text, so `<p><font id=N>x</p>` repeated rebuilds
all of them each time (4,000 repeats: 4 s; 16,000: out of memory); and every node is an
allocation. None of that can be interrupted once the parser has the bytes. So before the parse,
`prescan` reads the markup with a cheap model of the tokenizer and the tree builder and finds
where, if anywhere, the page crosses a bound; the parser is given the bytes before that point
only, and the page says so (`Page.cut`). What is past the cut is not read at all: no text
indexed, no link followed, whatever section it is in. Nesting is the exception: what lies past
MAX_DEPTH is read flat, as browsers hold it (below).

The model (`OpenElements`, in crawler.page.open_elements): the stack of open elements, pushed by
start tags (not void, raw text or self-closing foreign ones) and popped as the HTML standard's tree
builder pops it, where that is cheap to know: an end tag pops to its element if that is in the
scope the standard checks (default, button, list item or table scope), an end tag of a non-special
element stops at a special one, `</form>` takes the form alone, `</body>` and `</html>` pop
nothing, the adoption agency pops only when no special element is above; a start tag closes what it
implies (a `<p>`, `<li>`, `<dd>`/`<dt>`, `<option>`, a cell or row, an `<a>`, a `<nobr>`, a
`<button>`) within WINDOW elements of the top and not past what the standard's own search stops at.
And the list of active formatting elements: entries added by formatting start tags (Noah's Ark: at
most three alike, attributes compared as written), removed by their end tags, cleared at the end of
a marker element. Where the model cannot tell, it keeps an element open: it may count deeper than
the parser builds, never shallower (the tests hold both on generated tag soup).

The bounds (a page that crosses one is cut at the tag that crosses it):
- MAX_DEPTH, 512: where Blink's and WebKit's tree builders stop nesting, and so does the parser
  here. An element that would open deeper is kept out of the parser's tree: its start and end
  tags are given to the parser as a space (an <a> as itself, closed at once, so that its link is
  read), so that what it holds, text and links, is read as its siblings' are, as a browser's
  tree holds them, and the tree is no deeper than the bound. The model keeps such elements on its
  stack (`PAST_DEPTH`), so that it knows which end tags are theirs. The list of formatting
  elements is at most this long, else the page is cut there: the parser rebuilds it at every
  text. The tree is at most about twice as deep as the bound.
- MAX_WORK, 25,000,000 steps of tree building, ~0.25 s of lexbor on the machine it was
  measured on: each node (element, text, comment) costs ELEMENT_COST; each start tag the depth
  its scope checks may walk, each end tag the depth it searches; each attribute ELEMENT_COST (an
  end tag's too: lexbor keeps them) and the attributes before it on its element; each text and
  start tag the formatting elements the parser may rebuild there, times a node and the depth. An
  ordinary 12 KB page costs ~0.1% of it; 5 MB of `<p>` reaches it at ~490,000 elements.
- MAX_MARKERS, 1,000 in-page section markers: each is a call into Python and a change of the
  section state; pages use a handful.
And in the walk, MAX_LINKS: the first 6,000 distinct links of a page are taken (Heritrix's
default `maxOutlinks`, the open web's precedent), so one page cannot put 100,000 URLs in the
frontier. Distinct, not anchors: an index page (vim's tags.html) has more than 6,000 anchors to a
few hundred pages. The walks read at most MAX_ANCHORS_READ anchors, which bounds their own work.

`python_prescan` is the reference; crawler/page/_pagescan.c has the same in C (`prescan`), with
the same table (TAG_CLASSES, in crawler.page.tag_classes), and the tests compare them.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from crawler.page.open_elements import OpenElements
from crawler.page.tag_classes import (
    BREAKOUT_TAGS,
    IN_FOREIGN,
    INTEGRATION_POINTS,
    IS_FOREIGN,
    IS_FORMATTING,
    IS_MARKER,
    IS_NOINDEX,
    IS_PLAINTEXT,
    IS_RAW_TEXT,
    IS_VOID,
    PAST_DEPTH,
    TAG_CLASSES,
)

__all__ = [
    "DEFAULT_BOUNDS",
    "ELEMENT_COST",
    "LIMIT_DEPTH",
    "LIMIT_MARKERS",
    "LIMIT_NONE",
    "LIMIT_WORK",
    "MAX_ANCHORS",
    "MAX_ANCHORS_READ",
    "MAX_DEPTH",
    "MAX_LINKS",
    "MAX_MARKERS",
    "MAX_WORK",
    "TAG_CLASSES",
    "Bounds",
    "Prescanned",
    "cut_reason",
    "python_prescan",
]

MAX_DEPTH = 512
MAX_WORK = 25_000_000
MAX_MARKERS = 1_000
MAX_LINKS = 6_000
MAX_ANCHORS_READ = 100_000
MAX_ANCHORS = MAX_ANCHORS_READ + 1
"""The walks read this many anchors at most: one more than is taken says there were more."""
ELEMENT_COST = 50
"""A node costs lexbor about as much as 50 steps of a scope check."""

LIMIT_NONE, LIMIT_DEPTH, LIMIT_WORK, LIMIT_MARKERS = range(4)


class Prescanned(NamedTuple):
    """What the prescan found of a page."""

    offset: int
    """Where the page crosses a bound (-1: nowhere)."""
    limit: int
    """Which (LIMIT_*)."""
    flattened: bytes | None
    """The page as the parser reads it, when that is not `source[:offset]` (`source` when the
    offset is -1): what lies past the depth flattened, up to the offset."""


class Bounds(NamedTuple):
    max_depth: int = MAX_DEPTH
    max_work: int = MAX_WORK
    max_markers: int = MAX_MARKERS


DEFAULT_BOUNDS = Bounds()

_WHY = {
    LIMIT_DEPTH: "formatting elements open past {bounds.max_depth}",
    LIMIT_WORK: "markup costing more than {bounds.max_work:,} steps to build",
    LIMIT_MARKERS: "more than {bounds.max_markers:,} section markers",
}


def cut_reason(offset: int, size: int, limit: int, bounds: Bounds) -> str:
    """What a page's record says when its source was cut."""
    why = _WHY[limit].format(bounds=bounds)
    return f"read up to byte {offset:,} of {size:,}: {why}"


# Bound again by assignment: on a name a `from` import binds, CPython 3.11 compiles
# `name.get(...)` as an attribute load and a call, not as a method call (LOAD_METHOD), once per tag.
_TAG_CLASSES = TAG_CLASSES
_UNCLASSED = (0, 0, 0)
_WHITESPACE = b"\t\n\f\r "
_NAME_END = _WHITESPACE + b"/>"
_MARKER_WORDS = (b"robots", b"google", b"noindex")


@functools.cache  # compiled when first met: the crawl runs the C prescan, not this one
def _raw_text_end(name: bytes) -> re.Pattern[bytes]:
    return re.compile(b"</" + re.escape(name) + b"[\t\n\f\r />]", re.IGNORECASE)


def _is_marker(source: bytes, at: int) -> bool:
    """A comment starting at `at` (after `<!--`) that starts like a section marker."""
    head = source[at : at + 64].lstrip(_WHITESPACE)
    if head[:1] == b"/":
        head = head[1:].lstrip(_WHITESPACE)
    head = head.lower()
    return head.startswith(_MARKER_WORDS)


def _letter_at(source: bytes, index: int) -> bool:
    return index < len(source) and 0x61 <= source[index] | 0x20 <= 0x7A


def python_prescan(source: bytes, bounds: Bounds = DEFAULT_BOUNDS) -> Prescanned:
    """Where the page first crosses a bound and which (LIMIT_*), (-1, LIMIT_NONE) when it
    crosses none; and what the parser reads of it when that is not `source[:offset]`: the page
    with what lies past the depth flattened (None when nothing is)."""
    size = len(source)
    model = OpenElements()
    stack = model.stack
    work = markers = 0
    at = text_from = 0
    find = source.find
    max_depth = bounds.max_depth
    pieces: list[bytes] = []
    """The flattened page so far, up to `copied` in the source."""
    copied = 0
    offset, limit = -1, LIMIT_NONE
    while True:
        at = find(b"<", at)
        if at < 0 or at + 1 >= size:
            break
        second = source[at + 1]
        if at > text_from:
            # Text: a node, and the parser rebuilds the formatting elements that are not open.
            work += ELEMENT_COST + model.active() * (ELEMENT_COST + model.real)
        if second in b"!?" or (second == 0x2F and not _letter_at(source, at + 2)):
            # A comment, a doctype or a bogus comment: a node.
            work += ELEMENT_COST
            if work > bounds.max_work:
                offset, limit = at, LIMIT_WORK
                break
        if source.startswith(b"!--", at + 1):
            if _is_marker(source, at + 4):
                markers += 1
                if markers > bounds.max_markers:
                    offset, limit = at, LIMIT_MARKERS
                    break
            end = find(b"-->", at + 4)
            if end < 0:
                break
            at = text_from = end + 3
            continue
        if second in b"!?":
            end = find(b">", at + 2)
            if end < 0:
                break
            at = text_from = end + 1
            continue
        closing = second == 0x2F  # "/"
        start = at + 1 + closing
        if not _letter_at(source, start):
            if closing:
                end = find(b">", start)
                if end < 0:
                    break
                at = text_from = end + 1
            else:
                at += 1
            continue
        k = start
        while k < size and source[k] not in _NAME_END:
            k += 1
        name = source[start:k].lower()
        name_end = k
        attributes = tag_work = 0
        slash = False
        unfinished = False
        while True:
            while k < size and (source[k] in _WHITESPACE or source[k] == 0x2F):
                slash = source[k] == 0x2F
                k += 1
            if k >= size:
                unfinished = True  # a tag the end of the page cuts: the parser drops it
                break
            if source[k] == 0x3E:  # ">"
                break
            slash = False
            # An attribute is a node's worth of allocation, on an end tag too (lexbor keeps
            # them), and a start tag's is compared with the ones before it.
            tag_work += ELEMENT_COST
            if not closing:
                tag_work += attributes
                attributes += 1
            k += 1
            while k < size and source[k] not in b"\t\n\f\r />=":
                k += 1
            while k < size and source[k] in _WHITESPACE:
                k += 1
            if k < size and source[k] == 0x3D:  # "="
                k += 1
                while k < size and source[k] in _WHITESPACE:
                    k += 1
                if k < size and source[k] in b"\"'":
                    end = find(source[k : k + 1], k + 1)
                    if end < 0:
                        unfinished = True
                        break
                    k = end + 1
                else:
                    while k < size and source[k] not in b"\t\n\f\r >":
                        k += 1
        if unfinished:
            break
        after = text_from = k + 1
        flags, closes, stops = _TAG_CLASSES.get(name, _UNCLASSED)
        if closing:
            steps, past_depth = model.end_tag(name, flags)
            work += steps
            if past_depth and not flags & IS_NOINDEX:
                # The end of an element the parser was never given: gone too.
                pieces += (source[copied:at], b" ")
                copied = after
            else:
                work += tag_work
            if flags & IS_NOINDEX:
                markers += 1
                if markers > bounds.max_markers:
                    offset, limit = at, LIMIT_MARKERS
                    break
        else:
            real, active = model.real, model.active()
            # Counted before the tag closes what it implies, as the parser's checks walk.
            start_work = ELEMENT_COST + real + active * (ELEMENT_COST + real) + tag_work
            if flags & IS_NOINDEX:
                markers += 1
                if markers > bounds.max_markers:
                    offset, limit = at, LIMIT_MARKERS
                    break
            if flags & IS_PLAINTEXT:
                break  # the rest of the page is its text
            if closes:
                model.closes(closes, stops)
            if flags & IS_RAW_TEXT:
                work += start_work
                if work > bounds.max_work:
                    offset, limit = at, LIMIT_WORK
                    break
                found_end = _raw_text_end(name).search(source, after)
                if found_end is None:
                    break
                at = text_from = found_end.start()
                continue
            # A self-closing tag closes itself in SVG and MathML only: an element is foreign
            # when it is <svg> or <math>, or its parent is foreign and no integration point
            # and it is no tag that breaks out to HTML (where `/>` closes nothing).
            foreign = bool(flags & IS_FOREIGN)
            if not foreign and stack:
                parent, parent_flags = stack[-1]
                foreign = (
                    bool(parent_flags & IN_FOREIGN)
                    and parent not in INTEGRATION_POINTS
                    and name not in BREAKOUT_TAGS
                )
            slash = slash and foreign
            if foreign:
                flags |= IN_FOREIGN
            if flags & IS_VOID:
                work += start_work
            elif model.real >= max_depth and not flags & IS_NOINDEX:
                # Past the depth: the parser is not given the element, only what it holds; an
                # <a> is given closed at once, for its link (as a browser's tree holds it).
                if name == b"a":
                    work += start_work
                    pieces += (source[copied:after], b"</a>")
                else:
                    work += 1 + active  # the model's own steps
                    pieces += (source[copied:at], b" ")
                copied = after
                if not slash:
                    stack.append((name, flags | PAST_DEPTH))
            else:
                work += start_work
                if not slash:
                    stack.append((name, flags))
                    model.real += 1
                    if flags & IS_MARKER:
                        model.formatting.append(None)
                    elif flags & IS_FORMATTING:
                        model.add(name, source[name_end:k])
                    if model.active() > max_depth:
                        offset, limit = at, LIMIT_DEPTH
                        break
        if work > bounds.max_work:
            offset, limit = at, LIMIT_WORK
            break
        at = after
    if not pieces:
        return Prescanned(offset, limit, None)
    pieces.append(source[copied : offset if offset >= 0 else size])
    return Prescanned(offset, limit, b"".join(pieces))
