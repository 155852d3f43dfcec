"""crawler.page.bounds: a hostile page costs the page step bounded work (it runs on the event
loop), and what lies past a bound is not read at all; the compiled prescan is the Python one.

Work is asserted as what was read (where the page was cut, how many links), never as time.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import crawler.page.read
from crawler.page import bounds, compiled
from crawler.page.bounds import (
    LIMIT_DEPTH,
    LIMIT_MARKERS,
    LIMIT_NONE,
    LIMIT_WORK,
    MAX_ANCHORS,
    MAX_ANCHORS_READ,
    MAX_DEPTH,
    MAX_LINKS,
    MAX_MARKERS,
    Bounds,
    python_prescan,
)
from crawler.page.read import Page, read_page
from crawler.page.walk import python_links, python_walk
from crawler.urls import normalize_url

URL = "http://a.test/dir/page.html"
ORIGIN = "http://a.test"


@pytest.fixture(autouse=True, params=["compiled", "python"])
def page_walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every case runs on both walks and both prescans."""
    if request.param == "compiled":
        if compiled.compiled_walk is None or compiled.compiled_prescan is None:
            pytest.skip(f"the compiled walk is not loaded: {compiled.WALK}")
        assert compiled.compiled_links is not None
        monkeypatch.setattr(crawler.page.read, "walk", compiled.compiled_walk)
        monkeypatch.setattr(crawler.page.read, "links_of", compiled.compiled_links)
        monkeypatch.setattr(crawler.page.read, "prescan", compiled.compiled_prescan)
    else:
        monkeypatch.setattr(crawler.page.read, "walk", python_walk)
        monkeypatch.setattr(crawler.page.read, "links_of", python_links)
        monkeypatch.setattr(crawler.page.read, "prescan", python_prescan)
    return str(request.param)


def read(html: str, bounds: Bounds = bounds.DEFAULT_BOUNDS) -> Page:
    return read_page(html.encode("utf-8"), URL, bounds=bounds)


LATE = '<a href="/late">late</a>'
EARLY = '<p>early <a href="/early">e</a></p>'


def assert_cut_before_late(page: Page, why: str) -> None:
    assert page.links == (f"{ORIGIN}/early",)
    assert "early" in page.text
    assert "late" not in page.text
    assert page.cut is not None
    assert why in page.cut


# --- nesting -------------------------------------------------------------------------------------


def test_what_lies_nested_past_the_bound_is_read_flat() -> None:
    source = EARLY + "<div>" * (MAX_DEPTH + 100) + "deep text " + LATE + "</div>" * 600 + "after"
    page = read(source)
    assert page.cut is None
    assert page.links == (f"{ORIGIN}/early", f"{ORIGIN}/late")
    assert "deep text" in page.text
    assert "after" in page.text


def test_a_hundred_thousand_nested_elements_end_in_a_link_that_is_read() -> None:
    """The issue's page: the tree stops nesting at the bound, as Blink's does; the link is read
    and the tree built is no deeper than the bound."""
    source = ("<div>" * 100_000 + "<p>deep " + LATE).encode()
    page = read_page(source, URL)
    assert page.cut is None
    assert page.links == (f"{ORIGIN}/late",)
    assert "deep" in page.text
    flattened = crawler.page.read.prescan(source, bounds.DEFAULT_BOUNDS).flattened
    assert flattened is not None
    assert tree_depth(flattened) <= MAX_DEPTH + 4


def test_elements_past_the_bound_are_taken_out_with_their_end_tags() -> None:
    flat = python_prescan(b"<i><b>x<a href=/y>y</a><u>z</u></b>w</i>v", Bounds(max_depth=1))
    assert flat == (-1, LIMIT_NONE, b"<i> x<a href=/y></a>y  z  w</i>v")


def test_a_page_nested_to_the_bound_is_read_in_full() -> None:
    page = read("<div>" * (MAX_DEPTH - 1) + LATE)  # the <a> is the 512th
    assert page.cut is None
    assert page.links == (f"{ORIGIN}/late",)


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param("<span><div></span>", id="end-tag-stops-at-a-special-element"),
        pytest.param("<form><div></form>", id="form-end-takes-the-form-alone"),
        pytest.param("<b><div></b>", id="adoption-agency-keeps-the-block"),
        pytest.param("<div></body>", id="body-stays-open"),
        pytest.param("<ul><li>", id="nested-lists"),
        pytest.param("<table><tr><td>", id="nested-tables"),
        pytest.param("<div/>", id="self-closing-html-element-opens"),
        pytest.param("<svg><g>", id="foreign"),
        pytest.param("<svg><div/>", id="a-tag-that-breaks-out-of-svg-opens"),
        pytest.param("<svg><foreignObject><div/>", id="self-closing-in-an-integration-point"),
        pytest.param("<math><mi><span/>", id="self-closing-in-mathml-text"),
        pytest.param("<p><font id={i}>x</p>", id="formatting-rebuilt-after-each-p"),
        pytest.param("<div><b class={i}></div>x", id="formatting-rebuilt-after-each-div"),
    ],
)
def test_markup_the_parser_nests_counts_as_nesting(pattern: str) -> None:
    source = EARLY + "".join(pattern.format(i=i) for i in range(2 * MAX_DEPTH)) + LATE
    page = read(source)
    if "formatting" in pattern or "{i}" in pattern:
        # The list of formatting elements the parser rebuilds at each text is not flattened.
        assert page.links == (f"{ORIGIN}/early",)
        assert page.cut is not None
        assert f"formatting elements open past {MAX_DEPTH}" in page.cut
    else:
        assert page.cut is None
        assert page.links == (f"{ORIGIN}/early", f"{ORIGIN}/late")
    flattened = python_prescan(source.encode()).flattened
    assert tree_depth(flattened or source.encode()) <= 2 * MAX_DEPTH + 4


@pytest.mark.parametrize(
    "pattern",
    [
        "<p>x",
        "<li>x",
        "<ul><li>a<li>b</ul>",
        "<dl><dt>a<dd>b</dl>",
        "<table><tr><td>a<td>b<tr><td>c</table>",
        "<select><option>a<option>b</select>",
        '<a href="/a">x',
        "<p><b>x</p>",
        "<font size=2><p>x</font>",
        "<div><p>a<p>b</div>",
        "<svg><g/></svg>",
        "<svg><g><path/><circle/></g></svg>",
        "<br/>",
        "<nobr>x",
        "<button>x",
        "<script>" + "<div>" * 20 + "</script>",
        "<textarea>" + "<div>" * 20 + "</textarea>",
        "<!--" + "<div>" * 20 + "-->",
    ],
)
def test_markup_the_parser_does_not_nest_is_read_in_full(pattern: str) -> None:
    page = read(pattern * (2 * MAX_DEPTH) + '<a href="/last">last</a>')
    assert page.cut is None
    assert f"{ORIGIN}/last" in page.links


# --- attributes and work -------------------------------------------------------------------------


def test_an_element_with_a_pathological_number_of_attributes_is_not_read() -> None:
    attributes = " ".join(f"a{i}=1" for i in range(20_000))
    page = read(f"{EARLY}<div {attributes}>late</div>{LATE}")
    assert_cut_before_late(page, "steps to build")


def test_an_element_with_hundreds_of_attributes_is_read() -> None:
    attributes = " ".join(f"data-a{i}=1" for i in range(300))
    page = read(f"<div {attributes}>late</div>{LATE}")
    assert page.cut is None
    assert "late" in page.text


def test_a_page_past_the_work_bound_is_read_up_to_it() -> None:
    page = read(EARLY + "<p>more" * 1_000 + LATE, Bounds(max_work=10_000))
    assert_cut_before_late(page, "more than 10,000 steps")
    assert 0 < page.text.count("more") < 1_000


def test_a_page_of_a_million_elements_is_cut() -> None:
    page = read(EARLY + "<br>" * 1_000_000 + LATE)
    assert_cut_before_late(page, f"more than {bounds.MAX_WORK:,} steps")
    assert page.cut is not None
    read_up_to = int(page.cut.split(" of ")[0].rsplit(" ", 1)[1].replace(",", ""))
    # Each <br> costs ELEMENT_COST: about MAX_WORK / ELEMENT_COST of them are read.
    breaks_read = (read_up_to - len(EARLY)) // len("<br>")
    assert abs(breaks_read - bounds.MAX_WORK // bounds.ELEMENT_COST) < 10


# --- section markers ----------------------------------------------------------------------------

SECTION = "<!--googleoff: index-->hidden<!--googleon: index-->"


def test_a_page_of_too_many_section_markers_is_read_up_to_the_bound() -> None:
    source = EARLY + SECTION * (MAX_MARKERS // 2) + "<!--googleoff: index-->" + LATE
    page = read(source)
    assert_cut_before_late(page, f"more than {MAX_MARKERS:,} section markers")
    assert "hidden" not in page.text


def test_a_page_of_as_many_section_markers_as_the_bound_is_read_in_full() -> None:
    page = read(EARLY + SECTION * (MAX_MARKERS // 2) + LATE)
    assert page.cut is None
    assert f"{ORIGIN}/late" in page.links
    assert "hidden" not in page.text


WORK_CUT = "<p>more" * 1_000
SMALL_WORK = Bounds(max_work=10_000)


def test_a_cut_inside_a_noindex_section_reads_nothing_after_it() -> None:
    source = '<!-- robots content="noindex" -->' + WORK_CUT + "secret" + LATE
    page = read(source, SMALL_WORK)
    assert page.cut is not None
    assert "secret" not in page.text
    assert page.links == ()


def test_what_is_read_flat_keeps_its_section() -> None:
    for start, end in (
        ("<!-- robots content=noindex -->", "<!-- /robots -->"),
        ("<noindex>", "</noindex>"),
    ):
        source = (
            f"<div>{start}" + "<div>" * (MAX_DEPTH + 5) + f"secret{end}" + "</div>" * 9 + "open"
        )
        page = read(source)
        assert page.cut is None
        assert "secret" not in page.text
        assert "open" in page.text


def test_a_robots_meta_past_the_cut_makes_the_page_noindex_nofollow() -> None:
    page = read(EARLY + WORK_CUT + '<meta name="ROBOTS" content="index">', SMALL_WORK)
    assert page.cut is not None
    assert (page.index, page.follow) == (False, False)
    assert page.index_reason == page.follow_reason == "meta robots past the cut, not read"
    assert page.text == ""
    assert page.links == ()


def test_a_meta_for_our_token_past_the_cut_counts_too() -> None:
    source = EARLY + WORK_CUT + '<meta\nname="Crawler" content="noindex">'
    page = read_page(
        source.encode(), URL, rules=crawler.page.read.PageRules(token="crawler"), bounds=SMALL_WORK
    )
    assert (page.index, page.follow) == (False, False)


def test_other_metas_past_the_cut_change_nothing() -> None:
    page = read(EARLY + WORK_CUT + '<meta name="description" content="x">', SMALL_WORK)
    assert page.cut is not None
    assert (page.index, page.follow) == (True, True)


# --- links ---------------------------------------------------------------------------------------


def test_only_the_first_links_of_a_page_are_read() -> None:
    page = read("".join(f'<a href="/p{i}">x</a>' for i in range(MAX_LINKS + 100)))
    assert len(page.links) == MAX_LINKS
    assert page.links[-1] == f"{ORIGIN}/p{MAX_LINKS - 1}"
    assert page.cut == f"links: more than {MAX_LINKS:,}, the first {MAX_LINKS:,} read"


def test_a_page_of_as_many_links_as_the_bound_is_read_in_full() -> None:
    page = read("".join(f'<a href="/p{i}">x</a>' for i in range(MAX_LINKS)))
    assert len(page.links) == MAX_LINKS
    assert page.cut is None


def test_the_link_bound_counts_distinct_links_not_anchors() -> None:
    """An index page (vim's tags.html) has thousands of anchors to a few hundred pages: the
    page linked only at the end is still read."""
    anchors = "".join(f'<a href="/p{i % 100}#t{i}">x</a>' for i in range(3 * MAX_LINKS))
    page = read(anchors + '<a href="/last">last</a>')
    assert len(page.links) == 101 and page.links[-1] == f"{ORIGIN}/last"
    assert page.cut is None


def test_a_page_of_more_anchors_than_the_walk_reads_says_so() -> None:
    page = read('<a href="/same">x</a>' * (MAX_ANCHORS_READ + 5) + '<a href="/after">y</a>')
    assert page.links == (f"{ORIGIN}/same",)
    assert (
        page.cut == f"anchors: more than {MAX_ANCHORS_READ:,}, the first {MAX_ANCHORS_READ:,} read"
    )


def test_both_walks_read_the_same_first_anchors() -> None:
    from selectolax.lexbor import LexborHTMLParser

    if compiled.compiled_walk is None:
        pytest.skip(compiled.WALK)
    pairs = MAX_ANCHORS // 2 + 1
    source = "".join(f'<a href="/p{i}">x</a><iframe src="/f{i}"></iframe>' for i in range(pairs))
    facts = compiled.compiled_walk(LexborHTMLParser(source))
    assert len(facts.anchors) == MAX_ANCHORS
    assert facts == python_walk(LexborHTMLParser(source))


# --- the compiled prescan is the Python one -----------------------------------------------------


def test_the_tag_classes_are_the_same_in_c_and_python() -> None:
    _pagescan = pytest.importorskip("crawler.page._pagescan")
    assert {name.encode(): row for name, row in _pagescan.TAG_CLASSES.items()} == (
        bounds.TAG_CLASSES
    )


TAG_NAMES = st.sampled_from(
    [*(name.decode() for name in bounds.TAG_CLASSES), "span", "x-y", "DIV", "LI", "Table", "g"]
)
ATTRIBUTE = st.sampled_from([" a", " a=1", ' b="x>y"', " c='q'", " /", " d = e", " id=2", "=x"])
TAGS = st.builds(
    lambda closing, name, attributes, end: f"<{closing}{name}{''.join(attributes)}{end}",
    st.sampled_from(["", "/"]),
    TAG_NAMES,
    st.lists(ATTRIBUTE, max_size=3),
    st.sampled_from([">", "/>", ""]),
)
PIECES = st.one_of(
    TAGS,
    st.sampled_from(
        [
            "x",
            " ",
            "<!--",
            "-->",
            "<!-- robots -->",
            "<!--/noindex-->",
            "<!--googleoff: all-->",
            "<!doctype html>",
            "<?x>",
            "</>",
            "</ x>",
            "<",
            "<3",
            '"',
            "'",
            "</script>",
            "</TEXTAREA >",
            "<noindex>",
            "</NoIndex>",
        ]
    ),
)
MARKUP = st.lists(PIECES, max_size=60).map("".join)
SMALL_BOUNDS = st.builds(
    Bounds,
    st.integers(min_value=0, max_value=12),
    st.integers(min_value=0, max_value=3_000),
    st.integers(min_value=0, max_value=4),
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(MARKUP.map(lambda text: text.encode()), st.binary(max_size=300)), SMALL_BOUNDS)
def test_the_compiled_prescan_is_the_python_one(source: bytes, limits: Bounds) -> None:
    if compiled.compiled_prescan is None:
        pytest.skip(compiled.WALK)
    expected = python_prescan(source, limits)
    assert compiled.compiled_prescan(source, limits) == expected
    offset, limit, flattened = expected
    assert limit in (LIMIT_NONE, LIMIT_DEPTH, LIMIT_WORK, LIMIT_MARKERS)
    assert (offset == -1) == (limit == LIMIT_NONE)
    assert offset < len(source)
    if limit != LIMIT_NONE:
        assert source[offset : offset + 1] == b"<"
    if flattened is not None:
        assert len(flattened) <= len(source) + 3 * source.count(b"<")


# --- any page ------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(MARKUP.map(lambda text: text.encode()), st.binary(max_size=400)),
    st.sampled_from([None, "utf-8", "utf-7", "utf-16", "x-user-defined", "iso-2022-kr", "bogus"]),
    SMALL_BOUNDS,
)
def test_any_page_is_read_within_its_bounds(
    body: bytes, charset: str | None, limits: Bounds
) -> None:
    page = read_page(body, URL, charset=charset, bounds=limits)
    assert len(page.links) + len(page.nofollow_links) <= MAX_LINKS
    assert all(normalize_url(link) == link for link in (*page.links, *page.nofollow_links))
    assert len(page.text) + len(page.nosnippet_text) <= len(body)
    if page.cut is not None:
        assert page.cut.startswith(("read up to byte ", "links: "))


@settings(max_examples=200, deadline=None)
@given(
    MARKUP.map(lambda text: f"<p>a<a href=/x>x</a>{text}<a href=/y>y</a>".encode()), SMALL_BOUNDS
)
def test_both_walks_read_a_cut_page_alike(body: bytes, limits: Bounds) -> None:
    if compiled.compiled_walk is None or compiled.compiled_links is None:
        pytest.skip(compiled.WALK)
    pages = []
    for walk, links_of in (
        (compiled.compiled_walk, compiled.compiled_links),
        (python_walk, python_links),
    ):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(crawler.page.read, "walk", walk)
            patch.setattr(crawler.page.read, "links_of", links_of)
            page = read_page(body, URL, bounds=limits)
        pages.append(
            dataclasses.replace(page, nosnippet_text=" ".join(page.nosnippet_text.split()))
        )
    assert pages[0] == pages[1]


SOUP = st.lists(
    st.sampled_from(
        [
            *("<div>", "</div>", "<p>", "</p>", "<span>", "</span>", "<b>", "</b>", "<i class=x>"),
            *(
                "</i>",
                "<a href=x>",
                "</a>",
                "<ul>",
                "</ul>",
                "<li>",
                "</li>",
                "<table>",
                "</table>",
            ),
            *("<tr>", "<td>", "</td>", "</tr>", "<form>", "</form>", "<font id=1>", "<font id=2>"),
            *("</font>", "x", "<body>", "</body>", "<button>", "</button>", "<nobr>", "</nobr>"),
            *("<dl>", "<dt>", "<dd>", "<select>", "<option>", "<svg>", "</svg>", "<g/>", "<div/>"),
            *("<g>", "</g>", "<foreignObject>", "</foreignObject>", "<math>", "<mi>", "<span/>"),
            *("<h1>", "</h2>", "<caption>", "<object>", "</object>", "<em>", "</em>", "<strong>"),
            *("<br>", "</br>", "<template>", "</template>", "<marquee>", "</marquee>", "<center>"),
        ]
    ),
    max_size=300,
).map("".join)
# What nests in the parser when repeated, some of it only by the rules of end tags and of the list
# of active formatting elements.
MOTIFS = st.sampled_from(
    [
        "<span><div></span>",
        "<form><div></form>",
        "<b><div></b>",
        "<div></body>",
        "<p><font id={n}>x</p>",
        "<div><b class={n}></div>x",
        "<ul><li>",
        "<div/>",
        "<a href={n}><div>",
        "<table><td>x<div></table>",
    ]
)
SOUP = st.lists(
    st.one_of(
        SOUP,
        st.builds(
            lambda motif, count: "".join(motif.format(n=n) for n in range(count)),
            MOTIFS,
            st.integers(min_value=1, max_value=40),
        ),
    ),
    max_size=4,
).map("".join)


def tree_depth(source: bytes) -> int:
    from selectolax.lexbor import LexborHTMLParser

    root = LexborHTMLParser(source).root
    deepest, stack = 0, [(root, 1)] if root is not None else []
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        child = node.child
        while child is not None:
            stack.append((child, depth + 1))
            child = child.next
    return deepest


@settings(max_examples=200, deadline=None)
@given(SOUP, st.integers(min_value=2, max_value=12))
# Found by hypothesis: a <div/> breaks out of the <svg>, then opens, as every <div/> after it.
@example("<div><div><div><svg>" + "<div/>" * 8, 4)
# Found by hypothesis: each </form> takes its form off the stack, not out of the tree, and the
# fonts are rebuilt inside the last form.
@example("<p><font id=0>x</p><p><font id=1>x</p>" + "<form><div></form>" * 3, 2)
def test_the_model_is_never_shallower_than_the_parser(soup: str, max_depth: int) -> None:
    """A page the model does not cut is no deeper than its bounds say: its stack and its list of
    formatting elements at most max_depth each; the forms a </form> took off the stack, which
    stay in the tree (one at most per element on it); and <html> and <body> the parser adds."""
    source = soup.encode()
    _, limit, flattened = python_prescan(source, Bounds(max_depth, 10**12, 10**6))
    if limit == LIMIT_NONE:
        assert tree_depth(flattened or source) <= 3 * max_depth + 4
