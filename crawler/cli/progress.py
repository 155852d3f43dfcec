"""The `crawl` command's live progress: one line redrawn in place on a terminal, a plain line every
`output.progress_interval` seconds elsewhere; and the way other output gets printed above that
line without being drawn over (`Progress.say`).

`progress_line` decides the line's text (pure: figures and a width in, text out); `Progress` draws
it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

from crawler.cli.text import (
    ELLIPSIS,
    columns,
    counted,
    ellipsis_for,
    fit,
    fit_text,
    terminal_width,
)
from crawler.stats import CrawlStats

__all__ = ["Progress", "Sayings", "progress_line"]

_NEVER_DROPPED = 100

Sayings = Callable[[float], Sequence[str]]
"""What to print above the line at a tick, given the time (epoch seconds): a message a line."""


@dataclass(frozen=True, slots=True)
class _Part:
    text: str
    keep: int
    """The narrower the terminal, the more parts are dropped: the lowest `keep` first."""
    joiner: str = "  "
    """Written before the part."""


def _clock(seconds: float) -> str:
    whole = int(max(seconds, 0.0))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def _progress_parts(stats: CrawlStats, label: str, now: float | None) -> list[_Part]:
    # What matters most when the terminal is narrow: that pages come, that errors do not, how
    # much is left, for how long it has run, what was passed over, how fast; then which hosts
    # are busy. Numbers before their nouns, two spaces between figures: at 80 columns a crawl of
    # a million URLs still shows the clock, pages, rate, queue, errors and skips.
    throttled = [_Part(f"{stats.hosts_throttled} throttled", 2)] if stats.hosts_throttled else []
    # A crawl kept fresh (--keep-fresh), waiting, says when the next URL is due instead of a
    # rate that falls as it waits.
    waiting = stats.next_due_at
    if waiting is not None:
        left = f" (in {_clock(waiting - now)})" if now is not None else ""
        due = time.strftime("%H:%M:%S", time.localtime(waiting))
        pace = _Part(f"waiting: next due {due}{left}", 11)
    else:
        pace = _Part(f"({stats.pages_per_second:.1f}/s)", 6, " ")
    return [
        *([_Part(label, 5, "")] if label else []),
        _Part(_clock(stats.elapsed), 8, "  " if label else ""),
        _Part(counted(stats.pages, "page"), _NEVER_DROPPED),
        pace,
        _Part(f"{stats.queued} queued", 9),
        _Part(counted(sum(stats.errors.values()), "error"), 10),
        _Part(f"{sum(stats.skips.values())} skipped", 7),
        _Part(f"{stats.in_flight} in flight", 4),
        _Part(f"{counted(stats.hosts_waiting, 'host')} waiting", 3),
        *throttled,
    ]


def _joined(parts: Sequence[_Part]) -> str:
    text = "".join(part.joiner + part.text for part in parts)
    return text.lstrip(" ")


def progress_line(
    stats: CrawlStats,
    width: int | None = None,
    ellipsis: str = ELLIPSIS,
    label: str = "",
    now: float | None = None,
) -> str:
    """The live figures on one line of at most `width` columns (None: all of them), after
    `label` (a shared crawl's `2 workers`): the least useful are dropped first, and what still
    does not fit is cut. `now` (epoch seconds): for how long a crawl kept fresh still waits."""
    parts = _progress_parts(stats, label, now)
    if width is None:
        return _joined(parts)
    while columns(_joined(parts)) > width and len(parts) > 1:
        parts.remove(min(parts, key=lambda part: part.keep))
    return fit(_joined(parts), width, ellipsis)


class Progress:
    """On a terminal, one line redrawn in place, never wider than the terminal (so a redraw never
    leaves the row); elsewhere, a plain whole line every `interval` s. What else is printed while
    it runs goes through `say`, which prints it above the line: a log record written to the
    terminal clears the line first by itself."""

    def __init__(
        self,
        stats: CrawlStats,
        stream: TextIO,
        interval: float,
        *,
        label: str = "",
        sayings: Sayings | None = None,
    ) -> None:
        """`sayings(now)`: asked at each tick for messages to print above the line."""
        self._stats = stats
        self._stream = stream
        self._tty = stream.isatty()
        self._interval = 0.5 if self._tty else interval
        self._ellipsis = ellipsis_for(stream)
        self._label = label
        self._sayings = sayings
        self._shown = 0
        """Columns of the line on the screen: a shorter redraw blanks the rest."""

    async def run(self) -> None:
        # A log record written to the terminal would land at the end of the live line: the line
        # is cleared first, and drawn again at the next tick.
        handlers = [
            handler
            for handler in logging.getLogger().handlers
            if self._tty
            and isinstance(handler, logging.StreamHandler)
            and handler.stream is self._stream
        ]
        for handler in handlers:
            handler.addFilter(self._before_record)
        try:
            # A plain stream gets its first line after `interval`; what is to be said, at once.
            next_line = time.monotonic() + self._interval
            while True:
                await asyncio.sleep(min(0.5, self._interval))
                self.tell()
                if self._tty or time.monotonic() >= next_line:
                    next_line = time.monotonic() + self._interval
                    self.show()
        finally:
            for handler in handlers:
                handler.removeFilter(self._before_record)

    def _before_record(self, record: logging.LogRecord) -> bool:
        self.clear()
        return True

    def tell(self) -> None:
        """Say what the `sayings` have to say now."""
        if self._sayings is not None:
            for message in self._sayings(time.time()):
                self.say(message)

    def say(self, text: str, stream: TextIO | None = None) -> None:
        """Print `text` (lines) above the live line, fitted to the terminal, and draw the line
        again below it; `stream`: where to (the line's own stream by default: standard output
        may be the same terminal)."""
        out = stream if stream is not None else self._stream
        shown = self._shown
        self.clear()
        out.write(fit_text(text, terminal_width(out), ellipsis_for(out)) + "\n")
        out.flush()
        if shown:
            self.show()

    def show(self) -> None:
        if self._tty:
            # Asked at each redraw: the terminal may have been resized.
            width = terminal_width(self._stream) or 79
            line = progress_line(self._stats, width, self._ellipsis, self._label, time.time())
            shown = columns(line)
            blank = max(0, min(self._shown, width) - shown)
            self._stream.write("\r" + line + " " * blank)
            self._shown = shown
        else:
            stamp = time.strftime("%H:%M:%S")
            line = progress_line(self._stats, label=self._label, now=time.time())
            self._stream.write(f"{stamp} crawl: {line}\n")
        self._stream.flush()

    def clear(self) -> None:
        if self._tty and self._shown:
            width = terminal_width(self._stream) or 79
            self._stream.write("\r" + " " * min(self._shown, width) + "\r")
            self._stream.flush()
            self._shown = 0
