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
import re
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

_PSEUDO = re.compile(
    r"(?P<css>.*?)\s*::\s*(?:(?P<text>text)|attr\(\s*(?P<attr>[^()\s]+)\s*\))\s*", re.DOTALL
)


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


def field_selector(name: str, text: str, *, all: bool = False) -> FieldSelector:
    """`text` read as a parsel selector; ValueError saying what is wrong with it otherwise."""
    written = text.strip()
    match = _PSEUDO.fullmatch(written)
    css = match.group("css") if match else written
    take: Literal["text", "attr", "html"] = "html"
    attribute = ""
    if match and match.group("text"):
        take = "text"
    elif match:
        take, attribute = "attr", match.group("attr")
    if not css:
        raise ValueError(f"{written!r} selects no element (expected CSS like h1::text)")
    try:
        parsed = cssselect.parse(css)
    except cssselect.SelectorError as error:
        raise ValueError(f"{written!r} is not a valid CSS selector ({error})") from None
    pseudo = next((s.pseudo_element for s in parsed if s.pseudo_element is not None), None)
    if pseudo is not None:
        shown = pseudo if isinstance(pseudo, str) else pseudo.name
        raise ValueError(
            f"{written!r}: ::{shown} is not read here; a selector may end in ::text or "
            "::attr(NAME), once (two selectors that each end so are two fields)"
        )
    try:
        _compiled(css)
    except SelectolaxError:
        raise ValueError(
            f"{written!r}: the crawl's parser (lexbor) cannot read {css!r}; parsel-only "
            "extensions (:contains, XPath) are not read, and an attribute value that is not a "
            "name is quoted ([itemprop='1'])"
        ) from None
    return FieldSelector(name, css, take, attribute, all, written)


@functools.lru_cache(maxsize=256)
def _compiled(css: str) -> str:
    """`css`, once lexbor has read it (SelectolaxError if it cannot)."""
    LexborHTMLParser("<p></p>").css(css)
    return css


def _values(node: LexborNode, selector: FieldSelector) -> Iterator[str]:
    if selector.take == "attr":
        value = node.attributes.get(selector.attribute)
        if value is not None:
            yield value[:MAX_VALUE_CHARS]
    elif selector.take == "text":
        for child in node.iter(include_text=True):
            if child.tag == "-text":
                yield (child.text_content or "")[:MAX_VALUE_CHARS]
    else:
        yield (node.html or "")[:MAX_VALUE_CHARS]


def select(tree: LexborHTMLParser | LexborNode, selector: FieldSelector) -> FieldValue:
    """The field's value in `tree`."""
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
