"""Generated HTML pages for the page-step benchmark (benchmarks/bench_page.py): article and blog
pages of about 12 KB with the robots signals real pages carry, and, per page, what those signals
must do to a page step that honours them (SPEC section 7).

    from pagegen import generate_pages
    pages = generate_pages(3000, seed=0)

Deterministic from the seed (one `random.Random(seed)` drives everything). A page is a doctype,
`<html lang>`, a head (charset, title, description, canonical and feed links, Open Graph, a small
style and script), a nav of ~10 links, an article (headings, paragraphs of varied words with some
non-ASCII words and entities, `<b>`/`<em>`/`<code>`, a list, sometimes a table or a figure,
ordinary and WordPress comments), sometimes a sidebar, a footer of ~5 links and a trailing script;
25-40 links in all, written as `p/12.html`, `/p/3.html`, `../x/4.html`, absolute same-host and
other-host URLs, with fragments, queries, `mailto:`, `javascript:`; about 1 link in 5 carries
rel="nofollow", "ugc" or "sponsored".

The robots signals, in these proportions:

- ~1 page in 4 holds in-page exclusion sections (1-3): Ultraseek `<!-- robots content="noindex"
  -->...<!-- /robots -->` (nofollow, none, and the no-op index/follow/all), Google Search Appliance
  `<!--googleoff: index-->...<!--googleon: index-->` (anchor, snippet, all), Yandex
  `<noindex>...</noindex>` and `<!--noindex-->...<!--/noindex-->`; around a sidebar, a paragraph
  with a link, or a phrase inside a paragraph; a quarter of them nested in a section of another
  family. ~1 page in 50 has a section left open (it runs to the end of the document).
- ~1 page in 10 has a META robots tag that matters: noindex, nofollow, none, in mixed case, as a
  second META tag, or as `<meta name="crawler">` (our token). More pages carry ones that do not
  (`index, follow, max-image-preview:large`, `<meta name="googlebot" content="noindex">`).
- ~1 page in 10 comes with X-Robots-Tag header values, e.g. ["noindex"], ["crawler: nofollow"],
  ["otherbot: noindex", "nofollow"], some of them for other robots only.

What the generator knows goes into `GenPage`: the page-level `index`/`follow` and `Expect`s, each a
marker word or a link with what must become of it:

    visible         the word is in the page's text (the page is indexed)
    hidden          the word is not in the text: inside a section that hides text
    snippet         the word is indexed, kept out of snippets: in `text` or `nosnippet_text`
    non-text        the word is in a comment or a script: never text
    nofollow-link   the link is only inside a nofollow section: not in `links`
    rel-nofollow    the link is only on an <a rel="nofollow|ugc|sponsored">: not in `links`
                    unless rel="nofollow" links are followed
    followed-link   a plain link outside any section that concerns links: in `links` (the
                    page is followed)

Things the generator cannot be sure of get no Expect: links inside googleoff and Yandex sections
(engines differ on whether those sections concern links), anchor text, the title.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin

__all__ = [
    "ARTICLE",
    "DENSE",
    "SHAPES",
    "Expect",
    "GenPage",
    "Shape",
    "generate_pages",
    "page_stats",
]

TOKEN = "crawler"

# One string split: a paragraph of words reads better than 300 quoted ones.
WORDS = (  # noqa: SIM905
    "the of and to in is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their has would when if so no what "
    "can more out other into up could time only new some these two may first then do any like my "
    "now over such our man me even most made after also did many before must through back years "
    "where much your way well down should because each just those people how too little state "
    "good very make world still own see men work long get here between both life being under "
    "never day same another know while last might great old year off come since against go came "
    "right used take three himself few house use during without again place around however home "
    "small found thought went say part once general high upon school every does got united left "
    "number course war until always away something fact though water less public put think "
    "almost hand enough far took head yet government system better set told nothing night end "
    "why called didn eyes find going look asked later knew point next program city business give "
    "group toward young days let room president side social given present several order "
    "national possible rather second face per among form important often things looked early "
    "white case john become large big need four within felt along children saw best church ever "
    "least power development light thing seemed family interest want members mind country area "
    "others done turned although open god service problem certain kind different thus began door "
    "help sense means whole matter perhaps itself york times law human line above name example "
    "action company hands local show whether five history gave today either act feet across "
    "taken past quite anything seen having death week experience body word half really field "
    "crawler index server request cache latency protocol parser sitemap archive release"
).split()
FOREIGN = (  # noqa: SIM905
    "café naïve façade résumé Zürich straße Köln piñata jalapeño señor crème brûlée déjà vu "
    "smörgåsbord Ærø fjörður Kraków Łódź Ελλάδα Москва привет 東京 日本語 北京 서울 مرحبا שלום "
    "coöperate über Ångström São Paulo"
).split()
ENTITIES = ("&amp;", "&mdash;", "&ndash;", "&hellip;", "&copy;", "&#8217;", "&euro;", "&nbsp;")
LANGS = ("en", "en", "en", "en-US", "en-GB", "de", "fr", "es", "nl", "it")
CATEGORIES = ("blog", "news", "articles", "posts", "tech", "life", "reviews", "guides")
SITE_WORDS = ("daily", "notes", "journal", "press", "weekly", "review", "digest", "chronicle")
OTHER_HOSTS = (
    "en.wikipedia.org",
    "github.com",
    "www.youtube.com",
    "twitter.com",
    "news.ycombinator.com",
    "docs.python.org",
    "www.nytimes.com",
    "medium.com",
    "stackoverflow.com",
    "www.bbc.co.uk",
    "shop.example-partner.net",
    "ads.tracker-network.io",
)
REL_NOFOLLOW = (
    "nofollow",
    "ugc",
    "sponsored",
    "nofollow noopener",
    "ugc nofollow",
    "noopener noreferrer nofollow",
)
REL_OTHER = ("noopener", "noopener noreferrer", "author", "tag", "external")

# The page-level META robots tags: (tags, index, follow). The first entries matter for us; the
# last ones name another robot or say nothing restrictive.
META_STRICT: tuple[tuple[str, bool, bool], ...] = (
    ('<meta name="robots" content="noindex">', False, True),
    ('<meta name="robots" content="noindex, follow">', False, True),
    ('<meta name="robots" content="nofollow">', True, False),
    ('<meta name="robots" content="none">', False, False),
    ('<META NAME="ROBOTS" CONTENT="NOINDEX,NOFOLLOW">', False, False),
    ('<meta name="Robots" content="NoIndex">', False, True),
    (
        '<meta name="robots" content="index, follow">\n<meta name="robots" content="nofollow">',
        True,
        False,
    ),
    ('<meta name="robots" content="all">\n<meta name="crawler" content="noindex">', False, True),
    (f'<meta name="{TOKEN}" content="noindex">', False, True),
    (f'<meta name="{TOKEN.upper()}" content="nofollow">', True, False),
    (f'<meta name="{TOKEN}" content="none">', False, False),
)
META_HARMLESS = (
    '<meta name="robots" content="index, follow, max-image-preview:large, max-snippet:-1">',
    '<meta name="robots" content="index,follow">',
    '<meta name="googlebot" content="noindex">',
    '<meta name="bingbot" content="nofollow">\n<meta name="robots" content="all">',
    '<meta name="robots" content="noarchive">',
)
# X-Robots-Tag header values as a fetch would hand them over: (values, index, follow).
HEADERS: tuple[tuple[tuple[str, ...], bool, bool], ...] = (
    (("noindex",), False, True),
    (("nofollow",), True, False),
    (("noindex, nofollow",), False, False),
    (("none",), False, False),
    ((f"{TOKEN}: nofollow",), True, False),
    ((f"{TOKEN}: noindex",), False, True),
    (("otherbot: noindex", "nofollow"), True, False),
    (("googlebot: noindex",), True, True),
    (("noarchive",), True, True),
    (("googlebot: none", f"{TOKEN}: noindex"), False, True),
    (("noarchive, noimageindex",), True, True),
)

# What a section does: to its text ("keep", "snippet", "hide") and its links ("follow",
# "unknown", "nofollow"). Combined with an enclosing section's, the stricter wins.
TEXT_ORDER = {"keep": 0, "snippet": 1, "hide": 2}
LINK_ORDER = {"follow": 0, "unknown": 1, "nofollow": 2}
Context = tuple[str, str]
PLAIN: Context = ("keep", "follow")


@dataclass(frozen=True, slots=True)
class Form:
    family: str
    opener: str
    closer: str
    context: Context
    block_only: bool = False


def _forms() -> list[tuple[Form, int]]:
    """The section forms and their weights."""
    forms: list[tuple[Form, int]] = []
    ultraseek = {
        "noindex": (("hide", "follow"), 15),
        "nofollow": (("keep", "nofollow"), 12),
        "none": (("hide", "nofollow"), 12),
        "index": (PLAIN, 2),
        "follow": (PLAIN, 2),
        "all": (PLAIN, 2),
    }
    for value, (context, weight) in ultraseek.items():
        forms.append(
            (
                Form(
                    "ultraseek", f'<!-- robots content="{value}" -->', "<!-- /robots -->", context
                ),
                weight * 4,
            )
        )
        forms.append(
            (
                Form("ultraseek", f'<!--robots content="{value}"-->', "<!--/robots-->", context),
                weight,
            )
        )
    gsa = {
        "index": (("hide", "follow"), 14),
        "anchor": (("keep", "unknown"), 5),
        "snippet": (("snippet", "follow"), 5),
        "all": (("hide", "unknown"), 6),
    }
    for value, (context, weight) in gsa.items():
        forms.append(
            (
                Form("gsa", f"<!--googleoff: {value}-->", f"<!--googleon: {value}-->", context),
                weight * 5,
            )
        )
    forms.append((Form("yandex", "<noindex>", "</noindex>", ("hide", "unknown")), 12 * 5))
    forms.append((Form("yandex", "<!--noindex-->", "<!--/noindex-->", ("hide", "unknown")), 13 * 5))
    return forms


FORMS = _forms()


def combine(outer: Context, inner: Context) -> Context:
    text = max(outer[0], inner[0], key=TEXT_ORDER.__getitem__)
    links = max(outer[1], inner[1], key=LINK_ORDER.__getitem__)
    return text, links


@dataclass(frozen=True, slots=True)
class Shape:
    """How much markup a page carries around its ~12 KB of text: the same robots signals in
    either shape, on lighter or heavier pages."""

    name: str
    links: tuple[int, int]
    """The page's links in all (nav, article, footer; sections and sidebars add theirs)."""
    nav_links: tuple[int, int]
    footer_links: tuple[int, int]
    paragraphs: tuple[int, int]
    paragraph_words: tuple[int, int]
    markup: float
    """Scales the share of words set in <b>, <em>, <code> or next to an entity (1: about 8%)."""
    article_links: int
    """The fewest inline links an article gets, whatever the nav and sections took."""


# The reference pages: ~12 KB, ~13 links, long paragraphs with little inline markup. A
# bare selectolax parse with link and text extraction does about 15,000 of them a second on the
# 2-core machine, as the issue says; Scrapy about 1,000-1,400.
ARTICLE = Shape("article", (8, 13), (3, 5), (1, 3), (8, 11), (110, 180), 0.3, 2)
# Heavier pages, three times the links and twice the elements: a WordPress theme's nav, footer
# widgets and busy paragraphs. A bare parse does about half as many of these.
DENSE = Shape("dense", (25, 40), (7, 11), (4, 6), (10, 17), (45, 105), 1.0, 4)
SHAPES = {shape.name: shape for shape in (ARTICLE, DENSE)}


@dataclass(frozen=True, slots=True)
class Expect:
    kind: str
    """visible, hidden, snippet, non-text, nofollow-link, rel-nofollow, followed-link"""
    value: str
    """The marker word, or the link as an absolute, normal URL."""
    snippet: str
    """The HTML that put it there (the outermost section, or the block)."""


@dataclass(frozen=True, slots=True)
class GenPage:
    url: str
    body: bytes
    headers: tuple[str, ...]
    """X-Robots-Tag values, one per header line."""
    index: bool
    follow: bool
    signals: str
    """The META tags and headers that decide index and follow, for reports."""
    sections: int
    links: int
    rel_nofollow: int
    meta: bool
    """A META robots tag that restricts us."""
    expects: tuple[Expect, ...]


@dataclass
class _Writer:
    """Writes one page; collects its Expects."""

    rng: random.Random
    number: int
    host: str
    url: str
    base: str
    shape: Shape
    links: int = 0
    rel_nofollow: int = 0
    sections: int = 0
    markers: int = 0
    expects: list[Expect] = field(default_factory=list)
    pending: list[tuple[str, str]] = field(default_factory=list)
    depth: int = 0

    # -- words and links ---------------------------------------------------------------------

    def word(self) -> str:
        rng = self.rng
        if rng.random() < 0.04:
            return rng.choice(FOREIGN)
        return rng.choice(WORDS)

    def phrase(self, low: int, high: int) -> str:
        return " ".join(self.word() for _ in range(self.rng.randint(low, high)))

    def title(self, low: int = 3, high: int = 8) -> str:
        return self.phrase(low, high).capitalize()

    def marker(self, context: Context) -> str:
        kind = {"keep": "visible", "snippet": "snippet", "hide": "hidden"}[context[0]]
        return self._marker(kind)

    def _marker(self, kind: str) -> str:
        prefix = {"visible": "vis", "snippet": "snp", "hidden": "hid", "non-text": "nxt"}[kind]
        word = f"{prefix}{self.number:05d}x{self.markers:02d}"
        self.markers += 1
        self.pending.append((kind, word))
        return word

    def href(self) -> str:
        rng = self.rng
        n = rng.randint(1, 400)
        kind = rng.choices(
            (
                "rel",
                "root",
                "up",
                "post",
                "tag",
                "other",
                "fragment",
                "anchor",
                "query",
                "mailto",
                "js",
                "proto",
                "utm",
            ),
            (14, 16, 6, 10, 8, 14, 5, 2, 4, 2, 1, 2, 2),
        )[0]
        if kind == "rel":
            return f"p/{n}.html"
        if kind == "root":
            return f"/p/{n}.html"
        if kind == "up":
            return f"../x/{n}.html"
        if kind == "post":
            return f"/{rng.choice(CATEGORIES)}/20{rng.randint(10, 24)}/{self.slug()}/"
        if kind == "tag":
            return f"https://{self.host}/tag/{rng.choice(WORDS)}/"
        if kind == "other":
            return f"https://{rng.choice(OTHER_HOSTS)}/{rng.choice(WORDS)}/{n}"
        if kind == "fragment":
            return f"/p/{n}.html#{rng.choice(('comments', 'section-2', 'top', 'respond'))}"
        if kind == "anchor":
            return f"#{rng.choice(('top', 'content', 'footnote-1'))}"
        if kind == "query":
            return f"/search?q={rng.choice(WORDS)}&amp;page={n % 9 + 1}"
        if kind == "mailto":
            return f"mailto:editor@{self.host}"
        if kind == "js":
            return "javascript:void(0)"
        if kind == "proto":
            return f"//cdn.{rng.choice(OTHER_HOSTS)}/files/{n}.pdf"
        return f"https://{self.host}/p/{n}.html?utm_source=rss&amp;utm_medium=feed"

    def slug(self) -> str:
        return "-".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(2, 5)))

    def anchor(self, href: str, text: str, rel: str | None = None) -> str:
        rng = self.rng
        self.links += 1
        attributes = [f'href="{href}"']
        if rel is None and rng.random() < 0.27:
            rel = rng.choice(REL_NOFOLLOW)
        elif rel is None and rng.random() < 0.05:
            rel = rng.choice(REL_OTHER)
        if rel:
            attributes.append(f'rel="{rel}"')
            if "nofollow" in rel or "ugc" in rel or "sponsored" in rel:
                self.rel_nofollow += 1
        if rng.random() < 0.1:
            attributes.append('target="_blank"')
        if rng.random() < 0.15:
            attributes.insert(0, f'class="{rng.choice(("link", "ext", "more-link", "inline"))}"')
        if rng.random() < 0.05:
            attributes.append(f'title="{self.phrase(2, 4)}"')
        return f"<a {' '.join(attributes)}>{text}</a>"

    def link(self) -> str:
        return self.anchor(self.href(), self.phrase(1, 4))

    def marker_link(self, context: Context) -> str:
        """A link found nowhere else on the page, and the Expect the context gives it."""
        rng = self.rng
        path = f"/m/{self.number:05d}/{self.markers:02d}.html"
        self.markers += 1
        href = rng.choice((path, path, f"https://{self.host}{path}", f"{path}#c{self.markers}"))
        absolute = urldefrag(urljoin(self.base, href.replace("&amp;", "&")))[0]
        rel = None
        if context[1] == "nofollow":
            self.pending.append(("nofollow-link", absolute))
            rel = ""
        elif context[1] == "follow" and rng.random() < 0.3:
            rel = rng.choice(REL_NOFOLLOW[:4])
            self.pending.append(("rel-nofollow", absolute))
        elif context[1] == "follow":
            self.pending.append(("followed-link", absolute))
            rel = ""
        return self.anchor(href, self.phrase(1, 3), rel)

    def flush(self, snippet: str) -> None:
        """Give the Expects collected since the last flush their snippet, unless inside a
        section (its whole HTML is the better snippet)."""
        if self.depth == 0:
            self.expects.extend(Expect(kind, value, snippet) for kind, value in self.pending)
            self.pending.clear()

    # -- blocks ------------------------------------------------------------------------------

    def sentence_words(self, count: int, links: int, context: Context, markers: int) -> list[str]:
        rng = self.rng
        words = [self.word() for _ in range(count)]
        k = self.shape.markup
        for i, w in enumerate(words):
            roll = rng.random()
            if roll < 0.025 * k:
                words[i] = f"<b>{w}</b>"
            elif roll < 0.045 * k:
                words[i] = f"<em>{w}</em>"
            elif roll < 0.055 * k:
                words[i] = f"<code>{w}()</code>"
            elif roll < 0.075 * k:
                words[i] = rng.choice(ENTITIES) + " " + w
            elif roll < 0.085 * k:
                words[i] = f"&quot;{w}&quot;"
        for _ in range(links):
            words.insert(rng.randint(0, len(words)), self.link())
        # Sentences: a capital after each full stop.
        out, start = [], True
        for i, w in enumerate(words):
            out.append(w.capitalize() if start and w[:1].isalpha() else w)
            start = False
            if i < len(words) - 1 and rng.random() < 0.08:
                out[-1] += rng.choice((".", ".", ".", ",", ";", "?"))
                start = out[-1].endswith((".", "?"))
        out[-1] += "."
        # Markers last, so that no capital or entity touches them.
        for _ in range(markers):
            out.insert(rng.randint(0, len(out)), self.marker(context))
        return out

    def paragraph(self, links: int, context: Context = PLAIN, markers: int = 0) -> str:
        words = self.sentence_words(
            self.rng.randint(*self.shape.paragraph_words), links, context, markers
        )
        html = "<p>" + " ".join(words) + "</p>"
        self.flush(html)
        return html

    def inline_section_paragraph(self, links: int) -> str:
        """A paragraph with a section around a phrase inside it."""
        form = self.form(inline=True)
        before = self.sentence_words(self.rng.randint(15, 40), links, PLAIN, 1)
        self.depth += 1
        inner = self.sentence_words(self.rng.randint(4, 12), 0, form.context, 1)
        if form.context[1] != "unknown":
            inner.insert(self.rng.randint(0, len(inner)), self.marker_link(form.context))
        self.depth -= 1
        after = self.sentence_words(self.rng.randint(10, 30), 0, PLAIN, 0)
        html = (
            "<p>"
            + " ".join(before)
            + " "
            + form.opener
            + " ".join(inner)
            + form.closer
            + " "
            + " ".join(after)
            + "</p>"
        )
        self.sections += 1
        self.flush(html)
        return html

    def form(self, inline: bool = False, exclude: str = "") -> Form:
        choices = [(f, w) for f, w in FORMS if f.family != exclude]
        return self.rng.choices([f for f, _ in choices], [w for _, w in choices])[0]

    def section(self, nested: bool) -> str:
        """A block-level section around a sidebar or a paragraph with a link; `nested` puts a
        section of another family inside."""
        rng = self.rng
        outer = self.form()
        self.depth += 1
        parts = []
        if rng.random() < 0.5:
            parts.append(self.sidebar(outer.context))
        else:
            parts.append(
                self.paragraph(rng.randint(0, 2), outer.context, 1).replace(
                    "</p>", " " + self.marker_link(outer.context) + "</p>"
                )
            )
        if nested:
            inner = self.form(exclude=outer.family)
            context = combine(outer.context, inner.context)
            body = self.paragraph(rng.randint(0, 1), context, 1)
            body = body.replace("</p>", " " + self.marker_link(context) + "</p>")
            parts.append(inner.opener + "\n" + body + "\n" + inner.closer)
            self.sections += 1
            if rng.random() < 0.5:
                parts.append(self.paragraph(0, outer.context, 1))
        self.depth -= 1
        html = outer.opener + "\n" + "\n".join(parts) + "\n" + outer.closer
        self.sections += 1
        self.flush(html)
        return html

    def sidebar(self, context: Context = PLAIN) -> str:
        rng = self.rng
        items = [f"<li>{self.link()}</li>" for _ in range(rng.randint(2, 4))]
        items.insert(rng.randint(0, len(items)), f"<li>{self.marker_link(context)}</li>")
        html = (
            f'<aside class="sidebar widget">\n<h3>{self.title(2, 3)}</h3>\n<ul>\n'
            + "\n".join(items)
            + f"\n</ul>\n<p>{' '.join(self.sentence_words(rng.randint(8, 20), 0, context, 1))}</p>"
            "\n</aside>"
        )
        self.flush(html)
        return html

    def listing(self, links: int) -> str:
        rng = self.rng
        tag = rng.choice(("ul", "ol"))
        items = [
            " ".join(self.sentence_words(rng.randint(4, 14), 0, PLAIN, 0))
            for _ in range(rng.randint(3, 6))
        ]
        for _ in range(links):
            i = rng.randrange(len(items))
            items[i] += " " + self.link()
        if rng.random() < 0.5:
            items[rng.randrange(len(items))] += " " + self.marker(PLAIN)
        html = f"<{tag}>\n" + "\n".join(f"<li>{item}</li>" for item in items) + f"\n</{tag}>"
        self.flush(html)
        return html

    def table(self) -> str:
        rng = self.rng
        columns = rng.randint(2, 4)
        head = "".join(f"<th>{self.title(1, 2)}</th>" for _ in range(columns))
        rows = []
        for _ in range(rng.randint(3, 6)):
            cells = [self.word() if c == 0 else f"{rng.randint(1, 9999):,}" for c in range(columns)]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        if rng.random() < 0.5:
            rows.append(f'<tr><td colspan="{columns}">{self.marker(PLAIN)}</td></tr>')
        html = (
            f'<table class="data">\n<thead><tr>{head}</tr></thead>\n<tbody>\n'
            + "\n".join(rows)
            + "\n</tbody>\n</table>"
        )
        self.flush(html)
        return html

    def figure(self) -> str:
        n = self.rng.randint(1, 9000)
        return (
            f'<figure><img src="/wp-content/uploads/{n}.jpg" alt="{self.phrase(2, 5)}" '
            f'width="800" height="450" loading="lazy"><figcaption>{self.title(3, 8)}'
            "</figcaption></figure>"
        )

    def code_sample(self) -> str:
        """Escaped robots markup shown as code: text to a parser, not a signal."""
        sample = self.rng.choice(
            (
                "&lt;meta name=&quot;robots&quot; content=&quot;noindex&quot;&gt;",
                "&lt;!-- robots content=&quot;none&quot; --&gt;",
                "&lt;!--googleoff: index--&gt; ... &lt;!--googleon: index--&gt;",
                "&lt;noindex&gt;...&lt;/noindex&gt;",
            )
        )
        word = self.marker(PLAIN)
        html = f"<pre><code>{sample}\n# {word}</code></pre>"
        self.flush(html)
        return html


# -- the page ----------------------------------------------------------------------------------


def _head(w: _Writer, title: str, site: str, meta: str, lang: str) -> str:
    rng = w.rng
    charset = rng.choice(
        (
            '<meta charset="utf-8">',
            '<meta charset="UTF-8">',
            '<meta http-equiv="Content-Type" content="text/html; charset=utf-8">',
        )
    )
    extra = []
    if rng.random() < 0.3:
        extra.append('<!--[if lt IE 9]><script src="/js/html5shiv.js"></script><![endif]-->')
    if rng.random() < 0.5:
        extra.append(
            f'<meta property="og:image" content="https://{w.host}/img/{rng.randint(1, 999)}.jpg">'
        )
    if w.base != w.url:
        extra.append(f'<base href="{w.base}">')
    return f"""<head>
{charset}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} | {site}</title>
<meta name="description" content="{w.phrase(12, 25)}">
{meta}
<link rel="canonical" href="{w.url}">
<link rel="stylesheet" href="/assets/site.css?v={rng.randint(1, 40)}">
<link rel="icon" href="/favicon.ico">
<link rel="alternate" type="application/rss+xml" title="{site} feed" href="/feed.xml">
<meta property="og:title" content="{title}">
<meta property="og:type" content="article">
<meta property="og:locale" content="{lang.replace("-", "_")}">
{chr(10).join(extra)}
<style>
body{{font:16px/1.5 Georgia,serif;margin:0;color:#222}}.site-header{{display:flex;padding:1em}}
article{{max-width:42em;margin:auto}}.sidebar{{float:right;width:18em}}a{{color:#0645ad}}
pre{{overflow:auto;background:#f6f6f6}}table.data td{{padding:.2em .6em}}
</style>
<script>
window.dataLayer=window.dataLayer||[];function gtag(){{dataLayer.push(arguments)}}
gtag('js',new Date());gtag('config','G-{rng.randint(100000, 999999)}');
</script>
</head>"""


def _nav(w: _Writer, site: str) -> str:
    rng = w.rng
    items = ['<li><a href="/">Home</a></li>']
    w.links += 2  # the logo and Home
    for _ in range(rng.randint(*w.shape.nav_links)):
        href = rng.choice(
            (
                f"/{rng.choice(CATEGORIES)}/",
                f"/{rng.choice(WORDS)}/",
                f"https://{w.host}/about/",
                "/contact.html",
            )
        )
        items.append(f'<li><a href="{href}">{w.title(1, 2)}</a></li>')
        w.links += 1
    return (
        f'<header class="site-header">\n<a class="logo" href="/">{site}</a>\n'
        '<nav class="main-nav" aria-label="Main">\n<ul>\n'
        + "\n".join(items)
        + "\n</ul>\n</nav>\n</header>"
    )


def _footer(w: _Writer, site: str, unterminated: Form | None) -> str:
    rng = w.rng
    links = [w.link() for _ in range(rng.randint(*w.shape.footer_links))]
    tail = ""
    if unterminated is not None:
        # Left open: the section runs to the end of the document.
        w.depth += 1
        words = " ".join(w.sentence_words(12, 0, unterminated.context, 1))
        tail = f'{unterminated.opener}\n<p class="legal">{words}</p>'
        w.depth -= 1
        w.sections += 1
    html = (
        '<footer class="site-footer">\n<!-- footer widgets -->\n<ul class="footer-links">\n'
        + "\n".join(f"<li>{link}</li>" for link in links)
        + f"\n</ul>\n<p>&copy; 20{rng.randint(10, 24)} {site}. All rights reserved.</p>"
        + f"\n{tail}\n</footer>"
    )
    w.flush(html)
    return html


def _script(w: _Writer) -> str:
    word = w._marker("non-text")
    html = (
        "<script>\n(function(){var s=document.createElement('script');s.async=true;"
        f"s.src='https://stats.example-analytics.com/t.js?id={word}';"
        "document.body.appendChild(s);})();\n</script>"
    )
    w.flush(html)
    return html


def _article(w: _Writer, title: str, section_count: int) -> str:
    rng = w.rng
    shape = w.shape
    paragraphs = rng.randint(*shape.paragraphs)
    blocks: list[str] = []
    author = w.anchor(f"/author/{rng.choice(WORDS)}/", w.title(2, 2))
    blocks.append(f'<h1 class="entry-title">{title}</h1>')
    blocks.append(
        f'<p class="byline">By {author} &middot; <time datetime="20{rng.randint(10, 24)}-'
        f'0{rng.randint(1, 9)}-1{rng.randint(0, 9)}">{rng.randint(1, 28)} '
        f"{rng.choice(('March', 'April', 'June', 'Mai', 'août'))}</time></p>"
    )
    wordpress = rng.random() < 0.3
    # Inline links left for the article: the page's links minus the nav, the footer and the
    # sections' (counted as they are written).
    target = rng.randint(*shape.links)
    footer = sum(shape.footer_links) // 2
    budget = max(shape.article_links, target - w.links - footer - 4 * section_count)
    spread = [0] * paragraphs
    for _ in range(budget):
        spread[rng.randrange(paragraphs)] += 1
    visible = rng.sample(range(paragraphs), min(3, paragraphs))
    section_at = sorted(rng.sample(range(1, paragraphs + 1), section_count))
    kinds = ["inline" if rng.random() < 0.3 else "block" for _ in section_at]
    extras = {
        "list": rng.randrange(2, paragraphs),
        "table": rng.randrange(2, paragraphs) if rng.random() < 0.3 else -1,
        "figure": rng.randrange(1, paragraphs) if rng.random() < 0.4 else -1,
        "code": rng.randrange(1, paragraphs) if rng.random() < 0.1 else -1,
        "ad": rng.randrange(1, paragraphs) if rng.random() < 0.5 else -1,
    }
    for i in range(paragraphs):
        if i and i % 3 == 0:
            blocks.append(f'<h2 id="s{i}">{w.title(2, 6)}</h2>')
        elif i and rng.random() < 0.1:
            blocks.append(f"<h3>{w.title(2, 5)}</h3>")
        for at, kind in zip(section_at, kinds, strict=True):
            if at == i + 1 and kind == "inline":
                blocks.append(w.inline_section_paragraph(rng.randint(0, 1)))
            elif at == i + 1:
                blocks.append(w.section(nested=rng.random() < 0.25))
        paragraph = w.paragraph(spread[i], PLAIN, 1 if i in visible else 0)
        if i == visible[0]:
            paragraph = paragraph.replace("</p>", " " + w.marker_link(PLAIN) + "</p>")
            w.flush(paragraph)
        if wordpress:
            paragraph = f"<!-- wp:paragraph -->\n{paragraph}\n<!-- /wp:paragraph -->"
        blocks.append(paragraph)
        if extras["list"] == i:
            blocks.append(w.listing(rng.randint(0, 2)))
        if extras["table"] == i:
            blocks.append(w.table())
        if extras["figure"] == i:
            blocks.append(w.figure())
        if extras["code"] == i:
            blocks.append(w.code_sample())
        if extras["ad"] == i:
            word = w._marker("non-text")
            comment = f"<!-- ad slot {word} -->"
            w.flush(comment)
            blocks.append(f'{comment}\n<div class="ad" data-slot="{rng.randint(1, 9)}"></div>')
    return '<article class="post hentry">\n' + "\n".join(blocks) + "\n</article>"


def _page(rng: random.Random, number: int, shape: Shape) -> GenPage:
    site_n = rng.randrange(60)
    host = (
        f"www.{rng.choice(SITE_WORDS)}{site_n}.example.com"
        if site_n % 3
        else f"blog{site_n}.example.org"
    )
    scheme = "https" if rng.random() < 0.9 else "http"
    if rng.random() < 0.7:
        month = f"20{rng.randint(10, 24)}/{rng.randint(1, 12):02d}"
        path = f"/{rng.choice(CATEGORIES)}/{month}/post-{number}.html"
    else:
        path = f"/{rng.choice(CATEGORIES)}/post-{number}/"
    url = f"{scheme}://{host}{path}"
    base = f"{scheme}://{host}/{rng.choice(CATEGORIES)}/" if rng.random() < 0.025 else url
    w = _Writer(rng, number, host, url, base, shape)

    index = follow = True
    signals: list[str] = []
    meta = ""
    strict_meta = False
    roll = rng.random()
    if roll < 0.1:
        meta, meta_index, meta_follow = rng.choice(META_STRICT)
        index, follow, strict_meta = meta_index, meta_follow, True
        signals.append(meta)
    elif roll < 0.3:
        meta = rng.choice(META_HARMLESS)
    headers: tuple[str, ...] = ()
    if rng.random() < 0.1:
        headers, header_index, header_follow = rng.choice(HEADERS)
        index, follow = index and header_index, follow and header_follow
        signals.append(f"X-Robots-Tag: {list(headers)}")

    site = f"The {rng.choice(SITE_WORDS).capitalize()} {site_n}"
    title = w.title(4, 10)
    lang = rng.choice(LANGS)
    section_count = rng.choice((1, 1, 1, 2, 2, 3)) if rng.random() < 0.25 else 0
    unterminated = w.form() if rng.random() < 0.02 else None

    head = _head(w, title, site, meta, lang)
    nav = _nav(w, site)
    article = _article(w, title, section_count)
    aside = w.sidebar() if rng.random() < 0.3 else ""
    footer = _footer(w, site, unterminated)
    script = _script(w)
    html = (
        f'<!DOCTYPE html>\n<html lang="{lang}">\n{head}\n<body class="single post-{number}">\n'
        f'{nav}\n<main id="content">\n{article}\n{aside}\n</main>\n'
        f"{footer}\n{script}\n</body>\n</html>\n"
    )
    return GenPage(
        url=url,
        body=html.encode("utf-8"),
        headers=headers,
        index=index,
        follow=follow,
        signals="; ".join(signals),
        sections=w.sections,
        links=w.links,
        rel_nofollow=w.rel_nofollow,
        meta=strict_meta,
        expects=tuple(w.expects),
    )


def generate_pages(count: int, seed: int = 0, shape: Shape = ARTICLE) -> list[GenPage]:
    rng = random.Random(seed)
    return [_page(rng, number, shape) for number in range(count)]


def page_stats(pages: list[GenPage]) -> dict[str, float]:
    n = len(pages) or 1
    links = sum(p.links for p in pages)
    return {
        "pages": len(pages),
        "mean_bytes": sum(len(p.body) for p in pages) / n,
        "min_bytes": min((len(p.body) for p in pages), default=0),
        "max_bytes": max((len(p.body) for p in pages), default=0),
        "mean_links": links / n,
        "rel_nofollow_share": sum(p.rel_nofollow for p in pages) / (links or 1),
        "with_sections": sum(p.sections > 0 for p in pages) / n,
        "mean_sections_when_any": sum(p.sections for p in pages)
        / (sum(p.sections > 0 for p in pages) or 1),
        "with_meta": sum(p.meta for p in pages) / n,
        "with_headers": sum(bool(p.headers) for p in pages) / n,
        "noindex": sum(not p.index for p in pages) / n,
        "nofollow": sum(not p.follow for p in pages) / n,
        "expects": sum(len(p.expects) for p in pages),
    }
