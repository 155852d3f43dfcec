"""The main content's Markdown links put in by C (crawler/page/_linkmarks.c) as by Python
(crawler.page.link_marks.with_links), on what the reading writes and on marks it never writes;
and the main content read and linked in one step of C as in two."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from crawler.page import compiled_main
from crawler.page.compiled_main import (
    compiled_main_content,
    compiled_markdown_links,
    composed_main_content,
    python_markdown_links,
)
from crawler.page.link_marks import IMAGE_OPEN, LINK_OPEN, TARGET, TARGET_END
from crawler.page.main_content import python_main_parts
from crawler.urls import LinkResolver

URL = "https://site.test/docs/page.html"
BASE = "https://cdn.test/base/"

HREFS = [
    "other.html", "other.html#part", "../up.html", "/root.html?q=1", "#here", "#Überblick", "",
    "http://elsewhere.test/x", "//proto.test/rel", "mailto:x@site.test", "javascript:go()",
    "a b.html", "x|y.html", "paren(1).html", "./dot.html", "/a/./b/../c.html", "?query",
    "data:image/png;base64,AAAA", "ünï.html", "#frag with space", "page.html#a|b", "#(x)",
    "HTTP://Site.Test:443/Up", "\\back\\slash.html", "q.html?", "tab\t.html",
    "../../../../x.html", "a/..", "a/.", ".", "..", "./", "../?q=/./x", "x/../y?z=../w#f",
    "/..", "//", "a//../b", "http://site.test/a/../b",
]  # fmt: skip


def _compiled() -> compiled_main.MarkdownLinks:
    if compiled_markdown_links is None:
        pytest.skip(f"no compiled reading: {compiled_main.MAIN}")
    return compiled_markdown_links


def _both(markdown: str, hrefs: list[str], base: str | None) -> tuple[str, str]:
    page = base or URL
    return (
        _compiled()(markdown, hrefs, LinkResolver(page), base, URL),
        python_markdown_links(markdown, hrefs, LinkResolver(page), base, URL),
    )


def _link(text: str, index: int) -> str:
    return f"{LINK_OPEN}{text}{TARGET}{index}{TARGET_END}"


def _image(alt: str, index: int) -> str:
    return f"{IMAGE_OPEN}{alt}{TARGET}{index}{TARGET_END}"


def test_the_compiled_links_are_the_ones_used_where_the_reading_is_compiled() -> None:
    compiled = _compiled()
    if compiled_main.main_parts is compiled_main.compiled_main_parts:
        assert compiled_main.markdown_links is compiled
        assert compiled_main.main_content_of is compiled_main_content


def _one_and_two_steps(page: str | bytes, base: str | None) -> None:
    """The page's main content read and linked in one step of C as in two."""
    if compiled_main_content is None:
        pytest.skip(f"no compiled reading: {compiled_main.MAIN}")
    resolve = LinkResolver(base or URL)
    one, two = LexborHTMLParser(page), LexborHTMLParser(page)
    assert compiled_main_content(one.body, resolve, base, URL) == composed_main_content(
        two.body, resolve, base, URL
    )


@pytest.mark.parametrize("base", [None, BASE])
def test_each_kind_of_href(base: str | None) -> None:
    markdown = " ".join(_link(f"link {n}", n) for n in range(len(HREFS)))
    compiled, python = _both(markdown, HREFS, base)
    assert compiled == python
    if base is None:
        assert "[link 0](https://site.test/docs/other.html)" in compiled
        assert "[link 5](https://site.test/docs/page.html#Überblick)" in compiled
        assert "[link 19](<https://site.test/docs/page.html#frag with space>)" in compiled
    assert "link 10 " in compiled  # javascript: is its text alone


def test_nested_marks_innermost_first() -> None:
    hrefs = ["outer.html", "inner.html", "i.png", "", "javascript:x()"]
    markdown = (
        _link("out " + _link("in", 1) + " and " + _image("pic", 2), 0)
        + " "
        + _link(_image("gone", 3) + "kept", 4)
    )
    compiled, python = _both(markdown, hrefs, None)
    assert compiled == python
    assert compiled.startswith("[out [in](https://site.test/docs/inner.html) and ![pic](")


@pytest.mark.parametrize(
    "markdown",
    [
        f"{LINK_OPEN}unclosed",
        f"text{TARGET}0{TARGET_END}",
        f"{LINK_OPEN}x{TARGET}{TARGET_END}",
        f"{LINK_OPEN}x{TARGET}0",
        f"stray{TARGET_END}",
        f"{IMAGE_OPEN}{LINK_OPEN}a{TARGET}0{TARGET_END}",
    ],
)
def test_marks_the_reading_never_writes_read_as_python_reads_them(markdown: str) -> None:
    compiled, python = _both(markdown, ["a.html"], None)
    assert compiled == python


def test_a_lone_surrogate_is_read_as_python_reads_it() -> None:
    compiled, python = _both(_link("a\ud800b", 0), ["x.html#\udc00"], None)
    assert compiled == python


def _linked_markup(words: list[str], paragraph: str) -> st.SearchStrategy[str]:
    """Markup of `words`, links and images to every kind of href, and paragraphs (`paragraph`
    with {} where each one's own markup goes)."""
    return st.recursive(
        st.sampled_from(words),
        lambda inner: st.one_of(
            st.builds(lambda h, t: f'<a href="{h}">{t}</a>', st.sampled_from(HREFS), inner),
            st.builds(lambda h, t: f'<img src="{h}" alt="{t}">', st.sampled_from(HREFS), inner),
            st.builds(paragraph.format, inner),
            st.builds(lambda a, b: a + b, inner, inner),
        ),
        max_leaves=12,
    )


@settings(max_examples=300, deadline=None)
@given(_linked_markup(["words", "a_b", "ü", "", " "], "<p>{}</p>"), st.sampled_from([None, BASE]))
def test_any_reading_is_linked_alike(inner: str, base: str | None) -> None:
    parts = python_main_parts(LexborHTMLParser(f"<article><p>{inner}</p></article>").body)
    compiled, python = _both(parts.markdown, parts.hrefs, base)
    assert compiled == python


@settings(max_examples=300, deadline=None)
@given(
    _linked_markup(
        ["words", "a_b", "\u00fc", "", " ", "\u6771\u4eac"],
        "<p>{}</p><p>" + "text, of some length " * 4 + "</p>",
    ),
    st.sampled_from([None, BASE]),
)
def test_one_step_reads_any_page_as_two(inner: str, base: str | None) -> None:
    _one_and_two_steps(f"<nav>menu</nav><article>{inner}</article>", base)


@pytest.mark.parametrize("base", [None, BASE])
def test_bytes_no_utf8_beside_a_link_read_in_one_step_as_in_two(base: str | None) -> None:
    # The page's own bytes reach the reading as they are. Half a euro sign before a link whose
    # marks go (javascript:) and its other half inside: read as a str first, each half is
    # U+FFFD; the one step must not join them into a euro sign by taking the marks out.
    text = b"Words of a paragraph, long enough to be chosen as the page's main content. " * 3
    page = (
        b"<article><p>" + text + b'x\xe2\x82<a href="javascript:go()">\xac end</a> and '
        b'\xed\xa0\x80<a href="a.html">\x80b</a></p></article>'
    )
    _one_and_two_steps(page, base)
