"""`crawl`: the command line. Parses arguments, runs, maps outcomes to exit status.

    crawl SEEDS [-c CONFIG.yaml] [--data DIR] [--fresh] [-s key=value ...]
    crawl robots FILE URL... [--agent TOKEN] [--json]
    crawl search QUERY [--data DIR] [--limit N] [--json]
    crawl export [--data DIR] [--format jsonl] [-o FILE]

Exit status: 0 success, 2 bad input (arguments, files, config, seeds, search queries), output
that cannot be written, or a data directory another crawl is using; 130 stopped by SIGINT
(Ctrl-C), 143 stopped by SIGTERM (128 + the signal's number, as a shell reports a process the
signal killed, so a supervisor tells a stop it asked for from an interrupt).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from crawler.cli.report import Progress, resume_note, summary
from crawler.cli.seeds import Seeds, read_seeds
from crawler.config import Config, load_config
from crawler.crawl.crawler import CONNECTIONS_SPARE, Crawler
from crawler.errors import ConfigError, CrawlerError, OutputError, StateError
from crawler.output.search import EXPORT_FORMATS, export_pages, find_index, search
from crawler.output.sinks import output_files
from crawler.robots.txt import RobotsTxt
from crawler.runtime import raise_open_files_limit, run, tune_allocator, tune_gc
from crawler.state import (
    STATE_NAME,
    CrawlState,
    DataDirLock,
    MemoryCrawlState,
    open_state,
    state_files,
)

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

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
    return parser


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
    robots.add_argument("--agent-match", choices=("rfc", "substring"))
    robots.add_argument("--precedence", choices=("longest-match", "first-match"))
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
        help="write the indexed crawl out, one JSON object per fetched page",
        description="Write every page in DIR/index.sqlite, in fetch order, with its status, robots "
        "decisions, links and (for indexed pages only) its text.",
    )
    _add_data_option(parser)
    parser.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl")
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write to FILE (default: stdout)"
    )
    _add_config_options(parser)


def _robots_overrides(args: argparse.Namespace) -> list[str]:
    """The shortcut flags, as the -s overrides they stand for (after the explicit ones)."""
    overrides = list(args.overrides)
    if args.agent is not None:
        overrides.append(f"robots.token={args.agent}")
    if args.agent_match is not None:
        overrides.append(f"robots.agent_match={args.agent_match}")
    if args.precedence is not None:
        overrides.append(f"robots.precedence={args.precedence}")
    if args.case_insensitive_paths:
        overrides.append("robots.case_insensitive_paths=true")
    if args.split_values:
        overrides.append("robots.split_values=true")
    return overrides


def _robots(args: argparse.Namespace) -> int:
    config = load_config(args.config, _robots_overrides(args))
    agent = config.product_token
    try:
        body = args.file.read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read robots.txt file {args.file}: {error.strerror}") from error
    robots = RobotsTxt.parse(body, **asdict(config.robots.options()))
    for url in args.urls:
        verdict = robots.explain(url, agent)
        if args.json:
            print(
                json.dumps(
                    {
                        "url": url,
                        "allowed": verdict.allowed,
                        "reason": verdict.reason,
                        "line": verdict.line,
                        "text": verdict.text,
                        "message": verdict.message,
                    }
                )
            )
        else:
            print(
                f"{'allowed   ' if verdict.allowed else 'disallowed'}  {url}\n    {verdict.message}"
            )
    if not args.json:
        delay = robots.crawl_delay(agent)
        rates = ", ".join(str(rate) for rate in robots.request_rates(agent)) or "none"
        windows = ", ".join(str(window) for window in robots.visit_time(agent)) or "any time"
        print(
            f"{agent}: Crawl-delay {delay if delay is not None else 'none'}; "
            f"Request-rate {rates}; Visit-time {windows}"
        )
    return EXIT_OK


def _data_dir(args: argparse.Namespace) -> Path:
    config = load_config(args.config, args.overrides)  # even with --data: a bad -c is reported
    return Path(args.data) if args.data is not None else Path(config.output.data_dir)


def _search(args: argparse.Namespace) -> int:
    hits = search(_data_dir(args), args.query, limit=args.limit)
    for rank, hit in enumerate(hits, 1):
        if args.json:
            print(
                json.dumps(
                    {"url": hit.url, "title": hit.title, "snippet": hit.snippet, "score": hit.score}
                )
            )
            continue
        print(f"{rank:>2}. {hit.title or '(no title)'}\n    {hit.url}")
        snippet = " ".join(hit.snippet.split())  # page text keeps its line breaks
        if snippet:
            print(f"    {snippet}")
    if not hits and not args.json:
        print(f"no results for {args.query!r}")
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    data_dir = _data_dir(args)
    where = "stdout" if args.output is None else str(args.output)
    try:
        if args.output is None:
            # JSON lines are UTF-8 whatever the locale says.
            if isinstance(sys.stdout, io.TextIOWrapper):
                sys.stdout.reconfigure(encoding="utf-8")
            count = export_pages(data_dir, sys.stdout, format=args.format)
            sys.stdout.flush()
        else:
            find_index(data_dir)  # before creating FILE, so a missing index leaves no empty file
            with open(args.output, "w", encoding="utf-8") as out:
                count = export_pages(data_dir, out, format=args.format)
    except BrokenPipeError:
        raise
    except OSError as error:  # opening FILE, or a write: a full disk, a quota
        raise OutputError(f"cannot write {where}: {error.strerror}") from error
    print(f"exported {count} pages to {where}", file=sys.stderr)
    return EXIT_OK


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "robots": _robots,
    "search": _search,
    "export": _export,
}


async def _run_crawl(config: Config, seeds: Seeds, data_dir: Path, *, fresh: bool) -> int:
    with DataDirLock(data_dir):
        if fresh:
            _start_over(data_dir)
        state: CrawlState = (
            open_state(data_dir, config.state, config.robots.options())
            if config.state.durable
            else MemoryCrawlState()
        )
        try:
            note = resume_note(data_dir, state, seeds.urls)
            if note is not None:
                print(f"crawl: {note}", file=sys.stderr)
            return await _crawl_state(config, seeds, data_dir, state)
        finally:
            state.close()


def _start_over(data_dir: Path) -> None:
    """--fresh: say what goes, then delete it (the caller holds the directory's lock)."""
    outputs = [
        sibling
        for path in output_files(data_dir, "both")
        for sibling in (
            path,
            path.with_name(path.name + "-wal"),
            path.with_name(path.name + "-shm"),
        )
    ]
    doomed = state_files(data_dir) + [path for path in outputs if path.exists()]
    if not doomed:
        print(f"crawl: --fresh: starting over in {data_dir} (nothing to delete)", file=sys.stderr)
        return
    names = ", ".join(path.name for path in doomed)
    print(f"crawl: --fresh: starting over in {data_dir}; deleting {names}", file=sys.stderr)
    for path in doomed:
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            raise StateError(f"--fresh: cannot delete {path}: {error.strerror}") from error


async def _crawl_state(config: Config, seeds: Seeds, data_dir: Path, state: CrawlState) -> int:
    signalled: int | None = None
    async with Crawler(config, data_dir=data_dir, state=state) as crawler:
        loop = asyncio.get_running_loop()
        main_task = asyncio.current_task()

        def on_signal(number: int) -> None:
            nonlocal signalled
            if signalled is not None and main_task is not None:
                main_task.cancel()  # a second signal: do not wait for requests in flight
                return
            signalled = number
            print(
                "\ncrawl: stopping; requests in flight finish or go back to the queue "
                "(again to stop now)",
                file=sys.stderr,
            )
            crawler.stop()

        for number in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(number, on_signal, number)
        progress = Progress(crawler.stats, sys.stderr, config.output.progress_interval)
        ticker = asyncio.create_task(progress.run())
        try:
            async for _ in crawler.crawl(seeds.urls):
                pass
        except asyncio.CancelledError:
            if signalled is None:
                raise
        finally:
            ticker.cancel()
            progress.clear()
            for number in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(number)
        outputs = output_files(data_dir, config.output.format)
        if state.durable:
            outputs.append(data_dir / STATE_NAME)
        print(
            summary(
                crawler.stats,
                crawler.host_reports(),
                crawler.deferred,
                max_wait=config.politeness.max_wait,
                outputs=outputs,
                problems=len(seeds.problems),
            )
        )
        if state.durable and (crawler.stats.queued or crawler.deferred):
            print("resume: the same command goes on from here (--fresh starts over)")
    if signalled == signal.SIGINT:
        return EXIT_INTERRUPTED
    return EXIT_TERMINATED if signalled == signal.SIGTERM else EXIT_OK


def _crawl(argv: Sequence[str]) -> int:
    args = _crawl_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    config = load_config(args.config, args.overrides)
    seeds = read_seeds(args.seeds)
    for problem in seeds.problems:
        print(f"crawl: {problem}", file=sys.stderr)
    data_dir = args.data if args.data is not None else Path(config.output.data_dir)
    tune_allocator()  # a crawl parses page after page: keep the parser's memory (crawler.runtime)
    tune_gc()  # and short pauses of the event loop: politeness is timed on it
    connections = config.concurrency + CONNECTIONS_SPARE
    allowed, wanted = raise_open_files_limit(connections)
    if allowed < wanted:
        print(
            f"crawl: this process may open {allowed} files, and concurrency "
            f"{config.concurrency} wants about {wanted}; connections past the limit will fail. "
            "Raise the hard limit (ulimit -Hn) or lower concurrency.",
            file=sys.stderr,
        )
    return run(_run_crawl(config, seeds, data_dir, fresh=args.fresh))


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
        return _crawl(arguments)
    except ConfigError as error:
        print(f"crawl: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except CrawlerError as error:
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
