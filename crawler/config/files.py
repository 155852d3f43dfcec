"""Config files and overrides: YAML text to a mapping with each key's line (for errors), `-s
key=value` overrides, `read_user_text` and `load_config`. The package's only I/O is here."""

from __future__ import annotations

import re
import reprlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from crawler.config.mapping import from_mapping
from crawler.config.schema import Config
from crawler.errors import ConfigError

MAX_CONFIG_BYTES = 1024 * 1024
"""The largest config file read: config/crawler.yaml, every key documented, is 9 KB. PyYAML reads
about a megabyte a second, so a bigger file would be a wait, not a config."""
MAX_CONFIG_DEPTH = 16
"""Deepest nesting of mappings and lists read; a config nests 3 levels (scope.allow: [...])."""


class _Refused(yaml.MarkedYAMLError):
    """YAML this loader will not read, though a YAML parser could."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)


class _ConfigLoader(yaml.SafeLoader):
    """SafeLoader without aliases: `*name` makes a few lines stand for billions of values (the
    "billion laughs"), and a config needs none. Nesting is bounded (the composer recurses per
    level), and a scalar Python cannot convert (an integer of 5,000 digits, a 13th month) is an
    error at its line, not a ValueError."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(
                f"an alias (*{event.anchor}): a config spells every value out (aliases are not "
                "read: a few of them can stand for billions of values)",
                event.start_mark,
            )
        if self._depth >= MAX_CONFIG_DEPTH:
            raise _Refused(f"nested more than {MAX_CONFIG_DEPTH} levels deep", event.start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as error:
            shown = reprlib.repr(node.value) if isinstance(node, yaml.ScalarNode) else node.tag
            raise _Refused(
                f"cannot read the value {shown}: {str(error).split(';')[0]}",
                node.start_mark,
            ) from error


def _compose(text: str) -> tuple[object, yaml.Node | None]:
    """The value of a YAML document, and its root node (for `_key_lines`)."""
    loader = _ConfigLoader(text)
    try:
        root = loader.get_single_node()
        return (loader.construct_document(root) if root is not None else None), root
    finally:
        loader.dispose()


def _key_lines(root: yaml.Node | None) -> dict[str, int]:
    """Dotted key path -> 1-based line of the key in the YAML text, for error messages."""
    lines: dict[str, int] = {}

    def walk(node: yaml.Node, prefix: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                path = f"{prefix}{key_node.value}"
                lines.setdefault(path, key_node.start_mark.line + 1)
                walk(value_node, path + ".")

    if root is not None:
        walk(root, "")
    return lines


_KEY_IN_MESSAGE = re.compile(r"(?:unknown key |^)([A-Za-z_][\w.]*)")


def _located(path: str, where: str, lines: Mapping[str, int], error: ConfigError) -> ConfigError:
    """`error` prefixed with the file and line of its key when the file set it, else `where`."""
    message = str(error)
    match = _KEY_IN_MESSAGE.search(message)
    line = lines.get(match.group(1)) if match else None
    at = f"{path} line {line}" if line is not None else where
    return type(error)(f"{at}: {message}")


def _apply_override(raw: dict[str, Any], override: str) -> None:
    key, sep, text = override.partition("=")
    if not sep or not key:
        raise ConfigError(
            f"-s {override!r}: expected key=value, e.g. robots.precedence=first-match"
        )
    try:
        value = _compose(text)[0] if text else ""
    except yaml.YAMLError:
        value = text
    if isinstance(value, dict) and not text.lstrip().startswith("{"):
        # `-s state.key_prefix=crawl:` means the text: one line cannot hold a block mapping,
        # and a mapping is written {key: value} there.
        value = text
    *parents, leaf = key.strip().split(".")
    node = raw
    for part in parents:
        child = node.get(part)
        if child is None:
            # Absent, or present with every key commented out (YAML null): a section of defaults.
            child = node[part] = {}
        if not isinstance(child, dict):
            raise ConfigError(f"-s {override!r}: {part} is not a section")
        node = child
    node[leaf] = value


def read_user_text(
    path: Path, what: str, error: type[ConfigError] = ConfigError, *, most: int | None = None
) -> str:
    """The text of a file the user named (`what`: "config file", "seeds file"); a leading UTF-8
    byte order mark is dropped. Unreadable or non-UTF-8 files, and files of more than `most`
    bytes (read no further), raise `error` naming the file."""
    try:
        with path.open("rb") as file:
            data = file.read() if most is None else file.read(most + 1)
    except OSError as failure:
        raise error(f"cannot read {what} {path}: {failure.strerror}") from failure
    if most is not None and len(data) > most:
        raise error(f"{path}: more than {most} bytes; expected a {what} of at most that")
    if b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + 1
        raise error(f"{path} line {line}: a NUL byte: a binary file, not a {what}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as failure:
        line = data.count(b"\n", 0, failure.start) + 1
        raise error(f"{path} line {line}: not UTF-8 text ({failure.reason})") from failure


def _is_file(path: str) -> bool:
    """Whether `path` names a file, for fetch.ca_bundle's check (crawler.config.checks)."""
    return Path(path).is_file()


def load_config(path: Path | None = None, overrides: Sequence[str] = ()) -> Config:
    """Read, override and validate a configuration; ConfigError says what is wrong and where."""
    raw: dict[str, Any] = {}
    where = "defaults"
    lines: dict[str, int] = {}
    if path is not None:
        where = str(path)
        text = read_user_text(path, "config file", most=MAX_CONFIG_BYTES)
        try:
            loaded, root = _compose(text)
        except yaml.MarkedYAMLError as error:
            mark = error.problem_mark
            line = f" line {mark.line + 1}" if mark is not None else ""
            problem = (
                error.problem if isinstance(error, _Refused) else f"not valid YAML: {error.problem}"
            )
            raise ConfigError(f"{path}{line}: {problem}") from error
        except yaml.YAMLError as error:
            raise ConfigError(f"{path}: not valid YAML: {error}") from error
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(
                f"{path}: expected a mapping of keys at the top, not {reprlib.repr(loaded)}"
            )
        raw = loaded or {}
        lines = _key_lines(root)
    for override in overrides:
        _apply_override(raw, override)
    if overrides:
        where = f"{where} with -s overrides"
        # An overridden key's line in the file no longer holds the value that failed.
        for override in overrides:
            lines.pop(override.partition("=")[0].strip(), None)
    try:
        return from_mapping(raw, is_file=_is_file)
    except ConfigError as error:
        raise _located(str(path), where, lines, error) from error
