"""The crawler's exceptions: one root, so callers can catch everything of ours in one place.

    CrawlerError                      anything the crawler raises on purpose
     +-- ConfigError                  bad configuration or bad user input; the CLI exits with 2
          +-- InvalidProductTokenError   a robots.txt product token outside [A-Za-z_-]+
          +-- InvalidRobotsOptionError   an unknown value for a robots.txt parsing option
          +-- SeedError                  a seeds file that cannot be read or holds no URL
          +-- ServeError                 --serve's address cannot be served on (a port in use)
     +-- OutputError                  the data directory cannot be written, or its index read
     +-- StateError                   the crawl state in the data directory cannot be used: another
                                      crawl holds it, or it cannot be read or written
     +-- SearchError                  a search query the full-text index cannot parse

Skips are not exceptions: a URL that robots.txt disallows, that is out of scope or over a limit is a
value the crawl records with its reason. Third-party errors (aiohttp, sqlite3, yaml) are translated
into this tree at the one place that calls the library.
"""

from __future__ import annotations


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


class SearchError(CrawlerError):
    """A search query that is not valid FTS5 syntax; the message quotes the query."""


class StateError(CrawlerError):
    """The crawl state in a data directory cannot be used: another crawl is using the directory,
    the state file is not one or is from a newer version, or it cannot be read or written."""


class SharedStateError(StateError):
    """A shared crawl state (Valkey or Redis, `--state URL`) that cannot be used: the server
    cannot be reached or refuses us, its crawl library is missing or of another version, or the
    connection was lost."""
