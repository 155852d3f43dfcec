"""Which of the owner's usage signals apply to a page, and whether the crawl's purpose may use
its text. Pure (crawler.usage reads what each signal says).

A page's signals, in the order its record keeps them: the robots.txt lines that apply to its URL
for our token (Content-Signal, Content-Usage of the longest matching path), its origin's
tdmrep.json rule, its headers, its META tags.
"""

from __future__ import annotations

from collections.abc import Sequence

from crawler.robots.entry import RobotsEntry
from crawler.robots.usage_lines import UsageLine
from crawler.usage.signals import MAX_SIGNALS, UsageSignal, refusal
from crawler.usage.vocab import read_signal

__all__ = ["line_signals", "origin_signals", "page_usage", "usage_problems"]


def line_signals(lines: Sequence[UsageLine]) -> list[UsageSignal]:
    """robots.txt usage lines as the signals a record keeps."""
    return [UsageSignal(line.key, f"robots.txt line {line.line}", line.value) for line in lines]


def origin_signals(entry: RobotsEntry | None, url: str, token: str) -> list[UsageSignal]:
    """The signals `url`'s origin gives in its robots.txt and tdmrep.json."""
    if entry is None:
        return []
    signals = line_signals(entry.robots.usage_lines(url, token))
    if entry.tdmrep is not None:
        rule = entry.tdmrep.signal_for(url)
        if rule is not None:
            signals.append(rule)
    return signals


def page_usage(
    entry: RobotsEntry | None,
    url: str,
    token: str,
    purpose: str,
    said: Sequence[UsageSignal],
) -> tuple[tuple[UsageSignal, ...], str | None]:
    """The signals that apply to the page at `url` (its origin's, then `said`: its headers' and
    META's), and why `purpose` may not use its text (None: it may)."""
    signals = origin_signals(entry, url, token)
    if not signals and not said:
        return (), None
    found = (*signals, *said)[:MAX_SIGNALS]
    return found, refusal(found, purpose)


def usage_problems(entry: RobotsEntry, token: str) -> list[str]:
    """What the origin's usage lines (those of our groups) and tdmrep.json say that cannot be
    read, each ignored: for the crawl's log, as `crawl robots` shows it."""
    problems = []
    for line in entry.robots.all_usage_lines(token):
        said = f"robots.txt line {line.line} {line.key}: {line.value}"
        reading = read_signal(line.key, line.value)
        problems += [
            f"{said}: {problem}" for problem in (line.problem, *reading.problems) if problem
        ]
    if entry.tdmrep is not None:
        problems += [f"tdmrep.json: {problem}" for problem in entry.tdmrep.problems]
    return problems
