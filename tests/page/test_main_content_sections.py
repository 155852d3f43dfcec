"""The main content of a page with in-page sections: its tree as the compiled walk leaves it,
with the sections cut (crawler.page.walk.cut_sections), reads as the tree the Python walk cuts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from crawler.page import compiled
from crawler.page.compiled_main import main_parts
from crawler.page.main_content import python_main_parts
from crawler.page.read import read_page
from crawler.page.tree import body_of
from crawler.page.walk import cut_sections, python_walk

ARTICLE = "<p>" + "The council met on Tuesday, and it decided, after a long debate, to go on. " * 3

MARKERS = [
    "<!-- robots content=\"noindex\" -->", "<!-- /robots -->", "<!-- robots content=nosnippet -->",
    "<!-- robots content=\"nofollow\" -->", "<!-- googleoff: index -->", "<!-- googleon: index -->",
    "<!-- googleoff: snippet -->", "<!-- googleon: snippet -->", "<!--noindex-->",
    "<!--/noindex-->", "<!-- a comment -->",
]  # fmt: skip
LEAVES = st.one_of(
    st.sampled_from(MARKERS),
    st.sampled_from(["Words, and more words, of a paragraph long enough to count", "short",
                     '<a href="/x">a link</a>', "<script><!-- robots content=noindex --></script>",
                     "<svg><script><!-- robots content=noindex --><b>x</b></script></svg>",
                     "<template><!-- /robots --><p>t</p></template>", "<br>", ARTICLE]),
)  # fmt: skip
MARKUP = st.recursive(
    LEAVES,
    lambda inner: st.builds(
        lambda children, tag, names: f"<{tag}{names}>{''.join(children)}</{tag}>",
        st.lists(inner, max_size=5),
        st.sampled_from(["p", "div", "article", "section", "ul", "li", "nav", "span", "main"]),
        st.sampled_from(["", ' class="content"', ' class="sidebar"', ' role="navigation"']),
    ),
    max_leaves=30,
)


def _compiled_reading(html: str) -> object:
    tree = LexborHTMLParser(html)
    facts = compiled.walk(tree)
    if facts.sections:
        cut_sections(tree)
    return main_parts(body_of(tree, tree.root))


def _python_reading(html: str) -> object:
    tree = LexborHTMLParser(html)
    python_walk(tree)
    return python_main_parts(body_of(tree, tree.root))


@pytest.fixture(autouse=True)
def _compiled_walk() -> None:
    if compiled.compiled_walk is None or compiled.walk is not compiled.compiled_walk:
        pytest.skip(f"the compiled walk is not used: {compiled.WALK}")


@settings(max_examples=300, deadline=None)
@given(st.lists(MARKUP, min_size=1, max_size=6))
def test_a_page_with_sections_reads_as_the_python_walk_leaves_it(parts: list[str]) -> None:
    html = "<body>" + "".join(parts) + "</body>"
    assert _compiled_reading(html) == _python_reading(html)


def test_noindex_and_nosnippet_sections_are_not_main_content() -> None:
    html = (
        f"<article>{ARTICLE}<!-- robots content=noindex --><p>Hidden from the index, a whole "
        "paragraph of it.</p><!-- /robots --><div><!-- googleoff: snippet -->Not for snippets, "
        f"and more words, and more.<!-- googleon: snippet --></div>{ARTICLE}<!-- robots "
        "content=nofollow --><p>Followed not, but indexed, this paragraph of words.</p><!-- /robots"
        " --></article>"
    )
    assert _compiled_reading(html) == _python_reading(html)
    page = read_page(html.encode(), "https://site.test/")
    assert "Hidden" not in page.main_text and "snippets" not in page.main_text
    assert "Followed not" in page.main_text
    assert page.sections == 3
