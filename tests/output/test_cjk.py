"""crawler.output.cjk: each CJK character a token of the index, marked in and out again."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.output.cjk import MARK, has_cjk, marked, python_marked, spaced, unmarked


def tokens(text: str) -> list[str]:
    """What the index's tokenizer makes of `text`."""
    connection = sqlite3.connect(":memory:")
    connection.execute(
        "CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'unicode61 remove_diacritics 2')"
    )
    connection.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')")
    connection.execute("INSERT INTO t VALUES (?)", (text,))
    return [row[0] for row in connection.execute("SELECT term FROM v ORDER BY offset")]


def test_each_cjk_character_is_a_token_and_latin_words_stay_whole() -> None:
    text = "Debian システムを最新に保つ。Python入門 café 한국어를 々"
    assert tokens(marked(text)) == [
        "debian",
        *"システムを最新に保つ",
        "python",
        *"入門",
        "cafe",
        *"한국어를",
        "々",
    ]
    # Without the marks a whole run is one token: the word inside it is never found.
    assert "最新" not in tokens(text) and "システムを最新に保つ" in tokens(text)


def test_text_without_cjk_is_left_alone() -> None:
    text = "Crème brûlée, naïve façade — 3.14 ± 2"
    assert marked(text) is text
    assert not has_cjk(text)
    assert has_cjk("a 中 b")


def test_a_mark_already_in_the_text_is_dropped_so_every_mark_read_back_is_ours() -> None:
    assert marked(f"x{MARK}y") == "xy"
    assert unmarked(marked(f"中{MARK}文")) == "中文"


@given(st.text(alphabet=st.sampled_from("ab 1中文日本語カナ한。, \n\u2063é")))
def test_marks_come_out_as_they_went_in(text: str) -> None:
    assert unmarked(marked(text)) == text.replace(MARK, "")


def test_a_query_term_is_spaced_as_the_text_was_marked() -> None:
    assert spaced("Python入門") == "Python 入 門"
    assert spaced("日本語") == "日 本 語"
    assert spaced("c++") == "c++"
    assert tokens(spaced("最新に")) == tokens(marked("最新に"))


@given(st.text(alphabet=st.sampled_from("aZ9 _中文日本語カナ・한。, \n\u2063é\U00020000ｱ々\u3007")))
def test_the_compiled_marking_gives_the_python_answers(text: str) -> None:
    compiled = pytest.importorskip("crawler.output._cjkmark")
    assert compiled.marked(text) == python_marked(text)


def test_the_compiled_marking_is_used_where_built() -> None:
    try:
        import crawler.output._cjkmark
    except ImportError:
        assert marked is python_marked
    else:
        assert marked is crawler.output._cjkmark.marked
