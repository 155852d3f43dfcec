"""Our own name in robots.txt: the product token a crawl is matched with, read from its User-Agent
the way the field writes one, and whether robots.txt files can name it. Pure.

A crawler's User-Agent is its product token first (`PoliteBot/1.0 (+https://x.org/bot)`), or, in
the form Googlebot, Bingbot, YandexBot and Heritrix use, a browser's compatibility prefix with the
crawler's own product after `compatible;` in a comment: `Mozilla/5.0 (compatible;
Googlebot/2.1; +http://www.google.com/bot.html)`, also inside a browser's whole string
(`Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +...)
Chrome/116.0 Safari/537.36`). Read as its first product, such a string is `Mozilla`: a site's
`User-agent: Googlebot` group would not apply, and one for browsers might. So a first product
that is a browser's is passed over for the product after `compatible;`, else for the first later
product that is no browser's; a string that names only browsers names no crawler, and is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from crawler.errors import InvalidProductTokenError
from crawler.robots.lines import product_token_of

__all__ = [
    "BROWSER_TOKENS",
    "AgentToken",
    "agent_token_of",
    "browser_token_refusal",
    "product_token_from_user_agent",
    "validate_product_token",
]

_VALID_TOKEN = re.compile(r"[A-Za-z_-]+")

BROWSER_TOKENS = frozenset(
    name.lower()
    for name in (
        # The products and comment words browsers' User-Agent strings are made of.
        "Mozilla",
        "AppleWebKit",
        "KHTML",
        "Gecko",
        "Chrome",
        "Chromium",
        "HeadlessChrome",
        "CriOS",
        "Safari",
        "Mobile",
        "Version",
        "Firefox",
        "FxiOS",
        "Opera",
        "OPR",
        "Edge",
        "Edg",
        "EdgA",
        "EdgiOS",
        "MSIE",
        "Trident",
        "SamsungBrowser",
        "YaBrowser",
        "Vivaldi",
        "UCBrowser",
        "Brave",
    )
)
"""Product tokens of browsers (ASCII case aside): a crawler never obeys robots.txt as one."""


@dataclass(frozen=True, slots=True)
class AgentToken:
    """The product token robots.txt groups, META robots and X-Robots-Tag are matched with."""

    token: str
    source: str
    """Where it was read, as the crawl says it at the start: "the User-Agent's first product",
    "'compatible; NewcomerBot/1.0' in the User-Agent", "robots.token"."""


def validate_product_token(token: str) -> str:
    """Return `token` if robots.txt files can name it, else raise InvalidProductTokenError."""
    if _VALID_TOKEN.fullmatch(token):
        return token
    seen_as = product_token_of(token)
    hint = f" (a robots.txt line 'User-agent: {token}' is read as '{seen_as}')" if seen_as else ""
    raise InvalidProductTokenError(
        f"product token {token!r} is not valid: it must be one or more of the letters A-Z, a-z, "
        f"'-' and '_' (RFC 9309 section 2.2.1){hint}"
    )


def browser_token_refusal(token: str) -> str | None:
    """Why `token` is no crawler's name (it is a browser's), or None."""
    if token.lower() not in BROWSER_TOKENS:
        return None
    return (
        f"{token} is a browser's product token: robots.txt groups for it are meant for "
        "browsers, and a site's rules for crawlers would not apply"
    )


def product_token_from_user_agent(user_agent: str) -> str:
    """The product token of a User-Agent string (`agent_token_of`): `PoliteBot/1.0
    (+https://x.org/bot)` gives `PoliteBot`; `Mozilla/5.0 (compatible; NewcomerBot/1.0; +...)`
    gives `NewcomerBot`."""
    return agent_token_of(user_agent).token


def agent_token_of(user_agent: str) -> AgentToken:
    """The product token `user_agent` names its crawler by, and where it was read (see the
    module doc). Raises InvalidProductTokenError when that token is not one robots.txt files can
    name, or when the string names only browsers."""
    products, comments = _parts(user_agent)
    first = _name(products[0]) if products else ""
    if first.lower() not in BROWSER_TOKENS:
        return AgentToken(validate_product_token(first), "the User-Agent's first product")
    for comment in comments:
        words = [word.strip() for word in comment.split(";")]
        for index, word in enumerate(words[:-1]):
            if word.lower() != "compatible" or not words[index + 1]:
                continue
            product = words[index + 1].split()[0]
            name = _name(product)
            if name and name.lower() not in BROWSER_TOKENS:
                return AgentToken(
                    validate_product_token(name), f"'compatible; {product}' in the User-Agent"
                )
    for product in products[1:]:
        name = _name(product)
        if name and name.lower() not in BROWSER_TOKENS:
            return AgentToken(validate_product_token(name), f"the User-Agent's product {product}")
    raise InvalidProductTokenError(
        f"{user_agent.strip()!r} names no crawler: read as it is, robots.txt would be "
        f"obeyed as {first}, a browser's product token. Name the crawler in it, as Googlebot and "
        "Bingbot do ('Mozilla/5.0 (compatible; YourBot/1.0; +https://your.site/bot)'), or set "
        "robots.token to its name"
    )


def _name(product: str) -> str:
    """A product's name: `Googlebot/2.1` gives `Googlebot`."""
    return product.split("/", 1)[0]


def _parts(user_agent: str) -> tuple[list[str], list[str]]:
    """The products of a User-Agent string (RFC 9110 10.1.5) and the text of its comments, each
    in order: `A/1 (x; y) B/2` gives (['A/1', 'B/2'], ['x; y']). Nested comments are part of the
    one they are in; an unclosed one runs to the end."""
    products: list[str] = []
    comments: list[str] = []
    word: list[str] = []
    comment: list[str] = []
    depth = 0
    escaped = False
    for char in user_agent:
        if depth:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
                continue
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if not depth:
                    comments.append("".join(comment))
                    comment = []
                    continue
            comment.append(char)
        elif char == "(":
            depth = 1
            if word:
                products.append("".join(word))
                word = []
        elif char.isspace():
            if word:
                products.append("".join(word))
                word = []
        else:
            word.append(char)
    if word:
        products.append("".join(word))
    if comment:
        comments.append("".join(comment))
    return products, comments
