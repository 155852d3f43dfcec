"""The conformance vectors of the robots.txt usage lines (tests/data/usage_cases.jsonl): groups,
paths, ties and malformed values, each with the answer expected and why, in the style of the
shared robots.txt vectors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.robots.txt import RobotsTxt
from crawler.usage.signals import UsageSignal, refusal

CASES = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "data" / "usage_cases.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
]


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_usage_case(case: dict[str, Any]) -> None:
    robots = RobotsTxt.parse(case["robots"])
    lines = robots.usage_lines("https://a.test" + case["url"], case["agent"])
    signals = [UsageSignal(line.key, f"robots.txt line {line.line}", line.value) for line in lines]
    refused = refusal(signals, case["purpose"])
    assert (refused is not None) == case["expected_refused"], case["why"]


def test_every_case_says_why_and_where_its_answer_comes_from() -> None:
    assert len({case["id"] for case in CASES}) == len(CASES)
    for case in CASES:
        assert case["why"] and case["basis"], case["id"]
    # Both answers are asked of every kind of line, and of each purpose.
    assert {case["expected_refused"] for case in CASES} == {True, False}
    assert {case["purpose"] for case in CASES} == {"search", "ai-input", "ai-train"}


_LINE = st.one_of(
    st.sampled_from(
        ["User-agent: *", "User-agent: crawler", "Allow: /", "Disallow: /a", "Content-Usage:"]
    ),
    st.builds(
        lambda key, path, value: f"{key}: {path} {value}",
        st.sampled_from(["Content-Usage", "content-signal", "CONTENT-USAGE", "Content-Signal"]),
        st.text(alphabet="/*$%aé?=:; \t", max_size=12),
        st.text(max_size=40),
    ),
)


@given(st.lists(_LINE, max_size=12), st.text(alphabet="/*$%aé?=", max_size=16))
def test_no_robots_txt_makes_the_usage_lines_raise(lines: list[str], path: str) -> None:
    robots = RobotsTxt.parse("\n".join(lines))
    for agent in ("crawler", "other"):
        found = robots.usage_lines("https://a.test/" + path, agent)
        signals = [
            UsageSignal(line.key, f"robots.txt line {line.line}", line.value) for line in found
        ]
        for purpose in ("search", "ai-input", "ai-train"):
            refusal(signals, purpose)
        robots.all_usage_lines(agent)
