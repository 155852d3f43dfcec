"""A page's main content (crawler.page.main_content, crawler.page.markdown), read through the
page step as the crawl reads it: on real pages nobody here wrote (tests/data/main_content), in
English, Russian, Korean, Japanese and Indonesian, and on pages made to show one thing each; the
compiled reading and the Python one give the same on every page."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser
from support.readings import assert_same_readings

from crawler.page.main_content import _read
from crawler.page.read import Page, PageRules, read_page

DATA = Path(__file__).parent.parent / "data" / "main_content"
TRUTH = json.loads((DATA / "zyte-truth.json").read_text(encoding="utf-8"))
URL = "https://site.test/news/story.html"
WORD = re.compile(r"\w+")


def read(html: str | bytes, url: str = URL) -> Page:
    return read_page(html.encode() if isinstance(html, str) else html, url)


def shingles(text: str) -> Counter[tuple[str, ...]]:
    words = WORD.findall(text)
    return Counter(tuple(words[i : i + 4]) for i in range(max(1, len(words) - 3)))


def precision_recall(truth: str, found: str) -> tuple[float, float]:
    """Zyte's benchmark's score of one page: 4-word shingles."""
    true, got = shingles(truth), shingles(found)
    common = sum((true & got).values())
    return common / max(1, sum(got.values())), common / max(1, sum(true.values()))


# --- real pages ----------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(TRUTH))
def test_a_real_article_is_read_without_its_frame(key: str) -> None:
    body = gzip.decompress((DATA / f"zyte-{key}.html.gz").read_bytes())
    page = read(body, "https://page.test/article")
    truth = TRUTH[key]["articleBody"]
    precision, recall = precision_recall(truth, page.main_text)
    assert page.main_fallback is None
    assert precision >= 0.85 and recall >= 0.8, (precision, recall)
    # The visible text holds the article and its frame: the main text is what is kept of it.
    assert precision_recall(truth, page.text)[1] >= recall
    assert len(page.main_text) < len(page.text)
    assert_same_readings(body.decode("utf-8", "replace"))


def test_the_frame_of_a_news_page_goes() -> None:
    # jpost.com: nine parts in ten of its visible text are menus, teasers and footers.
    page = read(gzip.decompress((DATA / "zyte-e372e42c0a3d.html.gz").read_bytes()))
    truth = TRUTH["e372e42c0a3d"]["articleBody"]
    assert precision_recall(truth, page.text)[0] < 0.2
    assert precision_recall(truth, page.main_text)[0] > 0.9


@pytest.mark.parametrize("key", ["0ec95c7261d1", "85439e26c41c"])
def test_cjk_articles(key: str) -> None:
    page = read(gzip.decompress((DATA / f"zyte-{key}.html.gz").read_bytes()))
    truth = TRUTH[key]["articleBody"]
    # Korean and Japanese, characters as a person marked them.
    kept = set(re.sub(r"\s", "", page.main_text))
    assert len(set(re.sub(r"\s", "", truth)) - kept) <= 5
    assert truth.split()[3] in page.main_text


def test_a_sphinx_page_as_markdown() -> None:
    body = gzip.decompress((DATA / "python-datastructures.html.gz").read_bytes())
    page = read(body, "https://docs.test/3/tutorial/datastructures.html")
    markdown = page.markdown
    assert page.main_fallback is None
    assert markdown.startswith("# 5. Data Structures\n\n")
    assert "\n\n## 5.1. More on Lists\n\n" in markdown
    assert "\n\n### 5.1.3. List Comprehensions\n\n" in markdown
    # Code blocks fenced; links absolute, with their fragments.
    assert (
        "```\n>>> fruits = ['orange', 'apple', 'pear', 'banana', 'kiwi', 'apple', 'banana']\n"
        in (markdown)
    )
    assert "](https://docs.test/3/library/stdtypes.html#typesseq)" in markdown
    assert "*x*" in markdown  # the signature's argument, emphasised
    # The site's frame is not there: the navigation, the footer, the "Table of Contents" aside.
    for frame in ("Previous topic", "Navigation", "This Page", "Copyright"):
        assert frame not in page.main_text, frame
        assert frame in page.text + page.nosnippet_text, frame
    assert_same_readings(body.decode())


def test_a_short_sphinx_page() -> None:
    body = gzip.decompress((DATA / "python-bisect.html.gz").read_bytes())
    page = read(body, "https://docs.test/3/library/bisect.html")
    assert page.main_fallback is None
    assert "bisect.bisect_left" in page.main_text
    assert "This module provides support for maintaining a list in sorted order" in page.main_text
    assert "Previous topic" not in page.main_text
    # A scrap at either end of the content goes ("Source code: Lib/bisect.py", 23 characters).
    assert "Source code" not in page.main_text


# --- what is left out, and the fallback ----------------------------------------------------------

ARTICLE = (
    "<p>The council met on Tuesday, and after a long debate, it voted for the plan, which the "
    "mayor had put forward in spring.</p><p>Work starts next year, the plan says, and it will "
    "take three years, if the money holds.</p>"
)
FRAME = {
    "navigation": '<nav><a href="/">Home</a> <a href="/news">News</a></nav>',
    "site header": '<header><a href="/">The Daily Test</a>, news since 1901</header>',
    "footer": "<footer>Copyright 2026 The Daily Test, all rights reserved, and so on.</footer>",
    "sidebar": "<aside><p>Most read today, in all sections of the site, and more.</p></aside>",
    "cookie banner": '<div class="cookie-consent">We use cookies, as every site does, ok?</div>',
    "comments": '<div id="comments"><p>A reader, who wrote at length, said so, twice.</p></div>',
    "related links": '<ul class="related">'
    + '<li><a href="/a">A story about something else entirely</a></li>' * 4
    + "</ul>",
    "share bar": '<div class="share-buttons"><a href="/s">Share on a network, please</a></div>',
    "link list in the content": "",
}


@pytest.mark.parametrize("frame", sorted(FRAME))
def test_the_frame_goes(frame: str) -> None:
    if frame == "link list in the content":
        inner = '<div class="tags">' + '<a href="/t">a tag of the story</a> ' * 5 + "</div>"
        html = f"<article>{ARTICLE}{inner}</article>"
    else:
        html = f"{FRAME[frame]}<article>{ARTICLE}</article>"
    page = read(html)
    assert page.main_fallback is None
    assert page.main_text == (
        "The council met on Tuesday, and after a long debate, it voted for the plan, which the "
        "mayor had put forward in spring.\nWork starts next year, the plan says, and it will "
        "take three years, if the money holds."
    )
    assert_same_readings(html)


def test_the_frame_is_the_text_outside_the_main_content() -> None:
    html = (
        f"{FRAME['navigation']}{FRAME['site header']}<article>{ARTICLE}"
        f"{FRAME['share bar']}</article>{FRAME['footer']}<script>var x = 1;</script>"
    )
    page = read(html)
    # <nav> is read apart (nosnippet_text), a script not at all; what is skipped inside the main
    # content (the share bar) is frame.
    assert page.frame_text == (
        "The Daily Test , news since 1901 Share on a network, please "
        "Copyright 2026 The Daily Test, all rights reserved, and so on."
    )
    assert read(f"<p>{ARTICLE[:60]}</p>").frame_text is None  # a fallback: all of it is text
    assert_same_readings(html)


def test_a_frame_tag_that_holds_the_page_stays() -> None:
    # A <header> left open holds all that follows: it is not the frame.
    html = f"<header><p>Site</p>{ARTICLE}{ARTICLE}"
    assert "The council met" in read(html).main_text


def test_names_that_mislead_are_not_heeded() -> None:
    # A forum thread: every post is named a comment, and the posts are what the page says.
    posts = "".join(
        f'<div class="comment"><p>Post {n}: I tried that, and it worked, after I restarted the '
        "router, twice, and waited.</p></div>"
        for n in range(6)
    )
    page = read(f'<nav><a href="/">Forum</a></nav><main>{posts}</main>')
    assert page.main_fallback is None
    assert page.main_text.count("Post ") == 6


def test_the_named_article_body_bounds_the_mass_choice() -> None:
    # The next stories appended under the article: more content than the article, so the mass
    # reading would take the whole page; the site names one article body, and it is the choice.
    story = (
        '<div class="teaser"><h2>Another story</h2><p>Another story told at length in words and '
        "more words and then more words again as stories go on and on and on.</p></div>"
    )
    html = (
        f'<article><h1>The plan</h1><div class="article-body">{ARTICLE}</div></article>'
        f'<div class="more">{story * 8}</div>'
    )
    assert read(html).main_text == (
        "The council met on Tuesday, and after a long debate, it voted for the plan, which the "
        "mayor had put forward in spring.\nWork starts next year, the plan says, and it will "
        "take three years, if the money holds."
    )
    assert_same_readings(html)


@pytest.mark.parametrize(
    ("html", "fallback"),
    [
        ("<p>Too short to choose from.</p>", "under 150 characters of text"),
        ("<frameset><frame src=/a></frameset>", "no body"),
        ("<ul>" + '<li><a href="/x">a link and its words</a></li>' * 20 + "</ul>", None),
        ("", "under 150 characters of text"),
    ],
)
def test_the_fallback_is_the_visible_text_and_says_why(html: str, fallback: str | None) -> None:
    page = read(html)
    if fallback is None:  # a link hub: nothing but links to choose from
        assert page.main_fallback == "no block of text to choose"
    else:
        assert page.main_fallback == fallback
    assert " ".join(page.main_text.split()) == page.text
    assert_same_readings(html)


def test_noindex_pages_and_sections_have_no_main_text_of_theirs() -> None:
    assert read(f'<meta name="robots" content="noindex">{ARTICLE * 3}').main_text == ""
    page = read(
        f"{ARTICLE}<!--googleoff: index--><p>{'hidden words, ' * 20}</p><!--googleon: index-->"
    )
    assert "hidden" not in page.main_text + page.markdown
    assert read(f'<meta name="robots" content="nosnippet">{ARTICLE * 3}').main_text == ""


# --- Markdown ------------------------------------------------------------------------------------


LONG = "<p>" + "Words of the page, and more words, " * 5 + "</p>"


def markdown_of(inner: str, url: str = URL) -> str:
    """The Markdown of `inner` in the content of a page, between paragraphs long enough to be
    chosen (a short block at either end would be a scrap)."""
    html = f"<article>{LONG}{inner}{LONG}</article>"
    assert_same_readings(html)
    return "\n\n".join(read(html, url).markdown.split("\n\n")[1:-1])


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ("<h2>Part <em>two</em></h2>", "## Part *two*"),
        ("<p>a <b>bold</b> and <i> spaced </i> word</p>", "a **bold** and *spaced* word"),
        ('<p>for the details, see <a href="../other.html#part">the other page</a>, it says</p>',
         "for the details, see [the other page](https://site.test/other.html#part), it says"),
        ('<p>You may <a href="mailto:x@site.test">write</a> to us, or <a href="javascript:go()">go'
         "</a> on reading the page</p>",
         "You may write to us, or go on reading the page"),
        ('<p><img src="/i.png" alt="a  chart"></p>', "![a chart](https://site.test/i.png)"),
        ("<p><code>a_b</code> and a_b and _c_ and 2*3 [x]</p>",
         "`a_b` and a_b and \\_c\\_ and 2\\*3 \\[x\\]"),
        ("<p><code>a`b</code></p>", "`` a`b ``"),
        ("<ul><li>one</li><li>two<ol start=3><li>three</li></ol></li></ul>",
         "- one\n\n- two\n\n  3. three"),
        ('<pre class="highlight-python"><code>x = 1\n\nif x:\n    y()</code></pre>',
         "```python\nx = 1\n\nif x:\n    y()\n```"),
        ("<table><tr><th>name</th><th>value</th></tr><tr><td>a|b</td><td>1</td></tr></table>",
         "| name | value |\n| --- | --- |\n| a\\|b | 1 |"),
        ("<table><tr><td><p>A cell laid out as a page.</p></td></tr></table>",
         "A cell laid out as a page."),
        ("<blockquote><p>quoted words</p></blockquote>", "> quoted words"),
        ("<p>1. not a list</p>", "1\\. not a list"),
        ("<p>#hashtag and # heading</p>", "#hashtag and # heading"),
        ("<p># not a heading</p>", "\\# not a heading"),
        ("<hr><p>after the rule, words</p>", "---\n\nafter the rule, words"),
    ],
)  # fmt: skip
def test_markdown(inner: str, expected: str) -> None:
    assert markdown_of(inner) == expected


def test_plain_text_is_a_block_to_a_line() -> None:
    html = (
        f"<article><h1>Title</h1>{LONG}<ul><li>one</li><li>two</li></ul>"
        f"<table><tr><td>a</td><td>b</td></tr></table><pre>line one\n  line two</pre>{LONG}"
        "</article>"
    )
    lines = read(html).main_text.split("\n")
    assert lines[0] == "Title"
    assert lines[2:-1] == ["one", "two", "a\tb", "line one", "  line two"]


def test_right_to_left_text() -> None:
    # Arabic and Hebrew, in a page laid out right to left: read in their logical order.
    arabic = "قرر المجلس، بعد نقاش طويل، أن يبدأ العمل في العام المقبل، وأن يستمر ثلاث سنوات."
    hebrew = "המועצה החליטה, אחרי דיון ארוך, שהעבודה תתחיל בשנה הבאה, ותימשך שלוש שנים."
    html = (
        '<html dir="rtl" lang="ar"><body><nav><a href="/">الرئيسية</a></nav>'
        f"<article><h1>خبر</h1><p>{arabic}</p><p>{arabic}</p><p dir=rtl lang=he>{hebrew}</p>"
        "</article><footer>حقوق النشر محفوظة، وما إلى ذلك، وما إلى ذلك.</footer></body></html>"
    )
    page = read(html)
    assert page.main_text.split("\n") == ["خبر", arabic, arabic, hebrew]
    assert page.markdown == f"# خبر\n\n{arabic}\n\n{arabic}\n\n{hebrew}"
    assert_same_readings(html)


# --- the compiled reading and the Python one -----------------------------------------------------

NAMES = ["content", "post-body", "article__body--wide", "sidebar", "comments", "commentary",
         "nav-links", "ad", "tags", "share", "main", "x", "entry-content", "BANNER"]  # fmt: skip
TEXTS = ["Words, and more words, to score", "short", "東京の話、長い文章です。", "a_b `c` *d* [e]",
         "\u0001ctl", "x|y", " \n ", "قرر المجلس، بعد نقاش", "1. item", "## h", "---",
         # past 16 bytes, a control inside a block the compiled reading copies 16 at a time
         "a run of words long enough\u0001 to span\u001f blocks, and\x08 more",
         "tabs\tand\nnewlines\x0cand\rreturns kept, over sixteen bytes"]  # fmt: skip
LEAVES = st.one_of(
    st.sampled_from(TEXTS),
    st.sampled_from(['<img src="/i.png" alt="a_b">', "<br>", "<hr>", '<a href="/l#f">link</a>',
                     "<script>x</script>", '<a href="">empty</a>', "<!-- c -->"]),
)  # fmt: skip
TAGS = ["p", "div", "section", "article", "main", "span", "a", "b", "em", "code", "pre", "ul",
        "ol", "li", "table", "tr", "td", "th", "tbody", "blockquote", "h1", "h2", "nav", "header",
        "footer", "aside", "form", "dl", "dt", "dd", "font", "figure", "figcaption"]  # fmt: skip


def _element(children: list[str], tag: str, names: str | None, role: str | None) -> str:
    attributes = (f' class="{names}"' if names else "") + (f' role="{role}"' if role else "")
    href = ' href="/x"' if tag == "a" else ""
    return f"<{tag}{attributes}{href}>{''.join(children)}</{tag}>"


MARKUP = st.recursive(
    LEAVES,
    lambda inner: st.builds(
        _element,
        st.lists(inner, max_size=5),
        st.sampled_from(TAGS),
        st.one_of(st.none(), st.sampled_from(NAMES)),
        st.one_of(st.none(), st.sampled_from(["main", "navigation", "banner", "Navigation"])),
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(MARKUP, min_size=1, max_size=6))
def test_both_readings_read_any_page_alike(parts: list[str]) -> None:
    assert_same_readings("<body>" + "".join(parts) * 2 + "</body>")


def test_a_page_of_100000_links_gives_its_first_2000_a_url() -> None:
    html = (
        "<ul>" + "".join(f'<li><a href="/l/{n}">link {n}</a></li>' for n in range(3_000)) + "</ul>"
    )
    page = read(html)
    assert page.main_fallback == "no block of text to choose"
    assert page.markdown.count("](https://site.test/l/") == 2_000
    assert page.markdown.endswith("- link 2999")
    assert_same_readings(html)


def test_page_main_content_false_leaves_it_unread() -> None:
    page = read_page(
        f"<article>{ARTICLE}</article>".encode(), URL, rules=PageRules(main_content=False)
    )
    assert "The council met" in page.text
    assert (page.main_text, page.markdown, page.main_fallback) == ("", "", None)


def test_empty_elements_take_no_row_and_are_still_read() -> None:
    # `</p>` alone is an empty <p>: a hostile page of 500,000 of them made a row each (50 MB).
    table = "<table><tr><th>a</th><th></th></tr><tr><td>1</td><td></td></tr></table>"
    middle = f"{'</p>' * 10_000}<img src=/i.png alt=map><br>{table}"
    html = f"<article>{ARTICLE.replace('</p><p>', '</p>' + middle + '<p>')}</article>"
    assert len(_read(LexborHTMLParser(html).body)) < 20
    page = read(html)
    assert "![map](https://site.test/i.png)" in page.markdown
    assert "| a |  |\n| --- | --- |\n| 1 |  |" in page.markdown
    assert_same_readings(html)


def test_pages_read_one_after_another_read_as_each_alone() -> None:
    # The compiled reading keeps its arrays and buffers from page to page in each thread (a
    # block past 1 MiB is freed instead): a page read after a bigger one, a huge one (20,000
    # rows), one with no main content and one with a frame, in this thread and in new ones, reads
    # as it does alone.
    huge = "".join(f"<div class=c{n % 7}><p>{ARTICLE[:80]} {n}</p></div>" for n in range(20_000))
    pages = [
        f"<article>{ARTICLE}</article>{FRAME['footer']}",
        f"<body>{huge}</body>",
        f"<p>{ARTICLE[:60]}</p>",
        f"{FRAME['navigation']}<article>{ARTICLE}{FRAME['share bar']}</article>",
    ]
    alone = [read(html) for html in pages]
    for html, page in zip(pages * 2, alone * 2, strict=True):
        assert read(html) == page
        assert_same_readings(html)
    with ThreadPoolExecutor(2) as pool:
        for _ in range(2):
            assert list(pool.map(read, reversed(pages))) == alone[::-1]
