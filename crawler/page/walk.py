"""The walk over a parsed page: from selectolax's tree to the facts the page rules need
(`PageFacts`). Pure: a tree in, values out.

Two walks give the same facts:
- `python_walk`, the reference: one traversal of the tree finds the links, the META tags, the
  title and the section markers; a section is then a stretch of the tree
  (crawler.page.exclusion), a noindex stretch is cut out before the text is read in one
  selectolax call, and a nofollow stretch marks the links in it.
- the compiled walk (crawler.page._pagescan, in C): the same in one pass over lexbor's nodes,
  with the sections as a state that changes at each marker; about four times faster. It reads
  lexbor's structs in place, so crawler.page.compiled checks it before trusting it, and chooses
  the walk the page step uses.

What both read, in document order:
- nothing from inside script, style, template, iframe, noembed and noframes elements;
- the first MAX_ANCHORS (crawler.page.bounds) of:
  <a>/<area> with a non-empty href as (href, rel, held): `held` when the start tag is inside a
  nofollow section; <frame>/<iframe> with a non-empty src the same way, as (src, None, held);
- <meta> with a name or http-equiv as (name, content, http-equiv);
- the first <title>'s text, the first <base> with an href, <html lang>;
- the body's text outside noindex sections (selectolax's `text(separator=" ", strip=True,
  skip_empty=True)`), and apart from it (`nosnippet_text`: searched, never shown) the text inside
  nosnippet sections and the body's boilerplate: <nav> and <noscript> elements and any element
  with role="navigation" (ASCII case-insensitive). Snippets must come from what the page says,
  not from an "enable JavaScript" notice or a navigation menu;
- the text of the body's h1-h6 headings and defined terms (<dt>, <dfn>: an API's signature names
  what a page is about as a heading does) whose text is in the body's text, each read as the
  text is, the outermost of nested ones;
- the number of sections opened, and whether Yandex's `<noindex>` element occurs (the caller
  rewrites its tags in the source as comments, and parses that).
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

from selectolax.lexbor import LexborHTMLParser, LexborNode

from crawler.page.bounds import MAX_ANCHORS
from crawler.page.exclusion import (
    NOFOLLOW,
    NOINDEX,
    NOSNIPPET,
    Marker,
    Stretch,
    marker_of,
    stretches_of,
)
from crawler.page.tree import (
    body_of,
    children,
    in_document_order,
    inside,
    outermost_in_body,
    text_of,
)
from crawler.urls import InvalidUrlError, LinkResolver

__all__ = [
    "Links",
    "PageFacts",
    "cut_sections",
    "link_resolver",
    "python_links",
    "python_walk",
]

Anchor = tuple[str, str | None, bool]
Meta = tuple[str | None, str | None, str | None]


class PageFacts(NamedTuple):
    anchors: list[Anchor]
    """(href, rel, held) of each <a>/<area> with an href, and (src, None, held) of each
    <frame>/<iframe> with a src, in document order; the first MAX_ANCHORS of them."""
    metas: list[Meta]
    """(name, content, http-equiv) of each <meta> with a name or an http-equiv."""
    title: str | None
    """The first <title>'s text as it is (None: no title element)."""
    base: str | None
    lang: str | None
    text: str
    """The body's text outside noindex and nosnippet sections and boilerplate."""
    nosnippet_text: str
    """The text of nosnippet sections (anywhere) and of the body's boilerplate outside noindex
    sections, in document order."""
    headings: str
    """The text of each h1-h6 heading, <dt> and <dfn> in the body whose text is in `text` (also
    there), in document order; a heading inside another is read with it."""
    sections: int
    yandex_elements: bool


# --- the Python walk ------------------------------------------------------------------------------


def _tag_ids() -> dict[str, int]:
    """lexbor's ids of the tags the walk looks at, read from lexbor itself."""
    sample = LexborHTMLParser(
        "<html><head><base><meta><title></title><style></style><script></script><template>"
        "</template></head><body><!---->text<a></a><area><iframe></iframe><noembed></noembed>"
        "<noframes></noframes><nav></nav><noscript></noscript><h1></h1><h2></h2><h3></h3><h4></h4>"
        "<h5></h5><h6></h6><dl><dt></dt></dl><dfn></dfn></body></html>"
    )
    root = sample.root
    assert root is not None
    ids = {node.tag or "": node.tag_id or 0 for node in root.traverse(include_text=True)}
    # A <frame> is only ever parsed inside a <frameset>.
    frame = LexborHTMLParser("<frameset><frame></frameset>").css_first("frame")
    assert frame is not None
    return {**ids, "frame": frame.tag_id or 0}


_IDS = _tag_ids()
_TEXT_ID = _IDS["-text"]
_LINK, _META, _TITLE, _BASE, _DROP, _COMMENT, _FRAME, _BOILERPLATE, _HEADING = range(9)
_ROLES = {
    _IDS["a"]: _LINK,
    _IDS["area"]: _LINK,
    _IDS["frame"]: _FRAME,
    _IDS["meta"]: _META,
    _IDS["title"]: _TITLE,
    _IDS["base"]: _BASE,
    _IDS["-comment"]: _COMMENT,
    **{_IDS[name]: _DROP for name in ("script", "style", "template", "noembed", "noframes")},
    # An iframe is a link by its src, and its content is dropped like a script's.
    _IDS["iframe"]: _FRAME,
    _IDS["nav"]: _BOILERPLATE,
    _IDS["noscript"]: _BOILERPLATE,
    **{_IDS[f"h{level}"]: _HEADING for level in range(1, 7)},
    # A term the page defines names what it is about as a heading does (an API's signature).
    _IDS["dt"]: _HEADING,
    _IDS["dfn"]: _HEADING,
}
_IFRAME_ID = _IDS["iframe"]
_SRC_TAGS = frozenset({_IDS["frame"], _IFRAME_ID})
"""Elements whose link is their `src`."""
# lexbor numbers the tags it knows from a fixed table; a tag it does not know (like `noindex`)
# gets its id from the document's own tag table, a pointer value far above that range.
_KNOWN_TAG_LIMIT = 1 << 16


class _Scan:
    """What one traversal of the tree found."""

    __slots__ = (
        "anchors",
        "base",
        "boilerplate",
        "drops",
        "headings",
        "markers",
        "metas",
        "nested_drops",
        "title",
        "yandex_elements",
    )

    def __init__(self, tree: LexborHTMLParser) -> None:
        anchors: list[LexborNode] = []
        metas: list[LexborNode] = []
        boilerplate: list[LexborNode] = []
        headings: list[LexborNode] = []
        drops: list[LexborNode] = []
        markers: list[Marker] = []
        title: LexborNode | None = None
        base: str | None = None
        yandex_elements = nested_drops = False
        # From the document node: a marker comment may come before <html>, even before a doctype.
        root = tree.root
        document = root.parent if root is not None else None
        # Locals, not attributes or globals: this loop runs for every element of every page.
        role_of = _ROLES.get
        add_anchor = anchors.append
        link, comment, drop, meta, title_role = _LINK, _COMMENT, _DROP, _META, _TITLE
        frame, iframe_id = _FRAME, _IFRAME_ID
        boilerplate_role, heading_role = _BOILERPLATE, _HEADING
        known_limit, text_id = _KNOWN_TAG_LIMIT, _TEXT_ID
        for node in (document or root).traverse() if root is not None else ():
            tag_id = node.tag_id
            role = role_of(tag_id)
            if role is None:
                if tag_id > known_limit and node.tag == "noindex":
                    yandex_elements = True
            elif role == link:
                add_anchor(node)
            elif role == frame:
                add_anchor(node)
                if tag_id == iframe_id:
                    drops.append(node)
                    child = node.child
                    if child is not None and (child.tag_id != text_id or child.next is not None):
                        nested_drops = True
            elif role == comment:
                marker = marker_of(node)
                if marker is not None:
                    markers.append(marker)
            elif role == drop:
                drops.append(node)
                # An HTML script or style holds one text node; in SVG or MathML it holds markup.
                child = node.child
                if child is not None and (child.tag_id != text_id or child.next is not None):
                    nested_drops = True
            elif role == meta:
                metas.append(node)
            elif role == title_role:
                if title is None:
                    title = node
            elif role == boilerplate_role:
                boilerplate.append(node)
            elif role == heading_role:
                headings.append(node)
            elif base is None:
                base = node.attrs.get("href") or None
        self.anchors = anchors
        self.metas = metas
        self.drops = drops
        self.markers = markers
        self.title = title
        self.base = base
        self.yandex_elements = yandex_elements
        self.nested_drops = nested_drops
        self.boilerplate = boilerplate  # <nav> and <noscript> elements, anywhere
        self.headings = headings  # h1-h6, dt and dfn elements, anywhere


def _held(anchor: LexborNode, roots: set[int], opened: set[int]) -> bool:
    """Inside a nofollow stretch: in one of its subtrees, or opened inside it."""
    return anchor.mem_id in opened or inside(anchor, roots)


def _anchors(nodes: list[LexborNode], stretches: list[Stretch]) -> list[Anchor]:
    roots: set[int] = set()
    opened: set[int] = set()
    for stretch in stretches:
        if stretch.flags & NOFOLLOW:
            roots.update(node.mem_id for node in stretch.subtrees)
            # An <a> opened inside the section is inside, though its end comes after the close.
            opened.update(node.mem_id for node in stretch.opened)
    anchors: list[Anchor] = []
    src_tags = _SRC_TAGS
    for node in nodes:
        if len(anchors) == MAX_ANCHORS:
            break
        attrs = node.attributes
        if node.tag_id in src_tags:
            href, rel = attrs.get("src"), None
        else:
            href, rel = attrs.get("href"), attrs.get("rel")
        if href:
            held = bool(roots or opened) and _held(node, roots, opened)
            anchors.append((href, rel, held))
    return anchors


def _is_navigation(role: str | None) -> bool:
    """role="navigation", ASCII case-insensitively (as the C walk compares it)."""
    return role is not None and role.isascii() and role.lower() == "navigation"


def _apart(
    scan: _Scan,
    document: LexborNode | None,
    body: LexborNode | None,
    noindex: set[int],
    nosnippet: list[LexborNode],
) -> list[LexborNode]:
    """What is read apart from the text, each once, in document order: the subtrees of the
    nosnippet sections (`nosnippet`) and the body's boilerplate outside the noindex subtrees
    (`noindex`, their roots), the outermost where one holds another."""
    if body is None:
        return nosnippet
    navigation = [node for node in body.css("[role]") if _is_navigation(node.attrs.get("role"))]
    if not scan.boilerplate and not navigation:
        return nosnippet
    # A <nav role=navigation> is found twice.
    found = {node.mem_id: node for node in scan.boilerplate + navigation}
    # Boilerplate that is a nosnippet subtree, or in one, is read with it.
    gone = noindex | {node.mem_id for node in nosnippet}
    boilerplate = outermost_in_body(list(found.values()), body, gone)
    if not boilerplate:
        return nosnippet
    held = {node.mem_id for node in boilerplate}
    nosnippet = [node for node in nosnippet if not inside(node, held)]
    # Each list is in document order; together they need sorting.
    if (nosnippet or (scan.boilerplate and navigation)) and document is not None:
        return in_document_order(nosnippet + boilerplate, document)
    return boilerplate


def python_walk(tree: LexborHTMLParser) -> PageFacts:
    """The reference walk. It changes the tree: drop elements, sections and boilerplate are
    cut."""
    scan = _Scan(tree)
    for node in scan.drops:
        if node.tag_id == _IFRAME_ID:
            # Kept, empty: its src is a link, read below with the sections it is in.
            for child in children(node):
                child.decompose()
        else:
            node.decompose()
    if scan.nested_drops:
        # Markup inside a foreign <script>/<style>: what the walk found there does not count.
        scan = _Scan(tree)
    root = tree.root
    stretches, sections = (
        stretches_of(scan.markers, root) if scan.markers and root is not None else ([], 0)
    )
    title = scan.title.text() if scan.title is not None else None
    anchors = _anchors(scan.anchors, stretches)
    metas: list[Meta] = []
    for node in scan.metas:
        attrs = node.attributes
        name, equiv = attrs.get("name"), attrs.get("http-equiv")
        if name is not None or equiv is not None:
            metas.append((name, attrs.get("content"), equiv))
    lang = root.attrs.get("lang") if root is not None else None

    noindex: set[int] = set()
    nosnippet: list[LexborNode] = []
    for stretch in stretches:
        if stretch.flags & NOINDEX:
            noindex.update(node.mem_id for node in stretch.subtrees)
        elif stretch.flags & NOSNIPPET:
            nosnippet.extend(stretch.subtrees)
    # What is read apart, and which headings count, is decided before anything is cut: after,
    # a node in a cut subtree must not be touched.
    body = body_of(tree, root)
    apart = _apart(scan, root.parent if root is not None else None, body, noindex, nosnippet)
    headings: list[LexborNode] = []
    if body is not None and scan.headings:
        headings = outermost_in_body(scan.headings, body, noindex | {node.mem_id for node in apart})
    for stretch in stretches:
        if stretch.flags & NOINDEX:
            for node in stretch.subtrees:
                node.decompose()
    parts = []
    for node in apart:
        parts.append(text_of(node))
        node.decompose()
    # Again: the body itself may have been cut.
    body = body_of(tree, root)
    text = text_of(body) if body is not None else ""
    return PageFacts(
        anchors=anchors,
        metas=metas,
        title=title,
        base=scan.base,
        lang=lang,
        text=text,
        nosnippet_text=" ".join(part for part in parts if part),
        headings=" ".join(part for part in map(text_of, headings) if part),
        sections=sections,
        yandex_elements=scan.yandex_elements,
    )


def cut_sections(tree: LexborHTMLParser) -> None:
    """Cut out of a whole tree (the compiled walk leaves it so) what its noindex and nosnippet
    sections hold, as `python_walk` cuts them: the main content reading, which leaves out all
    that walk cuts but sections, then reads the tree as it reads the walk's. Cheaper than that
    walk on a tree parsed again: one pass for the markers, and the sections' subtrees."""
    root = tree.root
    if root is None:
        return
    document = root.parent
    comment = _IDS["-comment"]
    markers = [
        marker
        for node in (document or root).traverse()
        if node.tag_id == comment
        and (marker := marker_of(node)) is not None
        and not _in_dropped(node)
    ]
    if not markers:
        return
    stretches, _ = stretches_of(markers, root)
    cut = [node for stretch in stretches if stretch.flags & (NOINDEX | NOSNIPPET)
           for node in stretch.subtrees]  # fmt: skip
    roots = {node.mem_id for node in cut}
    # A subtree inside another is gone with it: touching it after would be a use after free.
    for node in [node for node in cut if node.parent is None or not inside(node.parent, roots)]:
        node.decompose()


def _in_dropped(node: LexborNode) -> bool:
    """Inside an element `python_walk` drops (its markers never count)."""
    holder = node.parent
    while holder is not None:
        if _ROLES.get(holder.tag_id or 0) == _DROP or holder.tag_id == _IFRAME_ID:
            return True
        holder = holder.parent
    return False


# --- links ---------------------------------------------------------------------------------------

_REL_NOFOLLOW = frozenset({"nofollow", "ugc", "sponsored"})
Links = tuple[tuple[str, ...], tuple[str, ...], int]


def link_resolver(facts: PageFacts, url: str) -> LinkResolver:
    resolve = LinkResolver(url)
    if facts.base is not None:
        with contextlib.suppress(InvalidUrlError):  # an unusable <base> is ignored
            resolve = LinkResolver(resolve(facts.base))
    return resolve


def python_links(facts: PageFacts, url: str, follow: bool, follow_rel_nofollow: bool) -> Links:
    """(followable links, links not to follow, unusable hrefs) of the page's anchors: normal,
    each once, in document order; a link both followable and not is followable."""
    resolve = link_resolver(facts, url)
    obey_rel = not follow_rel_nofollow
    followed: dict[str, None] = {}
    held_back: dict[str, None] = {}
    unusable = 0
    for href, rel, held in facts.anchors:
        try:
            link = resolve(href)
        except InvalidUrlError:
            unusable += 1
            continue
        if (
            not follow
            or held
            or (obey_rel and rel and not _REL_NOFOLLOW.isdisjoint(rel.lower().split()))
        ):
            held_back[link] = None
        else:
            followed[link] = None
    return (
        tuple(followed),
        tuple(link for link in held_back if link not in followed),
        unusable,
    )
