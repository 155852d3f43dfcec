"""Many rows into SQLite in one statement: the rows go in as one JSON array of arrays, which the
statement reads with `json_each`.

Why not `executemany`: the sqlite3 module lets go of the GIL around every statement it steps and
must take it back after, and `executemany` steps once per row. When another thread wants the GIL
meanwhile (the index writer beside the crawl's event loop, or the loop beside the writer), every
taking back waits up to the interpreter's switch interval, 5 ms. Measured: 500 rows of host
timing, INSERT OR REPLACE, took 1.4 to 1.9 ms alone and 0.34 to 2.3 s beside one busy Python
thread; the index writer's 500-page batches took 34 s that way, against 2 s in one statement.
Inside the crawl this was the state's commits holding the event loop for up to 75 ms.

Values: text, integers, floats (a float makes the trip exactly: checked on 45,000 doubles) and
NULL. Not blobs: JSON has no bytes; tables with blobs keep `executemany`. A NUL character cannot
make the trip (SQLite's JSON functions end the string there): it is stored as U+FFFD, what an
HTML parser makes of one in text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["encode_rows", "row_values", "select_rows"]

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


def row_values(count: int, row: str = "batch") -> list[str]:
    """SQL for the `count` values of the JSON row named `row` in the FROM clause."""
    return [f"json_extract({row}.value, '$[{position}]')" for position in range(count)]


def select_rows(count: int) -> str:
    """`SELECT v0, v1, ... FROM json_each(?) AS batch`: the rows of one `encode_rows` parameter,
    in order, as a SELECT an INSERT can take its values from."""
    return f"SELECT {', '.join(row_values(count))} FROM json_each(?) AS batch"


def encode_rows(rows: Iterable[Sequence[Any]]) -> str:
    """The parameter `select_rows` reads: a JSON array of the rows, each an array of values.

    Row by row, not in one call: the JSON encoder holds the GIL for as long as one call takes, and
    a batch of 500 pages' text is about 6 MB, 20 to 30 ms of encoding during which the event loop
    (on another thread) could not run. Between rows the interpreter may switch threads."""
    encoded = "[" + ",".join([_encode(row) for row in rows]) + "]"
    if "\\u0000" in encoded:  # rare: a scan first, the careful replace only when needed
        encoded = _ESCAPED_NUL.sub(r"\1\\ufffd", encoded)
    return encoded


# An escaped NUL (\u0000) not itself escaped: after an even run of backslashes.
_ESCAPED_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")
