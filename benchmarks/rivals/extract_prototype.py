"""A first main-content extractor on selectolax/lexbor, in Python: an experiment for issue 38,
measured by benchmarks/bench_extract.py (`--only prototype`), not the crawler's code.

What it does, readability-style:
- drops script, style, noscript, template, iframe, nav, footer, aside, button, select and svg
  elements, and header elements; drops forms and elements whose class, id or role reads as
  boilerplate (comments, sharing, related links, sidebars, cookie banners, ads, ...) unless they
  hold 30% or more of the page's text (a whole ASP.NET page sits in one <form>; a page's wrapper
  may be named for an ad slot);
- scores each block of text (p, pre, blockquote, td, li; and div, section, article, span or font
  with 60 or more characters of their own, for pages written with <br>) by its commas and
  length, less its share of link text, and gives the score to its container and half of it to
  the container above;
- takes the best container, climbs to its parent while the parent scores 0.7 of it or more (an
  article split over sibling blocks), and adds the parent's other children scoring a fifth of it.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

DROPPED = (
    "script,style,noscript,template,iframe,nav,footer,aside,button,select,svg,header,"
    "figure figcaption"
)
BOILERPLATE = re.compile(
    r"comment|share|social|related|sidebar|footer|header|(^|[-_ ])nav|menu|cookie|consent|"
    r"banner|breadcrumb|subscri|newsletter|promo|(^|[-_ ])ads?([-_ ]|$)|advert|popup|modal|"
    r"widget|recommend|outbrain|taboola|tags?($|[-_ ])|byline|author-bio|more-stories|trending|"
    r"masthead|skip",
    re.IGNORECASE,
)
CONTENT = re.compile(r"article|content|post|entry|story|body|main|text", re.IGNORECASE)
TEXT_BLOCKS = ("p", "pre", "blockquote", "td", "li")
KEEP_SHARE = 0.3
CLIMB = 0.7
SIBLING_SHARE = 0.2


def _names(node: LexborNode) -> str:
    attributes = node.attributes
    return " ".join(attributes.get(name) or "" for name in ("class", "id", "role"))


def extract(body: bytes, url: str = "") -> str:
    tree = LexborHTMLParser(body)
    root = tree.body
    if root is None:
        return ""
    for node in tree.css(DROPPED):
        node.decompose()
    total = len(root.text(deep=True, strip=True)) or 1
    for node in root.css("[class],[id],[role],form"):
        if node.tag in ("html", "body", "article", "main"):
            continue
        names = _names(node)
        first = names.split()[0] if names.split() else ""
        boilerplate = BOILERPLATE.search(names) and not CONTENT.search(first)
        if (node.tag == "form" or boilerplate) and len(
            node.text(deep=True, strip=True)
        ) < KEEP_SHARE * total:
            node.decompose()
    blocks = list(root.css(", ".join(TEXT_BLOCKS)))
    blocks += [
        node
        for node in root.css("div, section, article, span, font")
        if len(node.text(deep=False, strip=True)) >= 60
    ]
    scores: dict[int, float] = {}
    nodes: dict[int, LexborNode] = {}
    for block in blocks:
        own = block.tag in TEXT_BLOCKS
        text = block.text(deep=own, separator=" ", strip=True)
        if len(text) < 25:
            continue
        linked = sum(len(a.text(deep=True, strip=True)) for a in block.css("a"))
        score = (1 + text.count(",") + min(len(text) // 100, 3)) * (1 - linked / len(text))
        holder = block.parent if own else block
        for depth, container in enumerate((holder, holder.parent if holder else None)):
            if container is None:
                break
            nodes[container.mem_id] = container
            scores[container.mem_id] = scores.get(container.mem_id, 0.0) + score / (1 + depth)
    if not scores:
        return root.text(separator="\n", strip=True)
    best = nodes[max(scores, key=lambda key: scores[key])]
    top = scores[best.mem_id]
    while best.parent is not None and scores.get(best.parent.mem_id, 0.0) >= CLIMB * top:
        best = best.parent
    threshold = max(10.0, scores[best.mem_id] * SIBLING_SHARE)
    parent = best.parent
    kept = (
        [best]
        if parent is None
        else [
            child
            for child in parent.iter()
            if child.mem_id == best.mem_id or scores.get(child.mem_id, 0.0) >= threshold
        ]
    )
    return "\n".join(node.text(deep=True, separator="\n", strip=True) for node in kept)
