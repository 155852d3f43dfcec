"""crawler.page.read: what a fetched HTML page lets the crawl do, and what it says (SPEC section 7).

Distinctive words make the text checks exact: a `visible...` word must be in `Page.text`, a
`hidden...` word must not. Links are written root-relative and compared as full URLs.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crawler.page.read
from crawler.page import compiled
from crawler.page.read import (
    NOFOLLOW,
    NOINDEX,
    NOSNIPPET,
    Page,
    PageRules,
    directives_of,
    read_page,
    sniff_encoding,
    x_robots_directives,
)
from crawler.page.walk import python_links, python_walk


@pytest.fixture(autouse=True, params=["compiled", "python"])
def page_walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every case runs on both walks: the compiled one (crawler/page/_pagescan.c) and the Python
    reference."""
    if request.param == "compiled":
        if compiled.compiled_walk is None or compiled.compiled_links is None:
            pytest.skip(f"the compiled walk is not loaded: {compiled.WALK}")
        monkeypatch.setattr(crawler.page.read, "walk", compiled.compiled_walk)
        monkeypatch.setattr(crawler.page.read, "links_of", compiled.compiled_links)
    else:
        monkeypatch.setattr(crawler.page.read, "walk", python_walk)
        monkeypatch.setattr(crawler.page.read, "links_of", python_links)
    return str(request.param)


URL = "http://a.test/dir/page.html"
ORIGIN = "http://a.test"


def read(
    html: str | bytes,
    *,
    charset: str | None = None,
    x_robots_tag: Sequence[str] = (),
    rules: PageRules = PageRules(),  # noqa: B008 - frozen
) -> Page:
    body = html.encode("utf-8") if isinstance(html, str) else html
    return read_page(body, URL, charset=charset, x_robots_tag=x_robots_tag, rules=rules)


def doc(head: str = "", body: str = "") -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"


def urls(*paths: str) -> tuple[str, ...]:
    return tuple(ORIGIN + path for path in paths)


def words(text: str) -> set[str]:
    return set(text.split())


def assert_words(page: Page, shown: str, hidden: str) -> None:
    text = words(page.text)
    for word in shown.split():
        assert word in text, f"{word!r} should be indexed: {page.text!r}"
    for word in hidden.split():
        assert word not in text, f"{word!r} should not be indexed: {page.text!r}"
        assert word not in page.nosnippet_text, f"{word!r} should not be indexed at all"


PLAIN_BODY = '<p>visibleword</p><a href="/next">next</a>'


# --- directives_of and x_robots_directives -------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "flags"),
    [
        pytest.param("", 0, id="empty"),
        pytest.param("index", 0, id="index"),
        pytest.param("follow", 0, id="follow"),
        pytest.param("all", 0, id="all"),
        pytest.param("index, follow", 0, id="index-follow"),
        pytest.param("noindex", NOINDEX, id="noindex"),
        pytest.param("nofollow", NOFOLLOW, id="nofollow"),
        pytest.param("none", NOINDEX | NOFOLLOW, id="none"),
        pytest.param("nosnippet", NOSNIPPET, id="nosnippet"),
        pytest.param("noindex, nofollow", NOINDEX | NOFOLLOW, id="comma-space"),
        pytest.param("noindex,nofollow", NOINDEX | NOFOLLOW, id="comma"),
        pytest.param("noindex nofollow", NOINDEX | NOFOLLOW, id="space"),
        pytest.param(" noindex ,, nofollow ,", NOINDEX | NOFOLLOW, id="stray-separators"),
        pytest.param("NoIndex, NOFOLLOW", NOINDEX | NOFOLLOW, id="mixed-case"),
        pytest.param("NONE", NOINDEX | NOFOLLOW, id="none-upper"),
        pytest.param("noindex, index", NOINDEX, id="positive-does-not-undo"),
        pytest.param("all, none", NOINDEX | NOFOLLOW, id="all-does-not-undo-none"),
        pytest.param("noarchive, noimageindex, notranslate", 0, id="other-words-ignored"),
        pytest.param("noindexes nofollowing", 0, id="no-prefix-match"),
        pytest.param(
            "noindex\tnosnippet\nnofollow", NOINDEX | NOFOLLOW | NOSNIPPET, id="whitespace"
        ),
    ],
)
def test_directives_of(content: str, flags: int) -> None:
    assert directives_of(content) == flags


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param([], [], id="no-header"),
        pytest.param(["noindex"], [("noindex", NOINDEX)], id="noindex"),
        pytest.param(
            ["noindex, nofollow"], [("noindex, nofollow", NOINDEX | NOFOLLOW)], id="plain-list"
        ),
        pytest.param(["none"], [("none", NOINDEX | NOFOLLOW)], id="none"),
        pytest.param(["index, follow", "all"], [], id="positives-say-nothing"),
        pytest.param(["crawler: noindex"], [("crawler: noindex", NOINDEX)], id="our-agent"),
        pytest.param(["CRAWLER: NoIndex"], [("CRAWLER: NoIndex", NOINDEX)], id="our-agent-case"),
        pytest.param(["otherbot: noindex"], [], id="other-agent"),
        pytest.param(["otherbot: noindex, nofollow"], [], id="other-agent-carries-over"),
        pytest.param(
            ["crawler: noindex, nofollow"],
            [("crawler: noindex, nofollow", NOINDEX | NOFOLLOW)],
            id="our-agent-carries-over",
        ),
        pytest.param(
            ["otherbot: noindex, crawler: nofollow"],
            [("otherbot: noindex, crawler: nofollow", NOFOLLOW)],
            id="second-agent-in-one-header",
        ),
        pytest.param(
            ["crawler: nofollow, otherbot: noindex"],
            [("crawler: nofollow, otherbot: noindex", NOFOLLOW)],
            id="first-agent-in-one-header",
        ),
        pytest.param(
            ["noindex, otherbot: nofollow"],
            [("noindex, otherbot: nofollow", NOINDEX)],
            id="agentless-then-agent",
        ),
        pytest.param(
            ["otherbot: noindex", "nofollow"], [("nofollow", NOFOLLOW)], id="agent-ends-with-header"
        ),
        pytest.param(
            ["noindex", "crawler: nofollow", "otherbot: none"],
            [("noindex", NOINDEX), ("crawler: nofollow", NOFOLLOW)],
            id="several-headers",
        ),
        pytest.param(
            ["unavailable_after: 25 Jun 2010 15:00:00 PST"], [], id="unavailable-after-no-agent"
        ),
        pytest.param(
            ["unavailable_after: 25 Jun 2010 15:00:00 PST, noindex"],
            [("unavailable_after: 25 Jun 2010 15:00:00 PST, noindex", NOINDEX)],
            id="unavailable-after-then-noindex",
        ),
        pytest.param(["max-snippet: 0"], [], id="max-snippet-ignored"),
        pytest.param(
            ["max-snippet: 0, max-image-preview: large, max-video-preview: -1, nofollow"],
            [
                (
                    "max-snippet: 0, max-image-preview: large, max-video-preview: -1, nofollow",
                    NOFOLLOW,
                )
            ],
            id="valued-directives-are-no-agents",
        ),
        pytest.param(
            ["otherbot: noindex, max-snippet: 0, nofollow"],
            [],
            id="valued-directive-keeps-the-agent",
        ),
        pytest.param(["  noindex  "], [("noindex", NOINDEX)], id="value-stripped"),
        pytest.param(["nosnippet"], [("nosnippet", NOSNIPPET)], id="nosnippet"),
    ],
)
def test_x_robots_directives(values: list[str], expected: list[tuple[str, int]]) -> None:
    assert x_robots_directives(values, "crawler") == expected


def test_x_robots_directives_token_is_case_insensitive() -> None:
    assert x_robots_directives(["mybot: noindex"], "MyBot") == [("mybot: noindex", NOINDEX)]
    assert x_robots_directives(["crawler: noindex"], "MyBot") == []


# --- META robots ---------------------------------------------------------------------------------

META_CASES = [
    # (head, index, follow)
    pytest.param("", True, True, id="no-meta"),
    pytest.param('<meta name="robots" content="index">', True, True, id="index"),
    pytest.param('<meta name="robots" content="follow">', True, True, id="follow"),
    pytest.param('<meta name="robots" content="all">', True, True, id="all"),
    pytest.param('<meta name="robots" content="index, follow">', True, True, id="index-follow"),
    pytest.param('<meta name="robots" content="noindex">', False, True, id="noindex"),
    pytest.param('<meta name="robots" content="nofollow">', True, False, id="nofollow"),
    pytest.param('<meta name="robots" content="none">', False, False, id="none"),
    pytest.param('<meta name="robots" content="nosnippet">', True, True, id="nosnippet"),
    pytest.param('<meta name="robots" content="noindex, nofollow">', False, False, id="comma"),
    pytest.param('<meta name="robots" content="noindex nofollow">', False, False, id="space"),
    pytest.param('<meta NAME="ROBOTS" CONTENT="NoIndex">', False, True, id="upper-case"),
    pytest.param('<meta name="Robots" content="NONE">', False, False, id="none-upper"),
    pytest.param('<meta name=" robots " content="noindex">', False, True, id="name-padded"),
    pytest.param("<meta name=robots content=nofollow>", True, False, id="unquoted"),
    pytest.param('<meta name="crawler" content="noindex">', False, True, id="our-token"),
    pytest.param('<meta name="CRAWLER" content="NOFOLLOW">', True, False, id="our-token-upper"),
    pytest.param('<meta name="googlebot" content="none">', True, True, id="other-bot-ignored"),
    pytest.param(
        '<meta name="googlebot" content="noindex"><meta name="robots" content="nofollow">',
        True,
        False,
        id="other-bot-ignored-robots-kept",
    ),
    pytest.param(
        '<meta name="robots" content="noindex"><meta name="robots" content="nofollow">',
        False,
        False,
        id="two-tags-combine",
    ),
    pytest.param(
        '<meta name="robots" content="noindex"><meta name="crawler" content="nofollow">',
        False,
        False,
        id="robots-and-token-combine",
    ),
    pytest.param(
        '<meta name="robots" content="noindex"><meta name="robots" content="index, follow, all">',
        False,
        True,
        id="later-positive-does-not-override",
    ),
    pytest.param(
        '<meta name="crawler" content="all"><meta name="robots" content="none">',
        False,
        False,
        id="token-all-does-not-override-robots-none",
    ),
    pytest.param('<meta name="robots" content="noindex, index">', False, True, id="one-tag-both"),
    pytest.param('<meta name="robots">', True, True, id="no-content"),
    pytest.param('<meta name="robots" content="">', True, True, id="empty-content"),
    pytest.param(
        '<meta name="robots" content="noarchive, noimageindex">', True, True, id="other-words"
    ),
    pytest.param('<meta content="noindex">', True, True, id="no-name"),
    pytest.param('<meta http-equiv="robots" content="noindex">', True, True, id="http-equiv"),
]


@pytest.mark.parametrize(("head", "index", "follow"), META_CASES)
def test_meta_robots(head: str, index: bool, follow: bool) -> None:
    page = read(doc(head, PLAIN_BODY))
    assert (page.index, page.follow) == (index, follow)
    assert ("visibleword" in page.text + page.nosnippet_text) is index
    if follow:
        assert page.links == urls("/next")
        assert page.nofollow_links == ()
    else:
        assert page.links == ()
        assert page.nofollow_links == urls("/next")


def test_meta_in_the_body_still_counts() -> None:
    page = read(doc("", '<p>visibleword</p><meta name="robots" content="none"><a href="/x">x</a>'))
    assert not page.index
    assert not page.follow


@pytest.mark.parametrize(
    ("rules", "head", "index"),
    [
        pytest.param(PageRules(token="MyBot"), '<meta name="mybot" content="noindex">', False),
        pytest.param(PageRules(token="MyBot"), '<meta name="MYBOT" content="noindex">', False),
        pytest.param(PageRules(token="mybot"), '<meta name="MyBot" content="noindex">', False),
        pytest.param(PageRules(token="MyBot"), '<meta name="crawler" content="noindex">', True),
        pytest.param(PageRules(), '<meta name="mybot" content="noindex">', True),
    ],
)
def test_meta_token_comes_from_rules(rules: PageRules, head: str, index: bool) -> None:
    assert read(doc(head, PLAIN_BODY), rules=rules).index is index


@pytest.mark.parametrize(
    ("head", "x_robots_tag", "index_reason", "follow_reason"),
    [
        pytest.param("", (), None, None, id="nothing"),
        pytest.param('<meta name="robots" content="all">', (), None, None, id="positive-only"),
        pytest.param(
            '<meta name="robots" content="noindex">',
            (),
            ["meta robots", "noindex"],
            None,
            id="meta-robots",
        ),
        pytest.param(
            '<meta name="crawler" content="nofollow">',
            (),
            None,
            ["meta crawler", "nofollow"],
            id="meta-token",
        ),
        pytest.param(
            '<meta NAME="ROBOTS" content="NONE">',
            (),
            ["meta robots", "NONE"],
            ["meta robots", "NONE"],
            id="none-names-both",
        ),
        pytest.param(
            "",
            ("crawler: noindex",),
            ["X-Robots-Tag", "crawler: noindex"],
            None,
            id="header",
        ),
        pytest.param(
            '<meta name="robots" content="noindex">',
            ("nofollow", "noindex"),
            ["meta robots: noindex", "X-Robots-Tag: noindex"],
            ["X-Robots-Tag: nofollow"],
            id="every-source-named",
        ),
    ],
)
def test_reasons_name_their_source(
    head: str,
    x_robots_tag: tuple[str, ...],
    index_reason: list[str] | None,
    follow_reason: list[str] | None,
) -> None:
    page = read(doc(head, PLAIN_BODY), x_robots_tag=x_robots_tag)
    for reason, expected in (
        (page.index_reason, index_reason),
        (page.follow_reason, follow_reason),
    ):
        if expected is None:
            assert reason is None
        else:
            assert reason is not None
            for part in expected:
                assert part in reason


def test_meta_nosnippet_keeps_text_indexed_but_out_of_snippets() -> None:
    page = read(doc('<meta name="robots" content="nosnippet">', PLAIN_BODY))
    assert page.index
    assert "visibleword" not in page.text
    assert "visibleword" in page.nosnippet_text


# --- X-Robots-Tag --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x_robots_tag", "index", "follow"),
    [
        pytest.param((), True, True, id="none-sent"),
        pytest.param(("noindex",), False, True, id="noindex"),
        pytest.param(("nofollow",), True, False, id="nofollow"),
        pytest.param(("noindex, nofollow",), False, False, id="plain-list"),
        pytest.param(("none",), False, False, id="none"),
        pytest.param(("all",), True, True, id="all"),
        pytest.param(("NoIndex, NOFOLLOW",), False, False, id="mixed-case"),
        pytest.param(("crawler: noindex",), False, True, id="our-agent"),
        pytest.param(("Crawler: NOINDEX",), False, True, id="our-agent-mixed-case"),
        pytest.param(("otherbot: noindex",), True, True, id="other-agent"),
        pytest.param(("otherbot: noindex, nofollow",), True, True, id="other-agent-carries-over"),
        pytest.param(("noindex", "nofollow"), False, False, id="headers-combine"),
        pytest.param(("otherbot: none", "crawler: nofollow"), True, False, id="agents-per-header"),
        pytest.param(("noindex", "index, follow"), False, True, id="positive-does-not-override"),
        pytest.param(
            ("unavailable_after: 25 Jun 2010 15:00:00 PST",), True, True, id="unavailable-after"
        ),
        pytest.param(
            ("unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow",),
            True,
            False,
            id="unavailable-after-is-no-agent",
        ),
        pytest.param(("max-snippet: 0",), True, True, id="max-snippet"),
        pytest.param(("max-snippet: 0, noindex",), False, True, id="max-snippet-is-no-agent"),
    ],
)
def test_x_robots_tag(x_robots_tag: tuple[str, ...], index: bool, follow: bool) -> None:
    page = read(doc("", PLAIN_BODY), x_robots_tag=x_robots_tag)
    assert (page.index, page.follow) == (index, follow)
    assert ("visibleword" in page.text) is index
    assert (page.links == urls("/next")) is follow


def test_x_robots_tag_and_meta_combine() -> None:
    page = read(
        doc('<meta name="robots" content="noindex">', PLAIN_BODY), x_robots_tag=["nofollow"]
    )
    assert (page.index, page.follow) == (False, False)


# --- page-level meaning --------------------------------------------------------------------------


def test_noindex_page_has_no_text_but_its_links_are_followed() -> None:
    page = read(doc('<meta name="robots" content="noindex">', PLAIN_BODY))
    assert page.text == ""
    assert page.nosnippet_text == ""
    assert page.links == urls("/next")
    assert page.nofollow_links == ()


def test_nofollow_page_is_indexed_and_its_links_kept_apart() -> None:
    body = '<p>visibleword</p><a href="/a">a</a><a href="/b">b</a><a href="/a">again</a>'
    page = read(doc('<meta name="robots" content="nofollow">', body))
    assert "visibleword" in page.text
    assert page.links == ()
    assert page.nofollow_links == urls("/a", "/b")


def test_none_page_has_neither_text_nor_followed_links() -> None:
    page = read(doc('<meta name="robots" content="none">', PLAIN_BODY))
    assert page.text == ""
    assert page.links == ()
    assert page.nofollow_links == urls("/next")


def test_title_and_description_are_kept_on_a_noindex_page() -> None:
    head = '<title>Title</title><meta name="description" content="Desc">'
    page = read(doc(head + '<meta name="robots" content="noindex">', PLAIN_BODY))
    assert (page.title, page.description) == ("Title", "Desc")


# --- in-page sections: text ----------------------------------------------------------------------

SECTION_TEXT_CASES = [
    # (body, words indexed, words not indexed, sections opened)
    # Ultraseek
    pytest.param(
        'visible1 <!-- robots content="noindex" --> hidden1 <!-- /robots --> visible2',
        "visible1 visible2",
        "hidden1",
        1,
        id="ultraseek-noindex",
    ),
    pytest.param(
        'visible1 <!-- robots content="none" --> hidden1 <!-- /robots --> visible2',
        "visible1 visible2",
        "hidden1",
        1,
        id="ultraseek-none",
    ),
    pytest.param(
        'visible1 <!-- robots content="noindex, nofollow" --> hidden1 <!-- /robots --> visible2',
        "visible1 visible2",
        "hidden1",
        1,
        id="ultraseek-noindex-nofollow",
    ),
    pytest.param(
        'visible1 <!-- robots content="nofollow" --> visible2 <!-- /robots --> visible3',
        "visible1 visible2 visible3",
        "",
        1,
        id="ultraseek-nofollow-keeps-text",
    ),
    pytest.param(
        'visible1 <!-- robots content="index" --> visible2 <!-- /robots --> visible3',
        "visible1 visible2 visible3",
        "",
        0,
        id="ultraseek-index-no-op",
    ),
    pytest.param(
        'visible1 <!-- robots content="follow" --> visible2 <!-- /robots --> visible3',
        "visible1 visible2 visible3",
        "",
        0,
        id="ultraseek-follow-no-op",
    ),
    pytest.param(
        'visible1 <!-- robots content="all" --> visible2 <!-- /robots --> visible3',
        "visible1 visible2 visible3",
        "",
        0,
        id="ultraseek-all-no-op",
    ),
    pytest.param(
        'visible1 <!-- ROBOTS CONTENT="NOINDEX" --> hidden1 <!-- /ROBOTS --> visible2',
        "visible1 visible2",
        "hidden1",
        1,
        id="ultraseek-upper-case",
    ),
    pytest.param(
        "visible1 <!-- robots content='noindex' --> hidden1 <!-- /robots --> visible2",
        "visible1 visible2",
        "hidden1",
        1,
        id="ultraseek-single-quotes",
    ),
    pytest.param(
        "visible1 <!-- robots content=noindex --> hidden1 <!-- /robots --> visible2",
        "visible1 visible2",
        "hidden1",
        1,
        id="ultraseek-no-quotes",
    ),
    pytest.param(
        'visible1 <!--robots content="noindex"--> hidden1 <!--/robots--> visible2',
        "visible1 visible2",
        "hidden1",
        1,
        id="ultraseek-no-spaces",
    ),
    pytest.param(
        'visible1 <!--   robots   content = "noindex"   --> hidden1 <!--  /  robots  --> visible2',
        "visible1 visible2",
        "hidden1",
        1,
        id="ultraseek-extra-spaces",
    ),
    pytest.param(
        'visible1 <!--\n\trobots\n content="noindex"\n--> hidden1 <!--\n/robots\n--> visible2',
        "visible1 visible2",
        "hidden1",
        1,
        id="ultraseek-newlines-and-tabs",
    ),
    pytest.param(
        'visible1 <!-- robots content="noindex" --> hidden1 <!-- /robots --> visible2'
        ' <!-- robots content="noindex" --> hidden2 <!-- /robots --> visible3',
        "visible1 visible2 visible3",
        "hidden1 hidden2",
        2,
        id="ultraseek-repeated",
    ),
    pytest.param(
        'visible1 <!-- robots content="noindex" --> hidden1 <!-- robots content="noindex" -->'
        " hidden2 <!-- /robots --> hidden3 <!-- /robots --> visible2",
        "visible1 visible2",
        "hidden1 hidden2 hidden3",
        2,
        id="ultraseek-nested-same",
    ),
    pytest.param(
        'visible1 <!-- robots content="noindex" --> hidden1 <!-- robots content="nofollow" -->'
        " hidden2 <!-- /robots --> hidden3 <!-- /robots --> visible2",
        "visible1 visible2",
        "hidden1 hidden2 hidden3",
        2,
        id="ultraseek-nofollow-nested-in-noindex",
    ),
    pytest.param(
        'visible1 <!-- robots content="nofollow" --> visible2 <!-- robots content="noindex" -->'
        " hidden1 <!-- /robots --> visible3 <!-- /robots --> visible4",
        "visible1 visible2 visible3 visible4",
        "hidden1",
        2,
        id="ultraseek-noindex-nested-in-nofollow",
    ),
    pytest.param(
        'visible1 <!-- robots content="index" --> visible2 <!-- robots content="noindex" -->'
        " hidden1 <!-- /robots --> visible3 <!-- /robots --> visible4",
        "visible1 visible2 visible3 visible4",
        "hidden1",
        1,
        id="ultraseek-noindex-nested-in-no-op",
    ),
    # Nesting of different kinds: each closer closes only its own kind.
    pytest.param(
        'visible1 <!-- robots content="noindex" --> hidden1 <!--noindex--> hidden2'
        " <!-- /robots --> hidden3 <!--/noindex--> visible2",
        "visible1 visible2",
        "hidden1 hidden2 hidden3",
        2,
        id="robots-and-yandex-interleaved",
    ),
    pytest.param(
        'visible1 <!-- robots content="noindex" --> hidden1 <!--googleoff: index--> hidden2'
        " <!-- /robots --> hidden3 <!--googleon: index--> visible2",
        "visible1 visible2",
        "hidden1 hidden2 hidden3",
        2,
        id="robots-and-google-interleaved",
    ),
    pytest.param(
        'visible1 <noindex>hidden1 <!-- robots content="noindex" --> hidden2</noindex>'
        " hidden3 <!-- /robots --> visible2",
        "visible1 visible2",
        "hidden1 hidden2 hidden3",
        2,
        id="yandex-element-and-robots-interleaved",
    ),
    pytest.param(
        'visible1 <!-- robots content="noindex" --> hidden1 <!-- /noindex --> hidden2'
        " <!-- /robots --> visible2",
        "visible1 visible2",
        "hidden1 hidden2",
        1,
        id="other-kind-close-does-not-close",
    ),
    # Closers without openers.
    pytest.param(
        "visible1 <!-- /robots --> visible2 <!--/noindex--> visible3 </noindex> visible4"
        " <!--googleon: index--> visible5 <!--googleon: all--> visible6",
        "visible1 visible2 visible3 visible4 visible5 visible6",
        "",
        0,
        id="closers-without-openers-ignored",
    ),
    pytest.param(
        "visible1 <!--googleon: index--> visible2 <!--googleoff: index--> hidden1"
        " <!--googleon: index--> visible3",
        "visible1 visible2 visible3",
        "hidden1",
        1,
        id="stray-googleon-does-not-go-negative",
    ),
    # Unterminated sections run to the end of the document.
    pytest.param(
        'visible1 <!-- robots content="noindex" --> hidden1 <p>hidden2</p><div>hidden3</div>',
        "visible1",
        "hidden1 hidden2 hidden3",
        1,
        id="unterminated-top-level",
    ),
    pytest.param(
        '<div>visible1 <!-- robots content="noindex" --> hidden1</div><p>hidden2</p>hidden3',
        "visible1",
        "hidden1 hidden2 hidden3",
        1,
        id="unterminated-inside-div",
    ),
    pytest.param(
        '<div><p>visible1 <!-- robots content="noindex" --> hidden1</p><p>hidden2</p></div>'
        "<p>hidden3</p>",
        "visible1",
        "hidden1 hidden2 hidden3",
        1,
        id="unterminated-inside-p-inside-div",
    ),
    pytest.param(
        "visible1 <!--googleoff: index--> hidden1 <p>hidden2</p>",
        "visible1",
        "hidden1 hidden2",
        1,
        id="unterminated-googleoff",
    ),
    pytest.param(
        "<p>visible1 <!--noindex--> hidden1</p><p>hidden2</p>",
        "visible1",
        "hidden1 hidden2",
        1,
        id="unterminated-yandex-comment",
    ),
    pytest.param(
        "<div><p>visible1 <noindex> hidden1</p><p>hidden2</p></div><p>hidden3</p>",
        "visible1",
        "hidden1 hidden2 hidden3",
        1,
        id="unterminated-yandex-element-inside-p",
    ),
    # Sections that begin in one element and end in another.
    pytest.param(
        '<p>visible1 <!-- robots content="noindex" --> hidden1</p> hidden2 <!-- /robots -->'
        " visible2",
        "visible1 visible2",
        "hidden1 hidden2",
        1,
        id="starts-in-p-ends-outside",
    ),
    pytest.param(
        '<p>visible1 <!-- robots content="noindex" --> hidden1</p><div><span>hidden2'
        " <!-- /robots --> visible2</span> visible3</div>",
        "visible1 visible2 visible3",
        "hidden1 hidden2",
        1,
        id="starts-in-p-ends-in-span-in-div",
    ),
    pytest.param(
        'visible1 <!-- robots content="noindex" --> hidden1 <b>hidden2 <!-- /robots -->'
        " visible2</b> visible3",
        "visible1 visible2 visible3",
        "hidden1 hidden2",
        1,
        id="ends-inside-an-element",
    ),
    pytest.param(
        '<ul><li>visible1 <!-- robots content="noindex" --> hidden1</li><li>hidden2</li>'
        "<li>hidden3 <!-- /robots --> visible2</li></ul><p>visible3</p>",
        "visible1 visible2 visible3",
        "hidden1 hidden2 hidden3",
        1,
        id="across-list-items",
    ),
    pytest.param(
        '<table><tr><td>visible1</td><td><!-- robots content="noindex" -->hidden1</td></tr>'
        "<tr><td>hidden2<!-- /robots --></td><td>visible2</td></tr></table>",
        "visible1 visible2",
        "hidden1 hidden2",
        1,
        id="across-table-rows",
    ),
    # Google Search Appliance
    pytest.param(
        "visible1 <!--googleoff: index--> hidden1 <!--googleon: index--> visible2",
        "visible1 visible2",
        "hidden1",
        1,
        id="googleoff-index",
    ),
    pytest.param(
        "visible1 <!--googleoff: all--> hidden1 <!--googleon: all--> visible2",
        "visible1 visible2",
        "hidden1",
        1,
        id="googleoff-all",
    ),
    pytest.param(
        "visible1 <!--googleoff: anchor--> visible2 <!--googleon: anchor--> visible3",
        "visible1 visible2 visible3",
        "",
        0,
        id="googleoff-anchor-no-effect",
    ),
    pytest.param(
        "visible1 <!--googleoff: bogus--> visible2 <!--googleon: bogus--> visible3",
        "visible1 visible2 visible3",
        "",
        0,
        id="googleoff-unknown-word-ignored",
    ),
    pytest.param(
        "visible1 <!--googleoff:index--> hidden1 <!--googleon:index--> visible2"
        " <!-- googleoff: index --> hidden2 <!-- googleon: index --> visible3"
        " <!--GOOGLEOFF: INDEX--> hidden3 <!--GoogleOn: Index--> visible4",
        "visible1 visible2 visible3 visible4",
        "hidden1 hidden2 hidden3",
        3,
        id="googleoff-spacing-and-case",
    ),
    pytest.param(
        "visible1 <!--googleoff: index--> hidden1 <!--googleoff: index--> hidden2"
        " <!--googleon: index--> hidden3 <!--googleon: index--> visible2",
        "visible1 visible2",
        "hidden1 hidden2 hidden3",
        2,
        id="googleoff-nested-needs-two-googleons",
    ),
    pytest.param(
        "visible1 <!--googleoff: index--> hidden1 <!--googleon: snippet--> hidden2"
        " <!--googleon: index--> visible2",
        "visible1 visible2",
        "hidden1 hidden2",
        1,
        id="googleon-other-word-does-not-close",
    ),
    # Yandex
    pytest.param(
        "visible1 <noindex>hidden1</noindex> visible2",
        "visible1 visible2",
        "hidden1",
        1,
        id="yandex-element",
    ),
    pytest.param(
        "visible1 <!--noindex-->hidden1<!--/noindex--> visible2",
        "visible1 visible2",
        "hidden1",
        1,
        id="yandex-comment",
    ),
    pytest.param(
        "visible1 <NOINDEX>hidden1</NOINDEX> visible2 <NoIndex>hidden2</noINDEX> visible3",
        "visible1 visible2 visible3",
        "hidden1 hidden2",
        2,
        id="yandex-element-upper-case",
    ),
    pytest.param(
        "visible1 <!--NOINDEX-->hidden1<!--/NOINDEX--> visible2"
        " <!-- noindex --> hidden2 <!-- /noindex --> visible3",
        "visible1 visible2 visible3",
        "hidden1 hidden2",
        2,
        id="yandex-comment-case-and-spaces",
    ),
    pytest.param(
        'visible1 <noindex class="x">hidden1</noindex > visible2',
        "visible1 visible2",
        "hidden1",
        1,
        id="yandex-element-with-attribute",
    ),
    pytest.param(
        "<p><noindex><div>hidden1</div></noindex></p> visible1",
        "visible1",
        "hidden1",
        1,
        id="yandex-misnested-div-in-p",
    ),
    pytest.param(
        "<ul><li>visible1 <noindex>hidden1</noindex> visible2</li><li>visible3</li></ul>",
        "visible1 visible2 visible3",
        "hidden1",
        1,
        id="yandex-in-li",
    ),
    pytest.param(
        "<table><tr><td>visible1 <noindex>hidden1</noindex></td><td>visible2</td></tr></table>",
        "visible1 visible2",
        "hidden1",
        1,
        id="yandex-in-td",
    ),
    pytest.param(
        "<p>visible1 <noindex>hidden1</p><p>hidden2</noindex> visible2</p>",
        "visible1 visible2",
        "hidden1 hidden2",
        1,
        id="yandex-element-across-paragraphs",
    ),
    pytest.param(
        "visible1 <noindex>hidden1 <noindex>hidden2</noindex> hidden3</noindex> visible2",
        "visible1 visible2",
        "hidden1 hidden2 hidden3",
        2,
        id="yandex-element-nested",
    ),
]


@pytest.mark.parametrize(("body", "shown", "hidden", "opened"), SECTION_TEXT_CASES)
def test_sections_hide_text(body: str, shown: str, hidden: str, opened: int) -> None:
    page = read(doc("<title>t</title>", body))
    assert page.index, "a section never makes the whole page noindex"
    assert page.follow
    assert_words(page, shown, hidden)
    assert page.sections == opened


@pytest.mark.parametrize(
    ("body", "shown", "snippetless", "hidden"),
    [
        pytest.param(
            "visible1 <!--googleoff: snippet--> quiet1 <!--googleon: snippet--> visible2",
            "visible1 visible2",
            "quiet1",
            "",
            id="googleoff-snippet",
        ),
        pytest.param(
            "visible1 <!--googleoff: snippet--> quiet1 <!--googleoff: index--> hidden1"
            " <!--googleon: index--> quiet2 <!--googleon: snippet--> visible2",
            "visible1 visible2",
            "quiet1 quiet2",
            "hidden1",
            id="index-inside-snippet",
        ),
        pytest.param(
            "visible1 <!--googleoff: all--> hidden1 <!--googleon: index--> quiet1"
            " <!--googleon: all--> visible2",
            "visible1 visible2",
            "quiet1",
            "hidden1",
            id="all-reopened-for-index-only",
        ),
        pytest.param(
            "<p>visible1 <!--googleoff: snippet--> quiet1</p><p>quiet2</p>",
            "visible1",
            "quiet1 quiet2",
            "",
            id="unterminated-snippet",
        ),
    ],
)
def test_googleoff_snippet_text_is_searchable_but_not_shown(
    body: str, shown: str, snippetless: str, hidden: str
) -> None:
    page = read(doc("", body))
    assert_words(page, shown, hidden)
    quiet = words(page.nosnippet_text)
    for word in snippetless.split():
        assert word in quiet
        assert word not in words(page.text)
    for word in shown.split():
        assert word not in quiet


# --- in-page sections: links ---------------------------------------------------------------------

SECTION_LINK_CASES = [
    # (body, followed, not followed)
    pytest.param(
        '<a href="/out1">o</a> <!-- robots content="nofollow" --> <a href="/in">i</a>'
        ' <!-- /robots --> <a href="/out2">o</a>',
        ("/out1", "/out2"),
        ("/in",),
        id="ultraseek-nofollow",
    ),
    pytest.param(
        '<a href="/out1">o</a> <!-- robots content="none" --> <a href="/in">i</a>'
        ' <!-- /robots --> <a href="/out2">o</a>',
        ("/out1", "/out2"),
        ("/in",),
        id="ultraseek-none",
    ),
    pytest.param(
        '<!-- robots content="noindex" --> <a href="/in">i</a> <!-- /robots -->',
        ("/in",),
        (),
        id="ultraseek-noindex-follows",
    ),
    pytest.param(
        '<!-- robots content="follow" --> <a href="/in">i</a> <!-- /robots -->'
        '<!-- robots content="index" --> <a href="/in2">i</a> <!-- /robots -->'
        '<!-- robots content="all" --> <a href="/in3">i</a> <!-- /robots -->',
        ("/in", "/in2", "/in3"),
        (),
        id="ultraseek-no-ops-follow",
    ),
    pytest.param(
        '<!-- ROBOTS CONTENT="NOFOLLOW" --> <a href="/in">i</a> <!-- /ROBOTS -->'
        ' <a href="/out">o</a>',
        ("/out",),
        ("/in",),
        id="ultraseek-upper-case",
    ),
    pytest.param(
        '<p><noindex><a href="/in">i</a></noindex></p><!--noindex--><a href="/in2">i</a>'
        "<!--/noindex-->",
        ("/in", "/in2"),
        (),
        id="yandex-noindex-only",
    ),
    pytest.param(
        '<!--googleoff: all--><a href="/in">i</a><!--googleon: all-->'
        '<!--googleoff: index--><a href="/in2">i</a><!--googleon: index-->'
        '<!--googleoff: anchor--><a href="/in3">i</a><!--googleon: anchor-->',
        ("/in", "/in2", "/in3"),
        (),
        id="googleoff-follows",
    ),
    pytest.param(
        '<!-- robots content="nofollow" --> <a href="/same">i</a> <!-- /robots -->'
        ' <a href="/same">o</a>',
        ("/same",),
        (),
        id="inside-then-outside-is-followed",
    ),
    pytest.param(
        '<a href="/same">o</a> <!-- robots content="nofollow" --> <a href="/same">i</a>'
        " <!-- /robots -->",
        ("/same",),
        (),
        id="outside-then-inside-is-followed",
    ),
    pytest.param(
        '<div><!-- robots content="nofollow" --><ul><li><a href="/in1">1</a></li>'
        '<li><a href="/in2">2</a></li></ul></div><p><a href="/in3">3</a><!-- /robots -->'
        '<a href="/out">o</a></p>',
        ("/out",),
        ("/in1", "/in2", "/in3"),
        id="nested-elements",
    ),
    pytest.param(
        '<a href="/out">o</a><div><p><!-- robots content="nofollow" --></p></div>'
        '<a href="/in1">1</a><p><a href="/in2">2</a></p>',
        ("/out",),
        ("/in1", "/in2"),
        id="unterminated-from-inside-a-div",
    ),
    pytest.param(
        '<p><!-- robots content="nofollow" --><a href="/in">i</a></p><p><a href="/in2">i</a>'
        '<!-- /robots --><a href="/out">o</a></p>',
        ("/out",),
        ("/in", "/in2"),
        id="starts-in-one-p-ends-in-another",
    ),
    pytest.param(
        '<!-- robots content="noindex" --><a href="/a">a</a><!-- robots content="nofollow" -->'
        '<a href="/b">b</a><!-- /robots --><a href="/c">c</a><!-- /robots --><a href="/d">d</a>',
        ("/a", "/c", "/d"),
        ("/b",),
        id="nofollow-nested-in-noindex",
    ),
    pytest.param(
        '<!-- robots content="nofollow" --><a href="/a">a</a><!-- robots content="index" -->'
        '<a href="/b">b</a><!-- /robots --><a href="/c">c</a><!-- /robots --><a href="/d">d</a>',
        ("/d",),
        ("/a", "/b", "/c"),
        id="no-op-nested-in-nofollow",
    ),
    pytest.param(
        '<a href="/a">a</a><!-- robots content="nofollow" --><noindex><a href="/b">b</a>'
        '</noindex><!-- /robots --><a href="/c">c</a>',
        ("/a", "/c"),
        ("/b",),
        id="nofollow-around-yandex-element",
    ),
]


@pytest.mark.parametrize(("body", "followed", "not_followed"), SECTION_LINK_CASES)
def test_sections_hold_back_links(
    body: str, followed: tuple[str, ...], not_followed: tuple[str, ...]
) -> None:
    page = read(doc("", "<p>visibleword</p>" + body))
    assert page.follow, "a section never makes the whole page nofollow"
    assert page.links == urls(*followed)
    assert page.nofollow_links == urls(*not_followed)


def test_link_opened_inside_a_nofollow_section_is_not_followed() -> None:
    body = (
        '<p>visibleword <!-- robots content="nofollow" --> <a href="/in">text <!-- /robots -->'
        ' more</a> <a href="/out">o</a></p>'
    )
    page = read(doc("", body))
    assert page.links == urls("/out")
    assert page.nofollow_links == urls("/in")


MARKER_FIRST_CASES = [
    pytest.param(
        '<!-- robots content="noindex" -->hiddenword1<!-- /robots --> visibleword',
        id="robots-at-document-start",
    ),
    pytest.param(
        '<!DOCTYPE html>\n<!-- robots content="noindex" -->\n<html><body>hiddenword1'
        "<!-- /robots --> visibleword</body></html>",
        id="robots-between-doctype-and-html",
    ),
    pytest.param(
        "<!--googleoff: index--><html><body>hiddenword1<!--googleon: index--> visibleword",
        id="googleoff-before-html",
    ),
    pytest.param(
        "<!--noindex-->hiddenword1<!--/noindex--> visibleword", id="yandex-comment-at-start"
    ),
    pytest.param(
        "<!DOCTYPE html>\n<noindex>hiddenword1</noindex> visibleword",
        id="yandex-element-first-after-doctype",
    ),
]


@pytest.mark.parametrize("source", MARKER_FIRST_CASES)
def test_section_opened_before_the_html_element(source: str) -> None:
    page = read(source)
    assert_words(page, "visibleword", "hiddenword1")
    assert page.sections == 1


@pytest.mark.parametrize(
    ("source", "title", "text"),
    [
        pytest.param(
            "<title>t</title><p>visible1 <!-- use <noindex> here --> visible2"
            " <noindex>hidden1</noindex> visible3",
            "t",
            "visible1 visible2 visible3",
            id="inside-a-comment",
        ),
        pytest.param(
            "<title>Use <noindex> tags</title><p>visible1 <noindex>hidden1</noindex> visible2",
            "Use <noindex> tags",
            "visible1 visible2",
            id="inside-the-title",
        ),
    ],
)
def test_yandex_tag_text_outside_markup_is_left_alone(source: str, title: str, text: str) -> None:
    page = read(source)
    assert (page.title, page.text) == (title, text)


def test_section_markers_in_head_reach_into_the_body() -> None:
    page = read(
        '<html><head><title>t</title><!-- robots content="noindex" --></head>'
        "<body>hiddenword1 <!-- /robots --> visibleword</body></html>"
    )
    assert_words(page, "visibleword", "hiddenword1")


# --- the seed document's example and disagreeing sources -----------------------------------------

ULTRASEEK_EXAMPLE = """<HTML>
<BODY>
This text will be indexed.
<A HREF="foo.html"> this link will be followed </A>
<!-- robots content="none" -->
This text will NOT be indexed.
<A HREF="bar.html"> this link will NOT be followed </A>
<!-- /robots -->
<!-- robots content="noindex" -->
This text will NOT be indexed.
<A HREF="bar1.html"> this link WILL be followed </A>
<!-- /robots -->
<!-- robots content="nofollow" -->
This text WILL be indexed.
<A HREF="bar1.html"> this link will NOT be followed </A>
<!-- /robots -->
la la la
</BODY>
</HTML>
"""


def test_the_ultraseek_example_from_the_seed_document() -> None:
    page = read(ULTRASEEK_EXAMPLE)
    assert page.index
    assert page.follow
    # bar1.html is followable from the noindex section, so the nofollow one does not hold it.
    assert page.links == ("http://a.test/dir/foo.html", "http://a.test/dir/bar1.html")
    assert page.nofollow_links == ("http://a.test/dir/bar.html",)
    assert "This text will be indexed." in page.text
    assert "This text WILL be indexed." in page.text
    assert "This text will NOT be indexed." not in page.text
    assert "this link will NOT be followed" in page.text, "nofollow text is indexed"
    assert "this link will be followed" in page.text
    assert "this link WILL be followed" not in page.text
    assert "la la la" in page.text
    assert page.sections == 3


def test_meta_noindex_wins_over_an_index_section() -> None:
    body = 'visibleword <!-- robots content="index" --> more <!-- /robots -->'
    page = read(doc('<meta name="robots" content="noindex">', body))
    assert not page.index
    assert page.text == ""


def test_nofollow_section_wins_over_meta_index_follow() -> None:
    body = (
        '<a href="/a">a</a><!-- robots content="nofollow" --><a href="/b">b</a><!-- /robots -->'
        '<a href="/c">c</a>'
    )
    page = read(doc('<meta name="robots" content="index, follow">', body))
    assert page.links == urls("/a", "/c")
    assert page.nofollow_links == urls("/b")


def test_noindex_section_wins_over_meta_all() -> None:
    body = 'visibleword <!-- robots content="noindex" --> hiddenword1 <!-- /robots -->'
    page = read(doc('<meta name="robots" content="all">', body))
    assert_words(page, "visibleword", "hiddenword1")


def test_nofollow_page_holds_back_links_of_an_index_section_too() -> None:
    body = '<!-- robots content="follow" --><a href="/a">a</a><!-- /robots -->'
    page = read(doc('<meta name="robots" content="nofollow">', body))
    assert page.links == ()
    assert page.nofollow_links == urls("/a")


# --- rel -----------------------------------------------------------------------------------------

REL_CASES = [
    # (rel, followed by default)
    pytest.param("nofollow", False, id="nofollow"),
    pytest.param("ugc", False, id="ugc"),
    pytest.param("sponsored", False, id="sponsored"),
    pytest.param("noopener NOFOLLOW", False, id="among-others-upper"),
    pytest.param("  external\tnofollow ", False, id="whitespace-separated"),
    pytest.param("UGC", False, id="ugc-upper"),
    pytest.param("noopener", True, id="noopener"),
    pytest.param("noreferrer external", True, id="others"),
    pytest.param("", True, id="empty"),
    pytest.param("nofollowers", True, id="no-substring-match"),
]


@pytest.mark.parametrize(("rel", "followed"), REL_CASES)
def test_rel_nofollow(rel: str, followed: bool) -> None:
    page = read(doc("", f'<a href="/x" rel="{rel}">x</a>'))
    assert page.links == (urls("/x") if followed else ())
    assert page.nofollow_links == (() if followed else urls("/x"))


@pytest.mark.parametrize(("rel", "followed"), REL_CASES)
def test_rel_nofollow_followed_when_configured(rel: str, followed: bool) -> None:
    page = read(
        doc("", f'<a href="/x" rel="{rel}">x</a>'), rules=PageRules(follow_rel_nofollow=True)
    )
    assert page.links == urls("/x")
    assert page.nofollow_links == ()


def test_rel_nofollow_on_area_and_the_same_url_linked_plainly() -> None:
    body = (
        '<map><area href="/a" rel="nofollow"></map><a href="/b" rel="ugc">b</a><a href="/a">a</a>'
    )
    page = read(doc("", body))
    assert page.links == urls("/a")
    assert page.nofollow_links == urls("/b")


def test_follow_rel_nofollow_does_not_override_the_page_or_a_section() -> None:
    body = '<!-- robots content="nofollow" --><a href="/a" rel="nofollow">a</a><!-- /robots -->'
    rules = PageRules(follow_rel_nofollow=True)
    assert read(doc("", body), rules=rules).nofollow_links == urls("/a")
    meta = '<meta name="robots" content="nofollow">'
    assert read(doc(meta, '<a href="/b">b</a>'), rules=rules).links == ()


# --- text, title, description, language ---------------------------------------------------------


@pytest.mark.parametrize(
    "element",
    ["script", "style", "template", "iframe", "noembed", "noframes"],
)
def test_text_leaves_out_what_no_reader_sees(element: str) -> None:
    page = read(doc("", f"<p>visibleword</p><{element}>hiddenword1</{element}><p>visible2</p>"))
    assert_words(page, "visibleword visible2", "hiddenword1")


def test_text_leaves_out_head_scripts_and_styles() -> None:
    head = "<style>body{color:red}</style><script>var hiddenword1 = 1;</script>"
    page = read(doc(head, "<p>visibleword</p>"))
    assert page.text == "visibleword"


# --- boilerplate: searchable, never in a snippet ---------------------------------------------


@pytest.mark.parametrize(
    "boilerplate",
    [
        pytest.param("<noscript>{}</noscript>", id="noscript"),
        pytest.param("<nav>{}</nav>", id="nav"),
        pytest.param("<NAV class=menu>{}</NAV>", id="nav-upper-case"),
        pytest.param('<div role="navigation">{}</div>', id="role"),
        pytest.param('<ul ROLE="NaviGation"><li>{}</ul>', id="role-any-case"),
        pytest.param("<div><nav><p>{}</p></nav></div>", id="nested-deep"),
        pytest.param("<nav><noscript>{}</noscript></nav>", id="nested-in-each-other"),
        pytest.param("<svg><nav>{}</nav></svg>", id="by-tag-in-svg-too"),
    ],
)
def test_boilerplate_text_is_searchable_but_kept_out_of_snippets(boilerplate: str) -> None:
    """The text of a noscript notice ("enable JavaScript") or a navigation menu is the page's,
    but a snippet must come from what the page says."""
    page = read(doc("", "<p>visibleword</p>" + boilerplate.format("menuword") + "<p>visible2</p>"))
    assert page.text == "visibleword visible2"
    assert page.nosnippet_text == "menuword"


@pytest.mark.parametrize(
    "element",
    [
        pytest.param('<div role="navigation2">visibleword</div>', id="other-role"),
        pytest.param('<div role="navigation menu">visibleword</div>', id="role-list"),
        pytest.param('<div role=" navigation">visibleword</div>', id="role-spaced"),
        pytest.param("<div role>visibleword</div>", id="role-without-value"),
        pytest.param('<svg><a xlink:role="navigation">visibleword</a></svg>', id="xlink-role"),
        pytest.param("<header>visibleword</header>", id="header"),
    ],
)
def test_only_nav_noscript_and_role_navigation_are_boilerplate(element: str) -> None:
    page = read(doc("", element))
    assert page.text == "visibleword"
    assert page.nosnippet_text == ""


def test_boilerplate_text_is_in_document_order_with_nosnippet_sections() -> None:
    page = read(
        doc(
            "",
            "<nav>one<!--googleoff: snippet-->two</nav>three<!--googleon: snippet-->visibleword"
            "<noscript>four</noscript><!--googleoff: snippet--><div>five<nav>six</nav></div>"
            "<!--googleon: snippet-->",
        )
    )
    assert page.text == "visibleword"
    assert page.nosnippet_text.split() == ["one", "two", "three", "four", "five", "six"]


def test_boilerplate_in_a_noindex_section_is_not_indexed() -> None:
    page = read(doc("", "<!--noindex--><nav>hiddenword1</nav><!--/noindex--><p>visibleword</p>"))
    assert_words(page, "visibleword", "hiddenword1")


def test_noscript_in_the_head_holds_no_text() -> None:
    page = read(doc("<noscript><link rel=stylesheet href=/x.css></noscript>", "visibleword"))
    assert (page.text, page.nosnippet_text) == ("visibleword", "")


def test_a_body_of_navigation_is_all_kept_out_of_snippets() -> None:
    page = read("<body role=navigation><h1>menuword</h1>more</body>")
    assert (page.text, page.nosnippet_text, page.headings) == ("", "menuword more", "")


# --- headings ------------------------------------------------------------------------------------


def test_headings_are_read_apart_and_stay_in_the_text() -> None:
    page = read(
        doc(
            "<title>Title</title>",
            "<h1>Main <b>heading</b></h1><p>visibleword</p><h2>Second</h2>"
            "<h3>Three</h3><h4>Four</h4><h5>Five</h5><H6>Six</H6>",
        )
    )
    assert page.headings == "Main heading Second Three Four Five Six"
    assert page.text == "Main heading visibleword Second Three Four Five Six"


@pytest.mark.parametrize(
    ("body", "headings"),
    [
        pytest.param("<h2>a<div><h3>b</h3></div>c</h2>", "a b c", id="nested-counts-once"),
        pytest.param("<h1>a<h2>b</h2>", "a b", id="a-heading-closes-a-heading"),
        pytest.param("<nav><h2>menu</h2></nav><h2>shown</h2>", "shown", id="in-nav"),
        pytest.param("<h1>a<nav>menu</nav>b</h1>", "a b", id="nav-in-heading"),
        pytest.param("<noscript><h1>x</h1></noscript>", "", id="in-noscript"),
        pytest.param("<!--noindex--><h1>x</h1><!--/noindex--><h2>y</h2>", "y", id="in-noindex"),
        pytest.param("<!--googleoff: snippet--><h1>x</h1><!--googleon: snippet-->", "", id="ns"),
        pytest.param(
            "<h1>a<!--googleoff: snippet-->b<!--googleon: snippet-->c</h1>",
            "a c",
            id="nosnippet-inside",
        ),
        pytest.param(
            "<h1>a<script>var b</script><template><h2>c</h2></template></h1>", "a", id="drop"
        ),
        pytest.param("<svg><foreignObject><h1>a</h1></foreignObject></svg>", "a", id="svg"),
        pytest.param("<h1> </h1><h2></h2><h3>a</h3>", "a", id="empty-left-out"),
        pytest.param(
            "<dl><dt>os.path.join(path)</dt></dl><p><dfn>term</dfn></p><dl><dd>defined</dd></dl>",
            "os.path.join(path) term",
            id="defined-terms",
        ),
        pytest.param("<dt>a <dfn>b</dfn></dt>", "a b", id="dfn-in-dt-counts-once"),
    ],
)
def test_headings_are_those_whose_text_is_in_the_text(body: str, headings: str) -> None:
    page = read(doc("", body))
    assert page.headings == headings
    assert headings in page.text


def test_a_nosnippet_or_noindex_page_has_no_headings() -> None:
    body = "<h1>visibleword</h1>"
    assert read(doc('<meta name="robots" content="nosnippet">', body)).headings == ""
    assert read(doc('<meta name="robots" content="noindex">', body)).headings == ""
    assert read(doc("", body)).headings == "visibleword"


def test_text_decodes_entities() -> None:
    page = read(doc("", "<p>Tom &amp; Jerry &lt;3 caf&eacute; &#8364;5</p>"))
    assert "Tom & Jerry <3 café €5" in page.text
    assert "&amp;" not in page.text


def test_text_separates_blocks() -> None:
    page = read(doc("", "<p>one</p><p>two</p><div>three<br>four</div>"))
    assert words(page.text) == {"one", "two", "three", "four"}


@pytest.mark.parametrize(
    ("head", "title"),
    [
        pytest.param("<title>A title</title>", "A title", id="plain"),
        pytest.param("<title>  A \n\t title  </title>", "A title", id="squeezed"),
        pytest.param("<title>Tom &amp; Jerry</title>", "Tom & Jerry", id="entities"),
        pytest.param("<title>   </title>", None, id="blank"),
        pytest.param("", None, id="missing"),
        pytest.param("<title>first</title><title>second</title>", "first", id="first-wins"),
    ],
)
def test_title(head: str, title: str | None) -> None:
    assert read(doc(head, PLAIN_BODY)).title == title


def test_title_is_not_body_text() -> None:
    page = read(doc("<title>titleword</title>", "<p>visibleword</p>"))
    assert "titleword" not in page.text


@pytest.mark.parametrize(
    ("head", "description"),
    [
        pytest.param('<meta name="description" content="About it">', "About it", id="plain"),
        pytest.param('<meta NAME="Description" content=" a \n b ">', "a b", id="case-squeezed"),
        pytest.param('<meta name="description" content="">', None, id="empty"),
        pytest.param("", None, id="missing"),
        pytest.param(
            '<meta name="description" content="one"><meta name="description" content="two">',
            "one",
            id="first-wins",
        ),
    ],
)
def test_description(head: str, description: str | None) -> None:
    assert read(doc(head, PLAIN_BODY)).description == description


@pytest.mark.parametrize(
    ("source", "language"),
    [
        pytest.param('<html lang="fr"><body>x', "fr", id="html-lang"),
        pytest.param('<html lang=" en-GB "><body>x', "en-GB", id="html-lang-stripped"),
        pytest.param(
            '<html><head><meta http-equiv="content-language" content="de"></head><body>x',
            "de",
            id="meta-content-language",
        ),
        pytest.param(
            '<html><head><meta http-equiv="Content-Language" content="de"></head><body>x',
            "de",
            id="meta-content-language-case",
        ),
        pytest.param(
            '<html lang="fr"><head><meta http-equiv="content-language" content="de"></head>',
            "fr",
            id="html-lang-wins",
        ),
        pytest.param('<html lang=""><body>x', None, id="empty-lang"),
        pytest.param("<html><body>x", None, id="none"),
    ],
)
def test_language(source: str, language: str | None) -> None:
    assert read(source).language == language


# --- encoding ------------------------------------------------------------------------------------

CYRILLIC = "Привет мир"
CP1251_PAGE = f"<title>{CYRILLIC}</title><p>{CYRILLIC}</p>".encode("windows-1251")


@pytest.mark.parametrize(
    ("body", "charset", "encoding", "text"),
    [
        pytest.param(
            codecs.BOM_UTF8 + "<p>café</p>".encode(), "windows-1251", "utf-8", "café", id="bom-utf8"
        ),
        pytest.param(
            codecs.BOM_UTF16_LE + "<p>café</p>".encode("utf-16-le"),
            "iso-8859-1",
            "utf-16-le",
            "café",
            id="bom-utf16-le",
        ),
        pytest.param(
            codecs.BOM_UTF16_BE + "<p>café</p>".encode("utf-16-be"),
            None,
            "utf-16-be",
            "café",
            id="bom-utf16-be",
        ),
        pytest.param(CP1251_PAGE, "windows-1251", "cp1251", CYRILLIC, id="header-charset"),
        pytest.param(CP1251_PAGE, "Windows-1251", "cp1251", CYRILLIC, id="header-charset-case"),
        pytest.param(CP1251_PAGE, '"windows-1251"', "cp1251", CYRILLIC, id="header-quoted"),
        pytest.param(
            b'<meta charset="windows-1251">' + CP1251_PAGE,
            None,
            "cp1251",
            CYRILLIC,
            id="meta-charset",
        ),
        pytest.param(
            b"<meta charset=windows-1251>" + CP1251_PAGE,
            None,
            "cp1251",
            CYRILLIC,
            id="meta-charset-unquoted",
        ),
        pytest.param(
            b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
            + CP1251_PAGE,
            None,
            "cp1251",
            CYRILLIC,
            id="meta-http-equiv",
        ),
        pytest.param(
            b'<META CHARSET="WINDOWS-1251">' + CP1251_PAGE,
            None,
            "cp1251",
            CYRILLIC,
            id="meta-charset-upper",
        ),
        pytest.param(
            "<meta charset=windows-1251><p>café</p>".encode(),
            "utf-8",
            "utf-8",
            "café",
            id="header-wins-over-meta",
        ),
        pytest.param(
            b"<!--" + b"x" * 1024 + b'--><meta charset="windows-1251">' + CP1251_PAGE,
            None,
            "cp1252",
            "Ïðèâåò",
            id="meta-after-1024-bytes-ignored",
        ),
        pytest.param(
            b"<p>\x93quoted\x94</p>",
            "iso-8859-1",
            "cp1252",
            "\u201cquoted\u201d",
            id="latin1-as-1252",
        ),
        pytest.param(
            b"<p>\x93quoted\x94</p>", "us-ascii", "cp1252", "\u201cquoted\u201d", id="ascii"
        ),
        pytest.param(
            b"<p>\x93quoted\x94 caf\xe9</p>",
            None,
            "cp1252",
            "\u201cquoted\u201d café",
            id="undeclared-non-utf8",
        ),
        pytest.param("<p>café €</p>".encode(), None, "utf-8", "café €", id="undeclared-utf8"),
        pytest.param(b"<p>plain</p>", None, "utf-8", "plain", id="ascii-is-utf8"),
        pytest.param(
            b"<p>ok \xff\xfe bad caf\xc3\xa9</p>",
            "utf-8",
            "utf-8",
            "ok \ufffd\ufffd bad café",
            id="invalid-bytes-in-utf8",
        ),
        pytest.param(
            b'<meta charset="utf-8"><p>ok \xff bad</p>',
            None,
            "utf-8",
            "ok \ufffd bad",
            id="invalid-bytes-in-meta-utf8",
        ),
        pytest.param(
            "<p>café</p>".encode(), "no-such-charset", "utf-8", "café", id="unknown-header-label"
        ),
        pytest.param("<p>café</p>".encode(), "base64", "utf-8", "café", id="base64-header-label"),
        pytest.param(
            "<meta charset=base64><p>café</p>".encode(), None, "utf-8", "café", id="base64-meta"
        ),
        pytest.param(
            "<meta charset=rot13><p>café</p>".encode(), None, "utf-8", "café", id="rot13-meta"
        ),
        pytest.param(
            "<meta charset=bogus><p>café</p>".encode(), None, "utf-8", "café", id="unknown-meta"
        ),
        pytest.param(
            "<meta charset=utf-16><p>café</p>".encode(), None, "utf-8", "café", id="meta-utf16"
        ),
        pytest.param(
            "<p>café €</p>".encode()[:-5], None, "utf-8", "café \ufffd", id="cut-mid-character"
        ),
        pytest.param(
            "<p>café €</p>".encode()[:-6], None, "utf-8", "café \ufffd", id="cut-after-first-byte"
        ),
        pytest.param(b"", None, "utf-8", "", id="empty"),
    ],
)
def test_encoding(body: bytes, charset: str | None, encoding: str, text: str) -> None:
    page = read(body, charset=charset)
    assert page.encoding == encoding
    assert text in page.text


def test_nul_bytes_are_dropped_before_the_parse() -> None:
    """Browsers drop a NUL in text; lexbor keeps a record of each one (5 MB of them in an
    attribute value: a gigabyte), so they go before it reads the page."""
    page = read(b"<p>wo\0rd</p><a href='/a\0b'>x</a><a href='/" + b"\0" * 100_000 + b"c'>y</a>")
    assert "word" in words(page.text)
    assert page.links == urls("/ab", "/c")


def test_nul_bytes_of_a_utf_16_page_are_its_text() -> None:
    page = read("<p>wörd</p><a href=/x>x</a>".encode("utf-16-le"), charset="utf-16le")
    assert "wörd" in words(page.text)
    assert page.links == urls("/x")


def test_header_charset_decodes_the_title_too() -> None:
    page = read(CP1251_PAGE, charset="windows-1251")
    assert page.title == CYRILLIC


@pytest.mark.parametrize(
    ("body", "header", "expected"),
    [
        pytest.param(b"abc", None, ("utf-8", 0), id="ascii"),
        pytest.param(codecs.BOM_UTF8 + b"abc", "latin-1", ("utf-8", 3), id="utf8-bom"),
        pytest.param(codecs.BOM_UTF16_LE + b"a\x00", None, ("utf-16-le", 2), id="utf16-le-bom"),
        pytest.param(codecs.BOM_UTF16_BE + b"\x00a", "utf-8", ("utf-16-be", 2), id="utf16-be-bom"),
        pytest.param(b"x", "latin1", ("cp1252", 0), id="latin1"),
        pytest.param(b"x", "ISO-8859-1", ("cp1252", 0), id="iso-8859-1"),
        pytest.param(b"x", "ascii", ("cp1252", 0), id="ascii-label"),
        pytest.param(b"x", "iso-8859-9", ("cp1254", 0), id="iso-8859-9"),
        pytest.param(b"x", "shift_jis", ("cp932", 0), id="shift-jis"),
        pytest.param(b"x", "gb2312", ("gb18030", 0), id="gb2312"),
        pytest.param(b"x", "koi8-r", ("koi8-r", 0), id="koi8-r"),
        pytest.param(b"x", "utf-8", ("utf-8", 0), id="utf-8"),
        pytest.param(b"x", "", ("utf-8", 0), id="empty-label"),
        pytest.param(b"x", "x-no-such", ("utf-8", 0), id="unknown-label"),
        pytest.param(b"caf\xe9!", "base64", ("cp1252", 0), id="base64-falls-back"),
        pytest.param(b"caf\xe9!", None, ("cp1252", 0), id="not-utf8"),
        pytest.param(b"caf\xe9", None, ("utf-8", 0), id="maybe-cut-utf8-at-the-end"),
        pytest.param("é".encode(), None, ("utf-8", 0), id="utf8"),
        pytest.param("a€".encode()[:-1], None, ("utf-8", 0), id="cut-utf8"),
        pytest.param(b"\xe2\x82 more", None, ("cp1252", 0), id="broken-utf8-mid-body"),
        pytest.param(b"<meta charset='koi8-r'>", None, ("koi8-r", 0), id="meta-single-quotes"),
        pytest.param(b" " * 1024 + b"<meta charset=koi8-r>", None, ("utf-8", 0), id="meta-late"),
    ],
)
def test_sniff_encoding(body: bytes, header: str | None, expected: tuple[str, int]) -> None:
    assert sniff_encoding(body, header) == expected


# Labels as the WHATWG Encoding Standard reads them: those browsers do not decode are no label.
@pytest.mark.parametrize(
    ("body", "header", "expected"),
    [
        pytest.param(b"x", "utf-7", ("utf-8", 0), id="utf-7-header-is-no-label"),
        pytest.param(b"caf\xe9!", "UTF-7", ("cp1252", 0), id="utf-7-falls-back-to-1252"),
        pytest.param(b"<meta charset=utf-7>+AGg-", None, ("utf-8", 0), id="utf-7-meta"),
        pytest.param(b"x", "utf-32", ("utf-8", 0), id="utf-32-is-no-label"),
        pytest.param(b"x", "cp037", ("utf-8", 0), id="ebcdic-is-no-label"),
        pytest.param(b"x", "latin-1", ("utf-8", 0), id="latin-1-with-a-hyphen-is-no-label"),
        pytest.param(b"x", "utf-16", ("utf-16-le", 0), id="utf-16-is-utf-16le"),
        pytest.param(b"x", "unicodeFFFE", ("utf-16-be", 0), id="unicodefffe-is-utf-16be"),
        pytest.param(b"x", "gbk", ("gb18030", 0), id="gbk-decodes-as-gb18030"),
        pytest.param(b"x", "big5", ("big5hkscs", 0), id="big5-is-big5-hkscs"),
        pytest.param(b"x", "x-mac-cyrillic", ("mac-cyrillic", 0), id="x-mac-cyrillic"),
        pytest.param(b"x", "iso-2022-kr", ("replacement", 0), id="iso-2022-kr-is-replacement"),
        pytest.param(b"x", "hz-gb-2312", ("replacement", 0), id="hz-is-replacement"),
        pytest.param(b"x", "x-user-defined", ("x-user-defined", 0), id="x-user-defined"),
        pytest.param(
            "<meta charset=x-user-defined>café".encode(), None, ("cp1252", 0), id="meta-user-def"
        ),
    ],
)
def test_labels_are_read_as_the_encoding_standard_reads_them(
    body: bytes, header: str | None, expected: tuple[str, int]
) -> None:
    assert sniff_encoding(body, header) == expected


def test_a_page_labelled_utf_7_is_not_decoded_as_utf_7() -> None:
    # +ADw-script+AD4- is UTF-7 for <script>: a filter that reads the page as browsers do sees
    # text, and so must we.
    page = read(b"<p>+ADw-b+AD4-bold+ADw-/b+AD4-</p>", charset="utf-7")
    assert page.encoding == "utf-8"
    assert page.text == "+ADw-b+AD4-bold+ADw-/b+AD4-"


def test_a_page_in_the_replacement_encoding_is_one_replacement_character() -> None:
    page = read(b'<p>text <a href="/a">a</a></p>', charset="iso-2022-kr")
    assert page.encoding == "replacement"
    assert page.text == "\ufffd"
    assert page.links == ()


def test_a_page_in_x_user_defined_maps_high_bytes_to_the_private_use_area() -> None:
    page = read(b"<p>a\x80\xff</p>", charset="x-user-defined")
    assert page.text == "a\uf780\uf7ff"


# --- links ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "body", "links", "unusable"),
    [
        pytest.param(
            "",
            '<a href="a.html">1</a><a href="/b">2</a><a href="http://other.test/c">3</a>',
            ("http://a.test/dir/a.html", "http://a.test/b", "http://other.test/c"),
            0,
            id="relative-root-absolute",
        ),
        pytest.param(
            "",
            '<a href="/z">z</a><a href="/a">a</a><a href="/m">m</a>',
            urls("/z", "/a", "/m"),
            0,
            id="document-order",
        ),
        pytest.param(
            "",
            '<a href="/a#one">1</a><a href="/a#two">2</a><a href="/a">3</a>',
            urls("/a"),
            0,
            id="fragments-dropped-duplicates-once",
        ),
        pytest.param(
            "",
            '<a href="/a">1</a><a href="/b">2</a><a href="/a">3</a>',
            urls("/a", "/b"),
            0,
            id="first-place-kept",
        ),
        pytest.param(
            "",
            '<map><area href="/area" alt=""></map><a href="/a">a</a>',
            urls("/area", "/a"),
            0,
            id="area",
        ),
        pytest.param(
            '<base href="http://b.test/base/">',
            '<a href="x">x</a><a href="/y">y</a>',
            ("http://b.test/base/x", "http://b.test/y"),
            0,
            id="base-absolute",
        ),
        pytest.param(
            '<base href="../other/">',
            '<a href="x">x</a>',
            ("http://a.test/other/x",),
            0,
            id="base-relative-to-the-url",
        ),
        pytest.param(
            '<base href="mailto:x@a.test">',
            '<a href="x">x</a>',
            ("http://a.test/dir/x",),
            0,
            id="base-unusable-ignored",
        ),
        pytest.param(
            '<base href="/one/"><base href="/two/">',
            '<a href="x">x</a>',
            ("http://a.test/one/x",),
            0,
            id="first-base-wins",
        ),
        pytest.param(
            "",
            '<a href="mailto:me@a.test">m</a><a href="javascript:void(0)">j</a>'
            '<a href="tel:+1">t</a><a href="/ok">ok</a>',
            urls("/ok"),
            3,
            id="unusable-schemes-counted",
        ),
        pytest.param(
            "",
            '<a href="http://[bad/">1</a><a href="http://a.test:99999/">2</a>',
            (),
            2,
            id="malformed-counted",
        ),
        pytest.param(
            "",
            '<a>no href</a><a name="x">anchor</a><a href="/ok">ok</a>',
            urls("/ok"),
            0,
            id="no-href-skipped",
        ),
        pytest.param(
            "",
            '<a href="HTTP://A.TEST:80/%7eu/./p?q=a b">x</a>',
            ("http://a.test/~u/p?q=a%20b",),
            0,
            id="normalised",
        ),
        pytest.param(
            "",
            '<a href="/a?x=1&amp;y=2">x</a>',
            urls("/a?x=1&y=2"),
            0,
            id="entity-in-href",
        ),
        pytest.param(
            "",
            '<link href="/style.css" rel="stylesheet"><img src="/i.png"><a href="/a">a</a>',
            urls("/a"),
            0,
            id="only-a-and-area",
        ),
    ],
)
def test_links(head: str, body: str, links: tuple[str, ...], unusable: int) -> None:
    page = read(doc(head, body))
    assert page.links == links
    assert page.nofollow_links == ()
    assert page.unusable_links == unusable


def test_a_frameset_page_links_to_its_frames() -> None:
    page = read(
        "<html><head><title>Frames</title></head><frameset cols='20%,80%'>"
        "<frame src='nav.html' name=nav><frame src=''><frame src='/main/index.html'>"
        "<noframes><a href='/fallback'>no frames</a></noframes></frameset></html>"
    )
    assert page.links == urls("/dir/nav.html", "/main/index.html")
    assert page.title == "Frames"


def test_an_iframe_is_a_link_and_its_content_is_not_read() -> None:
    page = read(
        doc("", "<p>before <iframe src='/embedded'>fallback <a href='/in'>x</a></iframe> after")
    )
    assert page.links == urls("/embedded")
    assert page.text == "before after"


def test_a_frame_inside_a_nofollow_section_is_not_followed() -> None:
    page = read(
        doc(
            "",
            '<!-- robots content="nofollow" --><iframe src="/held"></iframe><!-- /robots -->'
            '<iframe src="/free"></iframe>',
        )
    )
    assert page.links == urls("/free")
    assert page.nofollow_links == urls("/held")


@pytest.mark.parametrize(
    ("content", "links"),
    [
        ("0; url=/next", urls("/next")),
        ("5;URL='other.html'", urls("/dir/other.html")),
        ("  3 , url = 'https://b.test/x' ", ("https://b.test/x",)),
        ("0;/plain", urls("/plain")),
        ("0", ()),  # the page itself, again
        ("0; url=", ()),
        ("soon; url=/x", ()),  # no delay: not a refresh
        ("5x; url=/x", ()),
    ],
)
def test_a_meta_refresh_is_a_link(content: str, links: tuple[str, ...]) -> None:
    page = read(doc(f'<meta http-equiv="Refresh" content="{content}">', '<a href="/a">a</a>'))
    assert page.links == (*urls("/a"), *links)


def test_a_meta_refresh_of_a_nofollow_page_is_not_followed() -> None:
    page = read(
        doc('<meta name=robots content=nofollow><meta http-equiv=refresh content="0;url=/r">', "")
    )
    assert page.links == ()
    assert page.nofollow_links == urls("/r")


def test_empty_body() -> None:
    page = read(b"")
    assert page == Page(
        title=None, links=(), encoding="utf-8", main_fallback="under 150 characters of text"
    )


# --- robustness ----------------------------------------------------------------------------------

FRAGMENTS = st.sampled_from(
    [
        "<!--",
        "-->",
        "<!-- ",
        " -->",
        "robots content=",
        '"noindex"',
        '"nofollow"',
        '"none"',
        "'index'",
        "/robots",
        "noindex",
        "/noindex",
        "<noindex>",
        "</noindex>",
        "<NOINDEX>",
        "googleoff: index",
        "googleon: index",
        "googleoff: snippet",
        "googleoff: all",
        "googleon: all",
        "<a href=x>",
        '<a href="/y" rel=nofollow>',
        "<a href='mailto:x'>",
        "</a>",
        "<p>",
        "</p>",
        "<div>",
        "</div>",
        "<li>",
        "<table><tr><td>",
        "<h1>",
        "</h1>",
        "<h3>",
        "<nav>",
        "</nav>",
        "<noscript>",
        "<div role=navigation>",
        "<html>",
        "<body>",
        "</body></html>",
        "<!DOCTYPE html>",
        "<script>",
        "</script>",
        "<template>",
        "<svg><style>",
        '<meta name="robots" content="nofollow">',
        "<base href=/b/>",
        "<title>",
        "word",
        " ",
        "\n",
        "&amp;",
        "é",
        "\x00",
    ]
)
MARKUP = st.lists(FRAGMENTS, max_size=30).map("".join)
CHARSETS = st.sampled_from([None, "utf-8", "windows-1251", "utf-16", "base64", "bogus", "cp1252"])
X_ROBOTS = st.lists(
    st.sampled_from(
        ["noindex", "nofollow", "crawler: none", "otherbot: noindex", "max-snippet: 0"]
    ),
    max_size=3,
)


def check_invariants(page: Page) -> None:
    assert not set(page.links) & set(page.nofollow_links)
    assert len(set(page.links)) == len(page.links)
    assert len(set(page.nofollow_links)) == len(page.nofollow_links)
    if not page.index:
        assert page.text == ""
        assert page.nosnippet_text == ""
    assert set(page.headings.split()) <= set(page.text.split())
    if not page.follow:
        assert page.links == ()
    assert all(link.startswith(("http://", "https://")) for link in page.links)
    assert page.sections >= 0
    assert page.unusable_links >= 0


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(st.binary(max_size=400), MARKUP.map(lambda text: text.encode("utf-8"))),
    CHARSETS,
    X_ROBOTS,
    st.booleans(),
)
def test_read_page_never_raises_and_keeps_its_invariants(
    body: bytes, charset: str | None, x_robots_tag: list[str], follow_rel_nofollow: bool
) -> None:
    rules = PageRules(follow_rel_nofollow=follow_rel_nofollow)
    page = read_page(body, URL, charset=charset, x_robots_tag=x_robots_tag, rules=rules)
    check_invariants(page)


@settings(max_examples=200, deadline=None)
@given(MARKUP)
def test_sections_never_invent_text_or_links(markup: str) -> None:
    page = read(markup)
    check_invariants(page)
    shown = f"{page.text} {page.nosnippet_text}"
    assert shown.count("word") <= markup.count("word")
    possible = {f"{ORIGIN}/dir/x", f"{ORIGIN}/y", f"{ORIGIN}/b/x"}
    assert set(page.links) | set(page.nofollow_links) <= possible


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_read_page_never_raises_on_any_text(text: str) -> None:
    check_invariants(read(text.encode("utf-8", "surrogatepass")))
