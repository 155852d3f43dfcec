"""`crawl`: the command line. Parses arguments (crawler.cli.parsers), runs the command, each
command's modules read as it runs, and maps outcomes to exit status (crawler.cli.exits).

    crawl SEEDS... [-c CONFIG.yaml] [--data DIR] [--fresh | --recrawl | --keep-fresh] [--warc]
                   [-s key=value ...] [--page-requisites] [--max-pages N] [--depth N]
                   [--user-agent TEXT] [--delay SECONDS] [--output FORMAT] [--purpose PURPOSE]
                   [--serve [HOST:]PORT] [--log-file FILE] [--log-format text|json] [-v]
    crawl robots FILE URL... [--agent TOKEN] [--purpose PURPOSE] [--json]
    crawl search QUERY [--data DIR] [--limit N] [--purpose PURPOSE] [--json]
    crawl export [--data DIR] [--format jsonl|csv|markdown] [--purpose PURPOSE]
                 [--skips [--reason REASON]] [-o FILE]
    crawl export --changed-since DATE [--data DIR] [-o FILE]
    crawl warc-index [--data DIR] [-o FILE]
    crawl status [--data DIR] [--json]
    crawl report [--data DIR] [-o FILE]
    crawl --version

SEEDS are files of URLs (one a line), http(s) URLs and `-` (standard input), mixed as the user
likes (crawler.cli.seeds). The flags for common keys stand for `-s key=VALUE` and are checked as
it is (crawler.cli.options); the log goes where crawler.cli.logs says.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_DISK_FULL, EXIT_INTERRUPTED, EXIT_OK
from crawler.cli.parsers import SUBCOMMANDS, commands_parser, crawl_parser
from crawler.config import load_config
from crawler.errors import CrawlerError, DiskFullError

__all__ = ["main"]


# Each command's modules are read as it runs, not with this module: `crawl search` reads the
# search's and the index's, not the crawl's (the event loop, the HTTP client, the state), and
# answers in half the time; a crawl does not read the report's (40 to 50 ms).


def robots_command(args: argparse.Namespace) -> int:
    from crawler.cli.commands import robots_command as explain

    return explain(args)


def search_command(args: argparse.Namespace) -> int:
    from crawler.cli.commands import search_command as find

    return find(args)


def export_command(args: argparse.Namespace) -> int:
    from crawler.cli.commands import export_command as export

    return export(args)


def warc_index_command(args: argparse.Namespace) -> int:
    from crawler.cli.commands import warc_index_command as index_archives

    return index_archives(args)


def status_command(args: argparse.Namespace) -> int:
    from crawler.cli.status import status_command as tell

    return tell(args)


def report_command(args: argparse.Namespace) -> int:
    from crawler.cli.report_file import report_command as write_report_file

    return write_report_file(args)


def reset_command(args: argparse.Namespace) -> int:
    from crawler.cli.cluster import cluster_reset_command

    overrides = [*args.overrides, "state.backend=redis", f"state.url={args.state}"]
    return cluster_reset_command(load_config(args.config, overrides), yes=args.yes)


def crawl_command(args: argparse.Namespace) -> int:
    from crawler.cli.crawling import crawl_command as crawl

    return crawl(args)


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "robots": robots_command,
    "search": search_command,
    "export": export_command,
    "warc-index": warc_index_command,
    "status": status_command,
    "report": report_command,
    "reset": reset_command,
}


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        if arguments and arguments[0] in SUBCOMMANDS:
            args = commands_parser().parse_args(arguments)
            return _COMMANDS[args.command](args)
        if not arguments:
            crawl_parser().print_help(sys.stderr)
            return EXIT_BAD_INPUT
        # Intermixed: seeds may stand before and after options (`crawl URL --depth 2 FILE`).
        args = crawl_parser().parse_intermixed_args(arguments)
        args.argv = arguments  # --workers starts workers with the same arguments
        return crawl_command(args)
    except DiskFullError as error:
        # A crawl says so itself (crawler.cli.crawling); another command wrote nothing.
        print(f"crawl: {error}: free space and run it again", file=sys.stderr)
        return EXIT_DISK_FULL
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
