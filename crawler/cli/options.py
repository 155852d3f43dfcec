"""What some command-line options mean beyond argparse: the flags that stand for a `-s KEY=VALUE`
(`--max-pages`, `--depth`, `--user-agent`, `--delay`, `--output`, `--purpose`, `--serve`), and the
data directory that `--data` or `output.data_dir` names."""

from __future__ import annotations

import argparse
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from crawler.config import Config
from crawler.errors import ConfigError

__all__ = [
    "SHORTCUTS",
    "Shortcut",
    "add_config_options",
    "add_data_option",
    "add_recrawl_options",
    "add_shortcuts",
    "data_directory",
    "default_of",
    "yaml_string",
]

_DEFAULTS = Config()


@dataclass(frozen=True, slots=True)
class Shortcut:
    """A flag that stands for `-s key=VALUE`."""

    flag: str
    key: str
    """The config key, by its dotted path."""
    metavar: str
    help: str
    literal: bool = False
    """The value is taken as typed, never read as YAML (a User-Agent of `yes` or `a: b`)."""


SHORTCUTS = (
    Shortcut("--max-pages", "limits.max_pages", "N", "stop after fetching N pages"),
    Shortcut("--depth", "limits.max_depth", "N", "follow links at most N steps from a seed"),
    Shortcut(
        "--user-agent",
        "user_agent",
        "TEXT",
        "the User-Agent header; its first product is the robots.txt token",
        literal=True,
    ),
    Shortcut(
        "--delay",
        "politeness.min_delay",
        "SECONDS",
        "at least this long between requests to a host",
    ),
    Shortcut("--output", "output.format", "FORMAT", "what to write: index, jsonl or both"),
    Shortcut(
        "--purpose",
        "usage.purpose",
        "PURPOSE",
        "what the crawl is for: search, ai-input or ai-train; a page whose owner refuses it "
        "(Content-Signal, Content-Usage, noai, TDMRep) is not indexed or exported as content",
    ),
    Shortcut(
        "--serve",
        "monitor.serve",
        "[HOST:]PORT",
        "while the crawl runs, serve a live status page at /, Prometheus metrics at /metrics "
        "and the live summary at /status.json (HOST 127.0.0.1 unless given; port 0: any free "
        "one); with --workers N, each worker on the next port",
        literal=True,
    ),
)
"""The keys set most often, each with a flag of its own."""


def default_of(key: str) -> str:
    """The default of a config key as help text shows it."""
    value: object = _DEFAULTS
    for part in key.split("."):
        value = getattr(value, part)
    if value is None:
        return "no limit"
    if value == "":
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def yaml_string(text: str) -> str:
    """`text` as a YAML double-quoted scalar, so that `-s` reads back this very string: quotes,
    backslashes and characters YAML may not hold as they are are escaped."""
    escaped = []
    for char in text:
        if char in '"\\':
            escaped.append("\\" + char)
        elif " " <= char <= "~" or (char > "\x9f" and char.isprintable()):
            escaped.append(char)
        else:
            escaped.append(f"\\U{ord(char):08x}")
    return '"' + "".join(escaped) + '"'


class _ShortcutAction(argparse.Action):
    """Appends `key=VALUE` to the -s overrides where the flag stands on the command line, so the
    value is checked as an -s is, and the later of a flag and an -s for one key wins."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, *, shortcut: Shortcut, **options: typing.Any
    ) -> None:
        super().__init__(option_strings, "overrides", default=argparse.SUPPRESS, **options)
        self.shortcut = shortcut

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: typing.Any,
        option_string: str | None = None,
    ) -> None:
        text = yaml_string(values) if self.shortcut.literal else str(values)
        overrides = list(getattr(namespace, "overrides", None) or [])
        namespace.overrides = [*overrides, f"{self.shortcut.key}={text}"]


def add_shortcuts(parser: argparse.ArgumentParser) -> None:
    """The SHORTCUTS as options of `parser`, which must have `-s` (dest `overrides`)."""
    group = parser.add_argument_group(
        "common settings", "each stands for -s KEY=VALUE and is checked as that is"
    )
    for shortcut in SHORTCUTS:
        default = default_of(shortcut.key).replace("%", "%%")  # argparse %-formats help
        group.add_argument(
            shortcut.flag,
            action=_ShortcutAction,
            shortcut=shortcut,
            metavar=shortcut.metavar,
            help=f"{shortcut.help} (-s {shortcut.key}; default: {default})",
        )


def data_directory(given: Path | None, config: Config) -> Path:
    """The data directory: `given` (--data), else output.data_dir. ConfigError when it, or a
    directory above it, is a file: a crawl could neither make it nor find its index there."""
    path = given if given is not None else Path(config.output.data_dir)
    named = f"--data {path}" if given is not None else f"output.data_dir {str(path)!r}"
    for above in (path, *path.parents):
        if not above.exists():
            continue
        if not above.is_dir():
            where = "" if above == path else f": {above}"
            raise ConfigError(
                f"{named}{where} is a file, not a directory; the data directory holds the "
                "crawl's index and state: give a directory, new or existing"
            )
        break
    return path


def add_config_options(
    parser: argparse.ArgumentParser, example: str = "politeness.min_delay=2"
) -> None:
    """-c and -s; `example`: an -s the command would be given."""
    parser.add_argument("-c", "--config", type=Path, help="YAML config (see config/crawler.yaml)")
    parser.add_argument(
        "-s",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"override a config key by its dotted path, e.g. -s {example}",
    )


def add_data_option(parser: argparse.ArgumentParser) -> None:
    """--data DIR, for a command that reads one crawl's data directory."""
    parser.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="data directory (default: output.data_dir, which is "
        f"{default_of('output.data_dir')} unless set)",
    )


def add_recrawl_options(parser: argparse.ArgumentParser) -> None:
    """--recrawl and --keep-fresh, for the crawl command."""
    parser.add_argument(
        "--recrawl",
        action="store_true",
        help="go over the crawl in DIR again: what is due (a page after the interval its change "
        "rate earns, recrawl.schedule; recrawl.after, default 1d, for what nothing is known of) "
        "is asked for again, conditionally; same as -s recrawl.enabled=true",
    )
    parser.add_argument(
        "--keep-fresh",
        action="store_true",
        help="crawl, then go over the crawl again and again without end: each page when it is "
        "due, within recrawl.budget_per_host_per_day and each host's pace, waiting in between "
        "(Ctrl-C stops it; the same command resumes it); same as -s recrawl.keep_fresh=true",
    )
