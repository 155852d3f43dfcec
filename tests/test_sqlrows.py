"""Rows into SQLite as one JSON parameter: every value comes back as it went in."""

from __future__ import annotations

import math
import sqlite3

from hypothesis import given
from hypothesis import strategies as st

from crawler.sqlrows import encode_rows, row_values, select_rows

VALUES = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)


@given(st.lists(st.tuples(VALUES, VALUES, VALUES), max_size=30))
def test_rows_come_back_exactly(rows: list[tuple[object, object, object]]) -> None:
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, a, b, c)")
        numbered = [(n, *row) for n, row in enumerate(rows)]
        connection.execute(f"INSERT INTO t (n, a, b, c) {select_rows(4)}", (encode_rows(numbered),))
        back = connection.execute("SELECT n, a, b, c FROM t ORDER BY n").fetchall()
    finally:
        connection.close()
    assert len(back) == len(numbered)
    for got, sent in zip(back, numbered, strict=True):
        for value, expected in zip(got, sent, strict=True):
            if isinstance(expected, float):
                # -0.0 is 0.0 to SQLite; every other double makes the trip bit for bit.
                assert isinstance(value, float) and (value == expected or math.isclose(value, 0))
            elif isinstance(expected, str):
                assert value == expected.replace("\x00", "\ufffd")
            else:
                assert value == expected


def test_a_nul_becomes_a_replacement_character_and_nothing_else_changes() -> None:
    texts = ["a\x00b", "\\u0000", "\\\x00", "\x00\x00", "\\\\u0000"]
    connection = sqlite3.connect(":memory:")
    try:
        back = connection.execute(select_rows(1), (encode_rows([[t] for t in texts]),)).fetchall()
    finally:
        connection.close()
    assert [value for (value,) in back] == [t.replace("\x00", "\ufffd") for t in texts]


def test_row_values_name_each_position_of_the_row() -> None:
    assert row_values(2) == [
        "json_extract(batch.value, '$[0]')",
        "json_extract(batch.value, '$[1]')",
    ]
    assert select_rows(1) == "SELECT json_extract(batch.value, '$[0]') FROM json_each(?) AS batch"
