"""crawler.robots.agent: the product token a User-Agent string names its crawler by, as the
field writes one (tests/data/agent_tokens.jsonl), and the robots.txt group it then obeys
(tests/data/agent_robots.jsonl): vectors, each with its expected answer and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crawler.errors import ConfigError, InvalidProductTokenError
from crawler.robots.agent import (
    agent_token_of,
    browser_token_refusal,
    product_token_from_user_agent,
)
from crawler.robots.txt import RobotsTxt

DATA = Path(__file__).resolve().parents[1] / "data"


def vectors(name: str) -> list[Any]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [pytest.param(case, id=case["why"]) for case in map(json.loads, lines)]


@pytest.mark.parametrize("case", vectors("agent_tokens.jsonl"))
def test_the_token_a_user_agent_names(case: dict[str, Any]) -> None:
    if case["token"] is None:
        with pytest.raises(InvalidProductTokenError):
            agent_token_of(case["user_agent"])
        return
    assert agent_token_of(case["user_agent"]).token == case["token"]
    assert product_token_from_user_agent(case["user_agent"]) == case["token"]


@pytest.mark.parametrize("case", vectors("agent_robots.jsonl"))
def test_the_group_a_user_agent_obeys(case: dict[str, Any]) -> None:
    token = agent_token_of(case["user_agent"]).token
    assert RobotsTxt.parse(case["robots"]).can_fetch(case["url"], token) is case["allowed"]


def test_where_the_token_was_read_is_said() -> None:
    assert agent_token_of("PoliteBot/0.1 (+https://example.org/bot)").source == (
        "the User-Agent's first product"
    )
    assert agent_token_of("Mozilla/5.0 (compatible; NewcomerBot/1.0; +https://x)").source == (
        "'compatible; NewcomerBot/1.0' in the User-Agent"
    )
    assert agent_token_of("Mozilla/5.0 (X11) Gecko/20100101 Firefox/121.0 Newcomer/2").source == (
        "the User-Agent's product Newcomer/2"
    )


def test_a_browser_string_is_refused_with_what_to_write_instead() -> None:
    with pytest.raises(InvalidProductTokenError) as raised:
        agent_token_of("Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36")
    message = str(raised.value)
    assert "names no crawler" in message and "obeyed as Mozilla" in message
    assert "(compatible; YourBot/1.0; +https://your.site/bot)" in message
    assert "robots.token" in message
    assert isinstance(raised.value, ConfigError)


@pytest.mark.parametrize(
    ("token", "refused"),
    [("Mozilla", True), ("mozilla", True), ("Safari", True), ("Chrome", True), ("Gecko", True),
     ("NewcomerBot", False), ("Googlebot", False), ("MozillaBot", False)],
)  # fmt: skip
def test_a_browser_token_is_no_crawler_name(token: str, refused: bool) -> None:
    assert (browser_token_refusal(token) is not None) is refused
