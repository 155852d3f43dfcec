"""A user's field selector (`extract:`): CSS in the dialect Scrapy and parsel users write
(`h1::text`, `meta[itemprop=sku]::attr(content)`), checked once, at the config's load, with
cssselect (parsel's parser) and with lexbor, which runs it (crawler.page.fields).

Pure, and light to import: the config reads selectors with it, and a command that only reads a
crawl's output should not pay for the page step's import.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

import cssselect
from selectolax.lexbor import LexborHTMLParser, SelectolaxError

__all__ = ["FieldSelector", "field_selector"]


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
