"""The user's fields (crawler.page.fields): each selector gives what parsel gives on the same page
(parsel is the oracle: the dialect is its), first match or all; and in the page step, fields are
read from a page whose text is read, before the main content reading cuts the tree."""

from __future__ import annotations

import pytest
from parsel import Selector
from selectolax.lexbor import LexborHTMLParser

from crawler.page.fields import FieldSelector, field_selector, fields_of, select
from crawler.page.read import PageRules, read_page

PAGE = """<html><head><title>Shop</title>
<meta itemprop="sku" content="SKU-7"><meta name="description" content="A lamp"></head>
<body><nav><a href="/">Home</a> <a href="/lamps">Lamps</a></nav>
<main><h1>  Desk lamp <small>v2</small> tall </h1>
<p class="price" data-currency="EUR">19.90</p>
<ul class="tags"><li class="tag">desk</li><li class="tag">light</li><li class="tag"></li></ul>
<div id="spec"><p>Brass <b>and</b> glass.</p></div>
<img src="/a.png" alt="A"><img src="/b.png"></main></body></html>"""

SELECTORS = [
    "h1::text",
    "h1 ::text",
    "h1 *::text",
    ".price::text",
    ".price::attr(data-currency)",
    "meta[itemprop=sku]::attr(content)",
    "meta[itemprop='sku']::attr(content)",
    ".tag::text",
    "ul.tags > li:nth-child(2)::text",
    "img::attr(alt)",
    "img::attr(src)",
    "nav a::attr(href)",
    "#spec p::text",
    "#spec p",
    ".missing::text",
    "h1::text, .price::text",
    "a *::attr(href)",
    "main *::attr(src)",
    "::attr(alt)",
    "title::text",
]


@pytest.mark.parametrize("css", SELECTORS)
def test_each_selector_gives_what_parsel_gives(css: str) -> None:
    tree = LexborHTMLParser(PAGE)
    oracle = Selector(text=PAGE).css(css)
    assert select(tree, field_selector("f", css, all=True)) == oracle.getall()
    assert select(tree, field_selector("f", css)) == oracle.get()


def test_fields_keep_their_order_and_cap_nothing_small() -> None:
    tree = LexborHTMLParser(PAGE)
    selectors = (
        field_selector("price", ".price::text"),
        field_selector("tags", ".tag::text", all=True),
        field_selector("none", ".missing::text"),
        field_selector("nothing", ".missing::text", all=True),
    )
    assert fields_of(tree, selectors) == {
        "price": "19.90",
        "tags": ["desk", "light"],
        "none": None,
        "nothing": [],
    }


def test_the_page_step_reads_fields_of_pages_whose_text_it_reads() -> None:
    rules = PageRules(token="bot", fields=(field_selector("name", "h1::text"),))
    page = read_page(PAGE.encode(), "http://s.test/", rules=rules)
    assert page.fields == {"name": "  Desk lamp "}
    assert page.main_text  # the main content was read after, from the same tree
    hidden = PAGE.replace("<head>", '<head><meta name="robots" content="noindex">')
    assert read_page(hidden.encode(), "http://s.test/", rules=rules).fields is None
    assert read_page(PAGE.encode(), "http://s.test/", rules=PageRules(token="bot")).fields is None


@pytest.mark.parametrize(
    ("css", "said"),
    [
        ("h1::txt", "::txt is not read here"),
        ("h1, h2::text", "the selectors of a list end alike"),
        ("a::attr()", "::attr is not read here"),
        ("a::foo(x)", "::foo is not read here"),
        ("a[x=1]", "is not a valid CSS selector"),
        ("p:contains(x)", "lexbor"),
        ("", "an empty selector selects no element"),
    ],
)
def test_bad_selectors_are_refused_saying_why(css: str, said: str) -> None:
    with pytest.raises(ValueError, match=None) as refused:
        field_selector("f", css)
    assert said in str(refused.value)


def test_a_selector_is_plain_data_for_the_reader_process() -> None:
    import pickle

    selector = field_selector("sku", "meta[itemprop=sku]::attr(content)", all=True)
    assert pickle.loads(pickle.dumps(selector)) == selector
    assert selector == FieldSelector(
        "sku", "meta[itemprop=sku]", "attr", "content", True, "meta[itemprop=sku]::attr(content)"
    )
