"""What each usage signal's value says, read as the README's table says (crawler.usage.vocab),
and how the statements that apply to a page combine for a purpose (crawler.usage.signals)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.usage.signals import (
    UsageSignal,
    refusal,
    refused_purposes,
    refusing_kinds,
    signals_from_json,
    signals_json,
)
from crawler.usage.vocab import KINDS, read_signal


def says(kind: str, value: str) -> dict[str, bool]:
    return dict(read_signal(kind, value).says)


def test_content_signal_names_the_purposes_one_to_one() -> None:
    assert says("Content-Signal", "search=yes, ai-input=no, ai-train=no") == {
        "search": True,
        "ai-input": False,
        "ai-train": False,
    }
    assert says("Content-Signal", "SEARCH = Yes ,AI-TRAIN=NO") == {
        "search": True,
        "ai-train": False,
    }


def test_content_signal_reports_what_it_cannot_read() -> None:
    reading = read_signal("Content-Signal", "ai-train=maybe, tdm=no, broken, use=reference")
    assert reading.says == ()
    assert reading.problems == (
        "ai-train=maybe: expected yes or no, ignored",
        "unknown key 'tdm', ignored",
        "'broken' is no key=value pair, ignored",
    )


def test_content_usage_is_a_structured_fields_dictionary() -> None:
    assert says("Content-Usage", "train-ai=n, ai-use=y, search=n") == {
        "ai-train": False,
        "ai-input": True,
        "search": False,
    }
    # Parameters ignored; the last of a key counts; a non-token says nothing.
    assert says("Content-Usage", "train-ai=y;x=1, train-ai=n;why=2") == {"ai-train": False}
    assert says("Content-Usage", "train-ai=n, train-ai=?1") == {}
    assert says("Content-Usage", 'search="n", train-ai=(n)') == {}


def test_a_value_that_is_no_dictionary_says_nothing_and_says_why() -> None:
    reading = read_signal("Content-Usage", "train-ai=n,,")
    assert reading.says == ()
    assert reading.problems and reading.problems[0].startswith("not a Structured Fields dictionary")


def test_noai_and_noimageai_refuse_the_ai_purposes_only() -> None:
    for word in ("noai", "noimageai"):
        assert says(word, word) == {"ai-input": False, "ai-train": False}


def test_tdm_reservation_one_refuses_zero_allows_anything_else_is_unset() -> None:
    assert says("tdm-reservation", "1") == {"ai-input": False, "ai-train": False}
    assert says("tdm-reservation", "0") == {"ai-input": True, "ai-train": True}
    assert says("tdm-reservation", "yes") == {}


def signal(kind: str, source: str, value: str) -> UsageSignal:
    return UsageSignal(kind, source, value)


def test_any_refusal_refuses_across_kinds_and_names_each_source() -> None:
    signals = [
        signal("Content-Signal", "robots.txt line 2", "ai-train=yes"),
        signal("Content-Usage", "header", "train-ai=n"),
        signal("noai", "meta robots", "noai"),
    ]
    assert refusal(signals, "search") is None
    assert refusal(signals, "ai-train") == (
        "usage: ai-train refused by Content-Usage 'train-ai=n' (header); noai (meta robots)"
    )
    assert refusing_kinds(signals, "ai-train") == ("Content-Usage", "noai")
    assert refused_purposes(signals) == ("ai-input", "ai-train")


def test_tdmrep_sources_override_each_other_more_specific_last() -> None:
    file_reserves = signal("tdm-reservation", "tdmrep.json rule 1 (/)", "1")
    header_lifts = signal("tdm-reservation", "header", "0")
    meta_reserves = signal("tdm-reservation", "meta tdm-reservation", "1")
    assert refusal([file_reserves], "ai-train") is not None
    assert refusal([file_reserves, header_lifts], "ai-train") is None
    assert refusal([meta_reserves, file_reserves, header_lifts], "ai-train") is not None
    # An unset value (a protocol error) does not reset what a less specific source said.
    unset = signal("tdm-reservation", "meta tdm-reservation", "2")
    assert refusal([file_reserves, unset], "ai-train") is not None


def test_signals_keep_through_json() -> None:
    signals = (
        UsageSignal("tdm-reservation", "header", "1", "https://a.test/policy.json"),
        signal("noimageai", "X-Robots-Tag", "noimageai"),
    )
    kept = signals_from_json(__import__("json").dumps(signals_json(signals)))
    assert kept == signals
    assert signals_json(signals)[0]["refuses"] == ["ai-input", "ai-train"]
    assert signals_from_json("not json") == () and signals_from_json('[{"signal": "x"}]') == ()


@given(st.sampled_from(KINDS), st.text(max_size=300))
def test_no_value_makes_a_reader_raise(kind: str, value: str) -> None:
    reading = read_signal(kind, value)
    assert all(purpose in ("search", "ai-input", "ai-train") for purpose, _ in reading.says)


def usage_table() -> str:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    return readme.split("<!-- usage table -->")[1].split("<!-- /usage table -->")[0]


def test_the_readmes_table_says_what_the_readers_do() -> None:
    """Each row of the README's usage table: a signal and value, and the purposes it refuses."""
    table = usage_table()
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]*)` \| ([^|]*) \|", table, re.MULTILINE)
    assert len(rows) >= 10
    for kind, value, refuses in rows:
        expected = tuple(re.findall(r"ai-input|ai-train|search", refuses))
        assert read_signal(kind, value).refuses() == expected, (kind, value)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_is_in_the_readmes_table(kind: str) -> None:
    assert f"| `{kind}` |" in usage_table()
