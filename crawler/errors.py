"""The crawler's exceptions: one root, so callers can catch everything of ours in one place.

    CrawlerError                      anything the crawler raises on purpose
     +-- ConfigError                  bad configuration or bad user input; the CLI exits with 2
          +-- InvalidProductTokenError   a robots.txt product token outside [A-Za-z_-]+
          +-- InvalidRobotsOptionError   an unknown value for a robots.txt parsing option
          +-- SeedError                  a seeds file that cannot be read or holds no URL
          +-- ServeError                 --serve's address cannot be served on (a port in use)
     +-- OutputError                  the data directory cannot be written, or its index read
     |    +-- DiskFullError           a write found no room: a full disk, a quota, a read-only
     |                                mount (also a StateError); the crawl stops to be resumed
     +-- StateError                   the crawl state in the data directory cannot be used: another
                                      crawl holds it, or it cannot be read or written
     +-- SearchError                  a search query the full-text index cannot parse

Skips are not exceptions: a URL that robots.txt disallows, that is out of scope or over a limit is a
value the crawl records with its reason. Third-party errors (aiohttp, sqlite3, yaml) are translated
into this tree at the one place that calls the library.
"""

from __future__ import annotations

import errno
import os
import sqlite3


class CrawlerError(Exception):
    """Root of every error the crawler raises on purpose."""


class ConfigError(CrawlerError, ValueError):
    """Configuration or user input that cannot be used as given; the message says what was
    expected."""


class InvalidProductTokenError(ConfigError):
    """A robots.txt product token with characters outside [A-Za-z_-] (RFC 9309 section 2.2.1)."""


class InvalidRobotsOptionError(ConfigError):
    """A robots.txt parsing option with a value the engine does not know."""


class SeedError(ConfigError):
    """A seeds file that cannot be used: unreadable, or without one crawlable URL."""


class ServeError(ConfigError):
    """The address to serve the live status on (monitor.serve, --serve) cannot be bound: the port
    is in use, or the host is none of this machine's."""


class OutputError(CrawlerError):
    """The data directory or an output file cannot be written, or the index cannot be read."""


class DiskFullError(OutputError):
    """A write under the data directory, the WARC directory or the log file found no room: the
    disk is full, a quota is reached, or the filesystem went read-only. Not bad input: the crawl
    stops as on SIGTERM, and the same command resumes it once there is room. Raised by the state
    too (see `StateDiskFullError`), so it is caught wherever either is."""

    def __init__(self, path: os.PathLike[str] | str, reason: str) -> None:
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(f"disk full writing {self.path} ({reason})")


class SearchError(CrawlerError):
    """A search query that is not valid FTS5 syntax; the message quotes the query."""


class StateError(CrawlerError):
    """The crawl state in a data directory cannot be used: another crawl is using the directory,
    the state file is not one or is from a newer version, or it cannot be read or written."""


class StateDiskFullError(DiskFullError, StateError):
    """A `DiskFullError` met writing the crawl state (DIR/state.sqlite)."""


class SharedStateError(StateError):
    """A shared crawl state (Valkey or Redis, `--state URL`) that cannot be used: the server
    cannot be reached or refuses us, its crawl library is missing or of another version, or the
    connection was lost."""


_NO_ROOM_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG}
_NO_ROOM_SQLITE = {sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY}
# SQLITE_IOERR_READ, SQLITE_IOERR_SHORT_READ: a damaged disk, not a full one.
_SQLITE_READS = {266, 522}
_NO_ROOM_WORDS = (
    os.strerror(errno.ENOSPC),
    os.strerror(errno.EDQUOT),
    os.strerror(errno.EROFS),
    "database or disk is full",
    "disk I/O error",
    "attempt to write a readonly database",
)


def no_room(error: BaseException | str) -> str | None:
    """Why `error` (or its causes; or the message a writer process sent) means the disk had no
    room for a write, as said to the user ('No space left on device'); None when it is another
    error. SQLite's I/O errors count: SQLite says SQLITE_IOERR when a write of a full disk fails
    part way (WAL, journal, temporary files)."""
    if isinstance(error, str):
        return next((words for words in _NO_ROOM_WORDS if words in error), None)
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DiskFullError):
            return current.reason
        if isinstance(current, OSError) and current.errno in _NO_ROOM_ERRNOS:
            return os.strerror(current.errno)
        code = getattr(current, "sqlite_errorcode", None)
        if (
            isinstance(current, sqlite3.Error)
            and isinstance(code, int)
            and code & 0xFF in _NO_ROOM_SQLITE
            and code not in _SQLITE_READS
        ):
            return str(current)
        current = current.__cause__ or current.__context__
    return no_room(str(error))
