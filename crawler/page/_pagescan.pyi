"""Types of crawler.page._pagescan.c, the compiled page walk (see crawler.page.compiled)."""

from collections.abc import Callable

LEXBOR_LAYOUT: str
SELECTOLAX: str
TAG_CLASSES: dict[str, tuple[int, int, int]]
"""crawler.page.tag_classes.TAG_CLASSES, as the C prescan has it."""

def scan(
    document_address: int,
    marker_word: Callable[[str], tuple[int, int, int] | None],
    max_anchors: int,
    /,
) -> tuple[
    list[tuple[str, str | None, bool]],
    list[tuple[str | None, str | None, str | None]],
    str | None,
    str | None,
    str | None,
    str,
    str,
    str,
    int,
    bool,
]: ...
def links(
    anchors: list[tuple[str, str | None, bool]],
    resolve: Callable[[str], str],
    unusable_error: type[Exception],
    follow: bool,
    obey_rel: bool,
    join_parts: tuple[str, str],
    /,
) -> tuple[tuple[str, ...], tuple[str, ...], int]: ...
def prescan(
    source: bytes, max_depth: int, max_work: int, max_markers: int, /
) -> tuple[int, int]: ...
