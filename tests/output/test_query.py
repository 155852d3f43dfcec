"""crawler.output.query: the forms a query's ranking tiers are built from."""

from __future__ import annotations

import pytest

from crawler.output.query import fts_query, names_a_column, single_phrase


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("pickle", '"pickle"'),
        ("os.path.join", '"os.path.join"'),
        ('"striped horse"', '"striped horse"'),
        ("日本語", '"日 本 語"'),
        ("two words", None),
        ("title:pickle", None),
        ("pick*", None),
        ("AND", None),
        ("+++", None),
    ],
)
def test_a_one_term_query_is_the_phrase_a_title_can_begin_with(
    text: str, phrase: str | None
) -> None:
    assert single_phrase(text) == phrase


def test_cjk_is_spaced_only_for_an_index_that_marks_it() -> None:
    assert fts_query("Python入門") == '"Python 入 門"'
    assert fts_query("Python入門", cjk=False) == '"Python入門"'
    assert single_phrase("入門", cjk=False) == '"入門"'


def test_a_query_that_names_a_column_is_told_apart() -> None:
    assert names_a_column("title:zebra stripes")
    assert names_a_column('text:"a phrase"')
    assert not names_a_column("zebra http://x.test/a:b")
    assert not names_a_column("note: this")
