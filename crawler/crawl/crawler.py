"""`Crawler`: a crawl's lifetime, and the wiring of its parts. It runs on the caller's event loop.

    async with Crawler(config, data_dir=Path("crawl-data")) as crawler:
        async for page in crawler.crawl(["https://example.org/"]):
            ...

The parts, each in its own module of crawler.crawl:
- `Scheduler` (scheduler.py): the launch loop, hosts by their next allowed start, one timer, the
  requests in flight, a graceful stop;
- `HostWork` (answers.py): a due host's next request (robots.txt first) and acting on its answer,
  and every URL coming in, through the pure decisions of decide.py;
- `Outlet` (outlet.py): the one place records and skips leave the crawl, and are counted;
- `HostTable` (hosts.py), `CrawlClock` (clock.py), `RobotsCache` (robots_cache.py) and the
  `Checkpointer` (checkpoint.py), which decides when the crawl's work becomes durable.

The crawl state (crawler.state) holds the frontier, the seen set, robots.txt entries, host timing
and the run record. With a data directory it is durable by default: DIR/state.sqlite, locked for
the crawl's lifetime. A crawl on a state left by an earlier run resumes it: its figures, seeds and
scope, and its hosts with URLs queued, each host's timing as that run left it. A state whose crawl
an earlier run finished (`Crawler.finished_before`) has nothing to resume: only seeds it has not
seen are crawled, and when there are none the crawl says so in the log and yields nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import socket
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from importlib.metadata import version
from pathlib import Path
from types import TracebackType

from crawler._version import __version__
from crawler.config import Config
from crawler.crawl.answers import HostWork
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.clock import CrawlClock
from crawler.crawl.hosts import HostTable
from crawler.crawl.outlet import Outlet
from crawler.crawl.robots_cache import RobotsCache
from crawler.crawl.scheduler import Scheduler
from crawler.crawl.scope import Scope
from crawler.crawl.shared import ClaimedFrontier, SharedHosts
from crawler.errors import OutputError
from crawler.http.answer import FetchFailure, Response
from crawler.http.fetcher import Fetcher
from crawler.output.records import PageRecord
from crawler.output.sinks import ArchiveSink, PageSink, check_outputs, open_sinks
from crawler.output.warc import ArchiveFigures, Exchange, WarcSink, config_digest
from crawler.politeness import Politeness, ServerPacing
from crawler.state.interface import CrawlState, MemoryCrawlState
from crawler.state.lock import DataDirLock
from crawler.state.shared.schedule import SharedSchedule
from crawler.state.sqlite import open_state
from crawler.stats import CrawlStats, DeferredHost, HostReport
from crawler.urls import InvalidUrlError, normalize_url

__all__ = ["CONNECTIONS_SPARE", "Crawler"]

log = logging.getLogger(__name__)

CONNECTIONS_SPARE = 8
"""Connections the fetcher may hold beyond `concurrency`: idle ones of hosts just answered, kept
for their next request while others start."""


class Crawler:
    """A polite crawl. One crawl at a time per instance; instances share nothing."""

    def __init__(
        self,
        config: Config,
        *,
        data_dir: Path | None = None,
        sinks: Sequence[PageSink] | None = None,
        state: CrawlState | None = None,
        start_time: float | None = None,
    ) -> None:
        """`sinks` default to those `config.output.format` names in `data_dir` when one is given
        (the full-text index, JSONL files or both), else none. `state` defaults to the state in
        `data_dir` (DIR/state.sqlite, unless `state.durable` is false), opened on entry, with the
        directory locked until exit; without a data directory, to memory. A `state` given is
        the caller's to lock and close. `start_time` sets the epoch the crawl's clock starts from
        (the default is now), for Visit-time windows."""
        self._config = config
        self._sinks: list[PageSink] = list(sinks) if sinks is not None else []
        self._data_dir = data_dir
        self._given_state = state
        self._lock: DataDirLock | None = None
        self._clock = CrawlClock(start_time)
        self._politeness = Politeness(config.politeness)
        self._fetcher = Fetcher(
            config.fetch,
            config.user_agent,
            # Slow requests (fetch.slow_after) may hold as many connections again.
            connections=2 * config.concurrency + CONNECTIONS_SPARE,
            # WARC records hold the bytes as they came.
            keep_raw=config.output.warc
            or any(isinstance(sink, ArchiveSink) for sink in self._sinks),
        )
        self._open = False
        self._running = False
        self._finished_before = False
        self._shared: SharedHosts | None = None
        self.stats = CrawlStats()
        self._assemble(state if state is not None else MemoryCrawlState())

    def _assemble(self, state: CrawlState) -> None:
        """Build the crawl's parts on `state`."""
        config = self._config
        self._state = state
        self._checkpoints = Checkpointer(state, self._sinks, config.state.commit_interval)
        self._outlet = Outlet(self._sinks, self._checkpoints, self.stats, state.fetches)
        self._hosts = HostTable(
            self._politeness, state.timings, state.robots, self._clock, clean=state.run.clean
        )
        self._scheduler = Scheduler(
            clock=self._clock,
            politeness=self._politeness,
            hosts=self._hosts,
            frontier=state.frontier,
            timings=state.timings,
            checkpoints=self._checkpoints,
            stats=self.stats,
            concurrency=config.concurrency,
            max_wait=config.politeness.max_wait,
            stop_grace=config.state.stop_grace,
            slow_after=config.fetch.slow_after,
            servers=(
                ServerPacing(
                    config.politeness.server_min_delay, config.politeness.server_concurrency
                )
                if config.politeness.per_server
                else None
            ),
            pinned=config.fetch.pinned(),
        )
        robots = RobotsCache(
            config.robots, self._get_robots, store=state.robots, clock=self._clock.now
        )
        self._work = HostWork(
            config,
            state=state,
            fetcher=self._fetcher,
            robots=robots,
            politeness=self._politeness,
            hosts=self._hosts,
            scheduler=self._scheduler,
            outlet=self._outlet,
            checkpoints=self._checkpoints,
            clock=self._clock,
            stats=self.stats,
        )

    async def _get_robots(self, url: str, max_bytes: int) -> Response | FetchFailure:
        started_at = self._clock.now()
        answer = await self._fetcher.get(url, max_bytes=max_bytes)
        if self._outlet.archiving and isinstance(answer, Response) and answer.raw is not None:
            self._outlet.archive(Exchange(url, started_at, answer, page=False))
        # Its parse and rules in a turn of their own (crawler.crawl.turns): a wave of answers
        # read in one iteration would stamp the answers behind it late, and each host's next
        # request counts from its answer's stamp. Archived first, as a page's answer is: a
        # crawl stopped meanwhile still has it in its WARC files.
        await self._scheduler.turns.take()
        return answer

    @property
    def pages_read_beside(self) -> bool:
        """Whether pages were read in the page reader's process (page.reader) in this run."""
        return self._work.reader.pages > 0

    @property
    def archive_figures(self) -> ArchiveFigures | None:
        """What this run wrote to WARC files (output.warc), once the crawler has exited; None
        without a WARC sink."""
        for sink in self._sinks:
            if isinstance(sink, WarcSink):
                return sink.figures
        return None

    @property
    def state(self) -> CrawlState:
        """The frontier, seen set, robots.txt entries, host timing and run record (open once the
        crawler is entered)."""
        return self._state

    # --- lifetime --------------------------------------------------------------------------------

    async def __aenter__(self) -> Crawler:
        directory = self._data_dir
        try:
            if self._given_state is None and directory is not None:
                self._lock = DataDirLock(directory)
                if not self._sinks:
                    # Opening the state records a run: an index it could not write stops first.
                    check_outputs(
                        directory, self._config.output.format, self._config.index.stemming
                    )
                if self._config.state.durable:
                    options = self._config.robots.options()
                    self._assemble(open_state(directory, self._config.state, options))
            if self._config.state.backend == "redis" and self._given_state is None:
                await self._join_shared_crawl()
            if directory is not None and not self._sinks:
                output = self._config.output
                self._sinks.extend(
                    open_sinks(
                        directory,
                        output.format,
                        self._config.index.stemming,
                        warc_info=warc_info(self._config) if output.warc else None,
                        warc_file_bytes=output.warc_file_bytes,
                    )
                )
            await self._fetcher.open()
        except BaseException:
            if self._shared is not None:
                await self._shared.schedule.close()
            self._let_go()
            raise
        self._restore_stats()
        self._finished_before = self._earlier_run_finished()
        self._open = True
        return self

    async def _join_shared_crawl(self) -> None:
        """Become one worker of the shared crawl `state.url` names (crawler.crawl.shared): the
        local state holds only what this worker has claimed."""
        config = self._config
        politeness = config.politeness
        schedule = await SharedSchedule.open(
            config.state.url,
            prefix=config.state.key_prefix,
            heartbeat_ttl=config.state.heartbeat,
            lease=config.state.claim_lease,
            default_interval=max(politeness.min_delay, politeness.max_crawl_delay),
        )
        # One clock for the windows of Visit-time and Request-rate: the server's.
        self._clock.align(*schedule.server_time)
        frontier = ClaimedFrontier(schedule)
        self._assemble(MemoryCrawlState(frontier=frontier))
        self._shared = SharedHosts(
            schedule,
            frontier,
            config=config,
            politeness=self._politeness,
            hosts=self._hosts,
            robots_store=self._state.robots,
            clock=self._clock,
        )
        self._scheduler.shared = self._shared

    def _restore_stats(self) -> None:
        """The figures of the runs before."""
        saved = self._state.run.stats()
        if saved is None:
            return
        self.stats.carry_over(saved)
        self.stats.queued = len(self._state.frontier)
        self._work.page_starts = saved.pages

    def _earlier_run_finished(self) -> bool:
        """Whether the state holds a crawl an earlier run finished: a run ended cleanly and left
        nothing queued, and nothing held past limits.max_depth that the limit now allows. (A run
        stopped with nothing queued had nothing left to do: it counts as finished too.)"""
        state = self._state
        return (
            state.run.runs() > 0
            and state.run.clean()
            and len(state.frontier) == 0
            and not state.held.within(self._config.limits.max_depth)
        )

    @property
    def finished_before(self) -> bool:
        """Whether the crawl in the state (the data directory's) was finished by an earlier run,
        as found on entry: nothing was queued. `crawl()` then fetches only seeds the crawl has not
        seen, and yields nothing (after a log warning) when none is new; `--fresh` on the
        command line, or a new data directory, crawls again from scratch."""
        return self._finished_before

    def _let_go(self) -> None:
        """Close the state and release the lock if they are this crawler's own."""
        try:
            if self._given_state is None:
                self._state.close()
        finally:
            if self._lock is not None:
                self._lock.release()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._open = False
        failure: OutputError | None = None
        try:
            await self._fetcher.close()
            for sink in self._sinks:
                # Every sink gets closed, even after one fails; the first failure is raised after.
                # The index's close waits for its writer thread to commit the last batch.
                try:
                    await asyncio.to_thread(sink.close)
                except OutputError as closing:
                    failure = failure or closing
            if self._clock.started:  # a run began
                # What the sinks stored is settled; a URL whose record they lost stays queued.
                scheduler = self._scheduler
                self._checkpoints.close(
                    self.stats, scheduler.deferred, clean=scheduler.ended_cleanly
                )
        finally:
            try:
                if self._shared is not None:
                    # Done-marks sent; what this worker still leases or holds goes back.
                    await self._shared.schedule.close()
            finally:
                self._let_go()
        if failure is not None and error is None:
            raise failure

    def stop(self) -> None:
        """Stop gracefully: start nothing new; requests in flight get `state.stop_grace` seconds
        to finish, then are cancelled and their URLs go back to the queue; queued URLs stay."""
        self._scheduler.stop()

    # --- the crawl -------------------------------------------------------------------------------

    async def crawl(self, seeds: Iterable[str]) -> AsyncIterator[PageRecord]:
        """Crawl from `seeds` (URLs); yields a record per fetched URL as it completes."""
        if not self._open:
            raise RuntimeError("use the crawler as `async with Crawler(config) as crawler`")
        if self._running:
            raise RuntimeError("this Crawler is already crawling")
        self._running = True
        self._clock.start()
        self._outlet.start()
        run = self._state.run
        if run.stats() is None:
            self.stats.started_at = self._clock.epoch0
        run.begin_run()
        self.stats.runs = run.runs()
        self._state.commit()  # from here on, a kill counts as a kill (RunStore.clean)
        self._checkpoints.next_at = self._clock.epoch0 + self._config.state.commit_interval
        self._work.resume()
        seeds = list(seeds)
        if self._shared is not None:
            # The crawl's scope is every worker's seeds: those known now, and those added later.
            known = await self._shared.schedule.seeds(_normal(seeds))
            run.add_seeds(known)
            self._shared.seeds_known(known, self._work.widen_scope)
            self._work.scope_widened = self._shared.schedule.add_seed
        recrawl_pending = run.recrawl_began() is not None and len(self._state.frontier) > 0
        self._work.add_seeds(seeds)
        self._work.release_held()
        queued_again = self._begin_recrawl(recrawl_pending)
        if self._finished_before and not queued_again:
            self._say_finished_before()
        runner = asyncio.create_task(self._run())
        try:
            while True:
                record = await self._outlet.results.get()
                if record is None:
                    break
                yield record
            await runner
        finally:
            if not runner.done():
                self.stop()
                runner.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await runner
            self._running = False

    def _begin_recrawl(self, pending: bool) -> int:
        """With recrawl.enabled, a recrawl pass: URLs fetched longer ago than recrawl.after are
        queued again; unless the pass an earlier run began still has URLs queued (then this run
        goes on with it). How many were queued again."""
        if not self._config.recrawl.enabled:
            return 0
        run = self._state.run
        began = run.recrawl_began()
        if pending and began is not None:
            at, pages_before = began
            # limits.max_pages counts the pass's pages.
            self._work.page_starts = self.stats.pages - pages_before
            self._work.resume_recrawl()
            log.info("going on with the recrawl begun %s", _utc(at))
            return 0
        now = self._clock.epoch0
        after = self._config.recrawl.after
        run.begin_recrawl(now, self.stats.pages)
        self._work.page_starts = 0
        self.stats.changes.clear()
        queued = self._work.recrawl(now, after)
        self.stats.queued = len(self._state.frontier)
        # Durable before its first request, its figures too: a kill from here on goes on with
        # this pass.
        self._state.run.save_stats(self.stats)
        self._state.commit()
        log.info(
            "recrawl: %d of %d URLs fetched before were last fetched before %s (recrawl.after "
            "%g s): queued again",
            queued,
            len(self._state.fetches),
            _utc(now - after),
            after,
        )
        return queued

    def _say_finished_before(self) -> None:
        """The log line of a crawl an earlier run finished: what this run has to do, if any."""
        where = f" in {self._data_dir}" if self._data_dir is not None else ""
        # This run has fetched nothing yet: the pages are the runs' before.
        earlier = f"the crawl{where} was finished by an earlier run ({self.stats.pages} pages)"
        queued = len(self._state.frontier)
        if queued:
            urls = "1 URL of new seeds is" if queued == 1 else f"{queued} URLs of new seeds are"
            log.info("%s; %s queued", earlier, urls)
        elif self._config.recrawl.enabled:
            log.warning(
                "%s, and no page of it was fetched longer ago than recrawl.after (%g s): nothing "
                "is due again yet",
                earlier,
                self._config.recrawl.after,
            )
        else:
            log.warning(
                "%s, and this run queued nothing new: nothing to fetch. Only seeds it has not "
                "seen are crawled; to go over it again, asking only for what changed, use "
                "--recrawl; to crawl again from scratch, a new data directory (or --fresh)",
                earlier,
            )

    async def _run(self) -> None:
        try:
            await self._scheduler.run(self._work)
        finally:
            await self._work.reader.close()
            # URLs in flight at a stop are back in the queue by now (a shared crawl's queue is
            # the server's: the scheduler said what it holds).
            if self._shared is None:
                self.stats.queued = len(self._state.frontier)
            self._outlet.end()

    # --- what it tells ---------------------------------------------------------------------------

    @property
    def deferred(self) -> tuple[DeferredHost, ...]:
        """Hosts left waiting longer than politeness.max_wait when the crawl stopped."""
        return tuple(self._scheduler.deferred)

    @property
    def scope(self) -> Scope:
        return self._work.scope

    @property
    def given_up(self) -> dict[str, str]:
        """Origins this run gave up, their robots.txt not to be had, and why; their URLs are
        skips ('host given up')."""
        return dict(self._work.given_up)

    @property
    def traps(self) -> dict[str, dict[str, int]]:
        """Origins where this run met the shape of a crawler trap: URLs skipped by
        limits.max_url_length, max_path_repeats or max_path_segments, by reason, and
        'reached limits.max_pages_per_host' once the host's page budget ran out."""
        return {origin: dict(counts) for origin, counts in self._work.traps.items()}

    @property
    def seed_moves(self) -> tuple[tuple[str, str], ...]:
        """(seed, URL) for each host a seed's redirects led to, which joined the scope."""
        return self._state.run.seed_moves()

    @property
    def client_name(self) -> str:
        """The HTTP client the crawl's requests go through: 'http1' or 'aiohttp'."""
        return self._fetcher.client_name

    def host_reports(self) -> list[HostReport]:
        """How each origin was paced, busiest first."""
        return self._hosts.reports(self._clock.now() if self._clock.started else 0.0)

    def __repr__(self) -> str:
        return (
            f"Crawler({self.stats.outcome}, {self._scheduler.requests_in_flight} in flight, "
            f"{len(self._scheduler)} hosts scheduled, {len(self._state.frontier)} queued)"
        )


def _normal(urls: Iterable[str]) -> list[str]:
    normal = []
    for url in urls:
        try:
            normal.append(normalize_url(url))
        except InvalidUrlError:
            continue  # a skip of its own, once add_seeds meets it
    return normal


def warc_info(config: Config) -> dict[str, str]:
    """The fields of a WARC file's warcinfo record: who made it, how, and as whom."""
    info = {
        "software": f"crawler/{__version__} (warcio/{version('warcio')})",
        "format": "WARC File Format 1.1",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
        "warc-format/warc-1.1/",
        "hostname": socket.gethostname(),
        "http-header-user-agent": config.user_agent,
        "robots": "obey (robots.txt, META robots, X-Robots-Tag, in-page sections)",
        "config-digest": config_digest(dataclasses.asdict(config)),
    }
    if config.fetch.from_address:
        info["http-header-from"] = config.fetch.from_address
        info["operator"] = config.fetch.from_address
    return info


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))
