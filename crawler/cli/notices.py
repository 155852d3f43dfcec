"""What the `crawl` command says above its live line as things go wrong: a host whose robots.txt
cannot be had (refused, timed out, 5xx) is named at its first failure, with what failed and how
long the crawl keeps trying, instead of showing only as a count of errors until it is given up.

Bounded: the first `NAMED` hosts are named, each once; the rest are counted, at most a line every
`COUNT_EVERY` seconds (a crawl of 1,000 dead hosts prints a few lines, not 1,000). Pure: the
hosts and the time are arguments."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping

from crawler.cli.text import counted
from crawler.stats import UnreachableHost

__all__ = ["COUNT_EVERY", "NAMED", "FailureNotices", "failure_kind", "unreachable_notice"]

NAMED = 5
COUNT_EVERY = 60.0


def _span(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _clock(epoch: float) -> str:
    try:
        return time.strftime("%H:%M:%S UTC", time.gmtime(epoch))
    except (OverflowError, OSError, ValueError):
        return "a time past reckoning"


def failure_kind(reason: str) -> str:
    """The kind of a failure, for counting: 'connection', 'timeout', 'status 503'."""
    return reason.removeprefix("unreachable: ").split(":")[0]


def unreachable_notice(host: UnreachableHost, now: float) -> str:
    """What to say of a host whose robots.txt just failed: what failed, and how long the crawl
    keeps trying."""
    reason = host.reason.removeprefix("unreachable: ")
    if host.give_up_by <= host.retry_at:
        trying = (
            f"the crawl tries once more in {_span(host.retry_at - now)}, and gives the host up if "
            "it still fails"
        )
    else:
        trying = (
            f"the crawl tries again in {_span(host.retry_at - now)}, and gives the host up by "
            f"{_clock(host.give_up_by)} if it still fails (robots.give_up_after "
            f"{_span(host.give_up_by - host.since)})"
        )
    return f"crawl: {host.origin}/robots.txt: {reason}. Its URLs wait: {trying}"


class FailureNotices:
    """Which failing hosts to tell of, as they fail: each once, the first `named` by name, the
    rest counted at most once every `count_every` seconds."""

    def __init__(self, named: int = NAMED, count_every: float = COUNT_EVERY) -> None:
        self._named = named
        self._count_every = count_every
        self._told: set[str] = set()
        self._untold: Counter[str] = Counter()
        """Hosts failing past the first `named`, by kind, since the last count said."""
        self._counted_at = -float("inf")

    def lines(self, unreachable: Mapping[str, UnreachableHost], now: float) -> list[str]:
        """What to say at `now` of the hosts failing now (`unreachable`)."""
        lines = []
        for origin, host in unreachable.items():
            if origin in self._told:
                continue
            self._told.add(origin)
            if len(self._told) <= self._named:
                lines.append(unreachable_notice(host, now))
            else:
                self._untold[failure_kind(host.reason)] += 1
        if self._untold and now >= self._counted_at + self._count_every:
            kinds = ", ".join(f"{kind} {count}" for kind, count in self._untold.most_common())
            count = sum(self._untold.values())
            lines.append(
                f"crawl: {counted(count, 'more host')} whose robots.txt cannot be had ({kinds}): "
                "each tried again until robots.give_up_after; the summary names those given up"
            )
            self._untold.clear()
            self._counted_at = now
        return lines

    def sayings(
        self, unreachable: Callable[[], Mapping[str, UnreachableHost]]
    ) -> Callable[[float], list[str]]:
        """`lines` as `Progress` asks for them, of the hosts `unreachable()` gives."""
        return lambda now: self.lines(unreachable(), now)
