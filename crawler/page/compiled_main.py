"""The compiled main content reading (`main_parts` in crawler.page._pagescan, from
_maincontent.c): configuring it from the Python reading's own sets and rules, checking it, and
choosing the reading the page step uses.

The C reading reads lexbor's nodes in place, as the compiled walk does, so it is used only where
the walk's layout handshake holds (crawler.page.compiled); and only when it reads
`MAIN_SELF_CHECK`, a page with something of everything, exactly as the Python reading does.
Everything it decides by comes from Python, once, at import: the flags of each tag (from
selectolax's own tag ids), the ids of the attributes it reads, the word rules of
crawler.page.content_names and the thresholds of crawler.page.main_content. Otherwise, or when
`CRAWLER_PAGE_WALK=python`, the Python reading runs, and `MAIN` says why.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import NamedTuple

from selectolax.lexbor import LexborHTMLParser, LexborNode

from crawler.page import main_content, markdown
from crawler.page.compiled import CHOICE, PAGESCAN, WALK
from crawler.page.content_names import NAME_RULES
from crawler.page.link_marks import with_links
from crawler.page.main_content import MainParts, python_main_parts
from crawler.page.markdown import is_navigation
from crawler.urls import InvalidUrlError, LinkResolver

__all__ = [
    "MAIN",
    "MAIN_SELF_CHECK",
    "PAGE_STEP",
    "MainContent",
    "compiled_main_content",
    "compiled_main_parts",
    "compiled_markdown_links",
    "composed_main_content",
    "configure",
    "main_content_of",
    "main_parts",
    "markdown_links",
    "markdown_resolver",
    "python_markdown_links",
]

MainPartsOf = Callable[[LexborNode | None], MainParts]
Resolve = Callable[[str], str | None]
MarkdownLinks = Callable[[str, list[str], LinkResolver, str | None, str], str]
"""(Markdown with link marks, its hrefs, the page's resolver, its <base href> or None, its URL)
-> the Markdown with its links (crawler.page.link_marks)."""


class MainContent(NamedTuple):
    """A page's main content as the page step keeps it: its text, its Markdown with its links
    made absolute, why it is the whole body (None: it is not), the text outside it."""

    text: str
    markdown: str
    fallback: str | None
    frame: str


MainContentOf = Callable[[LexborNode | None, LinkResolver, str | None, str], MainContent]
"""(the body, the page's resolver, its <base href> or None, its URL) -> its MainContent."""

# The flags of _maincontent.c, and the sets of the Python reading each stands for.
_FLAG_SETS: tuple[tuple[int, frozenset[str]], ...] = (
    (1 << 0, markdown.SKIPPED_TAGS),
    (1 << 1, markdown.BLOCK_TAGS),
    (1 << 2, main_content.FRAME_TAGS),
    (1 << 3, main_content.NEVER_NAMED),
    (1 << 4, main_content.TEXT_BLOCKS),
    (1 << 5, main_content.OWN_TEXT_BLOCKS),
    (1 << 6, main_content.LINK_LISTS),
    (1 << 7, markdown.LISTS),
    (1 << 8, markdown.CELLS),
    (1 << 9, markdown.ROW_GROUPS),
    (1 << 10, frozenset(name.strip() for name in markdown.CELL_BLOCKS.split(","))),
    (1 << 11, markdown.CODE),
    (1 << 12, frozenset(tag for tag, mark in markdown.EMPHASIS.items() if mark == "**")),
    (1 << 13, frozenset(tag for tag, mark in markdown.EMPHASIS.items() if mark == "*")),
)
_HEADING_SHIFT = 16
# The tags tested one by one, and the attributes read, in _maincontent.c's order.
_TAGS = ("a", "img", "article", "h1", "ol", "li", "pre", "hr", "br", "blockquote", "table", "tr")
_TAGS_AND_CODE = (*_TAGS, "code")
_ATTRIBUTES = ("class", "id", "role", "itemprop", "href", "src", "alt", "start")
# lexbor's fixed table of tags ends here; a tag past it is one lexbor does not know.
_TAG_TABLE_END = 0x00C7


def _thresholds() -> tuple[float, ...]:
    m = main_content
    return tuple(
        float(value)
        for value in (
            m.MIN_PAGE_CHARS, m.MIN_BLOCK_CHARS, m.KEEP_SHARE, m.CLIMB, m.SIBLING_SHARE,
            m.SIBLING_FLOOR, m.ARTICLE_BODY_BONUS, m.LATER_ARTICLE, m.MASS_SHARE, m.NAMED_SHARE,
            m.LEAD_SHARE, m.LINK_DENSE, m.NAMES_MISLED, m.NAMES_MISLED_CHARS, m.OWN_TEXT_CHARS,
            markdown.SCRAP_CHARS, markdown.DEEPEST, markdown.MAX_LINKS,
        )
    )  # fmt: skip


def configure(pagescan: ModuleType) -> str | None:
    """Gives the C reading its tags, attributes, rules and thresholds; None when they are
    given, else why they cannot be."""
    tree = LexborHTMLParser("<p>")
    flags: dict[int, int] = {}
    names = set().union(*(names for _, names in _FLAG_SETS), markdown.HEADINGS, _TAGS_AND_CODE)
    ids = {}
    for name in sorted(names):
        tag_id = tree.create_node(name).tag_id or 0
        if not 0 < tag_id < _TAG_TABLE_END:
            return f"<{name}> is not in lexbor's table of tags (id {tag_id})"
        ids[name] = tag_id
    for flag, members in _FLAG_SETS:
        for name in members:
            flags[ids[name]] = flags.get(ids[name], 0) | flag
    for name, marks in markdown.HEADINGS.items():
        flags[ids[name]] = flags.get(ids[name], 0) | (len(marks) << _HEADING_SHIFT)
    sample = LexborHTMLParser(
        "<p " + " ".join(f"{name}=x" for name in _ATTRIBUTES) + ">"
    ).css_first("p")
    if sample is None:
        return "selectolax read no <p>"
    attribute_ids = pagescan.attr_name_ids(sample.mem_id)
    if len(attribute_ids) != len(_ATTRIBUTES):
        return f"an element of {len(_ATTRIBUTES)} attributes reads {len(attribute_ids)}"
    pagescan.main_configure(
        flags,
        tuple(ids[name] for name in _TAGS_AND_CODE),
        tuple(attribute_ids),
        NAME_RULES,
        _thresholds(),
    )
    return None


def _compiled(pagescan: ModuleType) -> MainPartsOf:
    parts: Callable[[int], tuple[str, str, list[str], str | None, str]] = pagescan.main_parts

    def compiled_main_parts(body: LexborNode | None) -> MainParts:
        """`python_main_parts` in C; it leaves the tree as it is."""
        if body is None or is_navigation(body):
            return MainParts("", "", [], "no body")
        return MainParts._make(parts(body.mem_id))

    return compiled_main_parts


def markdown_resolver(resolve: LinkResolver, base: str | None, url: str) -> Resolve:
    """The Markdown's links made absolute as the crawl makes a page's links, fragment kept (the
    crawl's URLs drop it; a reader's link keeps it); each different href once. `base` is the
    page's <base href>, if any."""
    done: dict[str, str | None] = {}

    def resolved(href: str) -> str | None:
        if href in done:
            return done[href]
        at = href.find("#")
        fragment = href[at:] if at >= 0 else ""
        target = href[:at] if at >= 0 else href
        try:
            # A link within the page (`#part`) is the page's own URL.
            done[href] = (resolve(target) if target or base else url) + fragment
        except InvalidUrlError:
            done[href] = None
        return done[href]

    return resolved


def python_markdown_links(
    text: str, hrefs: list[str], resolve: LinkResolver, base: str | None, url: str
) -> str:
    """`text` (Markdown with link marks) with the URLs of its `hrefs` (crawler.page.link_marks),
    resolved by `resolve` (crawler.page.walk.link_resolver) on the page at `url`."""
    return with_links(text, hrefs, markdown_resolver(resolve, base, url))


def _compiled_links(pagescan: ModuleType) -> MarkdownLinks:
    marked: Callable[[str, list[str], Resolve, tuple[str, str], str | None], str | None]
    marked = pagescan.marked_links

    def compiled_markdown_links(
        text: str, hrefs: list[str], resolve: LinkResolver, base: str | None, url: str
    ) -> str:
        """`python_markdown_links` in C: hrefs off LinkResolver's short path (and `#x` with no
        <base>) go to the Python resolver; Markdown it was not made for (a mark out of place)
        to `with_links`."""
        resolved = markdown_resolver(resolve, base, url)
        done = marked(text, hrefs, resolved, resolve.join_parts, url if base is None else None)
        return with_links(text, hrefs, resolved) if done is None else done

    return compiled_markdown_links


MAIN_SELF_CHECK = (
    """<!DOCTYPE html><html><head><title>t</title></head><body>
<header class="site-header"><a href="/">Home</a> <a href="/about">About</a></header>
<nav><a href="/n">menu</a></nav><div role="navigation">crumbs</div>
<aside class="sidebar"><ul><li><a href="/x">Related one</a></li><li><a href="/y">two</a></li>
</ul></aside><div class="cookie-banner--visible">We use cookies, and so on, and so on.</div>
<h1>The <em>title</em> of_it</h1><p class="lead">A lead paragraph, before the article's body,
with words.</p><article class="post"><div itemprop="articleBody" class="entry-content
story__body--wide"><p>First paragraph, with commas, a <a href="/a b">link</a>, <b><strong>bold
</strong></b>, <i> italic </i>, <code>x_y`z</code> and <kbd>Ctrl</kbd>, more text here.</p>
<p>Second_paragraph * [brackets] \\ back_slash _under_ 1. not a list, \u3001\uff0c and
\u6771\u4eac\u306e\u8a71\u3001\u9577\u3044\u6587\u7ae0\u3067\u3059\u3002<br>after a break
\u0001control</p><h2>Sub <a href="javascript:void(0)">head</a></h2><ul><li>One item of text
</li><li>Two <ol start=" 7 "><li>seven</li><li><p>eight</p><p>eight more</p></li></ol></li>
</ul><ol start="x"><li>first</li></ol><pre class="language-python"><code>def f():
    return "```"
</code></pre><pre>plain\n\n</pre><table><thead><tr><th>a|b</th><th>c</th></tr></thead>
<tbody><tr><td>1</td><td><a href="/t">2</a></td><td>3</td></tr></tbody></table>
<table><tr><td><p>A laid out cell, with a paragraph in it, of some length.</p></td></tr>
</table><blockquote><p>Quoted words, of some length, quoted, more.</p><ul><li>q</li></ul>
</blockquote><hr><p><img src="/i.png" alt=" an  image_ "><img alt="no src"><img src="">
<span>- dash start</span></p><p>### not a heading</p><li>stray item</li>
<div class="related-links"><a href="/r1">Related story one</a> <a href="/r2">Related two</a>
</div><dl><dt>term</dt><dd>its definition, long enough to count as a block</dd></dl>
<p>Share this</p></div></article><article><p>The next story, appended, with a long paragraph,
and commas, commas.</p></article><div class="comments"><p>A comment, with words, many words,
more words.</p></div><footer>Copyright, and so on, and so on, and so on.</footer>"""
    + "<div>" * 210
    + "deep <b>text</b>"
    + "</div>" * 210
    + "</body></html>"
)
"""A page with something of everything the main content reading reads."""


def links_self_check(compiled: MarkdownLinks) -> bool:
    """The compiled links read MAIN_SELF_CHECK's Markdown as the Python ones do, with and
    without a <base>."""
    parts = python_main_parts(LexborHTMLParser(MAIN_SELF_CHECK).body)
    url = "http://self.check/a/b.html"
    return all(
        compiled(parts.markdown, parts.hrefs, LinkResolver(page), base, url)
        == python_markdown_links(parts.markdown, parts.hrefs, LinkResolver(page), base, url)
        for page, base in ((url, None), ("http://other.check/c/", "http://other.check/c/"))
    )


def self_check(compiled: MainPartsOf) -> bool:
    """The compiled reading reads MAIN_SELF_CHECK, and a few pages with little to choose from,
    as the Python one does."""
    pages = (
        MAIN_SELF_CHECK,
        "<p>short</p>",
        "<ul>" + "<li><a href=/l>a link of some length</a></li>" * 30 + "</ul>",
        "<frameset><frame src=a></frameset>",
    )
    for page in pages:
        one, other = LexborHTMLParser(page), LexborHTMLParser(page)
        if compiled(one.body) != python_main_parts(other.body):
            return False
    return True


def choose(
    pagescan: ModuleType | None, environ: Mapping[str, str] = os.environ
) -> tuple[MainPartsOf, MainPartsOf | None, str]:
    """(the reading to use, the compiled one when it could be checked, why)."""
    if pagescan is None or CHOICE.compiled_walk is None:
        return python_main_parts, None, "python (the compiled walk is not used)"
    problem = configure(pagescan)
    if problem is not None:
        return python_main_parts, None, f"python ({problem})"
    compiled = _compiled(pagescan)
    if not self_check(compiled):
        return python_main_parts, compiled, "python (the compiled reading failed its self-check)"
    if environ.get("CRAWLER_PAGE_WALK", "").strip().lower() == "python":
        return python_main_parts, compiled, "python (CRAWLER_PAGE_WALK=python)"
    return compiled, compiled, "compiled"


main_parts, compiled_main_parts, MAIN = choose(PAGESCAN)
compiled_markdown_links = (
    _compiled_links(PAGESCAN) if PAGESCAN is not None and compiled_main_parts is not None else None
)
markdown_links: MarkdownLinks = (
    compiled_markdown_links
    if compiled_markdown_links is not None
    and main_parts is compiled_main_parts
    and links_self_check(compiled_markdown_links)
    else python_markdown_links
)
"""The Markdown's links put in: in C where the main content is read in C and the C links read
MAIN_SELF_CHECK's as the Python ones do."""
PAGE_STEP = WALK if MAIN == "compiled" or WALK != "compiled" else f"{WALK}; main content {MAIN}"
"""Which walk and main content reading the page step runs, as `crawl --version` and the summary
say it: 'compiled', or what runs in Python and why."""


def composed_main_content(
    body: LexborNode | None, resolve: LinkResolver, base: str | None, url: str
) -> MainContent:
    """The main content read (`main_parts`), then its links put in (`markdown_links`)."""
    parts = main_parts(body)
    markdown = markdown_links(parts.markdown, parts.hrefs, resolve, base, url)
    return MainContent(parts.text, markdown, parts.fallback, parts.frame)


def _compiled_content(pagescan: ModuleType) -> MainContentOf:
    linked_parts: Callable[
        [int, Resolve, tuple[str, str], str | None],
        tuple[str, str | None, list[str], str | None, str, str | None],
    ] = pagescan.main_parts_linked

    def compiled_main_content(
        body: LexborNode | None, resolve: LinkResolver, base: str | None, url: str
    ) -> MainContent:
        """`composed_main_content` in one step of C: the links are put in the reading's bytes,
        not in a str made of them and encoded again (about 40 us of a Python documentation
        page's 17 KB of Markdown); Markdown it was not made for goes to `with_links`."""
        if body is None or is_navigation(body):
            return MainContent("", "", "no body", "")
        resolved = markdown_resolver(resolve, base, url)
        text, linked, hrefs, fallback, frame, marked = linked_parts(
            body.mem_id, resolved, resolve.join_parts, url if base is None else None
        )
        if linked is None:
            linked = with_links(marked or "", hrefs, resolved)
        return MainContent(text, linked, fallback, frame)

    return compiled_main_content


def content_self_check(compiled: MainContentOf) -> bool:
    """The one step reads MAIN_SELF_CHECK as the two steps do, with and without a <base>."""
    url = "http://self.check/a/b.html"
    for page, base in ((url, None), ("http://other.check/c/", "http://other.check/c/")):
        one, other = LexborHTMLParser(MAIN_SELF_CHECK), LexborHTMLParser(MAIN_SELF_CHECK)
        resolve = LinkResolver(page)
        if compiled(one.body, resolve, base, url) != composed_main_content(
            other.body, resolve, base, url
        ):
            return False
    return True


compiled_main_content = (
    _compiled_content(PAGESCAN)
    if PAGESCAN is not None
    and hasattr(PAGESCAN, "main_parts_linked")  # a build of before it: the two steps
    and main_parts is compiled_main_parts
    and markdown_links is compiled_markdown_links
    else None
)
main_content_of: MainContentOf = (
    compiled_main_content
    if compiled_main_content is not None and content_self_check(compiled_main_content)
    else composed_main_content
)
"""The page step's main content: in one step of C where both its steps are C and it reads
MAIN_SELF_CHECK as they do."""
