"""Compiled robots.txt rules: which rule decides for a path. Pure.

RobotsOptions says how groups are chosen and rules ranked; `AgentView` holds the rules of the
groups that apply to one agent, compiled once, and answers `first_match(path)` for each URL.
Patterns and paths are compared in canonical form (see `crawler.canonical_urls`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from crawler.canonical_urls import CANONICAL_CHARS, canonical_pattern
from crawler.errors import InvalidRobotsOptionError
from crawler.robots.lines import WHITESPACE, Group

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

_CHARS = rf"[ \t\v\f\r]*[{CANONICAL_CHARS}*]*\$?[ \t\v\f\r]*"
# Every value of the groups already canonical once trimmed: one C-level check for the usual case.
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


def _rules_of(
    groups: list[Group], options: RobotsOptions
) -> tuple[list[int], list[bool], list[str]]:
    """Line numbers, Allow flags and values of the groups' rules, in file order (groups are
    contiguous in the file). Values are trimmed, or split at blanks with split_values; an empty
    value (`Disallow:`) matches nothing and is dropped."""
    lines: list[int] = []
    allows: list[bool] = []
    values: list[str] = []
    for group in groups:
        flat = group.flat_rules
        lines += flat[0::3]  # type: ignore[arg-type]
        allows += flat[1::3]  # type: ignore[arg-type]
        values += flat[2::3]  # type: ignore[arg-type]
    if options.split_values:
        rules = [
            (line, allow, part)
            for line, allow, value in zip(lines, allows, values, strict=True)
            for part in value.split()
        ]
        return [r[0] for r in rules], [r[1] for r in rules], [r[2] for r in rules]
    values = [value.strip(WHITESPACE) for value in values]
    if "" in values:
        kept = [index for index, value in enumerate(values) if value]
        lines = [lines[index] for index in kept]
        allows = [allows[index] for index in kept]
        values = [values[index] for index in kept]
    return lines, allows, values


def _index_html_entries(
    lines: list[int], allows: list[bool], values: list[str], fold: bool
) -> list[_Entry]:
    return [
        _entry(_pattern(directory, fold), _written_length(directory), True, line, True)
        for line, allow, value in zip(lines, allows, values, strict=True)
        if allow and "/index.htm" in value
        if (directory := _index_html_directory(value)) is not None
    ]


def _rule_entry(value: str, allow: bool, line: int, fold: bool) -> _Entry:
    return _entry(_pattern(value, fold), _written_length(value), allow, line, False)


def pattern_matches(value: str, target: str, fold: bool) -> bool:
    """Does the path pattern `value` (as an Allow line writes it) match `target`?"""
    return _first_of([_rule_entry(value, True, 0, fold)], target, None) is not None


def pattern_length(value: str) -> int:
    """How a rule's pattern ranks: its length as written, non-ASCII counted as its escapes."""
    return _written_length(value)


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


# Up to this many rules, testing them in rank order costs less than building the prefix dict.
_DICT_OVER: Final = 16


class AgentView:
    """What a robots.txt says to one agent: the groups that apply and their rules, compiled for
    the question asked of every URL, "which rule decides?".

    Rules are ranked entries, tested in rank order; a C-level `startswith` over all plain prefixes
    first rules those out at once, which is the usual answer. Under longest-match with many rules,
    a plain prefix ranks by its length, so those rules live instead in a dict from pattern to its
    best rule, and a path's best prefix is found by probing the path's own prefixes, longest
    first: no loop over the rules and no object per rule.
    """

    __slots__ = (
        "_codes",
        "_lengths",
        "_prefixes",
        "_ranked",
        "_unplain",
        "fold_case",
        "groups",
        "specific",
        "usage",
    )

    def __init__(self, groups: list[Group], specific: bool, options: RobotsOptions) -> None:
        self.groups = groups
        self.specific = specific
        self.fold_case = fold = options.case_insensitive_paths
        lines, allows, values = _rules_of(groups, options)
        ranked = _index_html_entries(lines, allows, values, fold) if True in allows else []
        # Pattern -> 2 * line + is_allow of the best plain prefix rule with that pattern.
        self._codes: dict[str, int] = {}
        if options.precedence == "longest-match" and len(values) > _DICT_OVER:
            self._codes, others = self._plain_prefixes(lines, allows, values, fold)
            ranked += [
                _entry(pattern, priority, allows[index], lines[index], False)
                for index, pattern, priority in others
            ]
            ranked.sort()
            # Every plain prefix, or a target that starts with none of them would skip the prefix
            # rules `ranked` keeps: those whose priority is not their canonical length, such as
            # `/%7Euser` (`/~user`) or `/a$b` (`/a%24b`).
            self._prefixes = (*self._codes, *(e[4] for e in ranked if e[3] == _PREFIX))
            self._lengths = tuple(sorted(set(map(len, self._codes)), reverse=True))
        else:
            ranked += [
                _rule_entry(value, allow, line, fold)
                for line, allow, value in zip(lines, allows, values, strict=True)
            ]
            if options.precedence == "longest-match":
                ranked.sort()
            else:
                # File order; a line's reading of its index.html comes right after the line.
                ranked.sort(key=lambda entry: (entry[2], entry[6]))
            self._prefixes = tuple(entry[4] for entry in ranked if entry[3] == _PREFIX)
            self._lengths = ()
        self._ranked = ranked
        self._unplain = [entry for entry in ranked if entry[3] != _PREFIX]
        # The groups' usage lines, read on the first question about them (crawler.robots.
        # usage_lines).
        self.usage: tuple[Any, ...] | None = None

    @staticmethod
    def _plain_prefixes(
        lines: list[int], allows: list[bool], values: list[str], fold: bool
    ) -> tuple[dict[str, int], list[tuple[int, str, int]]]:
        """The plain prefix rules as a dict, and (index, pattern, priority) of every other rule."""
        if _ALL_CANONICAL("\n".join(values)):
            # The usual file: every value is its own canonical form and its priority its length.
            patterns = [value.lower() for value in values] if fold else values
            plain = [i for i, p in enumerate(patterns) if "*" not in p and p[-1] != "$"]
            others = [(i, p, len(p)) for i, p in enumerate(patterns) if "*" in p or p[-1] == "$"]
        else:
            patterns = [_pattern(value, fold) for value in values]
            priorities = [_written_length(value) for value in values]
            plain = [
                i
                for i, p in enumerate(patterns)
                if "*" not in p and p[-1] != "$" and priorities[i] == len(p)
            ]
            chosen = set(plain)
            others = [(i, p, priorities[i]) for i, p in enumerate(patterns) if i not in chosen]
        # Written worst first, so the best rule for a pattern is written last and stays: Allow
        # over Disallow, then the earliest line.
        order = [i for i in reversed(plain) if not allows[i]]
        order += [i for i in reversed(plain) if allows[i]]
        codes = dict(
            zip(
                [patterns[i] for i in order], [2 * lines[i] + allows[i] for i in order], strict=True
            )
        )
        return codes, others

    def first_match(self, target: str) -> _Entry | None:
        """The rule that decides for `target`, or None when none matches."""
        if self.fold_case:
            target = target.lower()
        if not target.startswith(self._prefixes):
            return _first_of(self._unplain, target, None)
        codes = self._codes
        if not codes:
            return _first_of(self._ranked, target, None)
        hit = None
        size = len(target)
        for length in self._lengths:
            if length <= size:
                code = codes.get(target[:length])
                if code is not None:
                    allow = code & 1
                    hit = (-length, not allow, code >> 1, _PREFIX, target[:length], _NO_GLOB, False)
                    break
        return _first_of(self._ranked, target, hit)

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

    def isdisjoint(self, tokens: Iterable[str]) -> bool:
        """True when no value contains any of the (non-empty) tokens."""
        return not any(token and token in value for token in tokens for value in self)


Names = set[str] | Substrings
