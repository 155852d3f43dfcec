"""The usage lines of a robots.txt, Content-Signal and Content-Usage: which of them apply to a URL
for an agent. Pure; never raises. What their values say for a purpose is crawler.usage's.

- Both are lines of a group, and the groups that apply are those Allow and Disallow obey (RFC
  9309 section 2.2.1). Like every line the reference parser does not know, they do not end a
  group's User-agent lines, so the groups Allow and Disallow see stay Google's.
- Content-Signal (contentsignals.org) names no path: it applies to every path of its groups.
- Content-Usage (draft-ietf-aipref-attach-05 section 3): `Content-Usage: [PATH] PREFERENCES`. A
  value that starts with `/` has a path, up to the first blank (3.2); any other value has none.
  A path is matched as Allow's are (prefix, `*`, a final `$`, canonical percent-encoding) and
  ranked by its length as written; the longest matching path applies (3.1), and a line with no
  path matches every path, ranked below any path. Lines whose paths tie all apply: their
  preferences combine most restrictively (3.1, and crawler.usage).
- They apply only to what may be crawled (3.1): a URL robots.txt disallows has none.
"""

from __future__ import annotations

from typing import NamedTuple

from crawler.robots.lines import CONTENT_SIGNAL, CONTENT_USAGE, WHITESPACE
from crawler.robots.rules import AgentView, pattern_length, pattern_matches

__all__ = ["UsageLine", "applying", "usage_lines"]

_KEYS = {CONTENT_SIGNAL: "Content-Signal", CONTENT_USAGE: "Content-Usage"}


class UsageLine(NamedTuple):
    line: int
    key: str
    """'Content-Signal' or 'Content-Usage'."""
    path: str | None
    """A Content-Usage line's path; None when it names none (and for Content-Signal)."""
    value: str
    """The preferences, trimmed."""
    problem: str | None = None
    """Why the line says nothing: no preferences after its path, or none at all."""


def _parsed(line: int, kind: int, value: str) -> UsageLine:
    key = _KEYS[kind]
    value = value.strip(WHITESPACE)
    path = None
    if kind == CONTENT_USAGE and value.startswith("/"):
        blank = next((at for at, char in enumerate(value) if char in " \t"), len(value))
        path, value = value[:blank], value[blank:].strip(WHITESPACE)
    problem = None if value else ("no preferences after the path" if path else "no preferences")
    return UsageLine(line, key, path, value, problem)


def usage_lines(view: AgentView) -> tuple[UsageLine, ...]:
    """Every usage line of the view's groups, in file order, read."""
    lines = view.usage
    if lines is None:
        found = [
            _parsed(line, kind, value)
            for group in view.groups
            for line, kind, value in group.extensions
            if kind in _KEYS
        ]
        lines = view.usage = tuple(sorted(found))
    return lines


def applying(view: AgentView, target: str) -> tuple[UsageLine, ...]:
    """The usage lines that apply to `target` (a canonical path and query the view allows):
    every Content-Signal line, and the Content-Usage lines of the longest matching path."""
    lines = usage_lines(view)
    if not lines:
        return ()
    fold = view.fold_case
    matched = target.lower() if fold else target
    best = -1
    chosen: list[UsageLine] = []
    signals: list[UsageLine] = []
    for line in lines:
        if line.problem is not None:
            continue
        if line.key == "Content-Signal":
            signals.append(line)
            continue
        if line.path is None:
            length = 0
        else:
            if not pattern_matches(line.path, matched, fold):
                continue
            length = pattern_length(line.path)
        if length > best:
            best, chosen = length, [line]
        elif length == best:
            chosen.append(line)
    return (*signals, *chosen)
