"""Configuration: typed, frozen, validated once at load.

`load_config(path, overrides)` reads a YAML file (config/crawler.yaml documents every key),
applies `-s key=value` overrides by dotted path, and returns a `Config`, or raises ConfigError
naming the file, the key and what was expected. Each component receives its own slice
(`config.robots`), never the whole bag.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from crawler.errors import ConfigError
from crawler.robots import RobotsOptions, product_token_from_user_agent, validate_product_token

DEFAULT_USER_AGENT = "PoliteBot/0.1 (+https://example.org/bot)"


@dataclass(frozen=True, slots=True)
class RobotsConfig:
    """How robots.txt files are read and what their fetch outcomes mean."""

    token: str = ""
    """Product token matched against User-agent lines; empty: the first product of user_agent."""
    agent_match: str = "rfc"
    precedence: str = "longest-match"
    case_insensitive_paths: bool = False
    split_values: bool = False
    auth_disallows: bool = False
    """Read a robots.txt answered 401/403 as disallow-all (1996) instead of allow-all (RFC 9309)."""

    def options(self) -> RobotsOptions:
        return RobotsOptions(
            agent_match=self.agent_match,  # type: ignore[arg-type]
            precedence=self.precedence,  # type: ignore[arg-type]
            case_insensitive_paths=self.case_insensitive_paths,
            split_values=self.split_values,
        )


@dataclass(frozen=True, slots=True)
class Config:
    user_agent: str = DEFAULT_USER_AGENT
    robots: RobotsConfig = field(default_factory=RobotsConfig)

    @property
    def product_token(self) -> str:
        """The token robots.txt groups are matched against: robots.token, else from user_agent."""
        if self.robots.token:
            return self.robots.token
        return product_token_from_user_agent(self.user_agent)


_SECTIONS: dict[str, type[Any]] = {"robots": RobotsConfig}


def _check_value(where: str, key: str, value: object, expected: object) -> None:
    if isinstance(expected, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {key} must be true or false, not {value!r}")
    elif isinstance(expected, str) and not isinstance(value, str):
        raise ConfigError(f"{where}: {key} must be a string, not {value!r}")


def _section(where: str, name: str, raw: object, cls: type[Any]) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: {name} must be a mapping of keys, not {raw!r}")
    known = {f.name: f for f in fields(cls)}
    values: dict[str, object] = {}
    for key, value in raw.items():
        if key not in known:
            raise ConfigError(
                f"{where}: unknown key {name}.{key}; expected one of "
                + ", ".join(f"{name}.{k}" for k in sorted(known))
            )
        _check_value(where, f"{name}.{key}", value, known[key].default)
        values[key] = value
    return cls(**values)


def _from_mapping(where: str, raw: Mapping[str, object]) -> Config:
    top = {"user_agent", *_SECTIONS}
    unknown = sorted(set(raw) - top)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]}; expected one of {', '.join(sorted(top))}"
        )
    user_agent = raw.get("user_agent", DEFAULT_USER_AGENT)
    if not isinstance(user_agent, str) or not user_agent.strip():
        raise ConfigError(f"{where}: user_agent must be a non-empty string, not {user_agent!r}")
    robots = _section(where, "robots", raw.get("robots"), RobotsConfig)
    config = Config(user_agent=user_agent, robots=robots)
    try:
        robots.options()
        validate_product_token(config.product_token)
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from error
    return config


def _apply_override(raw: dict[str, Any], override: str) -> None:
    key, sep, text = override.partition("=")
    if not sep or not key:
        raise ConfigError(
            f"-s {override!r}: expected key=value, e.g. robots.precedence=first-match"
        )
    try:
        value = yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        value = text
    *parents, leaf = key.strip().split(".")
    node = raw
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"-s {override!r}: {part} is not a section")
        node = child
    node[leaf] = value


def load_config(path: Path | None = None, overrides: Sequence[str] = ()) -> Config:
    """Read, override and validate a configuration; ConfigError says what is wrong and where."""
    raw: dict[str, Any] = {}
    where = "defaults"
    if path is not None:
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"cannot read config file {path}: {error.strerror}") from error
        except UnicodeDecodeError as error:
            raise ConfigError(f"{path}: not UTF-8 text ({error.reason})") from error
        try:
            loaded = yaml.safe_load(text)
        except yaml.MarkedYAMLError as error:
            mark = error.problem_mark
            line = f" line {mark.line + 1}" if mark is not None else ""
            raise ConfigError(f"{path}{line}: not valid YAML: {error.problem}") from error
        except yaml.YAMLError as error:
            raise ConfigError(f"{path}: not valid YAML: {error}") from error
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{path}: expected a mapping of keys at the top, not {loaded!r}")
        raw = loaded or {}
    for override in overrides:
        _apply_override(raw, override)
    if overrides:
        where = f"{where} with -s overrides"
    return _from_mapping(where, raw)
