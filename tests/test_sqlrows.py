"""Rows into SQLite bound in chunks: every value comes back as it went in, however it is chunked."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler._sqlite import CHUNK_ROWS, bound_chunks, values_list, write_rows

VALUES = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)


def _bound_round_trip(connection: sqlite3.Connection, rows: list[tuple[object, ...]]) -> list[Any]:
    connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, a, b, c)")
    numbered = [(n, *row) for n, row in enumerate(rows)]
    write_rows(connection, "INSERT INTO t (n, a, b, c) {values}", numbered, 4)
    return connection.execute("SELECT n, a, b, c FROM t ORDER BY n").fetchall()


@given(st.lists(st.tuples(VALUES, VALUES, VALUES), max_size=30), st.integers(4, 40))
def test_bound_rows_come_back_exactly_however_they_are_chunked(
    rows: list[tuple[object, object, object]], most_values: int
) -> None:
    connection = sqlite3.connect(":memory:")
    try:
        # A small limit of placeholders per statement: the rows must go in several chunks.
        connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, most_values)
        back = _bound_round_trip(connection, rows)
    finally:
        connection.close()
    assert len(back) == len(rows)
    for got, sent in zip(back, [(n, *row) for n, row in enumerate(rows)], strict=True):
        for value, expected in zip(got, sent, strict=True):
            # Exactly, a NUL in a string included (-0.0 comes back as 0.0, which it equals).
            assert value == expected and type(value) is type(expected)


def test_bound_chunks_hold_at_most_chunk_rows_and_refuse_a_ragged_row() -> None:
    connection = sqlite3.connect(":memory:")
    try:
        chunks = list(bound_chunks(connection, [(n,) for n in range(CHUNK_ROWS * 2 + 1)], 1))
        assert [len(parameters) for _, parameters in chunks] == [CHUNK_ROWS, CHUNK_ROWS, 1]
        assert chunks[-1][0] == "VALUES (?)"
        with pytest.raises(ValueError, match="2 values"):
            list(bound_chunks(connection, [(1, 2), (3,)], 2))
    finally:
        connection.close()


def test_values_list_has_a_placeholder_per_value() -> None:
    assert values_list(2, 3) == "VALUES (?, ?, ?), (?, ?, ?)"
