"""The compiled page walk (crawler.page._pagescan, in C): loading it, deciding whether to trust it,
and choosing the walk the page step uses. The one module that knows the C walk reads another
extension's memory.

Why trust has to be earned: the C walk reads lexbor's structs in place, at the addresses
selectolax gives as `Node.mem_id`, with a layout copied from lexbor 3.1.0 (bundled by selectolax
1.0.2). Neither project promises that layout. So before the compiled walk is used:
1. The layout handshake. C reads the fields of the nodes, elements, attributes and text nodes of
   a small page, each at an address selectolax gave or one an earlier comparison vouched for,
   following no pointer; every field must equal what selectolax reports from Python (parent,
   children, siblings, node type, tag id, attribute owners and order, text length), and every
   tag id the walk relies on must be selectolax's. A layout that moved shows as numbers that
   disagree, not as a crash.
2. The self-check. The compiled walk and links must read `SELF_CHECK`, a page with something of
   everything, exactly as the Python walk does.
Then it is used, unless `CRAWLER_PAGE_WALK=python` asks for the Python walk. Otherwise the Python
walk runs, about half as fast, and `WALK` says why; the crawl summary and `crawl --version`
print it.

The walk is chosen once, at import: `walk` and `links_of` are the ones in use. The prescan
(crawler.page.bounds) reads the page's bytes and no lexbor memory, so the compiled one is used
wherever the module is built, unless `CRAWLER_PAGE_WALK=python`; `prescan` is the one in use.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from crawler.page.bounds import MAX_ANCHORS, Bounds, Prescanned, python_prescan
from crawler.page.exclusion import MarkerWord, marker_word
from crawler.page.walk import Links, PageFacts, link_resolver, python_links, python_walk
from crawler.urls import InvalidUrlError

__all__ = [
    "CHOICE",
    "PAGESCAN",
    "SELF_CHECK",
    "WALK",
    "WalkChoice",
    "choose",
    "compiled_links",
    "compiled_walk",
    "layout_problem",
    "links_of",
    "prescan",
    "walk",
]

Walk = Callable[[LexborHTMLParser], PageFacts]
LinksOf = Callable[[PageFacts, str, bool, bool], Links]
Scan = Callable[[int, Callable[[str], MarkerWord | None], int], tuple[Any, ...]]
LinksScan = Callable[..., Links]
Prescan = Callable[[bytes, Bounds], Prescanned]

NODE_ELEMENT, NODE_TEXT, NODE_COMMENT, NODE_DOCUMENT, NODE_DOCTYPE = 1, 3, 8, 9, 10
_NODE_TYPES = {
    "-text": NODE_TEXT,
    "-comment": NODE_COMMENT,
    "-document": NODE_DOCUMENT,
    "-doctype": NODE_DOCTYPE,
}
"""selectolax's names of the nodes that are not elements, and their DOM node types."""


def _compiled(scan: Scan) -> Walk:
    def compiled_walk(tree: LexborHTMLParser) -> PageFacts:
        """The compiled walk; it leaves the tree as it is."""
        root = tree.root
        document = root.parent if root is not None else None
        # `tree` holds the document for as long as the call runs.
        facts = scan(document.mem_id if document is not None else 0, marker_word, MAX_ANCHORS)
        return PageFacts._make(facts)

    return compiled_walk


def _compiled_links(links: LinksScan) -> LinksOf:
    def compiled_links(
        facts: PageFacts, url: str, follow: bool, follow_rel_nofollow: bool
    ) -> Links:
        """`python_links` in C; hrefs off LinkResolver's short path are given to it."""
        resolve = link_resolver(facts, url)
        return links(
            facts.anchors,
            resolve,
            InvalidUrlError,
            follow,
            not follow_rel_nofollow,
            resolve.join_parts,
        )

    return compiled_links


def _compiled_prescan(module: ModuleType) -> Prescan:
    scan: Callable[[bytes, int, int, int], tuple[int, int, bytes | None]] = module.prescan

    def compiled_prescan(source: bytes, bounds: Bounds) -> Prescanned:
        """`python_prescan` in C."""
        return Prescanned._make(scan(source, *bounds))

    return compiled_prescan


def choose_prescan(pagescan: ModuleType | None, environ: Mapping[str, str] = os.environ) -> Prescan:
    """The compiled prescan where the module is built (it reads no lexbor memory), unless
    `CRAWLER_PAGE_WALK=python`."""
    if pagescan is None or environ.get("CRAWLER_PAGE_WALK", "").strip().lower() == "python":
        return python_prescan
    return _compiled_prescan(pagescan)


# --- the layout handshake ------------------------------------------------------------------------

LAYOUT_PAGE = (
    '<!DOCTYPE html><html lang="en"><head><title>t</title><meta name=a content=b></head>'
    '<body><p id=x class="y z" title>one<!-- two --><b>three</b></p><i>four</i>'
    "<noindex>five</noindex></body></html>"
)
"""A page whose nodes take every shape the walk reads: elements with none, one and several
attributes, text, a comment, a tag lexbor does not know."""


def _address(node: LexborNode | None) -> int:
    return node.mem_id if node is not None else 0


def _nodes(document: LexborNode) -> list[LexborNode]:
    """Every node of the document, the document first, in document order."""
    found, stack = [], [document]
    while stack:
        node = stack.pop()
        found.append(node)
        children = []
        child = node.child
        while child is not None:
            children.append(child)
            child = child.next
        stack.extend(reversed(children))
    return found


def _node_type(node: LexborNode) -> int:
    return _NODE_TYPES.get(node.tag or "", NODE_ELEMENT)


def layout_problem(pagescan: ModuleType) -> str | None:
    """None when the compiled walk reads lexbor's structs where selectolax keeps them (the
    handshake above), else what disagrees."""
    tree = LexborHTMLParser(LAYOUT_PAGE)
    root = tree.root
    document = root.parent if root is not None else None
    if document is None:
        return "the page has no document node"
    for node in _nodes(document):
        address = node.mem_id
        expected = (
            _address(node.parent),
            _address(node.child),
            _address(node.last_child),
            _address(node.next),
            _address(node.prev),
            _node_type(node),
        )
        fields = pagescan.node_fields(address)
        if tuple(fields[:6]) != expected:
            return f"the links or type of a {node.tag} node read {fields[:6]}, not {expected}"
        kind = expected[5]
        if kind == NODE_ELEMENT and fields[6] != node.tag_id:
            return f"<{node.tag}>'s tag id reads {fields[6]}, not {node.tag_id}"
        if kind == NODE_ELEMENT:
            problem = _attributes_problem(pagescan, node)
            if problem is not None:
                return problem
        if kind == NODE_TEXT:
            length = len((node.text_content or "").encode())
            if pagescan.text_length(address) != length:
                return f"a text node's length reads {pagescan.text_length(address)}, not {length}"
    return _tag_ids_problem(pagescan.TAG_IDS)


def _attributes_problem(pagescan: ModuleType, element: LexborNode) -> str | None:
    count = len(element.attributes)
    first, last = pagescan.element_fields(element.mem_id)
    if count == 0:
        return None if first == last == 0 else f"<{element.tag}> without attributes reads some"
    if first == 0 or last == 0 or (first == last) != (count == 1):
        return f"<{element.tag}>'s {count} attributes read as first {first}, last {last}"
    # The element vouched for `first` and `last`: they may be read now, in order.
    previous, attribute, seen = 0, first, 0
    while attribute != 0 and seen < count:
        owner, following, before = pagescan.attr_fields(attribute)
        if owner != element.mem_id or before != previous:
            return f"an attribute of <{element.tag}> reads owner {owner}, previous {before}"
        previous, attribute, seen = attribute, following, seen + 1
    if seen != count or previous != last or attribute != 0:
        return f"<{element.tag}>'s attributes do not chain from first to last"
    return None


def _tag_ids_problem(tag_ids: Mapping[str, int]) -> str | None:
    """The tag ids the walk compares with must be selectolax's, and tags past lexbor's table
    (`""`, its end) must get ids above it."""
    names = [name for name in tag_ids if name]
    tree = LexborHTMLParser("".join(f"<{name}></{name}>" for name in names) + "<noindex></noindex>")
    # A <frame> is only ever parsed inside a <frameset>.
    frames = LexborHTMLParser("<frameset><frame></frameset>")
    for name in names:
        node = (frames if name == "frame" else tree).css_first(name)
        if node is None or node.tag_id != tag_ids[name]:
            found = node.tag_id if node is not None else None
            return f"<{name}>'s tag id is {found} in selectolax, {tag_ids[name]} in the walk"
    unknown = tree.css_first("noindex")
    if unknown is None or unknown.tag_id < tag_ids[""]:
        return "a tag lexbor does not know gets an id inside its table"
    return None


# --- the self-check ------------------------------------------------------------------------------

# A page with something of everything the walk reads: the compiled walk must read it as the
# Python walk does before the crawl trusts it.
SELF_CHECK = """<!DOCTYPE html><!-- robots content="nofollow" --><html lang="de-AT"><head>
<meta charset="utf-8"><meta name="ROBOTS" content="noindex, nofollow"><meta name=description
content="A  page"><meta http-equiv="Content-Language" content="de"><meta property="og:x">
<title> The  title &amp; more </title><base href="/base/"><base href="/second/">
<style>p{color:red}</style><script>var a = "<a href=/no>";</script><!-- /robots --></head>
<body>\u00a0 lead <a href="/a" rel="NoFollow ugc">one</a> <area href="/area">
<!--googleoff: index-->hidden <a href="/g">g</a><!--googleon: index-->
<!-- robots content="none" --><p>none <a href="/n">n</a></p><!-- /robots -->
<div><!--noindex-->yandex<!--/noindex--> after \u2003</div><a href=""></a><a>no href</a>
<h1>Main <b>head</b><nav>menu <a href="/nav">n</a><h2>in nav</h2></nav></h1><div role=NAVIGATION>
crumbs<noscript>enable <!--googleoff: snippet-->JS</noscript></div><p>only searchable <a href="/s">
s</a></p><!--googleon: snippet--><h3><div><h4>nested</h4></div> end</h3>
<dl><dt>term <dfn>x</dfn></dt><dd>d</dd></dl>
<template><a href="/t">t</a></template><noindex>el</noindex><iframe src="/frame">no <a href="/if">
</a></iframe><iframe src=""></iframe><frame src="/not-in-a-frameset">
<p><!-- robots content="nofollow" -->open <a href="/o">o<!-- /robots --> end</a></p>
<svg><style><a href="/svg">x</a></style><title>svg title</title></svg>caf\u00e9 \u6771\u4eac
<!-- robots content="noindex" -->left open <a href=/left>l</a></body></html>"""


def same_facts(one: PageFacts, other: PageFacts) -> bool:
    # nosnippet text is searched, never shown: the same words suffice.
    return one._replace(nosnippet_text=" ".join(one.nosnippet_text.split())) == other._replace(
        nosnippet_text=" ".join(other.nosnippet_text.split())
    )


def self_check(walk: Walk, links_of: LinksOf) -> bool:
    """The compiled walk and links read SELF_CHECK as the Python ones do."""
    facts = walk(LexborHTMLParser(SELF_CHECK))
    if not same_facts(facts, python_walk(LexborHTMLParser(SELF_CHECK))):
        return False
    for url in ("https://example.com/dir/page.html", "http://xn--caf-dma.example:8080/a/b/?q"):
        for reading in (facts, facts._replace(base=None)):
            for follow, follow_rel in ((True, False), (True, True), (False, False)):
                if links_of(reading, url, follow, follow_rel) != python_links(
                    reading, url, follow, follow_rel
                ):
                    return False
    return True


# --- the choice ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WalkChoice:
    walk: Walk
    links_of: LinksOf
    compiled_walk: Walk | None
    """The compiled walk, when it loaded and its layout holds (trusted or not)."""
    compiled_links: LinksOf | None
    why: str
    """'compiled', or 'python (the reason)'."""


def _load() -> ModuleType | None:
    try:
        from crawler.page import _pagescan
    except ImportError:
        return None
    return _pagescan


def choose(pagescan: ModuleType | None, environ: Mapping[str, str] = os.environ) -> WalkChoice:
    """The walk to use, given the compiled module (None where it is not built)."""

    def python(why: str, walk: Walk | None = None, links: LinksOf | None = None) -> WalkChoice:
        return WalkChoice(python_walk, python_links, walk, links, f"python ({why})")

    if pagescan is None:
        return python("the compiled walk is not built")
    problem = layout_problem(pagescan)
    if problem is not None:
        return python(f"the compiled walk does not know this selectolax's memory layout: {problem}")
    walk, links_of = _compiled(pagescan.scan), _compiled_links(pagescan.links)
    if not self_check(walk, links_of):
        return python("the compiled walk failed its self-check", walk, links_of)
    if environ.get("CRAWLER_PAGE_WALK", "").strip().lower() == "python":
        return python("CRAWLER_PAGE_WALK=python", walk, links_of)
    return WalkChoice(walk, links_of, walk, links_of, "compiled")


PAGESCAN = _load()
CHOICE = choose(PAGESCAN)
walk, links_of = CHOICE.walk, CHOICE.links_of
prescan = choose_prescan(PAGESCAN)
compiled_prescan = _compiled_prescan(PAGESCAN) if PAGESCAN is not None else None
compiled_walk, compiled_links = CHOICE.compiled_walk, CHOICE.compiled_links
WALK = CHOICE.why
