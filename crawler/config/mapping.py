"""A mapping (a YAML file's, overrides applied) to a `Config`: each value coerced to its field's
type, an unknown key named with the closest known one (did you mean), then the checks."""

from __future__ import annotations

import difflib
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields
from typing import Any

from crawler.config.checks import check_config
from crawler.config.schema import DEFAULT_USER_AGENT, Config
from crawler.config.values import coerce
from crawler.errors import ConfigError


def _section(name: str, raw: object, cls: type[Any]) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{name} must be a mapping of keys, not {raw!r}")
    known = {f.name: f for f in fields(cls)}
    hints = typing.get_type_hints(cls)
    values: dict[str, object] = {}
    for key, value in raw.items():
        if key not in known:
            raise _unknown_key(f"{name}.{key}", (f"{name}.{k}" for k in sorted(known)))
        values[key] = coerce(f"{name}.{key}", value, hints[key], known[key].metadata)
    return cls(**values)


_SECTIONS: dict[str, type[Any]] = {
    f.name: f.default_factory  # type: ignore[misc]
    for f in fields(Config)
    if callable(f.default_factory)
}


def _dotted_keys() -> list[str]:
    """Every config key by its dotted path (`concurrency`, `limits.max_pages`, ...)."""
    keys = [f.name for f in fields(Config) if f.name not in _SECTIONS]
    return keys + [f"{name}.{f.name}" for name, cls in _SECTIONS.items() for f in fields(cls)]


def _unknown_key(key: str, expected: Iterable[str], *, typed: str = "") -> ConfigError:
    """The error for `key`, which no config has, naming the closest key there is. `typed`: the
    whole dotted path the user wrote, when `key` is only its first part."""
    path = typed or key
    keys = _dotted_keys()
    # A key put in the wrong section (`politeness.max_depth`) is the key of that name elsewhere.
    moved = [known for known in keys if known.rpartition(".")[2] == path.rpartition(".")[2]]
    close = moved[:1] or difflib.get_close_matches(path, keys, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return ConfigError(f"unknown key {key}{hint}; expected one of {', '.join(expected)}")


def from_mapping(raw: Mapping[str, object], *, is_file: Callable[[str], bool]) -> Config:
    """The `Config` `raw` describes, or ConfigError. `is_file`: for `check_config`."""
    scalars = {f.name: f for f in fields(Config) if f.name not in _SECTIONS}
    top = set(scalars) | set(_SECTIONS)
    unknown = sorted((key for key in raw if key not in top), key=str)
    if unknown:
        # A misspelt section (`-s limit.max_pages=5`) is matched with the key under it.
        inner = raw[unknown[0]]
        typed = f"{unknown[0]}.{next(iter(inner))}" if isinstance(inner, Mapping) and inner else ""
        raise _unknown_key(str(unknown[0]), sorted(top), typed=typed)
    user_agent = raw.get("user_agent", DEFAULT_USER_AGENT)
    if not isinstance(user_agent, str) or not user_agent.strip():
        raise ConfigError(f"user_agent must be a non-empty string, not {user_agent!r}")
    hints = typing.get_type_hints(Config)
    values: dict[str, Any] = {"user_agent": user_agent}
    for name, spec in scalars.items():
        if name in raw and name != "user_agent":
            values[name] = coerce(name, raw[name], hints[name], spec.metadata)
    for name, cls in _SECTIONS.items():
        values[name] = _section(name, raw.get(name), cls)
    config = Config(**values)
    check_config(config, is_file=is_file)
    return config
