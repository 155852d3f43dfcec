"""The main content's two readings compared (crawler.page.main_content, its C twin)."""

from __future__ import annotations

import pytest
from selectolax.lexbor import LexborHTMLParser

from crawler.page.compiled_main import MAIN, compiled_main_parts
from crawler.page.main_content import python_main_parts
from crawler.page.tree import body_of
from crawler.page.walk import python_walk


def assert_same_readings(html: str | bytes) -> None:
    """The compiled reading reads `html` as the Python one does (on the tree the walk leaves)."""
    if compiled_main_parts is None:
        pytest.skip(f"no compiled reading: {MAIN}")
    whole, cut = LexborHTMLParser(html), LexborHTMLParser(html)
    python_walk(cut)
    assert compiled_main_parts(body_of(whole, whole.root)) == python_main_parts(
        body_of(cut, cut.root)
    )
