"""`crawl`: the command line. Parses arguments, runs the command, maps outcomes to exit status
(crawler.cli.exits).

    crawl SEEDS [-c CONFIG.yaml] [--data DIR] [--fresh] [-s key=value ...]
    crawl robots FILE URL... [--agent TOKEN] [--json]
    crawl search QUERY [--data DIR] [--limit N] [--json]
    crawl export [--data DIR] [--format jsonl] [-o FILE]
    crawl --version
"""

from __future__ import annotations

import argparse
import os
import sys
import typing
from collections.abc import Callable, Sequence
from pathlib import Path

from crawler.cli.commands import export_command, robots_command, search_command
from crawler.cli.crawling import crawl_command
from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK
from crawler.cli.report import version_text
from crawler.errors import CrawlerError
from crawler.output.search import EXPORT_FORMATS
from crawler.robots.rules import AgentMatch, Precedence
from crawler.stats import SkipReason

__all__ = ["main"]


DESCRIPTION = """\
crawl: a polite web crawler.

  crawl SEEDS [-c CONFIG.yaml] [--data DIR] [--fresh] [-s key=value ...]

crawls from the URLs in SEEDS (one per line; blank lines and # comments allowed), obeying each
origin's robots.txt and its Crawl-delay, Request-rate and Visit-time, and writes DIR/index.sqlite
(or DIR/pages.jsonl). The crawl state lives in DIR/state.sqlite: run the same command again after
a stop, a kill or a reboot and the crawl resumes where it was; --fresh starts over.
Every config key (config/crawler.yaml documents them) can be set with -s, e.g.
-s politeness.min_delay=2 -s limits.max_pages=1000.

Other commands:
  crawl robots FILE URL... [--agent TOKEN]   explain what a robots.txt file allows
  crawl search QUERY [--data DIR]            search the pages a crawl indexed
  crawl export [--data DIR] [-o FILE]        write the indexed crawl out as JSON lines
"""

SUBCOMMANDS = ("robots", "search", "export")


def _add_config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-c", "--config", type=Path, help="YAML config (see config/crawler.yaml)")
    parser.add_argument(
        "-s",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key by its dotted path, e.g. -s politeness.min_delay=2",
    )


def _crawl_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crawl", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("seeds", type=Path, metavar="SEEDS", help="file of seed URLs")
    parser.add_argument(
        "--data", type=Path, metavar="DIR", help="data directory (default: output.data_dir)"
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="start over: delete the crawl state and output in DIR (it says which first)",
    )
    _add_config_options(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="log every retry and wait")
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
        print(version_text())
        parser.exit()


def _parser() -> argparse.ArgumentParser:
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
    robots.add_argument("file", type=Path, help="a robots.txt file")
    robots.add_argument("urls", nargs="+", metavar="URL", help="full URLs or paths with query")
    _add_config_options(robots)
    robots.add_argument("--agent", help="product token; same as -s robots.token=TOKEN")
    robots.add_argument("--agent-match", choices=typing.get_args(AgentMatch))
    robots.add_argument("--precedence", choices=typing.get_args(Precedence))
    robots.add_argument("--case-insensitive-paths", action="store_true")
    robots.add_argument("--split-values", action="store_true")
    robots.add_argument("--json", action="store_true", help="one JSON object per URL")
    _add_search_parser(commands)
    _add_export_parser(commands)
    return parser


def _add_data_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, metavar="DIR", help="data directory (default: output.data_dir)"
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
        description="Search DIR/index.sqlite, best matches first. QUERY is FTS5 syntax: words "
        'match all of them, "a phrase", OR, NOT, prefix*, title:word. Words with punctuation '
        'go in double quotes ("e-mail").',
    )
    parser.add_argument("query", metavar="QUERY", help="what to look for")
    _add_data_option(parser)
    parser.add_argument(
        "--limit", type=_positive, default=10, metavar="N", help="at most N results (10)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per result")
    _add_config_options(parser)


def _add_export_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "export",
        help="write the indexed crawl out, one JSON object per fetched page (or skipped URL)",
        description="Write every page in DIR/index.sqlite, in fetch order, with its status, robots "
        "decisions, links and (for indexed pages only) its text. With --skips, every URL the "
        "crawl met and did not fetch instead, with the reason and its detail (the robots.txt "
        "line, the scope rule, the limit).",
    )
    _add_data_option(parser)
    parser.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl")
    parser.add_argument("--skips", action="store_true", help="the URLs not fetched, not the pages")
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
    _add_config_options(parser)


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "robots": robots_command,
    "search": search_command,
    "export": export_command,
}


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        if arguments and arguments[0] in SUBCOMMANDS:
            parser = _parser()
            args = parser.parse_args(arguments)
            return _COMMANDS[args.command](args)
        if not arguments:
            _crawl_parser().print_help(sys.stderr)
            return EXIT_BAD_INPUT
        return crawl_command(_crawl_parser().parse_args(arguments))
    except CrawlerError as error:  # ConfigError, SeedError and the rest: a message, no traceback
        print(f"crawl: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`crawl export | head`): stop quietly, and keep the interpreter's
        # final flush of stdout from failing again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
