"""The `crawl` command's live progress: one line redrawn in place on a terminal, a plain line every
`output.progress_interval` seconds elsewhere."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from crawler.cli.text import ELLIPSIS, columns, ellipsis_for, fit, terminal_width
from crawler.stats import CrawlStats

__all__ = ["Progress", "progress_line"]

_NEVER_DROPPED = 100


@dataclass(frozen=True, slots=True)
class _Part:
    text: str
    keep: int
    """The narrower the terminal, the more parts are dropped: the lowest `keep` first."""
    joiner: str
    """Written before the part."""


def _clock(seconds: float) -> str:
    whole = int(max(seconds, 0.0))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def _progress_parts(stats: CrawlStats) -> list[_Part]:
    # What matters most when the terminal is narrow: that pages come, that errors do not, how
    # much is left, how fast; then which hosts are busy; skips and the clock last.
    throttled = (
        [_Part(f"throttled {stats.hosts_throttled}", 3, ", ")] if stats.hosts_throttled else []
    )
    return [
        _Part(f"pages {stats.pages}", _NEVER_DROPPED, ""),
        _Part(f"({stats.pages_per_second:.1f}/s)", 5, " "),
        _Part(f"hosts active {stats.in_flight}", 4, " | "),
        _Part(f"waiting {stats.hosts_waiting}", 3, ", "),
        *throttled,
        _Part(f"queued {stats.queued}", 6, " | "),
        _Part(f"errors {sum(stats.errors.values())}", 7, " | "),
        _Part(f"skips {sum(stats.skips.values())}", 2, " | "),
        _Part(_clock(stats.elapsed), 1, " | "),
    ]


def _joined(parts: Sequence[_Part]) -> str:
    return "".join(part.joiner + part.text for part in parts)


def progress_line(stats: CrawlStats, width: int | None = None, ellipsis: str = ELLIPSIS) -> str:
    """The live figures on one line of at most `width` columns (None: all of them): the least
    useful are dropped first, and what still does not fit is cut."""
    parts = _progress_parts(stats)
    if width is None:
        return _joined(parts)
    while columns(_joined(parts)) > width and len(parts) > 1:
        parts.remove(min(parts, key=lambda part: part.keep))
    return fit(_joined(parts), width, ellipsis)


class Progress:
    """On a terminal, one line redrawn in place, never wider than the terminal (so a redraw never
    leaves the row); elsewhere, a plain whole line every `interval` s."""

    def __init__(self, stats: CrawlStats, stream: TextIO, interval: float) -> None:
        self._stats = stats
        self._stream = stream
        self._tty = stream.isatty()
        self._interval = 0.5 if self._tty else interval
        self._ellipsis = ellipsis_for(stream)
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
            while True:
                await asyncio.sleep(self._interval)
                self.show()
        finally:
            for handler in handlers:
                handler.removeFilter(self._before_record)

    def _before_record(self, record: logging.LogRecord) -> bool:
        self.clear()
        return True

    def show(self) -> None:
        if self._tty:
            # Asked at each redraw: the terminal may have been resized.
            width = terminal_width(self._stream) or 79
            line = progress_line(self._stats, width, self._ellipsis)
            shown = columns(line)
            blank = max(0, min(self._shown, width) - shown)
            self._stream.write("\r" + line + " " * blank)
            self._shown = shown
        else:
            stamp = time.strftime("%H:%M:%S")
            self._stream.write(f"{stamp} crawl: {progress_line(self._stats)}\n")
        self._stream.flush()

    def clear(self) -> None:
        if self._tty and self._shown:
            width = terminal_width(self._stream) or 79
            self._stream.write("\r" + " " * min(self._shown, width) + "\r")
            self._stream.flush()
            self._shown = 0
