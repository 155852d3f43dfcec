"""What an element's class, id, role and itemprop say it is: boilerplate (a menu, a footer, a
comment thread, a cookie banner, related links), content, or the article's body. Pure.

The words are the ones sites use, as readability, trafilatura and Resiliparse read them. The
rules are plain word tests, so that the compiled reading (crawler.page._pagescan) holds them as
the same data (`NAME_RULES`) and reads them the same way:
- the names are the class and the id joined by a space, ASCII letters lowered; a BEM modifier
  (`--ads` up to the next space: how a block looks or what it sits beside) is left out;
- boilerplate: one of `BOILERPLATE_PARTS` anywhere in the names (`comment` not as in
  `commentary`), a word of the names (between spaces, `-` and `_`) starting with one of
  `BOILERPLATE_PREFIXES`, or one of `BOILERPLATE_WORDS`; or role=navigation, complementary,
  contentinfo, banner, menu, menubar or dialog;
- content: one of `CONTENT_PARTS` in the names' first name (`post-comments` is content, as a
  post's wrapper often is), or role=main or article;
- the article's body: one of `ARTICLE_BODY_PARTS` in the names with `-` and `_` left out, or
  itemprop=articleBody.
"""

from __future__ import annotations

from selectolax.lexbor import LexborNode

__all__ = ["ARTICLE_BODY", "BOILERPLATE", "CONTENT", "NAME_RULES", "names_flags"]

BOILERPLATE, CONTENT, ARTICLE_BODY = 1, 2, 4

BOILERPLATE_PARTS = (
    "comment", "share", "social", "related", "sidebar", "footer", "header", "menu", "cookie",
    "consent", "gdpr", "banner", "breadcrumb", "subscri", "newsletter", "promo", "advert",
    "popup", "modal", "widget", "recommend", "outbrain", "taboola", "byline", "authorbio",
    "author-bio", "more-stories", "trending", "masthead", "skip", "pagination", "pager",
    "signup", "sign-up", "login", "paywall", "disqus", "rating", "toolbar", "printonly",
    "gallery", "print-only", "visuallyhidden", "visually-hidden", "sr-only", "screen-reader",
)  # fmt: skip
BOILERPLATE_PREFIXES = ("nav",)
BOILERPLATE_WORDS = ("ad", "ads", "tag", "tags")
CONTENT_PARTS = ("article", "content", "post", "entry", "story", "body", "main", "text", "blog")
ARTICLE_BODY_PARTS = (
    "articlebody", "articlecontent", "articletext", "entrycontent", "postbody", "postcontent",
    "posttext", "postentry", "storybody", "storycontent", "storytext", "maincontent",
    "contentbody", "richtext", "fieldbody", "nodebody",
)  # fmt: skip
BOILERPLATE_ROLES = (
    "navigation",
    "complementary",
    "contentinfo",
    "banner",
    "menu",
    "menubar",
    "dialog",
)
CONTENT_ROLES = ("main", "article")
NAME_RULES = (
    BOILERPLATE_PARTS,
    BOILERPLATE_PREFIXES,
    BOILERPLATE_WORDS,
    CONTENT_PARTS,
    ARTICLE_BODY_PARTS,
    BOILERPLATE_ROLES,
    CONTENT_ROLES,
)
"""The rules as data, in this order, for the compiled reading."""

_HTML_SPACE = " \t\n\r\f"
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_WORD_BREAKS = str.maketrans({"-": " ", "_": " ", "\t": " ", "\n": " ", "\r": " ", "\f": " "})


def _without_modifiers(names: str) -> str:
    while (at := names.find("--")) >= 0:
        end = at
        while end < len(names) and names[end] not in _HTML_SPACE:
            end += 1
        names = names[:at] + names[end:]
    return names


def _boilerplate(names: str) -> bool:
    at = names.find("comment")
    while at >= 0:
        if not names.startswith("ary", at + 7):
            return True
        at = names.find("comment", at + 7)
    if any(part in names for part in BOILERPLATE_PARTS[1:]):
        return True
    words = names.translate(_WORD_BREAKS).split(" ")
    return any(word in BOILERPLATE_WORDS or word.startswith(BOILERPLATE_PREFIXES) for word in words)


def names_flags(node: LexborNode) -> int:
    """BOILERPLATE, CONTENT and ARTICLE_BODY, as the element's names say."""
    attrs = node.attrs
    flags = 0
    role = attrs.get("role")
    if role:
        role = role.strip(_HTML_SPACE).translate(_LOWER)
        if role in BOILERPLATE_ROLES:
            flags |= BOILERPLATE
        elif role in CONTENT_ROLES:
            flags |= CONTENT
    itemprop = attrs.get("itemprop")
    if itemprop and itemprop.strip(_HTML_SPACE).translate(_LOWER) == "articlebody":
        flags |= ARTICLE_BODY | CONTENT
    names = " ".join(filter(None, (attrs.get("class"), attrs.get("id"))))
    if not names:
        return flags
    names = _without_modifiers(names.translate(_LOWER))
    first = names.lstrip(_HTML_SPACE)
    for index, char in enumerate(first):
        if char in _HTML_SPACE:
            first = first[:index]
            break
    if any(part in first for part in CONTENT_PARTS):
        flags |= CONTENT
    joined = names.replace("-", "").replace("_", "")
    if any(part in joined for part in ARTICLE_BODY_PARTS):
        flags |= ARTICLE_BODY
    if _boilerplate(names):
        flags |= BOILERPLATE
    return flags
