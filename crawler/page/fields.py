"""A user's fields: CSS selectors in the dialect Scrapy and parsel users write
(`h1::text`, `meta[itemprop=sku]::attr(content)`), run on the tree the page step already parsed.

Pure: a selector is checked once (`field_selector`, crawler.selectors, at the config's load) and
run on a selectolax tree (`fields_of`), with no second parse: parsel would parse the page again
with lxml.

What a selector gives, as parsel's `.get()` and `.getall()` give it:
- `CSS::text`: the text nodes directly inside each element matched, each as it is (whitespace
  kept): `<h1>Hi <b>you</b></h1>` gives "Hi " (`h1 *::text` or `h1 ::text` reaches deeper).
- `CSS::attr(NAME)`: the attribute of each element matched that has it.
- `CSS` alone: each element matched as HTML (its outer HTML).
A field is the first of those values (None when there is none) or, with `all`, the list of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeAlias

from selectolax.lexbor import LexborHTMLParser, LexborNode

from crawler.selectors import FieldSelector, field_selector

__all__ = ["FieldSelector", "FieldValue", "field_selector", "fields_of", "select"]

FieldValue: TypeAlias = str | list[str] | None
"""A field's value: the first match's (None: none), or with `all` the list of every match's."""

MAX_VALUES = 1_000
"""Values kept of one field with `all`: a page of 100,000 matches is a trap, not a product."""
MAX_VALUE_CHARS = 100_000
"""Characters kept of one value (a selector matching `html` would copy the whole page)."""


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
