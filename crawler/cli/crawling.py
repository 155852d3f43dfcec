"""`crawl SEEDS...`: the crawl command. It locks the data directory, starts over if asked, opens the
state, says what it resumes, runs the crawl with a progress line, stops gracefully on SIGINT or
SIGTERM, and prints the summary."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import io
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

from crawler._version import __version__
from crawler.cli.exits import (
    DISK_FULL_ADVICE,
    EXIT_DISK_FULL,
    EXIT_INTERRUPTED,
    EXIT_NOTHING_CRAWLED,
    EXIT_OK,
    EXIT_TERMINATED,
)
from crawler.cli.logs import configure_logging, log_file_full
from crawler.cli.notices import FailureNotices
from crawler.cli.options import data_directory
from crawler.cli.report import (
    Progress,
    engine,
    run_stats,
    summary,
)
from crawler.cli.resuming import last_ended, resume_advice, resume_note
from crawler.cli.seeds import STDIN, Seeds, gather_seeds
from crawler.cli.summary_file import SUMMARY_NAME, SummaryWriter, host_reports, read_summary
from crawler.cli.text import fit_for
from crawler.cli.workers import ProgressFeed, run_workers
from crawler.config import Config, load_config
from crawler.crawl.crawler import CONNECTIONS_SPARE, Crawler
from crawler.errors import ConfigError, DiskFullError, StateError
from crawler.identity import agent_line, placeholder_user_agent_notice
from crawler.monitor import worker_info
from crawler.output.reserve import RESERVE_NAME, free_space_problem
from crawler.output.sinks import check_outputs, output_files
from crawler.output.warc import WARC_DIR, warc_files
from crawler.runtime import (
    event_loop_name,
    raise_open_files_limit,
    run,
    tune_allocator,
    tune_gc,
)
from crawler.state import (
    STATE_NAME,
    CrawlState,
    DataDirLock,
    MemoryCrawlState,
    open_state,
    state_files,
)
from crawler.stats import CrawlStats
from crawler.urls import InvalidUrlError, normalize_url, origin_of

__all__ = ["crawl_command"]


DISK_FULL = "disk full"
"""summary.json's `stopped_by` of a crawl a full disk stopped."""

Watch = Callable[[Crawler, SummaryWriter], None]
"""Given the crawler once it is open, and its summary's writer: the live status (--serve)."""


async def _run_crawl(
    config: Config, seeds: Seeds, data_dir: Path, *, fresh: bool, progress_fd: int | None = None
) -> int:
    address = config.monitor.address()
    if address is None:
        return await _crawl_in(
            config, seeds, data_dir, fresh=fresh, watch=None, progress_fd=progress_fd
        )
    # Imported here: aiohttp's server and prometheus_client would cost every crawl's start-up.
    from crawler.monitor.server import Monitor

    monitor = Monitor(
        address,
        metrics_hosts=config.monitor.metrics_hosts,
        max_pages=config.limits.max_pages,
        info={"version": __version__, "event_loop": event_loop_name()},
    )
    # Bound before the state is opened: a port in use stops the crawl before it begins.
    url = await monitor.start()
    print(
        fit_for(sys.stderr, f"crawl: live status at {url} (also /metrics, /status.json)"),
        file=sys.stderr,
    )

    def watch(crawler: Crawler, summary_json: SummaryWriter) -> None:
        monitor.watch(crawler, lambda hosts: summary_json.document(hosts=hosts))
        crawler.announce(worker_info(url))  # `crawl status --state` says where

    try:
        return await _crawl_in(
            config, seeds, data_dir, fresh=fresh, watch=watch, progress_fd=progress_fd
        )
    finally:
        await monitor.close()


async def _crawl_in(
    config: Config,
    seeds: Seeds,
    data_dir: Path,
    *,
    fresh: bool,
    watch: Watch | None,
    progress_fd: int | None,
) -> int:
    problem = free_space_problem(data_dir, config.output.min_free_space)
    if problem is not None:
        print(f"crawl: {problem}", file=sys.stderr)
        return EXIT_DISK_FULL
    if config.state.backend == "redis":
        # One worker of a shared crawl: the crawler locks DIR for its pages and joins the crawl.
        return await _crawl_state(config, seeds, data_dir, None, watch, progress_fd)
    with DataDirLock(data_dir):
        if fresh:
            _start_over(data_dir)
        # Opening the state records a run: an index the crawl could not write stops it first.
        check_outputs(data_dir, config.output.format, config.index.stemming)
        state: CrawlState = (
            open_state(data_dir, config.state, config.robots.options())
            if config.state.durable
            else MemoryCrawlState()
        )
        try:
            note = resume_note(
                data_dir,
                state,
                seeds.urls,
                config.limits,
                config.recrawl,
                last_ended=_last_ended(data_dir, state.run.runs()),
            )
            if note is not None:
                print(f"crawl: {note}", file=sys.stderr)
            # A resumed crawl goes on to the seeds of the runs before too.
            targets = [*seeds.urls, *state.run.seeds()]
            identity = placeholder_user_agent_notice(config, targets)
            if identity is not None:
                print(f"crawl: warning: {identity}", file=sys.stderr)
            return await _crawl_state(config, seeds, data_dir, state, watch, progress_fd)
        finally:
            state.close()


def _last_ended(data_dir: Path, runs: int) -> Mapping[str, Any] | None:
    """How run number `runs` ended, as DIR/summary.json says; None when it does not say (no
    file, or a damaged one: the next summary rewrites it)."""
    try:
        return last_ended(read_summary(data_dir / SUMMARY_NAME), runs)
    except StateError:
        return None


def _start_over(data_dir: Path) -> None:
    """--fresh: say what goes, then delete it (the caller holds the directory's lock)."""
    outputs = [
        sibling
        for path in [
            *output_files(data_dir, "both"),
            data_dir / SUMMARY_NAME,
            data_dir / RESERVE_NAME,
        ]
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
    # Archives are kept: a WARC file is a record of what was fetched, not the crawl's state.
    kept = f" (WARC files in {data_dir / WARC_DIR} are kept)" if warc_files(data_dir) else ""
    print(f"crawl: --fresh: starting over in {data_dir}; deleting {names}{kept}", file=sys.stderr)
    for path in doomed:
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            raise StateError(f"--fresh: cannot delete {path}: {error.strerror}") from error


async def _crawl_state(
    config: Config,
    seeds: Seeds,
    data_dir: Path,
    state: CrawlState | None,
    watch: Watch | None,
    progress_fd: int | None = None,
) -> int:
    """Crawl on `state` (None: the shared state config.state names). `progress_fd`: a pipe for
    the live figures of a worker --workers started (crawler.cli.workers), instead of a line."""
    durable = state is not None and state.durable
    signalled: int | None = None
    full: DiskFullError | None = None
    closing = _ClosingKeepsDiskFull(Crawler(config, data_dir=data_dir, state=state))
    async with closing as crawler:
        earlier = CrawlStats()  # the figures of the runs before, said apart from this run's
        earlier.carry_over(crawler.stats)
        # Said once everything opened: a crawl refused for its input says only why.
        print(fit_for(sys.stderr, f"crawl: {agent_line(config)}"), file=sys.stderr)
        loop = asyncio.get_running_loop()
        main_task = asyncio.current_task()
        failures = FailureNotices().sayings(lambda: crawler.unreachable)
        progress: Progress | ProgressFeed = (
            Progress(crawler.stats, sys.stderr, config.output.progress_interval, sayings=failures)
            if progress_fd is None
            else ProgressFeed(crawler.stats, progress_fd, failures)
        )

        def on_signal(number: int) -> None:
            nonlocal signalled
            if signalled is not None and main_task is not None:
                main_task.cancel()  # a second signal: do not wait for requests in flight
                return
            signalled = number
            progress.say(
                "crawl: stopping; requests in flight finish or go back to the queue "
                "(again to stop now)"
            )
            crawler.stop()

        for number in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(number, on_signal, number)
        log_file = log_file_full()
        if log_file is not None:
            log_file.on_full = lambda _: crawler.stop()  # a full disk under the log file
        ticker = asyncio.create_task(progress.run())
        outputs = output_files(data_dir, config.output.format, warc=config.output.warc)
        if durable:
            outputs.append(data_dir / STATE_NAME)
        outputs.append(data_dir / SUMMARY_NAME)
        summary_json = SummaryWriter.for_run(
            data_dir,
            crawler,
            max_wait=config.politeness.max_wait,
            seed_lines_skipped=seeds.skipped,
            outputs=outputs,
            earlier=earlier,
            recrawl=config.recrawl.enabled,
        )
        refresher = asyncio.create_task(summary_json.refresh())
        if watch is not None:
            watch(crawler, summary_json)
        try:
            async for _ in crawler.crawl(seeds.urls):
                pass
        except asyncio.CancelledError:
            if signalled is None:
                raise
        except DiskFullError as error:
            full = error  # stopped as on SIGTERM: what is in flight is back in the queue
        finally:
            ticker.cancel()
            refresher.cancel()
            progress.clear()
            for number in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(number)
        advice = (
            resume_advice(config.limits, crawler.stats, crawler.deferred, state)
            if state is not None and durable
            else []
        )
        stopped_by = (
            DISK_FULL
            if full is not None
            else signal.Signals(signalled).name
            if signalled is not None
            else None
        )
        if full is None:  # else once the crawler has closed, in the room it kept
            summary_json.write(ended=True, stopped_by=stopped_by, resume=advice)
        report = functools.partial(
            summary,
            crawler.stats,
            host_reports(crawler, summary_json.started_at),
            crawler.deferred,
            max_wait=config.politeness.max_wait,
            outputs=outputs,
            problems=seeds.skipped,
            ran_on=engine(crawler.client_name, reader=crawler.pages_read_beside),
            seed_moves=crawler.seed_moves,
            given_up=crawler.given_up,
            traps=crawler.traps,
            shared=state is None,
            run=run_stats(crawler.stats, earlier),
            recrawl=crawler.state.run.recrawl_began() if config.recrawl.enabled else None,
        )
        failed = nothing_crawled(seeds.urls, crawler.given_up)
    log_file = log_file_full()
    if full is None and log_file is not None and log_file.full is not None:
        full, stopped_by = log_file.full, DISK_FULL
    if full is None and closing.full is not None:
        # The disk filled as the crawler closed (its sinks' last writes, the state's last commit).
        full = closing.full
        stopped_by = DISK_FULL
    # Once the crawler is closed: the sinks have written all, the WARC writer's figures are whole.
    if crawler.archive_figures is not None or stopped_by == DISK_FULL:
        summary_json.write(ended=True, stopped_by=stopped_by, resume=advice)
    lines = [report(archive=crawler.archive_figures), *(f"resume: {line}" for line in advice)]
    print(fit_for(sys.stdout, "\n".join(lines)))
    if full is not None:
        print(f"crawl: {full}: {DISK_FULL_ADVICE}", file=sys.stderr)
        return EXIT_DISK_FULL
    if signalled == signal.SIGINT:
        return EXIT_INTERRUPTED
    if signalled == signal.SIGTERM:
        return EXIT_TERMINATED
    if failed is not None:
        print(f"crawl: nothing could be crawled: {failed}", file=sys.stderr)
        return EXIT_NOTHING_CRAWLED
    return EXIT_OK


class _ClosingKeepsDiskFull:
    """`async with` a crawler, where a full disk met as it closes (its sinks' last batches, the
    state's last commit) is kept in `full` instead of raised: the crawl still says its summary,
    and stops as a full disk stops it."""

    def __init__(self, crawler: Crawler) -> None:
        self._crawler = crawler
        self.full: DiskFullError | None = None

    async def __aenter__(self) -> Crawler:
        return await self._crawler.__aenter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        try:
            await self._crawler.__aexit__(kind, error, traceback)
        except DiskFullError as full:
            if error is not None:
                raise
            self.full = full
            return True
        return False


def nothing_crawled(seeds: Sequence[str], given_up: Mapping[str, str]) -> str | None:
    """When the host of every seed was given up, what to say of each; else None."""
    origins: dict[str, None] = {}
    for seed in seeds:
        try:
            origins[origin_of(normalize_url(seed))] = None
        except InvalidUrlError:
            continue
    if not origins or any(origin not in given_up for origin in origins):
        return None
    return "every seed's host was given up: " + "; ".join(
        f"{origin} ({given_up[origin]})" for origin in origins
    )


def crawl_command(args: argparse.Namespace) -> int:
    """Crawl as the arguments say (`crawl SEEDS ...`); the exit status."""
    overrides = list(args.overrides)
    if args.state is not None:
        overrides += ["state.backend=redis", f"state.url={args.state}"]
    if args.recrawl or args.keep_fresh:
        overrides.append("recrawl.enabled=true")
    if args.keep_fresh:
        overrides.append("recrawl.keep_fresh=true")
    if args.warc:
        overrides.append("output.warc=true")
    if args.page_requisites:
        overrides.append("fetch.page_requisites=true")
    config = load_config(args.config, overrides)
    shared = config.state.backend == "redis"
    if args.fresh and shared:
        raise ConfigError(
            "--fresh starts one data directory over; a shared crawl (--state) belongs to all its "
            "workers: to start it over, delete its keys on the server (or give another "
            "state.key_prefix)"
        )
    if args.fresh and config.recrawl.enabled and not config.recrawl.keep_fresh:
        raise ConfigError(
            "--recrawl goes over the crawl in the data directory again, and --fresh deletes it: "
            "give one or the other"
        )
    if args.workers is not None:
        if not shared:
            raise ConfigError("--workers N needs --state URL: the workers share that crawl state")
        return run_workers(
            args.workers,
            data_directory(args.data, config),
            args.argv,
            config.output.progress_interval,
            config.monitor.address(),
        )
    data_dir = data_directory(args.data, config)
    stdin: BinaryIO = io.BytesIO()  # no standard input (a daemon's is closed): no seeds from it
    if STDIN in args.seeds and sys.stdin is not None:
        stdin = sys.stdin.buffer
        if sys.stdin.isatty():
            print(
                "crawl: reading seed URLs from standard input, one a line; end with Ctrl-D",
                file=sys.stderr,
            )
    seeds = gather_seeds(args.seeds, stdin)
    for problem in seeds.problems:
        print(f"crawl: {problem}", file=sys.stderr)
    # After the checks of the input: a mistyped option leaves no empty log file behind.
    configure_logging(verbose=args.verbose, log_file=args.log_file, log_format=args.log_format)
    tune_allocator()  # a crawl parses page after page: keep the parser's memory (crawler.runtime)
    tune_gc()  # and short pauses of the event loop: politeness is timed on it
    # Slow requests (fetch.slow_after) hold connections beside the others.
    connections = config.concurrency + config.fetch.max_slow_requests + CONNECTIONS_SPARE
    allowed, wanted = raise_open_files_limit(connections)
    if allowed < wanted:
        print(
            f"crawl: this process may open {allowed} files, and concurrency "
            f"{config.concurrency} wants about {wanted}; connections past the limit will fail. "
            "Raise the hard limit (ulimit -Hn) or lower concurrency.",
            file=sys.stderr,
        )
    return run(_run_crawl(config, seeds, data_dir, fresh=args.fresh, progress_fd=args.progress_fd))
