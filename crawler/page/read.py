"""What a fetched HTML page lets the crawl do, and what it says. Pure: bytes and headers in, a
`Page` out, with one selectolax parse.

The rules (SPEC section 7), most restrictive reading first:
- META robots: `<meta name="robots">` and `<meta name="TOKEN">` for our own product token; names
  and values case-insensitive, words separated by commas (or spaces). `noindex`, `nofollow`,
  `none` (both), `nosnippet`; `index`, `follow` and `all` are the defaults and change nothing.
  Several tags add up.
- X-Robots-Tag headers: the same words, and the `AGENT: words` form, which applies only when AGENT
  is our token; an agent prefix holds for the words after it in the same header. Several headers
  add up.
- In-page sections (crawler.page.exclusion): Ultraseek `<!-- robots content="..." -->` ...
  `<!-- /robots -->`, Google Search Appliance `googleoff`/`googleon` and Yandex `<noindex>` in
  both forms. They act on their own stretch of the document only: its text is not indexed
  (noindex), its links are not followed (nofollow, also an `<a>` opened inside), its text is kept
  out of snippets (`googleoff: snippet`).
- Usage signals (crawler.usage): `noai` and `noimageai` among the words of META robots, our
  token's META and X-Robots-Tag (read as noindex is, agent prefixes and all), and
  `<meta name="tdm-reservation">` with its `tdm-policy`; they go into `Page.usage`, and what
  they mean for the crawl's purpose is decided with the page's other signals (robots.txt,
  headers, tdmrep.json) where its record is made.
- Across META tags and headers, any noindex makes the page noindex and any nofollow makes it
  nofollow. A noindex page still has its links followed (unless nofollow); a nofollow page is
  indexed, and its links are kept apart in `Page.nofollow_links`. A link marked
  `rel="nofollow"`, `ugc` or `sponsored` is not followed unless `PageRules.follow_rel_nofollow`.
  A URL linked both ways on one page is followed.

Text is what a reader without scripts sees in the body: no script, style, template, iframe,
noembed or noframes content, nothing inside a noindex section. What is searchable but never
shown goes apart, in `nosnippet_text`: the text of nosnippet sections, and the body's boilerplate
(<nav>, <noscript>, role="navigation"), since snippets must come from what the page says, not
from an "enable JavaScript" notice or a navigation menu. The text of the h1-h6 headings and of
the defined terms (<dt>, <dfn>) is also in `headings`. The encoding is sniffed by
crawler.page.charset; bytes that do not decode become U+FFFD.

How much is read: what lies nested past 512 elements is read flat, as a browser's tree holds it
(crawler.page.bounds); a page whose markup would cost the parser more than it allows
(pathological attributes, 1,000 section markers, past a budget of tree-building work) is read
up to the tag that crosses the bound, and only the first 6,000 of
its links are read; `Page.cut` says so. A META tag for robots or our token past the cut is not
read, so it counts as the most restrictive reading: noindex, nofollow.

How it stays one parse: one walk over the tree (crawler.page.walk; in C where crawler.page.compiled
trusts it) finds the links, the META tags, the title and the section markers, and reads the text
each section leaves indexable. The element form of Yandex's `<noindex>` is the one thing the tree
cannot show: the parser nests it as an element (and closes it early, e.g. at the end of a `<p>` it
sits in), while Yandex reads its tags as markers in the source. A page whose source has one (rare)
has those tags turned into the comment form before it is parsed; one the byte check misses
(`<NoIndex>`) is found by the walk and parsed a second time.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields

from selectolax.lexbor import LexborHTMLParser

from crawler.page.bounds import (
    DEFAULT_BOUNDS,
    LIMIT_NONE,
    MAX_ANCHORS_READ,
    MAX_LINKS,
    Bounds,
    cut_reason,
)
from crawler.page.charset import decode, sniff_encoding
from crawler.page.compiled import links_of, prescan, walk
from crawler.page.compiled_main import MainContent, main_content_of
from crawler.page.exclusion import (
    NOAI,
    NOFOLLOW,
    NOIMAGEAI,
    NOINDEX,
    NOSNIPPET,
    directives_of,
    x_robots_directives,
    yandex_tags_as_comments,
)
from crawler.page.fields import FieldSelector, FieldValue, fields_of
from crawler.page.requisites import maybe_css_urls, requisites_of
from crawler.page.tree import body_of
from crawler.page.walk import PageFacts, cut_sections, link_resolver, python_walk
from crawler.usage.signals import MAX_SIGNALS, UsageSignal
from crawler.usage.vocab import MAX_VALUE_CHARS, TDM_RESERVATION

__all__ = [
    "NOFOLLOW",
    "NOINDEX",
    "NOSNIPPET",
    "Page",
    "PageRules",
    "directives_of",
    "read_page",
    "sniff_encoding",
    "x_robots_directives",
]


@dataclass(frozen=True, slots=True)
class PageRules:
    """The slice of config the page step needs."""

    token: str = "crawler"
    """Our product token: `<meta name=TOKEN>` and `X-Robots-Tag: TOKEN: ...` speak to us."""
    follow_rel_nofollow: bool = False
    main_content: bool = True
    """Read the page's main content (`Page.main_text`, `Page.markdown`)."""
    requisites: bool = False
    """Read what a browser loads to show the page (`Page.requisites`; fetch.page_requisites)."""
    requisite_media: bool = False
    max_requisites: int = 100
    fields: tuple[FieldSelector, ...] = ()
    """The user's fields (`extract:`, crawler.page.fields), read from pages whose text is."""


@dataclass(frozen=True, slots=True)
class Page:
    title: str | None
    links: tuple[str, ...]
    """Links the page lets us follow: normal, each once, in document order."""
    nofollow_links: tuple[str, ...] = ()
    """Links on the page we may not follow (and that are not also linked in a followable way)."""
    text: str = ""
    """Visible, indexable body text; empty when the page is noindex."""
    nosnippet_text: str = ""
    """Indexable text kept out of snippets: nosnippet sections, <nav>, <noscript>,
    role="navigation"; the whole text when the page is nosnippet."""
    headings: str = ""
    """The text of the page's h1-h6 headings and defined terms (dt, dfn), also in `text`; empty
    when `text` is (a noindex or nosnippet page)."""
    description: str | None = None
    language: str | None = None
    index: bool = True
    follow: bool = True
    index_reason: str | None = None
    """Why not `index`: each source that said noindex, e.g. 'meta robots: noindex'."""
    follow_reason: str | None = None
    sections: int = 0
    """In-page exclusion sections opened (no-op `index`/`follow`/`all` ones not counted)."""
    unusable_links: int = 0
    """hrefs that are not crawlable http(s) URLs (mailto:, javascript:, malformed)."""
    encoding: str = "utf-8"
    """The Python codec the body was read with, or 'x-user-defined' or 'replacement'
    (crawler.page.charset)."""
    cut: str | None = None
    """Why the page was not read in full: the bound of crawler.page.bounds it crossed, where."""
    usage: tuple[UsageSignal, ...] = ()
    """The usage signals of its META tags and X-Robots-Tag headers: noai, noimageai,
    tdm-reservation (crawler.usage)."""
    main_text: str = ""
    """The page's main content as plain text, a block to a line (crawler.page.main_content);
    empty when `text` is."""
    markdown: str = ""
    """The main content as Markdown, links absolute."""
    main_fallback: str | None = None
    """Why `main_text` is the page's whole visible text: no main content to find (a link hub, a
    frameset, a very short page). None when it was found."""
    frame_text: str | None = None
    """The visible text outside the main content, for the index to search beside it (None when
    `main_text` falls back or was not read): no text of the page is tokenised twice."""
    requisites: tuple[str, ...] = ()
    """What a browser loads to show the page, when asked for (crawler.page.requisites)."""
    fields: dict[str, FieldValue] | None = None
    """The user's fields (PageRules.fields) by name; None when none are asked for, or the
    page's text is not read (noindex)."""

    def __reduce__(self) -> tuple[type[Page], tuple[object, ...]]:
        # Pickled as its fields, for the page reader's process (crawler.crawl.page_reader): a
        # dataclass's own pickling sets the fields one by one in a loop, twice as slow to load.
        return (Page, _page_fields(self))


_page_fields = operator.attrgetter(*(field.name for field in fields(Page)))


def _reason(sources: Sequence[tuple[str, int]], flag: int) -> str | None:
    said = [label for label, flags in sources if flags & flag]
    return "; ".join(said) if said else None


# --- the page ------------------------------------------------------------------------------------


_WHITESPACE = "\t\n\f\r "


def refresh_url(content: str) -> str | None:
    """The URL of a `<meta http-equiv="refresh" content="5; url=/next">`, read as the HTML
    standard's shared declarative refresh steps read it: a delay, then `;` or `,`, then the URL,
    after `url=` or not, quoted or not. None when it names none (a refresh of the page itself),
    or is not a refresh the standard acts on."""
    rest = content.lstrip(_WHITESPACE)
    delay = len(rest) - len(rest.lstrip("0123456789"))
    if delay == 0 and not rest.startswith("."):
        return None
    rest = rest[delay:].lstrip("0123456789.")
    if not rest:
        return None
    if rest[0] not in _WHITESPACE + ";,":
        return None
    rest = rest.lstrip(_WHITESPACE)
    if rest[:1] in (";", ","):
        rest = rest[1:].lstrip(_WHITESPACE)
    if rest[:3].lower() == "url":
        after = rest[3:].lstrip(_WHITESPACE)
        if after[:1] == "=":
            rest = after[1:].lstrip(_WHITESPACE)
    if rest[:1] in ("'", '"'):
        quote, rest = rest[0], rest[1:]
        end = rest.find(quote)
        if end >= 0:
            rest = rest[:end]
    target = rest.strip(_WHITESPACE)
    return target or None


@functools.lru_cache(maxsize=8)  # one token per crawl
def _robots_meta(token: str) -> re.Pattern[bytes]:
    """A `<meta>` tag that names robots or our token, as bytes."""
    names = b"robots|" + re.escape(token.encode("utf-8", "replace"))
    return re.compile(rb"<meta[\t\n\f\r /][^>]*?(?:" + names + rb")", re.IGNORECASE)


def _squeeze(text: str | None) -> str | None:
    if not text:
        return None
    return " ".join(text.split()) or None


def read_page(
    body: bytes,
    url: str,
    *,
    charset: str | None = None,
    x_robots_tag: Sequence[str] = (),
    rules: PageRules = PageRules(),
    bounds: Bounds = DEFAULT_BOUNDS,
) -> Page:
    """Read the HTML page fetched from the normal URL `url` (after redirects), with the charset
    and X-Robots-Tag values of its Content-Type and headers. A page past `bounds` is read up to
    the point it crosses one (`Page.cut` says where and why)."""
    encoding, bom = sniff_encoding(body, charset)
    # The parser reads UTF-8; a page in another encoding is decoded (undecodable bytes become
    # U+FFFD) and given to it as UTF-8, so that the prescan counts the bytes the parser reads.
    source = (
        body[bom:]
        if encoding == "utf-8"
        else decode(body[bom:], encoding).encode("utf-8", "surrogatepass")
    )
    if b"\0" in source:
        # Browsers drop a NUL in text and read U+FFFD in an attribute; lexbor spends memory on
        # each one (5 MB of them in one attribute value: 1 GB, 10 s), so they go before it sees
        # them. Nothing a page means is lost.
        source = source.replace(b"\0", b"")
    cuts: list[str] = []
    unread_robots = False
    offset, limit, flattened = prescan(source, bounds)
    if limit != LIMIT_NONE:
        cuts.append(cut_reason(offset, len(source), limit, bounds))
        unread_robots = _robots_meta(rules.token.lower()).search(source, offset) is not None
        source = source[:offset]
    if flattened is not None:
        source = flattened  # what lies past the depth, read flat
    # Yandex's <noindex> element is read as markers in the source: a page that shows the tag is
    # rewritten before its one parse; one that hides it (`<NoIndex>`) is found by the walk and
    # parsed again.
    rewritten = b"<noindex" in source
    if rewritten:
        source = yandex_tags_as_comments(source)
    tree = LexborHTMLParser(source)
    facts = walk(tree)
    if facts.yandex_elements and not rewritten:
        source = yandex_tags_as_comments(source)
        tree = LexborHTMLParser(source)
        facts = walk(tree)

    token = rules.token.lower()
    sources: list[tuple[str, int]] = []
    description = language = None
    refreshes: list[str] = []
    usage: list[UsageSignal] = []
    tdm_policy: str | None = None
    # Each different META tag once: a page of 100,000 copies of one tag says it once.
    for name_value, content, equiv in dict.fromkeys(facts.metas):
        name = (name_value or "").strip().lower()
        equiv_name = (equiv or "").strip().lower()
        if equiv_name == "refresh":
            target = refresh_url(content or "")
            if target is not None:
                refreshes.append(target)
        if name == "robots" or name == token:
            flags = directives_of(content or "")
            if flags:
                sources.append((f"meta {name}: {(content or '').strip()}", flags))
                usage += _ai_signals(flags, f"meta {name}")
        elif name == TDM_RESERVATION:
            value = (content or "").strip()[:MAX_VALUE_CHARS]
            usage.append(UsageSignal(TDM_RESERVATION, f"meta {name}", value))
        elif name == "tdm-policy":
            tdm_policy = tdm_policy or (content or "").strip()[:MAX_VALUE_CHARS] or None
        elif name == "description":
            description = description or content
        elif equiv_name == "content-language":
            language = language or content
    if unread_robots:
        # What it says is not read: the most restrictive reading.
        sources.append(("meta robots past the cut, not read", NOINDEX | NOFOLLOW))
    if x_robots_tag:
        for value, flags in x_robots_directives(x_robots_tag, token):
            sources.append((f"X-Robots-Tag: {value}", flags))
            usage += _ai_signals(flags, "X-Robots-Tag")
    page_flags = 0
    for _, flags in sources:
        page_flags |= flags
    index = not page_flags & NOINDEX
    follow = not page_flags & NOFOLLOW
    language = facts.lang or language

    requisites = (
        requisites_of(
            tree,
            link_resolver(facts, url),
            media=rules.requisite_media,
            limit=rules.max_requisites,
            css_urls=maybe_css_urls(source),
        )
        if rules.requisites
        else ()
    )
    text = nosnippet_text = headings = main_text = markdown = ""
    frame_text = None
    main_fallback = None
    found: dict[str, FieldValue] | None = None
    if index:
        text, nosnippet_text, headings = facts.text, facts.nosnippet_text, facts.headings
        if rules.fields:
            found = fields_of(tree, rules.fields)  # before the main content cuts the tree
        if page_flags & NOSNIPPET:
            # The headings are read as part of the text: they go where it goes.
            nosnippet_text = " ".join(part for part in (nosnippet_text, text) if part)
            text = headings = ""
        elif rules.main_content:
            main = _main_content(tree, facts, url)
            main_text, main_fallback = _bounded(main.text, "\n"), main.fallback
            frame_text = _bounded(main.frame, " ") if main.fallback is None else None
            markdown = _bounded(main.markdown, "\n\n")
            if len(main_text) < len(main.text):
                cuts.append(
                    f"main content: more than {MAX_MAIN_CHARS:,} characters, the first read"
                )
    # The tree is done with: a long page's is the biggest thing the page step holds.
    del tree

    if refreshes:
        # A refresh's target is a link like an <a>'s, after the page's own.
        facts = facts._replace(anchors=[*facts.anchors, *((ref, None, False) for ref in refreshes)])
    if len(facts.anchors) > MAX_ANCHORS_READ:
        cuts.append(f"anchors: more than {MAX_ANCHORS_READ:,}, the first {MAX_ANCHORS_READ:,} read")
        facts = facts._replace(anchors=facts.anchors[:MAX_ANCHORS_READ])
    links, nofollow_links, unusable = links_of(facts, url, follow, rules.follow_rel_nofollow)
    if len(links) > MAX_LINKS:
        cuts.append(f"links: more than {MAX_LINKS:,}, the first {MAX_LINKS:,} read")
        links = links[:MAX_LINKS]

    return Page(
        title=_squeeze(facts.title),
        links=links,
        nofollow_links=nofollow_links,
        text=text,
        nosnippet_text=nosnippet_text,
        headings=headings,
        description=_squeeze(description),
        language=(language or "").strip() or None,
        index=index,
        follow=follow,
        index_reason=_reason(sources, NOINDEX) if sources else None,
        follow_reason=_reason(sources, NOFOLLOW) if sources else None,
        sections=facts.sections,
        unusable_links=unusable,
        encoding=encoding,
        cut="; ".join(cuts) or None,
        usage=_with_policy(usage, tdm_policy)[:MAX_SIGNALS] if usage else (),
        main_text=main_text,
        markdown=markdown,
        main_fallback=main_fallback,
        frame_text=frame_text,
        requisites=requisites,
        fields=found,
    )


def _main_content(tree: LexborHTMLParser, facts: PageFacts, url: str) -> MainContent:
    """The main content of the page, read from the tree the walk left. The compiled walk leaves
    the tree whole; the main content reading leaves out all it leaves out of the text but
    sections, so a page with sections (rare on the web; a quarter of the speed web's pages) has
    them cut first, as the Python walk cuts them."""
    if facts.sections and walk is not python_walk:
        cut_sections(tree)
    return main_content_of(body_of(tree, tree.root), link_resolver(facts, url), facts.base, url)


MAX_MAIN_CHARS = 1_000_000
"""Of a page's main content as text and as Markdown, what is kept, whole blocks: a page of five
megabytes of text (the body's cap) would otherwise be held three times over by every step after
the page's."""


def _bounded(text: str, separator: str) -> str:
    if len(text) <= MAX_MAIN_CHARS:
        return text
    end = text.rfind(separator, 0, MAX_MAIN_CHARS + 1)
    return text[: end if end > 0 else MAX_MAIN_CHARS]


_AI_WORDS = ((NOAI, "noai"), (NOIMAGEAI, "noimageai"))


def _ai_signals(flags: int, source: str) -> list[UsageSignal]:
    """noai and noimageai among `flags`, as the usage signals of `source`."""
    return [UsageSignal(word, source, word) for flag, word in _AI_WORDS if flags & flag]


def _with_policy(usage: list[UsageSignal], policy: str | None) -> tuple[UsageSignal, ...]:
    """The META signals, a tdm-reservation with the page's tdm-policy beside it."""
    if policy is None:
        return tuple(usage)
    return tuple(
        UsageSignal(s.kind, s.source, s.value, policy) if s.kind == TDM_RESERVATION else s
        for s in usage
    )
