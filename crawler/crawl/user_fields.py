"""The library's per-page callable (`Crawler(config, extract=...)`): it receives a page's parsed
document and returns fields, a mapping of names to values JSON can hold, which go into the page's
record (`PageRecord.fields`, beside and over `extract:`'s).

Where it runs, so that it never holds the event loop: the page is parsed on a worker thread
(lexbor lets go of the GIL while it parses); a plain function runs there too, a coroutine
function on the loop, where it may await what it likes. A callable that raises, or returns what
is not such a mapping, is recorded on the page (`PageRecord.fields_error`), and the crawl goes
on. It is called for each page whose text is read (a 2xx HTML page, not noindex; not a recrawl's
unchanged page, which is not read again).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from multidict import CIMultiDictProxy
from selectolax.lexbor import LexborHTMLParser

from crawler.http.answer import Response
from crawler.page.charset import decode, sniff_encoding
from crawler.page.fields import field_selector, select

__all__ = ["PageDocument", "PageExtract", "UserExtract"]

MAX_FIELDS_CHARS = 1_000_000
"""The most a page's fields may take as JSON: more is recorded as the callable's error."""


@dataclass(frozen=True, slots=True)
class PageDocument:
    """A fetched page, parsed, as the `extract` callable receives it."""

    url: str
    """The URL whose answer this is (after redirects)."""
    status: int
    headers: CIMultiDictProxy[str] = field(repr=False)
    tree: LexborHTMLParser = field(repr=False)
    """The page parsed by selectolax's lexbor parser: `tree.css(...)`, `tree.css_first(...)`."""

    def css(self, selector: str) -> list[str]:
        """Every value a selector in parsel's dialect gives (`h1::text`, `a::attr(href)`)."""
        found = select(self.tree, field_selector("css", selector, all=True))
        return found if isinstance(found, list) else []

    def css_first(self, selector: str) -> str | None:
        """The first value a selector in parsel's dialect gives, or None."""
        found = select(self.tree, field_selector("css", selector))
        return found if isinstance(found, str) else None


PageExtract: TypeAlias = Callable[[PageDocument], Mapping[str, Any] | Awaitable[Mapping[str, Any]]]
"""The callable: a function or a coroutine function of the page's `PageDocument`."""


def _document(url: str, answer: Response) -> PageDocument:
    encoding, bom = sniff_encoding(answer.body, answer.charset)
    tree = LexborHTMLParser(decode(answer.body[bom:], encoding))
    return PageDocument(url, answer.status, answer.headers, tree)


class UserExtract:
    """The callable, and how it is run on a page (`run`)."""

    def __init__(self, function: PageExtract) -> None:
        if not callable(function):
            raise TypeError(f"extract must be a function of a page's document, not {function!r}")
        self._function = function
        self._on_loop = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
            getattr(function, "__call__", None)  # noqa: B004 (an object whose __call__ is async)
        )

    async def run(self, url: str, answer: Response) -> tuple[dict[str, Any] | None, str | None]:
        """The fields the callable gives for the page, or None and why it gave none."""
        try:
            document = await asyncio.to_thread(_document, url, answer)
            if self._on_loop:
                result = await self._function(document)  # type: ignore[misc]
            else:
                result = await asyncio.to_thread(self._function, document)
                if inspect.isawaitable(result):
                    result = await result
            return _checked(result), None
        except Exception as error:  # the user's code: recorded on the page, never fatal
            return None, f"{type(error).__name__}: {error}"[:1000]


def _checked(result: object) -> dict[str, Any]:
    if not isinstance(result, Mapping) or not all(isinstance(key, str) for key in result):
        raise TypeError(f"extract returned {type(result).__name__}, not a mapping of names")
    fields = dict(result)
    try:
        text = json.dumps(fields, ensure_ascii=False)
    except (TypeError, ValueError) as error:
        raise TypeError(f"extract returned values JSON cannot hold ({error})") from None
    if len(text) > MAX_FIELDS_CHARS:
        raise ValueError(f"extract returned more than {MAX_FIELDS_CHARS:,} characters of fields")
    return fields
