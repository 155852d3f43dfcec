"""Where a crawl's log records go (retries, waits, hosts given up: crawler.crawl logs them): to
standard error as text by default; with `--log-file FILE` to the end of FILE; with `--log-format
json` one JSON object a line (time, level, logger, message) for a machine to read.

The progress line, the messages that start `crawl:` and the summary are not log records: they stay
on the terminal and never go into the log file."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from crawler.errors import ConfigError, DiskFullError, no_room

__all__ = ["LOG_FORMATS", "JsonLogFormatter", "LogFile", "configure_logging", "log_file_full"]

LOG_FORMATS = ("text", "json")
_TEXT_FORMAT = "%(asctime)s %(levelname)s %(message)s"
_installed: list[logging.Handler] = []
"""The handler the last `configure_logging` put on the root logger (main() may run again in one
process, as tests run it)."""


class JsonLogFormatter(logging.Formatter):
    """A record as one line of JSON: time (UTC, ISO 8601, milliseconds), level, logger, message,
    and the traceback as `exception` when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        time = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        entry = {
            "time": time.replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class LogFile(logging.FileHandler):
    """--log-file FILE. A record that finds the disk full is dropped without logging's
    traceback, and kept as `full` (and told to `on_full`): the crawl stops as a full disk stops
    it."""

    full: DiskFullError | None = None
    on_full: Callable[[DiskFullError], None] | None = None

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        error = sys.exc_info()[1]
        reason = no_room(error) if error is not None else None
        if reason is None:
            super().handleError(record)
            return
        if self.full is None:
            self.full = DiskFullError(self.baseFilename, reason)
            if self.on_full is not None:
                self.on_full(self.full)


def log_file_full() -> LogFile | None:
    """The log file the crawl writes, if it writes one."""
    return next((handler for handler in _installed if isinstance(handler, LogFile)), None)


def configure_logging(*, verbose: bool, log_file: Path | None, log_format: str) -> None:
    """Send the log records (INFO and up with `verbose`, else WARNING and up) where the options
    say; ConfigError when the log file cannot be opened for writing."""
    handler: logging.Handler
    if log_file is None:
        handler = logging.StreamHandler(sys.stderr)
    else:
        try:
            # Appended to: a resumed crawl's records follow those of the runs before it.
            handler = LogFile(log_file, encoding="utf-8")
        except OSError as error:
            raise ConfigError(
                f"--log-file {log_file}: cannot write it: {error.strerror}"
            ) from error
    if log_format == "json":
        handler.setFormatter(JsonLogFormatter())
    else:
        handler.setFormatter(logging.Formatter(_TEXT_FORMAT))
    root = logging.getLogger()
    for old in _installed:
        root.removeHandler(old)
        old.close()
    _installed[:] = [handler]
    root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)
