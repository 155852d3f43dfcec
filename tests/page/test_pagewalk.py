"""crawler.page.walk: the compiled walk and links (crawler/page/_pagescan.c) give what the Python
reference gives, on documents written from a grammar of everything the walks read.

The grammar writes HTML as source text: the parser's own repairs (elements closed early, text
moved into <body> or before a <table>, markup inside a foreign <style>, clones of misnested
formatting elements) are part of what is compared. Facts are compared with `compiled.same_facts`
(nosnippet text by words, everything else exactly), links exactly.

The example counts keep the file quick; to hunt for disagreements, run it with many more:
`PAGEWALK_EXAMPLES=10000 pytest tests/test_pagewalk.py`. The disagreements found so far, all
settled, are kept as tests at the end of the file.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import pytest
import selectolax
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

import crawler.page.read
from crawler.page import compiled
from crawler.page.read import Page, PageRules, read_page
from crawler.page.walk import Links, PageFacts, python_links, python_walk

pytestmark = pytest.mark.skipif(
    compiled.compiled_walk is None, reason=f"the compiled walk is not loaded: {compiled.WALK}"
)

Strings = st.SearchStrategy[str]


def compiled_walk(tree: LexborHTMLParser) -> PageFacts:
    assert compiled.compiled_walk is not None
    return compiled.compiled_walk(tree)


def compiled_links(facts: PageFacts, url: str, follow: bool, follow_rel_nofollow: bool) -> Links:
    assert compiled.compiled_links is not None
    return compiled.compiled_links(facts, url, follow, follow_rel_nofollow)


def _joined(*parts: Strings) -> Strings:
    return st.tuples(*parts).map("".join)


def _attr(name: str, values: Strings) -> Strings:
    """` name="value"`, ` name=value`, ` name='value'` or a valueless ` name`."""
    return st.one_of(
        values.map(lambda value: f' {name}="{value.replace(chr(34), "&quot;")}"'),
        values.filter(lambda value: value and not any(c in value for c in " \t\n\f\r\"'=<>`")).map(
            lambda value: f" {name}={value}"
        ),
        values.map(lambda value: f" {name}='{value.replace(chr(39), '&#39;')}'"),
        st.just(f" {name}"),
    )


# --- hrefs and bases ------------------------------------------------------------------------------

HREF_STARTS = [
    "",
    "/",
    "./",
    "../",
    "../../",
    "/.well-known/",
    "..foo/",
    ".x",
    "?",
    "#",
    "//h.test/",
    "//H.Test:80/",
    "//",
    "http://",
    "http://a.test/",
    "HTTP://A.Test:80/",
    "hTTps://A.TEST:443/p/",
    "https://a.test:8443/",
    "https://user:pw@a.test/",
    "http://@a.test/",
    "http://b\u00fccher.example/",
    "http://xn--bcher-kva.example/",
    "http://\u6771\u4eac.jp/",
    "http://[::1]:8080/",
    "http://a.test:99999/",
    "http://%41.test/",
    "http:/x/",
    "http:x",
    "https:///x",
    "http://a..b/",
    "mailto:x@y.test",
    "javascript:void(0)",
    "JavaScript:",
    "data:text/html,<a>",
    "ftp://f.test/",
    "tel:+1",
    "a:b",
    "h:",
    "x-y.z+1:rest",
    "\\\\h.test\\p\\",
    " ",
    "\t",
    "\n/",
    "\x00",
    "\x1f/",
]
HREF_PARTS = [
    "a",
    "b.html",
    "dir/",
    "/",
    "//",
    ".",
    "..",
    "./",
    "../",
    "/.",
    "/..",
    "/./",
    "/../",
    ".well-known/x",
    "..foo",
    ".x",
    "?",
    "?q=1",
    "?x=/./y",
    "?a=/../b",
    "&",
    "#",
    "#x",
    "a#b#c",
    "%41",
    "%2e",
    "%2E%2E/",
    "%2f",
    "%7E",
    "%25",
    "%zz",
    "%",
    "%e2%80%83",
    "%C3%A9",
    " ",
    "\t",
    "\n",
    "\r",
    "\\",
    "\u00e9",
    "\u6771",
    "\u00a0",
    "\u2003",
    "\U0001f600",
    ":",
    "@",
    "a:b",
    "*",
    "$",
    "[",
    "]",
    ";",
    "=",
    "'",
    "~",
    "!",
    "(",
    "+",
    ",",
    '"',
    "<",
    ">",
    "^",
    "`",
    "{",
    "|",
    "}",
    "\x7f",
]
HREF_WHOLE = [
    "",
    " ",
    "#",
    "#x",
    "?",
    "?q",
    "//",
    "///x",
    "/",
    ".",
    "..",
    "a#b#c",
    "x?",
    "x?#y",
    "/a/b/../../../c",
    "/a/./b/.",
    "/a?x=/./y",
    "/.well-known/x",
    "..foo",
    ".x",
    "a:b",
    "mailto:x",
    "javascript:alert(1)",
    "data:,x",
    "http://a.test",
    "http://a.test?q",
    "http://a.test#f",
    "HTTP://A.TEST/%7e/%zz",
    "https://a.test:443",
    "http://a.test:80/",
    "http://a.test:0/",
    "http://user@/x",
    "http://[::1/",
    "//h.test",
    "\\\\h.test\\p",
    "/\\h.test/p",
    "a\\b?c\\d",
    " /spaced path ",
    "\t/t\ta\nb\r",
    "caf\u00e9/\u6771\u4eac?\u00e9#\u00e9",
    "%",
    "%%",
    "%2",
    "/%41%42%2f%2F%2e%2E",
]
HREFS: Strings = st.one_of(
    st.sampled_from(["/x", "y", "/dir/z?q=1", "http://a.test/w", "../v", "u#f"]),
    st.sampled_from(HREF_WHOLE),
    _joined(
        st.sampled_from(HREF_STARTS),
        st.lists(st.sampled_from(HREF_PARTS), max_size=6).map("".join),
    ),
    st.text(alphabet=st.sampled_from("aZ09-._~/?#%:@!$&'()*+,;=[] \t\\.\u00e9"), max_size=12),
    st.text(max_size=8),
)
RELS: st.SearchStrategy[str | None] = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "",
            "nofollow",
            "NoFollow ugc",
            "noopener",
            "noopener noreferrer",
            "sponsored\u00a0x",
            "x\u2003ugc",
            "\tnofollow\n",
            "UGC",
            "SPONSORED",
            "nofollowx",
            "no follow",
            "nofollow,ugc",
            "external\u3000nofollow",
            "\u0085ugc\u0085",
            "\x1cugc",
            "ugc\u200b",
            "n\u00f6follow",
            "\u212aelvin nofollow",
        ]
    ),
    st.lists(
        st.sampled_from(["nofollow", "ugc", "sponsored", "noopener", "x", "NOFOLLOW"]),
        max_size=3,
    ).flatmap(
        lambda words: st.sampled_from([" ", "\t", "\n", "\u00a0", "  "]).map(
            lambda space: space.join(words)
        )
    ),
)
# The URLs a page is read at: normal, as the crawl hands them over.
PAGE_URLS = [
    "http://a.test/dir/page.html",
    "http://a.test/",
    "http://a.test/page",
    "https://a.test/dir/?q=1",
    "https://a.test/dir/page?x=/y/z",
    "http://a.test:8080/a/b/",
    "http://xn--caf-dma.example/x/y",
    "https://h/.well-known/dir/",
    "http://a.test/a/b/c/d/e",
]
BASES = [
    "/b/",
    "b/",
    "../up/",
    "?q",
    "#f",
    "//cdn.test/p/",
    "http://Other.Test:80/x/y",
    "https://b\u00fccher.example/",
    "https://xn--bcher-kva.example/d/",
    "http://a.test:8080",
    "/.well-known/d/",
    "javascript:x",
    "http://[bad/",
    "\t/t/\n",
    "mailto:x",
]
BASE_VALUES: Strings = st.one_of(st.sampled_from(BASES), HREFS)


# --- documents ------------------------------------------------------------------------------------

WORDS = [
    "alpha",
    "Beta",
    "x",
    "42",
    "caf\u00e9",
    "\u6771\u4eac",
    "\u0395\u03bb\u03bb\u03ac\u03b4\u03b1",
    "na\u00efve",
    "\U0001f600",
    "a&amp;b",
    "&lt;tag&gt;",
    "&eacute;t&eacute;",
    "&copy",
    "&#x2003;",
    "&#160;",
    "&#0;",
    "&#x85;",
    "&#xD800;",
    "&bogus;",
    "&",
    "<",
    ">",
    "\u200b",
    "\ufeff",
    "\x00",
]
SPACES = [
    " ",
    "  ",
    "\n",
    "\t",
    "\r\n",
    "\r",
    "\f",
    "\u00a0",
    "\u2003",
    "\u3000",
    "\u0085",
    "\u1680",
    "\u2028",
    "\u2029",
    "\u205f",
    "\u202f",
    "\x0b",
    "\x1c",
    "\x1f",
    "&nbsp;",
    "&nbsp",
    "&#32;",
]
TEXT: Strings = st.lists(
    st.one_of(st.sampled_from(WORDS), st.sampled_from(SPACES)), max_size=5
).map("".join)

OPENING_MARKERS = [
    *(
        f'<!-- robots content="{words}" -->'
        for words in (
            "noindex",
            "nofollow",
            "none",
            "index",
            "follow",
            "all",
            "nosnippet",
            "noindex,nofollow",
            "index, nofollow",
            "NOINDEX",
        )
    ),
    "<!--robots content=noindex-->",
    "<!-- robots content='nofollow' -->",
    '<!--  ROBOTS   Content = "NoFollow"  -->',
    '<!--\trobots content="none"\n-->',
    *(f"<!--googleoff: {word}-->" for word in ("index", "snippet", "anchor", "all")),
    "<!--GoogleOff:Snippet-->",
    "<!-- googleoff : ALL -->",
    "<!--noindex-->",
    "<!-- NoIndex -->",
    # Unicode spaces around the words: str.strip() strips them, HTML does not
    "<!--\u00a0noindex\u3000-->",
    "<!--\x0bnoindex-->",
    "<!--\u2028googleoff: snippet\u2029-->",
    '<!--\u0085robots content="nofollow"-->',
    # comments the tokenizer makes out of other things
    "<!noindex>",
    '<!robots content="nofollow">',
]
CLOSING_MARKERS = [
    "<!-- /robots -->",
    "<!--/robots-->",
    "<!-- / robots -->",
    "<!--/ROBOTS  -->",
    "<!--/\u2003robots-->",
    "<!--/" + " " * 20 + "robots-->",
    *(f"<!--googleon: {word}-->" for word in ("index", "snippet", "anchor", "all")),
    "<!--GoogleOn:Index-->",
    "<!-- googleon : ALL -->",
    "<!--/noindex-->",
    "<!--/ noindex-->",
    "<!--/" + " " * 20 + "noindex-->",
    "</ noindex>",
]
OTHER_COMMENTS = [
    # near misses: start like a marker, or look like one, and are not
    "<!-- /wp:paragraph -->",
    "<!-- wp:paragraph -->",
    "<!--robotsx-->",
    "<!--robots-->",
    "<!-- robots content -->",
    "<!--googleoffx: index-->",
    "<!--googleoff: bogus-->",
    "<!--noindexx-->",
    "<!-- no index -->",
    "<!--nofollow-->",
    "<?noindex?>",
    "<!---->",
    "<!-->",
    "<!--->",
    "<!-- plain -->",
]
MARKERS = OPENING_MARKERS + CLOSING_MARKERS + OTHER_COMMENTS
MARKER: Strings = st.one_of(
    st.sampled_from(OPENING_MARKERS),
    st.sampled_from(CLOSING_MARKERS),
    st.sampled_from(OTHER_COMMENTS),
)

REL_ATTR: Strings = RELS.map(lambda rel: "" if rel is None else f' rel="{rel}"')


def _anchor(content: Strings) -> Strings:
    href_attrs = st.one_of(
        st.just(""),
        _attr("href", HREFS),
        st.tuples(_attr("href", HREFS), _attr("HREF", HREFS)).map("".join),
    )
    return st.builds(
        lambda tag, attrs, rel, inner, close: (
            f"<{tag}{attrs}{rel}>{inner}" + (f"</{tag}>" if close else "")
        ),
        st.sampled_from(["a", "A", "area"]),
        href_attrs,
        REL_ATTR,
        content,
        st.booleans(),
    )


def _framed(content: Strings) -> Strings:
    """An <iframe> or a <frame>, by its src (none, empty or an href), an iframe with content."""
    src_attrs = st.one_of(st.just(""), _attr("src", HREFS), _attr("SRC", HREFS))
    return st.one_of(
        st.builds(lambda src, inner: f"<iframe{src}>{inner}</iframe>", src_attrs, content),
        src_attrs.map(lambda src: f"<frame{src}>"),
    )


RAW_CONTENT: Strings = st.lists(
    st.one_of(
        MARKER,
        TEXT,
        st.sampled_from(
            [
                '<a href="/raw">raw</a>',
                '<meta name="robots" content="noindex">',
                "<title>raw title</title>",
                "<base href=/raw/>",
                "<noindex>",
                "</noindex>",
                "<p>",
                "</scr",
                "<!--",
            ]
        ),
    ),
    max_size=4,
).map("".join)


def _raw(tag: str) -> Strings:
    return RAW_CONTENT.map(lambda content: f"<{tag}>{content}</{tag}>")


RAW_ELEMENTS: Strings = st.one_of(
    *(_raw(tag) for tag in ("script", "style", "template", "iframe", "noembed", "noframes", "xmp")),
    st.just("<textarea>t<!--noindex-->a</textarea>"),
    st.just("<title>body title</title>"),
)


def _foreign(content: Strings) -> Strings:
    """SVG or MathML holding markup where HTML would hold text (style, script, title)."""
    children = st.lists(
        st.one_of(
            content,
            _raw("style"),
            _raw("script"),
            _joined(st.just("<style>"), content, st.just("</style>")),
            _joined(st.just("<script>"), content, st.just("</script>")),
            _joined(st.just("<title>"), content, st.just("</title>")),
            _joined(st.just("<iframe>"), content, st.just("</iframe>")),
            _joined(st.just("<template>"), content, st.just("</template>")),
            _joined(st.just("<html>w"), content, st.just("</html>")),
            st.just("<html></html>"),
            _joined(st.just("<foreignObject>"), content, st.just("</foreignObject>")),
            _joined(st.just("<desc>"), content, st.just("</desc>")),
            st.sampled_from(
                [
                    '<a xlink:href="/xlink">x</a>',
                    '<a xlink:href="/xlink-too" href="/svg-href">y</a>',
                    '<base xlink:href="/xlink-base/">',
                    '<a href="/svg">s</a>',
                    "<a href=/svg><style>x</style></a>",
                    '<area href="/svg-area" rel=nofollow>',
                    "<base href=/svg-base/>",
                    "<meta name=robots content=noindex>",
                    "<![CDATA[cdata]]>",
                    "<noindex>f</noindex>",
                    "<br/>",
                    "<g/>",
                    "<p>breakout</p>",
                    "<h2>heading breakout</h2>",
                    "<nav>svg nav</nav>",
                    "<noscript>svg noscript</noscript>",
                    "<g role=navigation>svg role</g>",
                    "<a xlink:role=navigation>xlink role</a>",
                ]
            ),
        ),
        max_size=4,
    ).map("".join)
    return st.one_of(
        children.map(lambda inner: f"<svg>{inner}</svg>"),
        children.map(lambda inner: f"<math><mi>{inner}</mi></math>"),
        children.map(
            lambda inner: (
                f'<math><annotation-xml encoding="text/html">{inner}</annotation-xml></math>'
            )
        ),
        children.map(lambda inner: f"<svg>{inner}"),  # unterminated: runs to the end
    )


ROLE_ATTRS: Strings = st.sampled_from(
    [
        "",
        "",
        "",
        " role=navigation",
        ' ROLE="NaviGation"',
        " role='navigation '",
        " role=main",
        " role",
        ' role="navigation menu"',
        ' xlink:role="navigation"',
        ' role="navigat\u0130on"',
    ]
)


def _element(content: Strings) -> Strings:
    tags = st.sampled_from(
        [
            *("p", "div", "span", "b", "ul", "li", "table", "tr", "td", "section"),
            *("noscript", "nav", "NAV", "header", "h1", "h2", "H3", "h6", "dl", "dt", "DFN"),
        ]
    )
    plain = st.builds(
        lambda tag, attrs, inner, close: f"<{tag}{attrs}>{inner}" + (f"</{tag}>" if close else ""),
        tags,
        ROLE_ATTRS,
        content,
        st.booleans(),
    )
    yandex = st.builds(
        lambda open_tag, inner, close: f"{open_tag}{inner}{close}",
        st.sampled_from(["<noindex>", "<NOINDEX>", "<noindex class=x>", "<p><noindex>"]),
        content,
        st.sampled_from(["</noindex>", "</NoIndex>", "</p></noindex>", ""]),
    )
    # Source order is not tree order: text and links in a table go before it (markers stay
    # in), and misnested formatting elements are cloned.
    table = st.builds(
        lambda first, second: f"<table>{first}<tr><td>{second}</table>", content, content
    )
    misnested = st.builds(
        lambda tags, first, second, third: f"{tags[0]}{first}<p>{second}{tags[1]}{third}</p>",
        st.sampled_from([("<b>", "</b>"), ("<i>", "</i>"), ("<a href=/misnested>", "</a>")]),
        content,
        content,
        content,
    )
    return st.one_of(
        plain,
        _anchor(content),
        yandex,
        _foreign(content),
        table,
        misnested,
        st.just("<br>"),
        st.just("<ul><li>one<li>two</ul>"),
        st.sampled_from(
            [
                "<table><tr><td>cell</table>",
                "<html lang=late>",
                "<body lang=body>",
                "<base href=/in-body/>",
                "<meta name=robots content=nofollow>",
                "<select><option>opt<!--noindex-->ion</select>",
                "<h1>one<h2>two</h2>three</h1>",
                "<h4><div><h5>inner</h5></div>outer</h4>",
                "<h1>&nbsp;</h1><h2>\u00a0<b>\u00a0</b></h2><h3></h3>",
                "<nav><noscript><nav>deep</nav></noscript>menu</nav>",
                "<body role=navigation>",
                "<a href=/outer><p>adopted</a>after",
                "<svg><![CDATA[cdata <a href=/c>]]></svg>",
                "<p>rest<plaintext>as text</body><!--noindex--><a href=/p>",
            ]
        ),
    )


BODY_CONTENT: Strings = st.recursive(
    st.one_of(TEXT, MARKER, MARKER, _anchor(TEXT), _anchor(TEXT), _framed(TEXT), RAW_ELEMENTS),
    lambda content: st.lists(st.one_of(content, _element(content)), max_size=4).map("".join),
    max_leaves=14,
)

META_NAMES = [
    "robots",
    "ROBOTS",
    "crawler",
    "Crawler",
    "description",
    "og:x",
    "",
    " robots ",
]
META_ATTRS: Strings = st.one_of(
    _attr("name", st.sampled_from(META_NAMES)),
    _attr("NAME", st.sampled_from(META_NAMES)),
    _attr("http-equiv", st.sampled_from(["Content-Language", "content-type", "", "X"])),
    _attr("HTTP-EQUIV", st.just("content-language")),
    _attr("content", st.sampled_from(["noindex", "nofollow", "none, nosnippet", "de-AT", ""])),
    _attr("CONTENT", st.sampled_from(["A  page", " \u00e9 ", "noindex"])),
    st.sampled_from([" charset=utf-8", " property=og:x", " itemprop=name"]),
)
META: Strings = st.lists(META_ATTRS, min_size=1, max_size=4).map(
    lambda attrs: f"<meta{''.join(attrs)}>"
)
TITLE: Strings = st.builds(
    lambda open_tag, inner: f"{open_tag}{inner}</title>",
    st.sampled_from(["<title>", "<TITLE>", "<title lang=x>"]),
    st.lists(
        st.one_of(TEXT, st.sampled_from(["<b>not bold</b>", "<!--noindex-->", " \n "])),
        max_size=4,
    ).map("".join),
)
BASE: Strings = st.one_of(
    st.just("<base>"),
    st.just("<base target=_top>"),
    _attr("href", BASE_VALUES).map(lambda attr: f"<base{attr}>"),
)
HEAD_PARTS = st.lists(
    st.one_of(
        TITLE,
        BASE,
        MARKER,
        RAW_ELEMENTS,
        st.sampled_from(
            [
                "\n",
                "<link rel=stylesheet href=/s.css>",
                "<noscript><meta name=robots content=nofollow></noscript>",
                "<noscript><p>head noscript</p></noscript>",
                "<h1>head heading</h1>",
                '<a href="/in-head">h</a>',
                "head text",
            ]
        ),
    ),
    max_size=5,
)
HEAD_CONTENT: Strings = st.tuples(st.lists(META, max_size=3), HEAD_PARTS).flatmap(
    lambda parts: st.permutations(parts[0] + parts[1]).map("".join)
)
# Before a <frameset>: what stays in <head>, and what opens a <body> the frameset then replaces.
FRAMESET_HEAD: Strings = st.lists(
    st.one_of(
        META,
        TITLE,
        BASE,
        MARKER,
        *(_raw(tag) for tag in ("script", "style", "noframes", "template")),
        st.sampled_from(
            [
                "<noembed>x</noembed>",
                "<div><script>var x</script></div>",
                "<a href=/before-frameset></a><style>p{}</style>",
            ]
        ),
    ),
    max_size=5,
).map("".join)
LANG_ATTR: Strings = st.one_of(
    st.just(""),
    _attr("lang", st.sampled_from(["de-AT", "", " en ", "fr"])),
    st.just(' LANG="x" xml:lang="y"'),
)
PRELUDE: Strings = st.lists(
    st.one_of(MARKER, st.sampled_from(["<!DOCTYPE html>", "<!doctype HTML>", "\n", " "])),
    max_size=3,
).map("".join)
AFTER: Strings = st.lists(st.one_of(MARKER, TEXT, st.just("<p>late</p>")), max_size=3).map("".join)


@st.composite
def documents(draw: st.DrawFn) -> str:
    prelude = draw(PRELUDE)
    lang = draw(LANG_ATTR)
    head = draw(HEAD_CONTENT)
    # Markers between top-level pieces too, so sections often hold whole pieces.
    pieces = draw(
        st.lists(st.tuples(st.one_of(st.just(""), MARKER), BODY_CONTENT), min_size=1, max_size=5)
    )
    body = "".join(marker + piece for marker, piece in pieces)
    after_body, after_html = draw(AFTER), draw(AFTER)
    shape = draw(st.sampled_from(["full", "full", "full", "bare", "no-head", "frameset"]))
    if shape == "bare":
        return prelude + head + body + after_html
    if shape == "no-head":
        return f"{prelude}<html{lang}>{body}</body>{after_body}</html>{after_html}"
    if shape == "frameset":
        frames = "".join(draw(st.lists(st.one_of(MARKER, _framed(TEXT)), max_size=4)))
        return (
            f"{prelude}<html{lang}><head>{draw(FRAMESET_HEAD)}</head><frameset>{draw(MARKER)}"
            f"{frames}<noframes>{body}</noframes></frameset>{after_body}</html>{after_html}"
        )
    return (
        f"{prelude}<html{lang}><head>{head}</head><body>{body}</body>{after_body}</html>"
        f"{after_html}"
    )


# --- the walk -------------------------------------------------------------------------------------

FOLLOWS = [(True, False), (True, True), (False, False), (False, True)]


def facts_difference(compiled: PageFacts, python: PageFacts) -> str:
    return "; ".join(
        f"{field}: compiled {getattr(compiled, field)!r}, python {getattr(python, field)!r}"
        for field in PageFacts._fields
        if getattr(compiled, field) != getattr(python, field)
    )


def assert_same_facts(source: str | bytes) -> PageFacts:
    """Both walks on their own parse of `source` (the Python walk cuts its tree)."""
    tree = LexborHTMLParser(source)
    before = tree.html
    facts = compiled_walk(tree)
    assert tree.html == before, "the compiled walk changed the tree"
    python = python_walk(LexborHTMLParser(source))
    assert compiled.same_facts(facts, python), facts_difference(facts, python)
    return python


def assert_same_links(facts: PageFacts, urls: list[str]) -> None:
    for url in urls:
        for follow, follow_rel in FOLLOWS:
            assert compiled_links(facts, url, follow, follow_rel) == python_links(
                facts, url, follow, follow_rel
            ), (url, follow, follow_rel)


@settings(max_examples=int(os.environ.get("PAGEWALK_EXAMPLES", "150")), deadline=None)
@given(documents(), st.sampled_from(PAGE_URLS))
def test_compiled_walk_and_links_are_the_python_ones(source: str, url: str) -> None:
    facts = assert_same_facts(source)
    assert_same_links(facts, [url, PAGE_URLS[0]])


def comparable(page: Page) -> Page:
    """nosnippet text is searched, never shown: its words are what counts."""
    return dataclasses.replace(page, nosnippet_text=" ".join(page.nosnippet_text.split()))


def read_with(
    walk: Callable[[LexborHTMLParser], PageFacts],
    links_of: Callable[[PageFacts, str, bool, bool], Links],
    body: bytes,
    url: str,
    **options: Any,
) -> Page:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(crawler.page.read, "walk", walk)
        patch.setattr(crawler.page.read, "links_of", links_of)
        return read_page(body, url, **options)


@settings(max_examples=int(os.environ.get("PAGEWALK_EXAMPLES", "100")), deadline=None)
@given(
    documents(),
    st.sampled_from(PAGE_URLS),
    st.sampled_from([None, "utf-8", "windows-1252"]),
    st.lists(st.sampled_from(["noindex", "nofollow", "nosnippet", "crawler: none"]), max_size=2),
    st.booleans(),
    st.sampled_from([b"alpha", b"\xff", b"\xc3", b"\xe2\x80", b"\xed\xa0\x80", b"\x00"]),
)
def test_read_page_gives_the_same_page_on_both_walks(
    source: str,
    url: str,
    charset: str | None,
    x_robots_tag: list[str],
    follow_rel: bool,
    junk: bytes,
) -> None:
    # Bytes that are no UTF-8 in place of a word: the parser reads them as U+FFFD.
    body = source.encode("utf-8").replace(b"alpha", junk, 1)
    options: dict[str, Any] = {
        "charset": charset,
        "x_robots_tag": x_robots_tag,
        "rules": PageRules(follow_rel_nofollow=follow_rel),
    }
    compiled_page = read_with(compiled_walk, compiled_links, body, url, **options)
    python = read_with(python_walk, python_links, body, url, **options)
    assert comparable(compiled_page) == comparable(python)


# --- links ----------------------------------------------------------------------------------------

ANCHORS = st.lists(st.tuples(HREFS, RELS, st.booleans()), max_size=12)


@st.composite
def link_facts(draw: st.DrawFn) -> PageFacts:
    anchors = draw(ANCHORS)
    # The same href again, held or with another rel: each link is given once, followed wins.
    again = draw(st.lists(st.sampled_from(anchors), max_size=3)) if anchors else []
    anchors += [(href, draw(RELS), draw(st.booleans())) for href, _, _ in again]
    return PageFacts(
        anchors=anchors,
        metas=[],
        title=None,
        base=draw(st.one_of(st.none(), BASE_VALUES)),
        lang=None,
        text="",
        nosnippet_text="",
        headings="",
        sections=0,
        yandex_elements=False,
    )


@settings(max_examples=int(os.environ.get("PAGEWALK_EXAMPLES", "400")), deadline=None)
@given(link_facts(), st.sampled_from(PAGE_URLS))
def test_compiled_links_are_the_python_ones(facts: PageFacts, url: str) -> None:
    assert_same_links(facts, [url])


# --- which walk is in use ------------------------------------------------------------------------


def test_the_compiled_walk_is_loaded_and_chosen() -> None:
    """CI has a C compiler: a compiled walk that silently failed to build (setup.py makes it
    optional) or to pass its self-check must fail here, not slow the crawl down."""
    assert compiled.compiled_walk is not None
    assert compiled.compiled_links is not None
    if os.environ.get("CRAWLER_PAGE_WALK", "").strip().lower() != "python":
        assert compiled.WALK == "compiled"
        assert compiled.walk is compiled.compiled_walk
        assert compiled.links_of is compiled.compiled_links


class _MovedLayout:
    """The compiled module as it would read a selectolax whose lexbor keeps a field elsewhere."""

    def __init__(self, real: Any, field: str, change: Callable[[Any], Any]) -> None:
        self._real = real
        self._field = field
        self._change = change

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._real, name)
        if name != self._field:
            return value
        return lambda *args: self._change(value(*args))


def _swapped(fields: tuple[int, ...]) -> tuple[int, ...]:
    return (fields[1], fields[0], *fields[2:])


@pytest.mark.parametrize(
    ("field", "change", "named"),
    [
        ("node_fields", _swapped, "links or type"),  # parent and first child read crosswise
        ("node_fields", lambda fields: (*fields[:6], fields[6] + 1), "tag id"),
        ("element_fields", lambda fields: (fields[1], fields[0]), "attribute"),
        ("attr_fields", lambda fields: (fields[0] + 8, *fields[1:]), "attribute"),
        ("text_length", lambda length: length + 1, "text node"),
        ("TAG_IDS", lambda ids: {**ids, "title": ids["title"] + 1}, "<title>"),
    ],
)
def test_a_layout_that_moved_falls_back_to_python(
    field: str, change: Callable[[Any], Any], named: str
) -> None:
    """Whatever selectolax release is installed, the walk is trusted only when the fields it
    reads in place agree with what selectolax reports from Python."""
    from crawler.page import _pagescan

    moved: Any = _MovedLayout(_pagescan, field, change)
    if field == "TAG_IDS":
        moved = dataclasses.replace(_ModuleLike(_pagescan), TAG_IDS=change(_pagescan.TAG_IDS))
    problem = compiled.layout_problem(moved)
    assert problem is not None and named in problem
    choice = compiled.choose(moved, environ={})
    assert choice.walk is python_walk
    assert choice.links_of is python_links
    assert choice.compiled_walk is None
    assert choice.why.startswith("python (the compiled walk does not know this selectolax's")


@dataclasses.dataclass
class _ModuleLike:
    real: Any
    TAG_IDS: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_the_layout_of_the_installed_selectolax_holds() -> None:
    from crawler.page import _pagescan

    assert compiled.layout_problem(_pagescan) is None


def test_another_selectolax_release_whose_layout_holds_keeps_the_compiled_walk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The version string no longer decides: the layout does."""
    from crawler.page import _pagescan

    monkeypatch.setattr(selectolax, "__version__", "1.0.99-other")
    choice = compiled.choose(_pagescan, environ={})
    assert choice.why == "compiled"


def test_without_the_compiled_module_the_walk_is_python() -> None:
    choice = compiled.choose(None, environ={})
    assert choice.walk is python_walk
    assert choice.compiled_walk is None
    assert choice.why == "python (the compiled walk is not built)"


def test_crawler_page_walk_python_chooses_python() -> None:
    from crawler.page import _pagescan

    choice = compiled.choose(_pagescan, environ={"CRAWLER_PAGE_WALK": " Python "})
    assert choice.walk is python_walk
    assert choice.links_of is python_links
    assert choice.compiled_walk is not None
    assert choice.compiled_links is not None
    assert choice.why == "python (CRAWLER_PAGE_WALK=python)"


def test_a_failed_self_check_falls_back_to_python(monkeypatch: pytest.MonkeyPatch) -> None:
    from crawler.page import _pagescan

    monkeypatch.setattr(compiled, "self_check", lambda walk, links_of: False)
    choice = compiled.choose(_pagescan, environ={})
    assert choice.walk is python_walk
    assert choice.links_of is python_links
    assert choice.why == "python (the compiled walk failed its self-check)"


def test_without_the_setting_the_compiled_walk_is_chosen() -> None:
    from crawler.page import _pagescan

    choice = compiled.choose(_pagescan, environ={})
    assert choice.walk is choice.compiled_walk
    assert choice.why == "compiled"


# --- targeted cases -------------------------------------------------------------------------------


def test_the_compiled_walk_leaves_the_tree_as_it_is() -> None:
    tree = LexborHTMLParser(compiled.SELF_CHECK)
    before = tree.html
    facts = compiled_walk(tree)
    assert tree.html == before
    # It read what there is to read, from the tree it left alone...
    assert facts.anchors
    assert facts.metas
    assert facts.title is not None
    assert facts.base == "/base/"
    assert facts.lang == "de-AT"
    assert facts.sections > 0
    assert facts.yandex_elements
    assert "lead" in facts.text.split()
    assert "searchable" in facts.nosnippet_text.split()
    assert facts.headings == "Main head nested end term x"
    assert {"menu", "crumbs", "enable", "JS"} <= set(facts.nosnippet_text.split())
    # ...which the Python walk cuts, and reads the same way.
    tree = LexborHTMLParser(compiled.SELF_CHECK)
    assert compiled.same_facts(facts, python_walk(tree))
    assert tree.html != before
    assert_same_links(facts, PAGE_URLS)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("", id="empty"),
        pytest.param('<!-- robots content="noindex" -->', id="marker-only"),
        pytest.param("<html><head></head><body></body></html>", id="empty-body"),
        pytest.param("<p>a<b>\u00a0</b>b<i>\x0b</i>c&nbsp;d</p>", id="empty-after-strip"),
        pytest.param("<p>a\x00b</p><title>t\x00u</title>", id="nul"),
        pytest.param("<!--\u00a0noindex\u3000-->hidden<!--/noindex-->shown", id="unicode-strip"),
        pytest.param("<svg><style><!--noindex--></style></svg>shown", id="foreign-style-marker"),
        pytest.param("<svg><title>a<style>b</style><!--c-->d</title></svg>", id="svg-title"),
        pytest.param("<head><!--noindex--></head><body>x</body><!--/noindex-->y", id="cut-body"),
        pytest.param(
            '<head><!--googleoff: snippet--></head><body>secret <a href="/x">x</a></body>'
            "<!--googleon: snippet-->rest",
            id="nosnippet-body",
        ),
        pytest.param(
            '<p><!-- robots content="nofollow" -->in <a href="/o">o<!-- /robots --> out</a></p>'
            '<a href="/after">after</a>',
            id="anchor-opened-inside",
        ),
        pytest.param("<!--noindex--><html><body>x</body></html><!--/noindex-->", id="whole-html"),
        pytest.param("<p>a<noindex><div>hidden</div></noindex>b</p>", id="yandex-around-div"),
        pytest.param("<frameset><!--noindex--><noframes>x</noframes></frameset>", id="frameset"),
        pytest.param(
            "<nav>a<!--googleoff: snippet-->b</nav>c<!--googleon: snippet-->d<nav>e</nav>",
            id="nosnippet-from-nav",
        ),
        pytest.param("<!--googleoff: snippet--><nav>a<!--googleon: snippet-->b</nav>c", id="into"),
        pytest.param("<!--googleoff: snippet--><nav>a</nav><!--googleon: snippet-->", id="is-nav"),
        pytest.param(
            "<div><!--googleoff: snippet--><p>q</p><nav>a</nav><!--googleon: snippet--></div>"
            "<noscript>z</noscript>",
            id="nav-in-nosnippet",
        ),
        pytest.param("<nav>a<!--noindex-->b</nav>c<!--/noindex-->d", id="noindex-from-nav"),
        pytest.param("<!--noindex--><nav>a<!--/noindex-->b</nav>c", id="noindex-into-nav"),
        pytest.param("<body role=navigation><h1>x</h1>y</body>", id="body-role"),
        pytest.param(
            "<!--googleoff: snippet--><head><title>t</title></head><body><nav>n</nav>x</body>"
            "<!--googleon: snippet-->",
            id="nosnippet-body-nav",
        ),
        pytest.param("<h1>a<nav>b<h2>c</h2></nav>d</h1><nav><h1>e</h1></nav>", id="heading-nav"),
        pytest.param(
            "<h1>&nbsp;</h1><h2>\u00a0<b>\u00a0</b></h2><h3></h3><h4>k</h4>", id="h-empty"
        ),
        pytest.param("<!--googleoff: snippet--><h1>a<!--googleon: snippet-->b</h1>", id="h-into"),
        pytest.param(
            "<svg><foreignObject><h1>fo</h1></foreignObject><nav>svg</nav></svg>"
            "<math><mi><h2>m</h2></mi></math><h5><div><h6>in</h6></div></h5>",
            id="h-foreign",
        ),
        pytest.param("<div role=NaviGation>r</div><p role=navigation2>s</p>", id="role-case"),
    ],
)
def test_targeted_documents(source: str) -> None:
    facts = assert_same_facts(source)
    assert_same_links(facts, PAGE_URLS)
    body = source.encode("utf-8")
    compiled = read_with(compiled_walk, compiled_links, body, PAGE_URLS[0])
    assert comparable(compiled) == comparable(
        read_with(python_walk, python_links, body, PAGE_URLS[0])
    )


def big_document() -> str:
    """10,000 nested <div>s, a 1 MB text node, 5,000 anchors and 500 sections opened one inside
    the other and never closed: 400 that hold links back or keep text out of snippets, then 100
    that hide what follows."""
    keep_apart = [
        '<!-- robots content="nofollow" -->',
        "<!--googleoff: snippet-->",
        '<!-- robots content="nosnippet" -->',
        "<!--googleoff: anchor-->",
    ]
    hide = ["<!--noindex-->", '<!-- robots content="noindex" -->', "<!--googleoff: index-->"]
    markers = [keep_apart[i % 4] for i in range(400)] + [hide[i % 3] for i in range(100)]
    return (
        "<!DOCTYPE html><html lang=en><head><title>big</title></head><body>"
        + "<div>" * 10_000
        + "deep"
        + "</div>" * 10_000
        + "<p>"
        + "word " * 200_000
        + "</p>"
        + "".join(
            f'<a href="/l/{i}" rel="{"nofollow" if i % 7 == 0 else ""}">{i}</a>'
            for i in range(4_900)
        )
        + "".join(f"<span>{marker}w{at} " for at, marker in enumerate(markers[:400]))
        + "".join(f'<a href="/s/{i}">s{i}</a>' for i in range(100))
        + "".join(f"<span>{marker}h{at} " for at, marker in enumerate(markers[400:]))
        + "</body></html>"
    )


def test_a_big_document_reads_the_same_on_both_walks() -> None:
    source = big_document()
    facts = assert_same_facts(source)
    assert len(facts.anchors) == 5_000
    assert facts.sections == 300 + 100  # a `googleoff: anchor` changes nothing, is not counted
    assert len(facts.text) > 1_000_000
    assert facts.text.startswith("deep word word")
    assert {held for _, _, held in facts.anchors[4_900:]} == {True}
    assert {held for _, _, held in facts.anchors[:4_900]} == {False}
    assert "w399" in facts.nosnippet_text.split()
    assert "h0" not in facts.text.split() + facts.nosnippet_text.split()
    assert_same_links(facts, PAGE_URLS[:2])
    followed, held_back, unusable = compiled_links(facts, PAGE_URLS[1], True, False)
    assert len(followed) == 4_900 - 700
    assert len(held_back) == 800
    assert unusable == 0


# --- disagreements found, and settled -----------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        pytest.param('<svg><a xlink:href="/x">x</a></svg>', id="svg-a"),
        pytest.param('<svg><a xlink:href="/z" href="/y">y</a></svg>', id="svg-a-both"),
        pytest.param('<math><a xlink:href="/m">m</a></math>', id="math-a"),
        pytest.param('<svg><base xlink:href="/b/"></svg>', id="svg-base"),
    ],
)
def test_foreign_xlink_href_is_no_href(source: str) -> None:
    """selectolax's `attributes.get("href")` and the DOM's getAttribute('href') match the whole
    name: `xlink:href` is another attribute."""
    assert_same_facts(source)
    facts = compiled_walk(LexborHTMLParser(source))
    assert all(href != "/x" and href != "/z" and href != "/m" for href, _, _ in facts.anchors)
    assert facts.base is None


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("<svg><!--noindex--><html></html></svg>after", id="noindex"),
        pytest.param("<math><!--noindex--><html/></math>after<!--/noindex-->", id="closed"),
        pytest.param(
            '<svg><!-- robots content="nofollow" --><html></html></svg><a href="/x">x</a>',
            id="nofollow",
        ),
    ],
)
def test_a_section_runs_past_an_empty_foreign_html_element(source: str) -> None:
    """Only the document's own <html> is kept whole by a section; an <html> inside SVG or
    MathML is an element like any other."""
    assert_same_facts(source)
    facts = python_walk(LexborHTMLParser(source))
    assert "after" not in facts.text.split()
    assert all(held for _, _, held in facts.anchors)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("<noembed>x</noembed><frameset>", id="noembed"),
        pytest.param("<div><script>var x</script></div><frameset></frameset>", id="script"),
        pytest.param("<a href=/a></a><style>p{}</style><frameset>", id="style"),
    ],
)
def test_a_body_replaced_by_a_frameset_is_no_body(source: str) -> None:
    """lexbor still names the body a <frameset> replaced; it is out of the document, and none of
    its text is the page's."""
    assert_same_facts(source)
    assert python_walk(LexborHTMLParser(source)).text == ""


def test_a_rel_with_a_lone_surrogate() -> None:
    """No parse gives one, but links built by hand may: rel is read by code points."""
    facts = PageFacts(
        [("/a", "x\ud800", False), ("/b", "\ud800 NoFollow", False)],
        [],
        None,
        None,
        None,
        "",
        "",
        "",
        0,
        False,
    )
    assert compiled_links(facts, PAGE_URLS[0], True, False) == python_links(
        facts, PAGE_URLS[0], True, False
    )
