"""Links in the Markdown of a page's main content, made absolute after the reading. Pure.

The reading (crawler.page.markdown, and its compiled twin) leaves each link as a numbered mark,
`LINK_OPEN` text `TARGET` n `TARGET_END`, and each image as `IMAGE_OPEN` alt `TARGET` n
`TARGET_END`, and lists the hrefs in order; `with_links` resolves each href and writes the link,
or the link's text alone where an href is no usable link (an image goes). The marks are C0
controls, which the reading takes out of the page's own text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["IMAGE_OPEN", "LINK_OPEN", "TARGET", "TARGET_END", "with_links"]

LINK_OPEN, TARGET, TARGET_END, IMAGE_OPEN = "\x02", "\x03", "\x04", "\x05"
_IMAGE = re.compile("\x05([^\x02-\x05]*)\x03([0-9]+)\x04")
_LINK = re.compile("\x02([^\x02-\x05]*)\x03([0-9]+)\x04")


def _destination(url: str) -> str:
    """A URL as a Markdown link destination."""
    url = url.replace("|", "%7C")
    if any(char in url for char in " ()<>"):
        return "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
    return url


def with_links(markdown: str, hrefs: list[str], resolve: Callable[[str], str | None]) -> str:
    """`markdown` with each marked link's URL, resolved by `resolve` (None: no usable link: the
    link's text stays, an image goes)."""
    if not hrefs:
        return markdown
    urls = [resolve(href) for href in hrefs]

    def image(match: re.Match[str]) -> str:
        url = urls[int(match.group(2))]
        return "" if url is None else f"![{match.group(1)}]({_destination(url)})"

    def link(match: re.Match[str]) -> str:
        url = urls[int(match.group(2))]
        if url is None or url.startswith("javascript:"):
            return match.group(1)
        return f"[{match.group(1)}]({_destination(url)})"

    markdown = _IMAGE.sub(image, markdown)
    while LINK_OPEN in markdown:
        markdown, count = _LINK.subn(link, markdown)
        if not count:
            break
    return markdown
