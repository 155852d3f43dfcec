"""The tag classes of the prescan's model (crawler.page.bounds): the tags its model of the HTML
standard's tree builder tells apart, and how. Pure: constants and one table.

crawler/page/_pagescan.c has the same bits and table for its `prescan`; a test compares the
tables.
"""

from __future__ import annotations

__all__ = [
    "BREAKOUT_TAGS",
    "INTEGRATION_POINTS",
    "IN_FOREIGN",
    "IS_FOREIGN",
    "IS_FORMATTING",
    "IS_LIST",
    "IS_LIST_STOP",
    "IS_MARKER",
    "IS_NOINDEX",
    "IS_PLAINTEXT",
    "IS_RAW_TEXT",
    "IS_SCOPE",
    "IS_SPECIAL",
    "IS_TABLE_BOUNDARY",
    "IS_TABLE_PART",
    "IS_VOID",
    "M_A",
    "M_BUTTON",
    "M_DD",
    "M_DT",
    "M_LI",
    "M_NOBR",
    "M_OPTGROUP",
    "M_OPTION",
    "M_P",
    "M_TD",
    "M_TH",
    "M_TR",
    "PAST_DEPTH",
    "STOP_ALL",
    "TAG_CLASSES",
]

# The model's tag classes: (what the tag is, the open elements its start tag closes near the top
# of the stack, the open elements that search stops at). The same bits and table as the C's.
IS_RAW_TEXT, IS_VOID, IS_FOREIGN, IS_PLAINTEXT, IS_NOINDEX = 1, 2, 4, 8, 16
IS_SCOPE = 32
"""A check for an element in (default) scope stops at it."""
IS_SPECIAL = 64
"""The HTML standard's special category."""
STOP_ALL = 128
"""As a search's stop: only the current node is looked at."""
M_P, M_LI, M_DT, M_DD, M_OPTION, M_OPTGROUP = (1 << bit for bit in range(8, 14))
M_TR, M_TD, M_TH, M_A, M_BUTTON, M_NOBR = (1 << bit for bit in range(14, 20))
IS_FORMATTING = 1 << 20
"""Kept in the list of active formatting elements, rebuilt after it is popped."""
IS_MARKER = 1 << 21
"""Puts a marker in that list: what is before it is not rebuilt inside it."""
IS_TABLE_BOUNDARY = 1 << 22
"""A check for an element in table scope stops at it."""
IS_LIST = 1 << 23
"""A check for an element in list item scope stops at it too."""
IS_LIST_STOP = 1 << 24
"""A start tag's search for the <li> (<dd>, <dt>) it closes stops at it: special, not address,
div or p."""
IS_TABLE_PART = 1 << 25
"""Its end tag is looked for in table scope."""
IN_FOREIGN = 1 << 30
"""On the model's stack only: the element is in SVG or MathML."""
PAST_DEPTH = 1 << 29
"""On the model's stack only: the element opened past max_depth. The parser never sees it
(its tags are taken out, or an <a> closed at once): what it holds is read as its siblings'."""
BREAKOUT_TAGS = frozenset(
    b"b big blockquote body br center code dd div dl dt em embed font h1 h2 h3 h4 h5 h6 head hr "
    b"i img li listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt "
    b"u ul var".split()
)
"""Start tags that end foreign content (the HTML standard's "in foreign content"); <font> only
with some attributes, but counted always: the model may count deeper, never shallower."""
INTEGRATION_POINTS = frozenset(b"foreignobject desc title mi mo mn ms mtext annotation-xml".split())
"""Foreign elements whose content is HTML again."""
TAG_CLASSES: dict[bytes, tuple[int, int, int]] = {
    b"script": (IS_RAW_TEXT, 0, 0),
    b"style": (IS_RAW_TEXT, 0, 0),
    b"xmp": (IS_RAW_TEXT, M_P, IS_SCOPE | M_BUTTON),
    b"iframe": (IS_RAW_TEXT, 0, 0),
    b"noembed": (IS_RAW_TEXT, 0, 0),
    b"noframes": (IS_RAW_TEXT, 0, 0),
    b"textarea": (IS_RAW_TEXT, 0, 0),
    b"title": (IS_RAW_TEXT, 0, 0),
    b"area": (IS_VOID, 0, 0),
    b"base": (IS_VOID, 0, 0),
    b"basefont": (IS_VOID, 0, 0),
    b"bgsound": (IS_VOID, 0, 0),
    b"br": (IS_VOID, 0, 0),
    b"col": (IS_VOID, 0, 0),
    b"embed": (IS_VOID, 0, 0),
    b"frame": (IS_VOID, 0, 0),
    b"hr": (IS_VOID, 0, 0),
    b"img": (IS_VOID, 0, 0),
    b"input": (IS_VOID, 0, 0),
    b"keygen": (IS_VOID, 0, 0),
    b"link": (IS_VOID, 0, 0),
    b"meta": (IS_VOID, 0, 0),
    b"param": (IS_VOID, 0, 0),
    b"source": (IS_VOID, 0, 0),
    b"track": (IS_VOID, 0, 0),
    b"wbr": (IS_VOID, 0, 0),
    b"html": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_BOUNDARY, 0, 0),
    b"table": (
        IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_BOUNDARY | IS_TABLE_PART,
        M_P,
        IS_SCOPE | M_BUTTON,
    ),
    b"td": (
        IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART | IS_MARKER | M_TD,
        M_TD | M_TH,
        IS_TABLE_BOUNDARY,
    ),
    b"th": (
        IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART | IS_MARKER | M_TH,
        M_TD | M_TH,
        IS_TABLE_BOUNDARY,
    ),
    b"caption": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART | IS_MARKER, 0, 0),
    b"marquee": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_MARKER, 0, 0),
    b"object": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_MARKER, 0, 0),
    b"applet": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_MARKER, 0, 0),
    b"template": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_BOUNDARY | IS_MARKER, 0, 0),
    b"mi": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"mo": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"mn": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"ms": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"mtext": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"annotation-xml": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"foreignobject": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"desc": (IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"address": (IS_SPECIAL, M_P, IS_SCOPE | M_BUTTON),
    b"article": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"aside": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"blockquote": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"body": (IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"button": (IS_SPECIAL | IS_LIST_STOP | M_BUTTON, M_BUTTON, IS_SCOPE),
    b"center": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"colgroup": (IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"dd": (IS_SPECIAL | IS_LIST_STOP | M_DD, M_DT | M_DD | M_P, IS_LIST_STOP),
    b"details": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"dir": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"div": (IS_SPECIAL, M_P, IS_SCOPE | M_BUTTON),
    b"dl": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"dt": (IS_SPECIAL | IS_LIST_STOP | M_DT, M_DT | M_DD | M_P, IS_LIST_STOP),
    b"fieldset": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"figcaption": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"figure": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"footer": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"form": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"frameset": (IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"h1": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"h2": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"h3": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"h4": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"h5": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"h6": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"head": (IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"header": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"hgroup": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"li": (IS_SPECIAL | IS_LIST_STOP | M_LI, M_LI | M_P, IS_LIST_STOP),
    b"listing": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"main": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"menu": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"nav": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"noscript": (IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"ol": (IS_SPECIAL | IS_LIST_STOP | IS_LIST, M_P, IS_SCOPE | M_BUTTON),
    b"p": (IS_SPECIAL | M_P, M_P, IS_SCOPE | M_BUTTON),
    b"pre": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"search": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"section": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"select": (IS_SPECIAL | IS_LIST_STOP, 0, 0),
    b"summary": (IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON),
    b"tbody": (IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART, 0, 0),
    b"tfoot": (IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART, 0, 0),
    b"thead": (IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART, 0, 0),
    b"tr": (
        IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART | M_TR,
        M_TR | M_TD | M_TH,
        IS_TABLE_BOUNDARY,
    ),
    b"ul": (IS_SPECIAL | IS_LIST_STOP | IS_LIST, M_P, IS_SCOPE | M_BUTTON),
    b"dialog": (0, M_P, IS_SCOPE | M_BUTTON),
    b"plaintext": (IS_PLAINTEXT, M_P, IS_SCOPE | M_BUTTON),
    b"option": (M_OPTION, M_OPTION, STOP_ALL),
    b"optgroup": (M_OPTGROUP, M_OPTION | M_OPTGROUP, STOP_ALL),
    b"a": (IS_FORMATTING | M_A, M_A, IS_SPECIAL),
    b"nobr": (IS_FORMATTING | M_NOBR, M_NOBR, IS_SPECIAL),
    b"b": (IS_FORMATTING, 0, 0),
    b"big": (IS_FORMATTING, 0, 0),
    b"code": (IS_FORMATTING, 0, 0),
    b"em": (IS_FORMATTING, 0, 0),
    b"font": (IS_FORMATTING, 0, 0),
    b"i": (IS_FORMATTING, 0, 0),
    b"s": (IS_FORMATTING, 0, 0),
    b"small": (IS_FORMATTING, 0, 0),
    b"strike": (IS_FORMATTING, 0, 0),
    b"strong": (IS_FORMATTING, 0, 0),
    b"tt": (IS_FORMATTING, 0, 0),
    b"u": (IS_FORMATTING, 0, 0),
    b"svg": (IS_FOREIGN, 0, 0),
    b"math": (IS_FOREIGN, 0, 0),
    b"noindex": (IS_NOINDEX, 0, 0),
}
"""ASCII-lowered tag name: (flags, closes, stops). Tags not here are none of these."""
