"""A page's main content: which parts of its body are what the page says, and which are the
site's frame around it (navigation, headers and footers, sidebars, related links, comment
threads, cookie banners). Pure: a parsed body in, the parts to read out; the tree is not changed.
crawler.page.markdown reads the parts as plain text and as Markdown.

The body is read once into a table of its elements in document order, each with the text in it
(characters that are not whitespace, so that every script counts alike), the part of it inside
links, its commas, and what its tag and names say (crawler.page.content_names). Then:
- The frame goes: <header>, <footer>, <aside>, <form>, <menu>, <figcaption>, and elements whose
  names read as boilerplate, each unless it holds 30% of the page's text (a page whose markup
  leaves a <header> open, or an ASP.NET page, holds everything in one).
- Two readings choose the content. Readability's: each block of text (a paragraph, item, cell,
  quote, or a div's own text on pages written with <br>) of 20 characters or more scores by its
  commas and length, less its share of link text, for the element holding it and half for the
  one above; a container named as the article's body scores half as much again, one in a
  second <article> (the next story a page appends) 0.3 times; the best container wins, climbs
  to a parent that scores 0.7 of it, and takes the siblings that score a fifth of it. And the
  mass reading: each element's content (the text of its blocks that are long enough and not
  mostly links) less its noise (links, and scraps); the element with the most content net of
  noise wins. Readability's choice stands unless it holds under 0.6 of the mass choice's
  content (content spread wide: a recipe, a page of short blocks), when the mass choice does;
  but when the elements named as the article's body inside the mass choice are mostly one, and
  it holds readability's choice, that one does (the mass choice would add the next story).
- The choice takes the lead: the blocks of text between the page's <h1> and the content, when
  they are short beside it (a standfirst outside the article's body).
- Inside, lists and blocks mostly of links go (related stories, tag lists).
- When what the names call boilerplate is most of what the page says (a forum thread, a live
  commentary: the content left is small), the names are not heeded.
- A page too short to choose from (under 150 characters), or with no block of text to choose,
  is read whole, and `fallback` says why.

How the figures were chosen: on trafilatura's evaluation set (990 pages, every kind and
language); measured once on Zyte's article benchmark (benchmarks/bench_extract.py).
"""

from __future__ import annotations

from typing import NamedTuple

from selectolax.lexbor import LexborNode

from crawler.page.content_names import ARTICLE_BODY, BOILERPLATE, CONTENT, names_flags
from crawler.page.markdown import BLOCK_TAGS, SKIPPED_TAGS, is_navigation, read_parts, text_chars
from crawler.page.tree import children

__all__ = ["MIN_PAGE_CHARS", "Chosen", "MainParts", "choose", "python_main_parts"]

MIN_PAGE_CHARS = 150
"""A page with less text than this is too short to choose from: all of it is kept."""
MIN_BLOCK_CHARS = 20
"""A block of text shorter than this is a scrap: a caption, a button, a date."""
KEEP_SHARE = 0.3
CLIMB = 0.7
SIBLING_SHARE = 0.2
SIBLING_FLOOR = 10.0
ARTICLE_BODY_BONUS = 1.5
LATER_ARTICLE = 0.3
MASS_SHARE = 0.6
NAMED_SHARE = 0.5
LEAD_SHARE = 0.3
LINK_DENSE = 0.5
NAMES_MISLED = 0.3
NAMES_MISLED_CHARS = 250

TEXT_BLOCKS = frozenset({"p", "pre", "blockquote", "td", "li", "dd"})
OWN_TEXT_BLOCKS = frozenset({"div", "section", "article", "span", "font", "main", "td"})
OWN_TEXT_CHARS = 50
LINK_LISTS = frozenset({"ul", "ol", "div", "table", "section", "dl", "p", "span"})
FRAME_TAGS = frozenset({"header", "footer", "aside", "form", "menu", "figcaption"})
NEVER_NAMED = frozenset({"html", "body", "article", "main"})
COUNTED_EMPTY = frozenset({"article", "h1"})
"""Empty elements the table still holds: an <article> counts in which story follows which, an
<h1> marks where the lead starts."""


class Chosen(NamedTuple):
    roots: list[LexborNode]
    """What to read, in document order (the body itself when `fallback`)."""
    skip: set[int]
    """The `mem_id`s of the subtrees inside them not to read."""
    fallback: str | None
    """Why the whole body is read (None: main content was found)."""


class MainParts(NamedTuple):
    """The main content as read: plain text, Markdown with its links as marks
    (crawler.page.markdown), the links' hrefs, and why the whole body was read (None: it was
    not)."""

    text: str
    markdown: str
    hrefs: list[str]
    fallback: str | None
    frame: str = ""
    """The text outside the main content, its text nodes a space apart ('' with a fallback): what
    the index searches beside the main content, so that none of a page's text is tokenised
    twice. The scraps trimmed off the main content's ends are in neither."""


class _Element:
    __slots__ = (
        "article_body", "chars", "children", "commas", "end", "framed", "gone", "good",
        "index", "inline_chars", "inline_links", "later_article", "link_chars", "named",
        "node", "noise", "own_chars", "own_commas", "parent", "score", "tag",
    )  # fmt: skip

    def __init__(self, node: LexborNode, tag: str, parent: _Element | None, index: int) -> None:
        self.node, self.tag, self.parent, self.index = node, tag, parent, index
        self.end = index + 1  # past the last element of the subtree
        self.children: list[_Element] = []
        self.own_chars = self.own_commas = 0  # in text nodes that are its children
        self.inline_chars = self.inline_links = 0  # in text whose nearest block it is
        self.chars = self.link_chars = self.commas = 0  # in the subtree
        self.named = self.framed = self.article_body = self.later_article = False
        self.gone = False
        self.score = self.good = self.noise = 0.0

    def holds(self, other: _Element) -> bool:
        return self.index <= other.index < self.end


def _commas(text: str) -> int:
    return text.count(",") + text.count("\uff0c") + text.count("\u3001")


def _is_link(node: LexborNode) -> bool:
    """An <a> with an href, or with no id: one that only marks a place is no link (and
    `<a id="x"/>`, as XHTML generators write it, opens one that holds the rest of its section);
    one with neither is a button, read as a link."""
    attrs = node.attrs
    return bool(attrs.get("href")) or attrs.get("id") is None


def _read(body: LexborNode) -> list[_Element]:
    """The body's elements in document order, the text in each counted."""
    root = _Element(body, "body", None, 0)
    elements = [root]
    articles = 0
    # (node, the element it is in, its nearest block, in a link, the <article>s around it: -1
    # inside an <article> that follows one that has ended)
    stack: list[tuple[LexborNode, _Element, _Element, bool, int]] = []

    def push(node: LexborNode, holder: _Element, block: _Element, link: bool, around: int) -> None:
        start = len(stack)
        child = node.child
        while child is not None:
            stack.append((child, holder, block, link, around))
            child = child.next
        stack[start:] = stack[start:][::-1]

    push(body, root, root, False, 0)
    while stack:
        node, holder, block, in_link, around = stack.pop()
        if node.is_text_node:
            text = node.text_content or ""
            chars = text_chars(text)
            if chars:
                commas = _commas(text)
                holder.own_chars += chars
                holder.own_commas += commas
                block.inline_chars += chars
                if in_link:
                    block.inline_links += chars
            continue
        tag = node.tag or ""
        if not node.is_element_node or tag in SKIPPED_TAGS or is_navigation(node):
            continue
        flags = names_flags(node)
        named = tag not in NEVER_NAMED and bool(flags & BOILERPLATE) and not flags & CONTENT
        framed = tag in FRAME_TAGS
        if node.child is None and not (named or framed) and tag not in COUNTED_EMPTY:
            # An empty element counts nothing and no reading chooses it; a page of 500,000
            # (`</p>` alone makes one) would cost a row each.
            continue
        element = _Element(node, tag, holder, len(elements))
        elements.append(element)
        holder.children.append(element)
        if tag == "article" and around >= 0:
            around = -1 if articles > around else around + 1
            articles += 1
        element.later_article = around < 0
        element.article_body = bool(flags & ARTICLE_BODY)
        element.named, element.framed = named, framed
        link = in_link or (tag == "a" and _is_link(node))
        push(node, element, element if tag in BLOCK_TAGS else block, link, around)
    for element in reversed(elements):
        element.chars += element.own_chars
        element.commas += element.own_commas
        element.link_chars += element.inline_links
        parent = element.parent
        if parent is not None:
            parent.chars += element.chars
            parent.link_chars += element.link_chars
            parent.commas += element.commas
            parent.end = max(parent.end, element.end)
    return elements


class _Reading:
    """One reading of the table: with the names heeded or not."""

    def __init__(self, elements: list[_Element], by_names: bool) -> None:
        self.elements = elements
        total = elements[0].chars
        for element in elements:
            parent = element.parent
            element.score = element.good = element.noise = 0.0
            element.gone = (parent is not None and parent.gone) or (
                (element.framed or (by_names and element.named))
                and element.chars < KEEP_SHARE * total
            )
        self.mass = self._mass()
        self._score()
        kept = self._chosen()
        mass = self.mass
        if mass is not None and (not kept or _good(kept) < MASS_SHARE * mass.good):
            named = _named_body(self.elements, mass, kept[0]) if kept else None
            kept = [named or mass]
        self.kept = kept

    def _mass(self) -> _Element | None:
        for element in self.elements:
            chars, links = element.inline_chars, element.inline_links
            if not chars or element.gone:
                continue
            if chars >= MIN_BLOCK_CHARS and links < LINK_DENSE * chars:
                good = float(chars - links)
                if element.article_body:
                    good *= ARTICLE_BODY_BONUS
                if element.later_article:
                    good *= LATER_ARTICLE
                element.good, element.noise = good, float(links)
            else:
                element.noise = float(chars)
        for element in reversed(self.elements):
            parent = element.parent
            if parent is not None and not element.gone:
                parent.good += element.good
                parent.noise += element.noise
        best: _Element | None = None
        for element in self.elements:
            if not element.gone and (
                best is None or element.good - element.noise > best.good - best.noise
            ):
                best = element
        # More content than noise, or none: an empty element (net 0) is not in the table.
        return best if best is not None and best.good > best.noise else None

    def _score(self) -> None:
        for element in self.elements:
            if element.gone:
                continue
            if element.tag in TEXT_BLOCKS:
                chars, links, commas = element.chars, element.link_chars, element.commas
                holder = element.parent
            elif element.tag in OWN_TEXT_BLOCKS and element.own_chars >= OWN_TEXT_CHARS:
                chars, links, commas = element.own_chars, 0, element.own_commas
                holder = element
            else:
                continue
            if chars < MIN_BLOCK_CHARS or holder is None:
                continue
            score = (1 + commas + min(chars // 100, 3)) * (1 - min(links, chars) / chars)
            holder.score += score
            if holder.parent is not None:
                holder.parent.score += score / 2
        for element in self.elements:
            if element.article_body:
                element.score *= ARTICLE_BODY_BONUS
            if element.later_article:
                element.score *= LATER_ARTICLE

    def _chosen(self) -> list[_Element]:
        best: _Element | None = None
        for element in self.elements:
            if (
                not element.gone
                and element.score > 0
                and (best is None or element.score > best.score)
            ):
                best = element
        if best is None:
            return []
        top = best.score
        while best.parent is not None and best.parent.score >= CLIMB * top:
            best = best.parent
        parent = best.parent
        if parent is None:
            return [best]
        threshold = max(SIBLING_FLOOR, best.score * SIBLING_SHARE)
        return [
            child
            for child in parent.children
            if child is best or (not child.gone and child.score >= threshold)
        ]


def _good(kept: list[_Element]) -> float:
    return sum(element.good for element in kept)


def _named_body(elements: list[_Element], mass: _Element, chosen: _Element) -> _Element | None:
    """Of the elements named as the article's body inside the mass choice, the one that holds
    readability's choice, when it holds most of their content: the site's own bound on the
    article, where the mass choice would add the next story or the related ones."""
    bodies: list[_Element] = []
    for element in elements[mass.index : mass.end]:
        if element.article_body and not element.gone and not (bodies and bodies[-1].holds(element)):
            bodies.append(element)
    holder = next((body for body in bodies if body.holds(chosen)), None)
    if holder is None or holder.good < NAMED_SHARE * sum(body.good for body in bodies):
        return None
    return holder


def _lead(elements: list[_Element], kept: list[_Element]) -> list[_Element]:
    """The blocks of text between the page's <h1> and the chosen content, when it stands apart
    from them and they are short beside it."""
    start = kept[0].index
    heading = next((e for e in reversed(elements[:start]) if e.tag == "h1" and not e.gone), None)
    if heading is None or heading.holds(kept[0]):
        return []
    lead: list[_Element] = []
    chars = 0
    for element in elements[heading.end : start]:
        if (
            element.gone
            or element.holds(kept[0])
            or any(other.holds(element) for other in lead)
            or element.inline_chars < MIN_BLOCK_CHARS
            or element.inline_links >= LINK_DENSE * element.inline_chars
        ):
            continue
        lead.append(element)
        chars += element.chars
    return [] if chars > LEAD_SHARE * sum(element.chars for element in kept) else lead


def _link_dense(kept: list[_Element]) -> list[_Element]:
    """Lists and blocks inside the kept content that are mostly links."""
    dense = []
    stack = [child for element in kept for child in element.children]
    while stack:
        element = stack.pop()
        if element.tag in LINK_LISTS and element.link_chars > LINK_DENSE * element.chars:
            dense.append(element)
        else:
            stack.extend(element.children)
    return dense


def choose(body: LexborNode) -> Chosen:
    """What of `body` (a tree as the page walk leaves it) is the page's main content."""
    elements = _read(body)
    if elements[0].chars < MIN_PAGE_CHARS:
        return Chosen([body], set(), f"under {MIN_PAGE_CHARS} characters of text")
    reading = _Reading(elements, by_names=True)
    got = _good(reading.kept)
    if got < NAMES_MISLED_CHARS:
        plain = _Reading(elements, by_names=False)
        if got < NAMES_MISLED * _good(plain.kept):
            reading = plain
        else:
            reading = _Reading(elements, by_names=True)
    kept = reading.kept
    if not kept:
        return Chosen([body], set(), "no block of text to choose")
    kept = _lead(elements, kept) + kept
    skip = {element.node.mem_id for element in elements if element.gone}
    skip.update(element.node.mem_id for element in _link_dense(kept))
    return Chosen([element.node for element in kept], skip, None)


def python_main_parts(body: LexborNode | None) -> MainParts:
    """The main content of the body `body` (None: a frameset or no body), read."""
    if body is None or is_navigation(body):
        # The page walk cuts such a body: nothing of it is text.
        return MainParts("", "", [], "no body")
    chosen = choose(body)
    text, markdown, hrefs = read_parts(chosen.roots, chosen.skip, chosen.fallback is None)
    if chosen.fallback is not None:
        return MainParts(text, markdown, hrefs, chosen.fallback)
    if text:
        return MainParts(text, markdown, hrefs, None, frame_text(body, chosen))
    # What was chosen reads as nothing (its text all in cells of no table, say): all of it.
    return MainParts(*read_parts([body], set(), trim=False), "no block of text to choose")


_SPACES = " \t\n\f\r"
"""HTML's white space, trimmed off each text node of the frame."""


def frame_text(body: LexborNode, chosen: Chosen) -> str:
    """The text of `body` outside the main content `chosen` found: outside its roots, or in what
    is skipped inside them; never in a tag no reading reads, nor where role="navigation"."""
    roots = {root.mem_id for root in chosen.roots}
    parts: list[str] = []
    stack: list[tuple[LexborNode, bool]] = [(body, body.mem_id in roots)]
    while stack:
        node, in_main = stack.pop()
        if node.is_text_node:
            text = (node.text_content or "").strip(_SPACES)
            if text and not in_main:
                parts.append(text)
            continue
        if node is not body:
            # What the page walk reads apart (<nav>, role="navigation": nosnippet_text) or
            # not at all is no frame's.
            if not node.is_element_node or (node.tag or "") in SKIPPED_TAGS or is_navigation(node):
                continue
            if node.mem_id in roots:
                in_main = True
            elif in_main and node.mem_id in chosen.skip:
                in_main = False
        stack.extend((child, in_main) for child in reversed(children(node)))
    return " ".join(parts)
