"""config/crawler.yaml documents every key the loader knows, and nothing else."""

from __future__ import annotations

import typing
from dataclasses import fields, is_dataclass
from pathlib import Path

import yaml

from crawler.config import Config


def _keys(cls: type, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    hints = typing.get_type_hints(cls)
    for item in fields(cls):
        kind = hints[item.name]
        if is_dataclass(kind):
            keys |= _keys(kind, f"{prefix}{item.name}.")  # type: ignore[arg-type]
        else:
            keys.add(prefix + item.name)
    return keys


def _documented(node: object, prefix: str = "") -> set[str]:
    """The keys the file sets; a mapping is a section unless a key's value is one (extract,
    fetch.headers)."""
    keys: set[str] = set()
    assert isinstance(node, dict)
    leaves = _keys(Config)
    for key, value in node.items():
        if isinstance(value, dict) and prefix + key not in leaves:
            keys |= _documented(value, f"{prefix}{key}.")
        else:
            keys.add(prefix + key)
    return keys


def test_every_config_key_is_documented_with_a_comment(repo: Path) -> None:
    text = (repo / "config" / "crawler.yaml").read_text(encoding="utf-8")
    assert _documented(yaml.safe_load(text)) == _keys(Config)
    # Each section opens with a comment line saying what it is for.
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line and not line.startswith((" ", "#")) and line.endswith(":"):
            assert lines[number - 1].startswith("#"), f"section {line} has no comment"
