"""Configuration: loaded and validated once, errors that name the file, the key and the want."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.config import Config, RobotsConfig, load_config
from crawler.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "crawler.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_documented_file_holds_exactly_the_defaults() -> None:
    assert load_config(REPO / "config" / "crawler.yaml") == Config()


def test_no_file_gives_defaults_and_the_token_comes_from_the_user_agent() -> None:
    config = load_config()
    assert config == Config()
    assert config.product_token == "PoliteBot"


def test_values_and_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, "user_agent: FooBot/2 (+x)\nrobots:\n  precedence: first-match\n")
    config = load_config(path, ["robots.split_values=true", "robots.token=Bar-Bot"])
    assert config.robots == RobotsConfig(
        token="Bar-Bot", precedence="first-match", split_values=True
    )
    assert config.product_token == "Bar-Bot"
    assert config.robots.options().precedence == "first-match"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("robots:\n  precedense: first-match\n", "unknown key robots.precedense"),
        ("robot:\n  token: X\n", "unknown key robot"),
        ("robots:\n  split_values: yes please\n", "robots.split_values must be true or false"),
        ("robots:\n  precedence: last\n", "precedence must be 'longest-match' or 'first-match'"),
        ("robots:\n  token: MJ12bot\n", "product token 'MJ12bot' is not valid"),
        ("user_agent: ''\n", "user_agent must be a non-empty string"),
        ("robots: [1, 2]\n", "robots must be a mapping"),
        ("- a list\n", "expected a mapping of keys at the top"),
        ("robots:\n  token: [unclosed\n", "line 3: not valid YAML"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read config file .*absent\.yaml"):
        load_config(tmp_path / "absent.yaml")


def test_malformed_override_says_what_is_expected() -> None:
    with pytest.raises(ConfigError, match="expected key=value"):
        load_config(None, ["robots.token"])
    with pytest.raises(ConfigError, match=r"unknown key robots\.nope"):
        load_config(None, ["robots.nope=1"])
