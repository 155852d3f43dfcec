"""Compiled robots.txt rules: which rule decides for a path. Pure.

RobotsOptions says how groups are chosen and rules ranked; `AgentView` holds the rules of the
groups that apply to one agent, compiled once, and answers `first_match(path)` for each URL.
Patterns and paths are compared in canonical form (see `crawler.urls`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from crawler.errors import InvalidRobotsOptionError
from crawler.robots_lines import WHITESPACE, Group
from crawler.urls import canonical_pattern

AgentMatch = Literal["rfc", "substring"]
Precedence = Literal["longest-match", "first-match"]

_STARS = re.compile(r"\*{2,}")


@dataclass(frozen=True, slots=True)
class RobotsOptions:
    """How to read a robots.txt. The defaults are RFC 9309; each other value is an older convention
    from the seeds, kept for operators who need it."""

    agent_match: AgentMatch = "rfc"
    """"rfc": a group's product token equals ours. "substring" (1994/1996 texts): a group's
    User-agent value contains our token, case-insensitively."""
    precedence: Precedence = "longest-match"
    """"longest-match" (RFC 9309). "first-match" (1996 draft): the first matching line in file
    order decides."""
    case_insensitive_paths: bool = False
    """Match paths case-insensitively, as the Ultraseek engine did."""
    split_values: bool = False
    """Read `Disallow: /tmp /spool` as two rules, as the 1994 Lycos checker did."""

    def __post_init__(self) -> None:
        if self.agent_match not in ("rfc", "substring"):
            raise InvalidRobotsOptionError(
                f"robots agent_match must be 'rfc' or 'substring', not {self.agent_match!r}"
            )
        if self.precedence not in ("longest-match", "first-match"):
            raise InvalidRobotsOptionError(
                "robots precedence must be 'longest-match' or 'first-match', "
                f"not {self.precedence!r}"
            )
        for name in ("case_insensitive_paths", "split_values"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidRobotsOptionError(
                    f"robots {name} must be true or false, not {getattr(self, name)!r}"
                )


DEFAULT_OPTIONS: Final = RobotsOptions()


_PREFIX, _EXACT, _GLOB = range(3)

# One compiled rule: (-priority, is_disallow, line, kind, pattern, glob, synthetic). The first
# three fields make plain tuple order the RFC 9309 precedence: longest pattern first, Allow before
# Disallow on a tie, then file order.
# - priority: length of the pattern as written, non-ASCII counted as its %XX escapes (as the
#   reference parser counts it);
# - pattern: canonical form, without its `$` anchor for _EXACT;
# - glob: for _GLOB, (head, tail, anchored, middle): the literal parts around the `*`s;
# - synthetic: the reference parser's reading of `Allow: /d/index.html` as also allowing `/d/`.
_Glob = tuple[str, str, bool, tuple[str, ...]]
_Entry = tuple[int, bool, int, int, str, _Glob, bool]
_NO_GLOB: Final[_Glob] = ("", "", False, ())

_CHARS = r"[A-Za-z0-9\-._~!&'()+,;=:@/?\[\]*]*\$?"
# Every pattern of a group already canonical: one C-level check for the usual case.
_ALL_CANONICAL = re.compile(rf"(?:{_CHARS}\n)*{_CHARS}").fullmatch


def _written_length(value: str) -> int:
    if value.isascii():
        return len(value)
    return sum(
        1 if ord(char) < 0x80 else 3 * len(char.encode("utf-8", "surrogateescape"))
        for char in value
    )


def _index_html_directory(value: str) -> str | None:
    """`/d/index.html` -> `/d/$`: the reference parser allows a directory whose index is allowed."""
    slash = value.rfind("/")
    if slash != -1 and value.startswith("/index.htm", slash):
        return value[: slash + 1] + "$"
    return None


def _entry(pattern: str, priority: int, allow: bool, line: int, synthetic: bool) -> _Entry:
    """How to test one rule: a plain prefix, an exact path, or a wildcard pattern split at `*`."""
    if "**" in pattern:
        pattern = _STARS.sub("*", pattern)
    if "*" in pattern:
        anchored = pattern[-1] == "$"
        head, *middle, tail = (pattern[:-1] if anchored else pattern).split("*")
        glob = (head, tail, anchored, tuple(middle))
        return (-priority, not allow, line, _GLOB, pattern, glob, synthetic)
    if pattern[-1] == "$":
        return (-priority, not allow, line, _EXACT, pattern[:-1], _NO_GLOB, synthetic)
    return (-priority, not allow, line, _PREFIX, pattern, _NO_GLOB, synthetic)


def _glob_fits(target: str, head: str, middle: tuple[str, ...], tail: str, anchored: bool) -> bool:
    """Does `target`, which starts with `head` and holds `tail`, fit `head*middle...*tail`?"""
    # Leftmost placement of each literal part is enough for `*`-only globs: no backtracking, so a
    # hostile pattern costs one scan of the path per part.
    position = len(head)
    for part in middle:
        position = target.find(part, position)
        if position == -1:
            return False
        position += len(part)
    if anchored:
        return len(target) - len(tail) >= position
    return target.find(tail, position) != -1


def _compile(groups: list[Group], options: RobotsOptions) -> list[_Entry]:
    whitespace = WHITESPACE
    # Groups are contiguous in the file, so their rules concatenated are in file order. An empty
    # value (`Disallow:`) matches nothing and is dropped here.
    rules = [
        (line, allow, stripped)
        for group in groups
        for line, allow, value in group.rules
        if (stripped := value.strip(whitespace))
    ]
    if options.split_values:
        rules = [(line, allow, part) for line, allow, value in rules for part in value.split()]
    fold = options.case_insensitive_paths
    entries: list[_Entry]
    if not fold and _ALL_CANONICAL("\n".join([value for _, _, value in rules])):
        # The usual file: patterns already canonical and mostly plain prefixes, built in one pass.
        entries = [
            (-len(value), not allow, line, _PREFIX, value, _NO_GLOB, False)
            if "*" not in value and value[-1] != "$"
            else _entry(value, len(value), allow, line, False)
            for line, allow, value in rules
        ]
    else:
        entries = [
            _entry(_pattern(value, fold), _written_length(value), allow, line, False)
            for line, allow, value in rules
        ]
    for line, allow, value in rules:
        if allow and "/index.htm" in value:
            directory = _index_html_directory(value)
            if directory is not None:
                pattern = _pattern(directory, fold)
                entries.append(_entry(pattern, _written_length(directory), True, line, True))
    if options.precedence == "longest-match":
        entries.sort()
    else:
        # File order, a line's reading of its index.html directly after the line itself.
        entries.sort(key=lambda entry: (entry[2], entry[6]))
    return entries


def _pattern(value: str, fold: bool) -> str:
    pattern = canonical_pattern(value)
    return pattern.lower() if fold else pattern


def _first_of(entries: list[_Entry], target: str, hit: _Entry | None) -> _Entry | None:
    """The first of `entries` (in rank order) that matches `target` and outranks `hit`, else
    `hit`. The hot loop of matching: the glob tests are inlined, cheapest first."""
    for entry in entries:
        if hit is not None and entry > hit:
            break  # every rule from here on ranks below the one already found
        _, _, _, kind, pattern, glob, _ = entry
        if kind == _PREFIX:
            if target.startswith(pattern):
                return entry
        elif kind == _EXACT:
            if target == pattern:
                return entry
        else:
            head, tail, anchored, middle = glob
            if anchored:
                if not target.endswith(tail):
                    continue
            elif tail not in target:
                continue
            if target.startswith(head) and _glob_fits(target, head, middle, tail, anchored):
                return entry
    return hit


# Below this many prefix rules, testing them in rank order beats building the index.
_INDEX_PREFIXES_OVER: Final = 8


class AgentView:
    """What a robots.txt says to one agent: the groups that apply and their rules, in the order
    that decides."""

    __slots__ = (
        "_by_pattern",
        "_lengths",
        "_prefixes",
        "_rest",
        "entries",
        "fold_case",
        "groups",
        "specific",
    )

    def __init__(self, groups: list[Group], specific: bool, options: RobotsOptions) -> None:
        self.groups = groups
        self.specific = specific
        self.fold_case = options.case_insensitive_paths
        self.entries = entries = _compile(groups, options)
        prefix_entries = [entry for entry in entries if entry[3] == _PREFIX]
        # One C-level startswith over every plain prefix rules them all out at once, which is the
        # usual answer; then only the other rules need a look.
        self._prefixes = tuple(entry[4] for entry in prefix_entries)
        self._rest = [entry for entry in entries if entry[3] != _PREFIX]
        # When a prefix rule's rank is its length (longest-match, pattern as written), the best
        # matching prefix is found by probing the target's own prefixes, longest first, instead
        # of testing every rule.
        self._by_pattern: dict[str, _Entry] | None = None
        self._lengths: tuple[int, ...] = ()
        if (
            len(prefix_entries) > _INDEX_PREFIXES_OVER
            and options.precedence == "longest-match"
            and all(-entry[0] == len(entry[4]) for entry in prefix_entries)
        ):
            by_pattern: dict[str, _Entry] = {}
            for entry in prefix_entries:
                by_pattern.setdefault(entry[4], entry)  # sorted, so the first one is the best
            self._by_pattern = by_pattern
            self._lengths = tuple(sorted({len(pattern) for pattern in by_pattern}, reverse=True))

    def first_match(self, target: str) -> _Entry | None:
        """The rule that decides for `target`, or None when none matches."""
        if self.fold_case:
            target = target.lower()
        by_pattern = self._by_pattern
        if by_pattern is None:
            entries = self.entries if target.startswith(self._prefixes) else self._rest
            return _first_of(entries, target, None)
        hit = None
        if target.startswith(self._prefixes):
            size = len(target)
            for length in self._lengths:
                if length <= size:
                    hit = by_pattern.get(target[:length])
                    if hit is not None:
                        break
        return _first_of(self._rest, target, hit)

    def allowed(self, target: str) -> bool:
        entry = self.first_match(target)
        return entry is None or not entry[1]

    def extension_values(self, kind: int) -> list[str]:
        return [
            value
            for group in self.groups
            for _, line_kind, value in group.extensions
            if line_kind == kind
        ]


class Substrings(tuple[str, ...]):
    """User-agent values that name a token when they contain it (the 1994/1996 reading)."""

    __slots__ = ()

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and bool(token) and any(token in value for value in self)


Names = set[str] | Substrings
