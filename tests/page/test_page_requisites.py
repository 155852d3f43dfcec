"""crawler.page.requisites: what a browser loads to show a page, read from its tree and from its
stylesheets. Pure: no server."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from crawler.page.read import PageRules, read_page
from crawler.page.requisites import (
    css_references,
    css_requisites,
    html_requisites,
    maybe_css_urls,
    requisites_of,
    srcset_urls,
)
from crawler.urls import LinkResolver

PAGE = "http://site.test/docs/page.html"


@pytest.mark.parametrize(
    ("css", "expected"),
    [
        ('@import "a.css";', ["a.css"]),
        ("@import 'a.css' screen;", ["a.css"]),
        ("@import url(b.css);", ["b.css"]),
        ('@IMPORT URL("b.css");', ["b.css"]),
        ("p { background: url(bg.png) }", ["bg.png"]),
        ("p { background: url(  'with space.png'  ) }", ["with space.png"]),
        ('p { background: url("q.png") no-repeat, url(r.png) }', ["q.png", "r.png"]),
        ('@font-face { src: url(f.woff2) format("woff2"), url("f.woff") }', ["f.woff2", "f.woff"]),
        ("/* url(commented.png) */ p { color: red }", []),
        ("/* an unclosed comment url(x.png)", []),
        ('p::before { content: "url(in-a-string.png)" }', []),
        ("p { background: url() }", []),
        (r'p { background: url("a\"b.png") }', ['a"b.png']),
        (r"p { background: url(a\(1\).png) }", ["a(1).png"]),
        (r'p { background: url("\26 .png") }', ["&.png"]),
        ("p { background: url(data:image/png;base64,AAAA) }", ["data:image/png;base64,AAAA"]),
        ("p { background: url('unclosed.png", []),
    ],
)
def test_css_references_are_imports_and_urls_outside_comments_and_strings(
    css: str, expected: list[str]
) -> None:
    assert css_references(css) == expected


@given(st.text(max_size=300))
def test_css_references_never_raise(css: str) -> None:
    assert all(isinstance(ref, str) and ref for ref in css_references(css))


def test_a_stylesheets_references_resolve_against_its_own_url_once_each_within_the_cap() -> None:
    css = (
        b'@import "more.css"; a { b: url(../img/x.png) } c { d: url(../img/x.png) }'
        b" e { f: url(/y.png) }"
    )
    url = "http://cdn.test/static/css/site.css"
    assert css_requisites(css, url) == (
        "http://cdn.test/static/css/more.css",
        "http://cdn.test/static/img/x.png",
        "http://cdn.test/y.png",
    )
    assert css_requisites(css, url, limit=2) == (
        "http://cdn.test/static/css/more.css",
        "http://cdn.test/static/img/x.png",
    )
    # A charset Python has no codec for reads as UTF-8.
    assert css_requisites(b"a{b:url(z.png)}", url, charset="x-bogus") == (
        "http://cdn.test/static/css/z.png",
    )


@pytest.mark.parametrize(
    ("srcset", "expected"),
    [
        ("a.png", ["a.png"]),
        ("a.png 1x, b.png 2x", ["a.png", "b.png"]),
        ("a.png 480w,b.png 800w", ["a.png", "b.png"]),
        ("a,b.png 1x, c.png 2x", ["a,b.png", "c.png"]),
        ("a.png,b.png", ["a.png,b.png"]),  # no space: one URL, as a browser reads it
        ("  , a.png  2x  ,, ", ["a.png"]),
        ("a.png (unusual, descriptor) 1x, b.png", ["a.png", "b.png"]),
        ("", []),
    ],
)
def test_srcset_urls_split_as_the_html_standard_does(srcset: str, expected: list[str]) -> None:
    assert srcset_urls(srcset) == expected


HTML = """<html><head>
<link rel="stylesheet" href="s.css"><link rel="alternate stylesheet" href="alt.css">
<link rel="icon" href="/favicon.ico"><link rel="apple-touch-icon" href="/touch.png">
<link rel="preload" as="font" href="f.woff2"><link rel="preload" href="no-as.js">
<link rel="preload" as="image" href="p.png" imagesrcset="p-2x.png 2x">
<link rel="modulepreload" href="m.js"><link rel="next" href="next.html">
<style>.x { background: url(from-style.png) }</style>
<script src="app.js"></script><script>inline()</script>
</head><body style="background: url('body.png')">
<img src="i.png" srcset="i-2x.png 2x"><img src="data:image/png;base64,AA"><img src="#frag">
<picture><source srcset="pic.webp"><img src="pic.png"></picture>
<input type="image" src="button.png"><input type="text" src="not-an-image.png">
<video poster="poster.png" src="v.mp4"><source src="v.webm"><track src="t.vtt"></video>
<audio src="a.mp3"></audio>
<iframe src="frame.html"></iframe><embed src="e.svg"><object data="o.svg"></object>
<table background="table.png"><tr><td>x</td></tr></table>
<a href="link.html">a link is no requisite</a> <img src="i.png">
</body></html>"""

WITHOUT_MEDIA = [
    "s.css", "/favicon.ico", "/touch.png", "f.woff2", "p.png", "p-2x.png", "m.js",
    "from-style.png", "app.js", "body.png", "i.png", "i-2x.png", "pic.webp", "pic.png",
    "button.png", "poster.png", "frame.html", "e.svg", "o.svg", "table.png",
]  # fmt: skip


def absolute(refs: list[str]) -> tuple[str, ...]:
    resolve = LinkResolver(PAGE)
    return tuple(resolve(ref) for ref in refs)


def test_a_page_requisites_are_what_a_browser_loads_in_document_order_each_once() -> None:
    tree = LexborHTMLParser(HTML)
    assert requisites_of(tree, LinkResolver(PAGE)) == absolute(WITHOUT_MEDIA)


def test_media_only_when_asked_for() -> None:
    found = requisites_of(LexborHTMLParser(HTML), LinkResolver(PAGE), media=True)
    media = set(found) - set(absolute(WITHOUT_MEDIA))
    assert media == set(absolute(["v.mp4", "v.webm", "t.vtt", "a.mp3"]))


def test_the_cap_keeps_the_first_in_document_order() -> None:
    found = requisites_of(LexborHTMLParser(HTML), LinkResolver(PAGE), limit=3)
    assert found == absolute(WITHOUT_MEDIA[:3])


def test_a_frame_read_on_its_own_obeys_its_base() -> None:
    body = b'<html><head><base href="http://other.test/assets/"></head><img src="x.png"></html>'
    assert html_requisites(body, PAGE) == ("http://other.test/assets/x.png",)


def test_read_page_gives_requisites_only_when_its_rules_ask_whatever_robots_meta_says() -> None:
    body = (
        b'<html><head><meta name="robots" content="noindex, nofollow">'
        b'<base href="/static/"><link rel=stylesheet href="s.css"></head>'
        b'<body><img src="i.png"><a href="/x">x</a></body></html>'
    )
    assert read_page(body, PAGE).requisites == ()
    page = read_page(body, PAGE, rules=PageRules(requisites=True))
    assert page.requisites == ("http://site.test/static/s.css", "http://site.test/static/i.png")
    assert page.links == () and not page.index


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (b"<p style='background: url(x.png)'>", True),
        (b"<P STYLE='BACKGROUND-IMAGE: URL(x.png)'>", True),
        (b"<TABLE BACKGROUND=x.png>", True),
        (b"<p><img src=x.png></p>", False),
    ],
)
def test_the_source_says_whether_css_urls_are_looked_for(source: bytes, expected: bool) -> None:
    assert maybe_css_urls(source) is expected


def test_without_css_urls_the_elements_are_read_and_no_css() -> None:
    found = requisites_of(LexborHTMLParser(HTML), LinkResolver(PAGE), css_urls=False)
    css_only = {"from-style.png", "body.png", "table.png"}
    assert found == absolute([ref for ref in WITHOUT_MEDIA if ref not in css_only])


def test_read_page_finds_a_url_in_upper_case_css() -> None:
    body = b"<HTML><BODY STYLE='BACKGROUND: URL(bg.png)'><P>x</P></BODY></HTML>"
    page = read_page(body, PAGE, rules=PageRules(requisites=True))
    assert page.requisites == ("http://site.test/docs/bg.png",)
