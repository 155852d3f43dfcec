"""Words and widths for what the CLI prints: counts in English (`1 URL`, `2 URLs`) and lines that
fit a terminal without the terminal wrapping them.

Pure functions but `terminal_width` and `ellipsis_for`, which ask the stream. A line is measured
in terminal columns: East Asian wide characters take two, combining marks none, and control
characters (a server's error text may hold an escape sequence) are shown escaped, never sent.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import textwrap
import unicodedata
from typing import TextIO

__all__ = [
    "ELLIPSIS",
    "columns",
    "counted",
    "ellipsis_for",
    "fit",
    "fit_for",
    "fit_text",
    "printable",
    "terminal_width",
    "wrap",
]

ELLIPSIS = "\u2026"
"""What a cut line ends with; `...` on a stream whose encoding cannot write it."""

CONTINUATION = "    "
"""How much deeper than its line the lines a long line is wrapped onto are indented."""

FIELDS = "  "
"""What separates the fields of an item of a list in a report (a host and its figures)."""


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 URL`, `2 URLs`, `0 URLs`; `plural` for nouns that do not take an s (`retries`)."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {plural if plural is not None else noun + 's'}"


def printable(text: str) -> str:
    """`text` with control characters written as escapes (`\\x1b`), so that what a server sent
    cannot move the cursor or change colours."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def _char_columns(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def columns(text: str) -> int:
    """Terminal columns `text` takes (printable text: see `printable`)."""
    if text.isascii():
        return len(text)
    return sum(_char_columns(char) for char in text)


def fit(line: str, width: int, ellipsis: str = ELLIPSIS) -> str:
    """`line` cut to at most `width` columns, ending with `ellipsis` when cut."""
    line = printable(line)
    if columns(line) <= width:
        return line
    room = width - columns(ellipsis)
    if room <= 0:
        return ellipsis[: max(width, 0)]
    kept, used = [], 0
    for char in line:
        used += _char_columns(char)
        if used > room:
            break
        kept.append(char)
    return "".join(kept).rstrip() + ellipsis


def _word_wrap(line: str, width: int, continuation: str) -> list[str]:
    return textwrap.wrap(
        line,
        width,
        subsequent_indent=continuation,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _pack_fields(line: str, width: int, indent: str, continuation: str) -> list[str]:
    """An item of a list (`  origin  requests 15  interval 2 s ...`) broken between its fields,
    as many on a line as fit."""
    fields = line.strip().split(FIELDS)
    lines = [indent + fields[0]]
    for item in fields[1:]:
        longer = lines[-1] + FIELDS + item
        if columns(longer) <= width:
            lines[-1] = longer
        else:
            lines.append(continuation + item)
    return lines


def wrap(line: str, width: int, ellipsis: str = ELLIPSIS) -> list[str]:
    """`line` on lines of at most `width` columns: an item of a list (an indented line) broken
    between its fields, prose at spaces; the lines after the first indented `CONTINUATION`
    deeper; a word longer than a line (a long URL) cut with `ellipsis`."""
    line = printable(line)
    if columns(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip(" "))]
    continuation = indent + CONTINUATION
    if width < len(continuation) + 12:  # too narrow to wrap readably: cut instead
        return [fit(line, width, ellipsis)]
    if indent and FIELDS in line.strip():
        pieces = _pack_fields(line, width, indent, continuation)
    else:
        pieces = [line]
    wrapped = [
        part
        for piece in pieces
        for part in (
            [piece]
            if columns(piece) <= width
            else _word_wrap(piece, width, continuation) or [piece]  # nothing but spaces
        )
    ]
    return [fit(part, width, ellipsis) for part in wrapped]


def fit_text(text: str, width: int | None, ellipsis: str = ELLIPSIS) -> str:
    """A report's lines made to fit `width` columns (None: left whole, but for control
    characters): each wrapped (`wrap`), so that no figure is lost and the terminal wraps
    nothing."""
    lines = text.split("\n")
    if width is None:
        return "\n".join(printable(line) for line in lines)
    return "\n".join(part for line in lines for part in wrap(line, width, ellipsis))


def terminal_width(stream: TextIO) -> int | None:
    """The columns a line written to `stream` may take without the terminal wrapping it; None
    when `stream` is not a terminal (a file or a pipe has no width: nothing is cut).

    One column less than the terminal's: a terminal that wraps as soon as the last column is
    written would otherwise move a redrawn line down a row. `COLUMNS` overrides the terminal's
    width, as `shutil.get_terminal_size` has it."""
    try:
        if not stream.isatty():
            return None
    except ValueError:  # closed
        return None
    size = shutil.get_terminal_size()  # COLUMNS, else stdout's terminal, else 80
    if not os.environ.get("COLUMNS", "").strip().isdigit():
        # The terminal this stream writes to: stdout may be a file while stderr is not.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            size = os.get_terminal_size(stream.fileno())
    return max(size.columns - 1, 1) if size.columns > 0 else 79


def ellipsis_for(stream: TextIO) -> str:
    """`ELLIPSIS`, or `...` when the stream's encoding cannot write it."""
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        ELLIPSIS.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return "..."
    return ELLIPSIS


def fit_for(stream: TextIO, text: str) -> str:
    """`text` as `fit_text` makes it for `stream`: fitted to a terminal, whole for a file."""
    return fit_text(text, terminal_width(stream), ellipsis_for(stream))
