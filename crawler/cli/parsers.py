"""The `crawl` command line's arguments: the crawl's parser and the other commands' (their
names `SUBCOMMANDS`), with their help. Reading them reads no command's modules
(crawler.cli.command runs the command)."""

from __future__ import annotations

import argparse
import typing
from collections.abc import Sequence
from pathlib import Path

from crawler.cli.logs import LOG_FORMATS
from crawler.cli.options import (
    add_config_options,
    add_data_option,
    add_recrawl_options,
    add_shortcuts,
    default_of,
)
from crawler.output.export import EXPORT_FORMATS
from crawler.robots.rules import AgentMatch, Precedence
from crawler.stats import SkipReason
from crawler.usage.purposes import PURPOSES

__all__ = ["DESCRIPTION", "SUBCOMMANDS", "commands_parser", "crawl_parser"]


_DATA_DIR = default_of("output.data_dir")

DESCRIPTION = f"""\
crawl: a polite web crawler.

  crawl SEEDS... [-c CONFIG.yaml] [--data DIR] [--fresh] [-s key=value ...]

crawls from SEEDS, obeying each origin's robots.txt and its Crawl-delay, Request-rate and
Visit-time, and writes DIR/index.sqlite (or DIR/pages.jsonl); DIR is {_DATA_DIR} unless --data
or output.data_dir says otherwise. Each SEEDS argument is a file of URLs (one per line; blank
lines and # comments allowed), an http:// or https:// URL, or - for such lines on standard input.
Give as many as you like, files and URLs mixed: their URLs are crawled together, each once. An
argument spelt as a URL (scheme://...) is always a URL, never a file name.
The crawl state lives in DIR/state.sqlite: run the same command again after a stop, a kill or a
reboot and the crawl resumes where it was; --fresh starts over. With --state URL the state lives
in a Valkey or Redis server instead, shared by every worker started with the same URL, on this
machine (--workers N) or any other: each host's delays hold across all of them.
Every config key (config/crawler.yaml documents them) can be set with -s, e.g.
-s politeness.min_delay=2 -s limits.max_pages=1000; the common ones have flags of their own.

Examples:
  crawl https://example.org/ --max-pages 100
  crawl seeds.txt https://example.com/news/ --depth 3 --delay 2 --data news
  grep -h ^https: lists/*.txt | crawl - --output jsonl --log-file crawl.log --log-format json
  crawl seeds.txt --serve 8080      a live status page at http://127.0.0.1:8080/, /metrics too

Other commands:
  crawl robots FILE URL... [--agent TOKEN]   explain what a robots.txt file allows
  crawl search QUERY [--data DIR]            search the pages a crawl indexed
  crawl export [--data DIR] [-o FILE]        write the indexed crawl out as JSON lines or CSV
  crawl export --changed-since DATE          the pages that appeared, changed or went away since
  crawl warc-index [--data DIR] [-o FILE]    a CDXJ index of the WARC files a --warc crawl wrote
  crawl status [--data DIR] [--json]         what the last run did, or a running crawl is doing
  crawl status --state URL                   what a shared crawl's workers are doing
  crawl report [--data DIR] [-o FILE]        one HTML file of charts and tables of a crawl
  crawl reset --state URL [--yes]            start a shared crawl over (no worker may be alive)
"""

SUBCOMMANDS = ("robots", "search", "export", "warc-index", "status", "report", "reset")


def _add_purpose_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--purpose",
        choices=PURPOSES,
        help=f"what the pages are for; only pages whose owners allow it are {what} (default: "
        "the purpose of the last crawl into DIR)",
    )


def crawl_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crawl", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "seeds",
        nargs="+",
        metavar="SEEDS",
        help="a file of URLs (one per line), an http(s) URL, or - for standard input; "
        "several may be given, files and URLs mixed",
    )
    add_data_option(parser)
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="start over: delete the crawl state and output in DIR (it says which first)",
    )
    add_recrawl_options(parser)
    parser.add_argument(
        "--warc",
        action="store_true",
        help="also archive every answer as it came over the wire in DIR/warc/*.warc.gz "
        "(WARC 1.1); same as -s output.warc=true",
    )
    parser.add_argument(
        "--page-requisites",
        action="store_true",
        help="with --warc: also fetch and archive what each page needs to be shown "
        "(stylesheets, images, scripts, fonts, frames), under their hosts' robots.txt and pace; "
        "same as -s fetch.page_requisites=true",
    )
    add_config_options(parser, "limits.max_pages=1000")
    add_shortcuts(parser)
    shared = parser.add_argument_group("a crawl shared by several workers")
    shared.add_argument(
        "--state",
        metavar="URL",
        help="run as one worker of the crawl whose state is in this Valkey or Redis server "
        "(redis://HOST:PORT/DB); start the same command on as many machines as you like; "
        "same as -s state.backend=redis -s state.url=URL",
    )
    shared.add_argument(
        "--workers",
        type=_positive,
        metavar="N",
        help="with --state: start N worker processes here, writing DIR/w1 ... DIR/wN",
    )
    # A worker --workers started: its live figures go to this pipe, for the one line drawn for
    # all of them (crawler.cli.workers), not to a line of its own.
    shared.add_argument("--progress-fd", type=int, help=argparse.SUPPRESS)
    logs = parser.add_argument_group("logging")
    logs.add_argument("-v", "--verbose", action="store_true", help="log every retry and wait")
    logs.add_argument(
        "--log-file",
        type=Path,
        metavar="FILE",
        help="append the log to FILE instead of standard error; the progress line and the "
        "summary stay on the terminal",
    )
    logs.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="text",
        help="json: one object a line with time, level, logger and message (default: text)",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        help="say the version, and which page walk, HTTP client and event loop a crawl runs on",
    )
    return parser


class _Version(argparse.Action):
    """`--version`: the text is made only when asked for (it looks up package versions)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **options: typing.Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **options)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: typing.Any,
        option_string: str | None = None,
    ) -> None:
        from crawler.cli.report import version_text

        print(version_text())
        parser.exit()


def commands_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crawl", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    robots = commands.add_parser(
        "robots",
        help="explain what a robots.txt file allows, URL by URL",
        description="Read a robots.txt file and say, for each URL, whether the agent may fetch "
        "it and which line decides. Also shows the agent's Crawl-delay, Request-rate and "
        "Visit-time.",
    )
    # Not type=Path: Path("https://a.test/robots.txt") loses a slash, and the error names the URL.
    robots.add_argument("file", metavar="FILE", help="a robots.txt file on this machine")
    robots.add_argument("urls", nargs="+", metavar="URL", help="full URLs or paths with query")
    add_config_options(robots, "robots.precedence=first-match")
    robots.add_argument("--agent", help="product token; same as -s robots.token=TOKEN")
    robots.add_argument("--agent-match", choices=typing.get_args(AgentMatch))
    robots.add_argument("--precedence", choices=typing.get_args(Precedence))
    robots.add_argument("--case-insensitive-paths", action="store_true")
    robots.add_argument("--split-values", action="store_true")
    robots.add_argument("--json", action="store_true", help="one JSON object per URL")
    robots.add_argument(
        "--purpose",
        choices=PURPOSES,
        help="the purpose the usage lines are read for; same as -s usage.purpose=PURPOSE",
    )
    _add_search_parser(commands)
    _add_export_parser(commands)
    _add_warc_index_parser(commands)
    _add_status_parser(commands)
    _add_report_parser(commands)
    _add_reset_parser(commands)
    return parser


def _add_shards_option(parser: argparse.ArgumentParser, doing: str) -> None:
    parser.add_argument(
        "--data",
        type=Path,
        action="append",
        metavar="DIR",
        help=f"data directory (default: output.data_dir, which is {_DATA_DIR} unless set); "
        f"repeat it to {doing} several (a shared crawl's workers' DIR/w1, DIR/w2, ...)",
    )


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, not {value!r}")
    return number


def _add_search_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "search",
        help="search the pages a crawl indexed",
        description="Search DIR/index.sqlite, best matches first. A page matches when it has "
        "every word of QUERY (several arguments are one query); words and punctuation are "
        'searched as written (c++, foo-bar, AND on its own). Recognised where they stand: "a '
        'phrase" in double quotes, AND/OR/NOT in capitals between two words, prefix*, '
        "title:word and text:word. --fts hands QUERY to SQLite FTS5 as written, for the rest of "
        "its syntax (parentheses, NEAR). With several --data, the indexes of a shared crawl's "
        "workers are searched together, their results merged.",
    )
    parser.add_argument("query", nargs="+", metavar="QUERY", help="what to look for")
    parser.add_argument(
        "--fts", action="store_true", help="QUERY is FTS5 query syntax, taken as written"
    )
    _add_shards_option(parser, "search")
    parser.add_argument(
        "--limit", type=_positive, default=10, metavar="N", help="at most N results (10)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per result")
    _add_purpose_option(parser, "found")
    add_config_options(parser, "output.data_dir=last-week")


def _add_warc_index_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    parser = commands.add_parser(
        "warc-index",
        help="a CDXJ index of the WARC files a --warc crawl wrote, for replay tools",
        description="List every response and revisit record in DIR/warc/*.warc.gz as a CDXJ "
        "line (the form pywb reads: SURT key, timestamp, then url, mime, status, payload "
        "digest, length, offset and file name as JSON), sorted by key and time.",
    )
    _add_shards_option(parser, "index")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="write to FILE")
    add_config_options(parser, "output.data_dir=archive")


def _add_export_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "export",
        help="write the indexed crawl out, one JSON object (or CSV row) per fetched page "
        "(or skipped URL)",
        description="Write every page in DIR/index.sqlite, in fetch order, with its status, robots "
        "decisions, links and (for indexed pages only) its text. With --skips, every URL the "
        "crawl met and did not fetch instead, with the reason and its detail (the robots.txt "
        "line, the scope rule, the limit). --format csv writes a header row and a row per page "
        "of its single-valued fields (url ... index, follow and their reasons); the links and "
        "the text, lists and long multi-line text, are left out: use jsonl for them.",
    )
    _add_shards_option(parser, "export")
    parser.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        default="jsonl",
        help="jsonl: one JSON object a line; csv: a header row, then a row each; markdown: a "
        "JSON object a line of each page's main content as Markdown (default: jsonl)",
    )
    parser.add_argument("--skips", action="store_true", help="the URLs not fetched, not the pages")
    parser.add_argument(
        "--changed-since",
        metavar="DATE",
        help="only the pages that appeared, changed or went away since DATE (2026-11-24, "
        "2026-11-24T08:00Z; or a time back from now: 12h, 7d), a JSON object each: url, change "
        "(new, changed, gone), at, first_seen, status, title",
    )
    parser.add_argument(
        "--reason",
        choices=typing.get_args(SkipReason),
        metavar="REASON",
        help="with --skips: only the URLs skipped for REASON, as the summary names it "
        "(e.g. 'over limits.max_depth')",
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write to FILE (default: stdout)"
    )
    _add_purpose_option(parser, "given text")
    add_config_options(parser, "output.data_dir=last-week")


def _add_status_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "status",
        help="what the last run of a crawl did, or what a crawl in progress is doing",
        description="Print the summary of the last run in DIR, or of the run going on now (as of "
        "its last refresh, a few seconds old at most), from DIR/summary.json, or DIR/state.sqlite "
        "when there is none. Reads only: takes no lock, starts nothing. Exit status 2 when DIR "
        "holds no crawl.",
    )
    add_data_option(parser)
    parser.add_argument(
        "--state",
        metavar="URL",
        help="the shared crawl in this Valkey or Redis server instead: URLs queued and leased, "
        "hosts due and held, live workers, pages per second",
    )
    parser.add_argument(
        "--json", action="store_true", help="the summary as JSON (summary.json, and 'running')"
    )
    add_config_options(parser, "output.data_dir=last-week")


def _add_report_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "report",
        help="one self-contained HTML file of charts and tables of a finished or stopped crawl",
        description="Write one HTML file, with its charts, styles and script inline (it opens "
        "offline and can be mailed), of the crawl in DIR: pages over time, each host's gaps "
        "between requests against its interval, status codes, skips, the slowest and most "
        "refused hosts, and what a recrawl found changed. Read from DIR/summary.json and "
        "DIR/state.sqlite; takes no lock. Prints the file's path. Exit status 2 when DIR holds "
        "no crawl.",
    )
    add_data_option(parser)
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write to FILE (default: DIR/report.html)"
    )
    add_config_options(parser, "output.data_dir=last-week")


def _add_reset_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "reset",
        help="start a shared crawl over: delete its state on the server",
        description="Delete the keys of the shared crawl (those beginning with state.key_prefix) "
        "on the Valkey or Redis server URL names, after asking: the --fresh of a crawl shared by "
        "workers. Refuses, with exit status 2, while a worker of the crawl is alive. Pages stay "
        "in the workers' data directories.",
    )
    parser.add_argument("--state", metavar="URL", required=True, help="redis://HOST:PORT/DB")
    parser.add_argument("--yes", action="store_true", help="do not ask")
    add_config_options(parser, "state.key_prefix=news/")
