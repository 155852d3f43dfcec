"""Where a crawl's log records go (retries, waits, hosts given up: crawler.crawl logs them): to
standard error as text by default; with `--log-file FILE` to the end of FILE; with `--log-format
json` one JSON object a line (time, level, logger, message) for a machine to read.

The progress line, the messages that start `crawl:` and the summary are not log records: they stay
on the terminal and never go into the log file."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path

from crawler.errors import ConfigError

__all__ = ["LOG_FORMATS", "JsonLogFormatter", "configure_logging"]

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


def configure_logging(*, verbose: bool, log_file: Path | None, log_format: str) -> None:
    """Send the log records (INFO and up with `verbose`, else WARNING and up) where the options
    say; ConfigError when the log file cannot be opened for writing."""
    handler: logging.Handler
    if log_file is None:
        handler = logging.StreamHandler(sys.stderr)
    else:
        try:
            # Appended to: a resumed crawl's records follow those of the runs before it.
            handler = logging.FileHandler(log_file, encoding="utf-8")
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
