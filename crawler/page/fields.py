"""A user's fields: CSS selectors in the dialect Scrapy and parsel users write
(`h1::text`, `meta[itemprop=sku]::attr(content)`), run on the tree the page step already parsed.

Pure: a selector is checked once (`field_selector`, at the config's load) and run on a selectolax
tree (`fields_of`), with no second parse: parsel would parse the page again with lxml.

What a selector gives, as parsel's `.get()` and `.getall()` give it:
- `CSS::text`: the text nodes directly inside each element matched, each as it is (whitespace
  kept): `<h1>Hi <b>you</b></h1>` gives "Hi " (`h1 *::text` or `h1 ::text` reaches deeper).
- `CSS::attr(NAME)`: the attribute of each element matched that has it.
- `CSS` alone: each element matched as HTML (its outer HTML).
A field is the first of those values (None when there is none) or, with `all`, the list of them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

import cssselect
from selectolax.lexbor import LexborHTMLParser, LexborNode, SelectolaxError

__all__ = ["FieldSelector", "FieldValue", "field_selector", "fields_of", "select"]

FieldValue: TypeAlias = str | list[str] | None
"""A field's value: the first match's (None: none), or with `all` the list of every match's."""

MAX_VALUES = 1_000
"""Values kept of one field with `all`: a page of 100,000 matches is a trap, not a product."""
MAX_VALUE_CHARS = 100_000
"""Characters kept of one value (a selector matching `html` would copy the whole page)."""


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """One field of `extract:`: its name, the CSS it selects elements with, what it takes of
    them (`text`, an attribute, or the element's HTML) and whether it keeps every match."""

    name: str
    css: str
    take: Literal["text", "attr", "html"] = "text"
    attribute: str = ""
    all: bool = False
    source: str = ""
    """The selector as the user wrote it, for messages."""
    subtree: bool = False
    """The text nodes (or attributes) of each element matched and of all under it: parsel's
    `X *::text`, `X ::text`."""


def field_selector(name: str, text: str, *, all: bool = False) -> FieldSelector:
    """`text` read as a parsel selector; ValueError saying what is wrong with it otherwise."""
    written = text.strip()
    if not written:
        raise ValueError("an empty selector selects no element (expected CSS like h1::text)")
    try:
        parsed = cssselect.parse(written)
    except cssselect.SelectorError as error:
        raise ValueError(f"{written!r} is not a valid CSS selector ({error})") from None
    if not parsed:
        raise ValueError(f"{written!r} selects no element (expected CSS like h1::text)")
    takes = {_take(written, selector.pseudo_element) for selector in parsed}
    if len(takes) > 1:
        raise ValueError(
            f"{written!r}: the selectors of a list end alike here (all in ::text, all in the "
            "same ::attr(NAME), or none); write one field for each"
        )
    take, attribute = takes.pop()
    members: list[str] = []
    subtrees: set[bool] = set()
    for selector in parsed:
        tree = selector.parsed_tree
        # parsel reads `X *::text` (and `X ::text`) as every text node under X, X's own
        # included (descendant-or-self), and `X *::attr(a)` likewise.
        subtree = take != "html" and _is_descendant_star(tree)
        subtrees.add(subtree)
        kept = (
            tree.selector
            if isinstance(tree, cssselect.parser.CombinedSelector) and subtree
            else tree
        )
        members.append(cssselect.parser.Selector(kept, None).canonical())
    if len(subtrees) > 1:
        raise ValueError(f"{written!r}: the selectors of a list end alike here; one field each")
    css = ", ".join(members)
    try:
        _compiled(css)
    except SelectolaxError:
        raise ValueError(
            f"{written!r}: the crawl's parser (lexbor) cannot read {css!r}; parsel-only "
            "extensions (:contains, XPath) are not read"
        ) from None
    return FieldSelector(name, css, take, attribute, all, written, subtrees.pop())


def _take(written: str, pseudo: object) -> tuple[Literal["text", "attr", "html"], str]:
    if pseudo is None:
        return "html", ""
    if pseudo == "text":
        return "text", ""
    if (
        isinstance(pseudo, cssselect.parser.FunctionalPseudoElement)
        and pseudo.name == "attr"
        and len(pseudo.arguments) == 1
        and pseudo.arguments[0].type in ("IDENT", "STRING")
    ):
        return "attr", str(pseudo.arguments[0].value)
    shown = pseudo if isinstance(pseudo, str) else getattr(pseudo, "name", pseudo)
    raise ValueError(
        f"{written!r}: ::{shown} is not read here; a selector may end in ::text or ::attr(NAME)"
    )


def _is_descendant_star(tree: object) -> bool:
    """`X *`: a descendant combinator before a bare `*`."""
    if not isinstance(tree, cssselect.parser.CombinedSelector) or tree.combinator != " ":
        return False
    star = tree.subselector
    return isinstance(star, cssselect.parser.Element) and star.element is None


@functools.lru_cache(maxsize=256)
def _compiled(css: str) -> str:
    """`css`, once lexbor has read it (SelectolaxError if it cannot)."""
    LexborHTMLParser("<p></p>").css(css)
    return css


def _values(node: LexborNode, selector: FieldSelector) -> Iterator[str]:
    if selector.take == "attr":
        nodes = node.traverse() if selector.subtree else (node,)  # traverse: the node first
        for each in nodes:
            value = each.attributes.get(selector.attribute)
            if value is not None:
                yield value[:MAX_VALUE_CHARS]
    elif selector.take == "text":
        children = (
            node.traverse(include_text=True) if selector.subtree else node.iter(include_text=True)
        )
        for child in children:
            if child.tag == "-text":
                yield (child.text_content or "")[:MAX_VALUE_CHARS]
    else:
        yield (node.html or "")[:MAX_VALUE_CHARS]


def select(tree: LexborHTMLParser | LexborNode, selector: FieldSelector) -> FieldValue:
    """The field's value in `tree`."""
    if not selector.all:
        # The first element matched stops lexbor's search (a whole page's walk costs ~1 us a
        # KB); it has the first value, unless it has none (::text of an empty element).
        first = tree.css_first(selector.css)
        if first is None:
            return None
        value = next(_values(first, selector), None)
        if value is not None:
            return value
    found: list[str] = []
    for node in tree.css(selector.css):
        for value in _values(node, selector):
            if not selector.all:
                return value
            found.append(value)
            if len(found) >= MAX_VALUES:
                return found
    return found if selector.all else None


def fields_of(tree: LexborHTMLParser, selectors: Sequence[FieldSelector]) -> dict[str, FieldValue]:
    """Every field's value in `tree`, in the order the selectors are given."""
    return {selector.name: select(tree, selector) for selector in selectors}
