"""`Crawler`: a crawl's lifetime, and the wiring of its parts. It runs on the caller's event loop.

    async with Crawler(config, data_dir=Path("crawl-data")) as crawler:
        async for page in crawler.crawl(["https://example.org/"]):
            ...

Its parts, each in its own module of crawler.crawl, are built by crawler.crawl.parts (which
draws how a request goes through them). The crawler chooses, once, who else has a say in its
hosts (crawler.crawl.coordination): nobody, or a shared crawl's server (`state.backend: redis`,
crawler.crawl.shared).

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
from collections.abc import AsyncIterator, Iterable, Sequence
from importlib.metadata import version
from pathlib import Path
from types import TracebackType

from crawler._version import __version__
from crawler.config import Config
from crawler.crawl.clock import CrawlClock
from crawler.crawl.parts import Coordinate, CrawlParts, assemble
from crawler.crawl.scope import Scope
from crawler.crawl.shared import join_shared_crawl
from crawler.crawl.user_fields import PageExtract, UserExtract
from crawler.errors import DiskFullError, OutputError
from crawler.http.fetcher import Fetcher
from crawler.http.guard import AddressGuard
from crawler.output.records import PageRecord
from crawler.output.reserve import DiskReserve, reserve_for
from crawler.output.sinks import ArchiveSink, PageSink, check_outputs, open_sinks
from crawler.output.warc import ArchiveFigures, WarcSink, config_digest
from crawler.politeness import Politeness
from crawler.state.interface import CrawlState, MemoryCrawlState
from crawler.state.lock import DataDirLock
from crawler.state.sqlite import open_state
from crawler.stats import CrawlStats, DeferredHost, HostReport, UnreachableHost

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
        extract: PageExtract | None = None,
    ) -> None:
        """`sinks` default to those `config.output.format` names in `data_dir` when one is given
        (the full-text index, JSONL files or both), else none. `state` defaults to the state in
        `data_dir` (DIR/state.sqlite, unless `state.durable` is false), opened on entry, with the
        directory locked until exit; without a data directory, to memory. A `state` given is
        the caller's to lock and close. `start_time` sets the epoch the crawl's clock starts from
        (the default is now), for Visit-time windows. `extract`: a function (or coroutine
        function) of each read page's `PageDocument` returning fields for its record
        (crawler.crawl.user_fields)."""
        self._extract = UserExtract(extract) if extract is not None else None
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
            # Slow requests (fetch.slow_after) hold connections beside the others.
            connections=config.concurrency + config.fetch.max_slow_requests + CONNECTIONS_SPARE,
            # WARC records hold the bytes as they came.
            keep_raw=config.output.warc
            or any(isinstance(sink, ArchiveSink) for sink in self._sinks),
            # The addresses that are not public the crawl connects to are its seeds' own.
            guard=AddressGuard(config.fetch, seeds_only=True),
        )
        self._reserve: DiskReserve | None = None
        """Room for the last writes when the disk fills (crawler.output.reserve)."""
        self._open = False
        self._running = False
        self._finished_before = False
        self.stats = CrawlStats(purpose=self._config.usage.purpose)
        self._assemble(state if state is not None else MemoryCrawlState())

    def _assemble(self, state: CrawlState, coordinate: Coordinate | None = None) -> None:
        """Build the crawl's parts on `state` (crawler.crawl.parts)."""
        self._state = state
        self._parts: CrawlParts = assemble(
            self._config,
            state,
            sinks=self._sinks,
            fetcher=self._fetcher,
            politeness=self._politeness,
            clock=self._clock,
            stats=self.stats,
            coordinate=coordinate,
            extract=self._extract,
        )

    @property
    def pages_read_beside(self) -> bool:
        """Whether pages were read in the page reader's process (page.reader) in this run."""
        return self._parts.reader.pages > 0

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
                # One worker of a shared crawl: the one place the mode is chosen.
                self._assemble(
                    *await join_shared_crawl(
                        self._config, self._clock, self._politeness, self._fetcher.users.jar
                    )
                )
            if directory is not None and not self._sinks:
                output = self._config.output
                self._sinks.extend(
                    open_sinks(
                        directory,
                        output.format,
                        self._config.index.stemming,
                        purpose=self._config.usage.purpose,
                        writer=self._config.index.writer,
                        warc_info=warc_info(self._config) if output.warc else None,
                        warc_file_bytes=output.warc_file_bytes,
                    )
                )
            if directory is not None:
                self._reserve = reserve_for(directory, self._config.output)
            await self._fetcher.open()
        except BaseException:
            await self._parts.coordination.close()
            self._let_go()
            raise
        self._restore_stats()
        if self._fetcher.users.jar is not None:
            self._fetcher.users.jar.load(self._state.run.cookies())  # the session goes on
        self._finished_before = self._earlier_run_finished()
        self._open = True
        return self

    def _restore_stats(self) -> None:
        """The figures of the runs before."""
        saved = self._state.run.stats()
        if saved is None:
            return
        self.stats.carry_over(saved)
        self.stats.queued = len(self._state.frontier)
        self._parts.budget.started = saved.pages

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
            if self._reserve is not None:
                # Room for what the sinks kept when the disk filled; the rest waits for the state.
                self._reserve.give_sinks_share()
            for sink in self._sinks:
                # Every sink gets closed, even after one fails; the first failure raised after.
                try:
                    await asyncio.to_thread(sink.close)
                except OutputError as closing:
                    failure = failure or closing
            if self._reserve is not None:
                # Given back once the sinks are closed (a full disk: they stored all they could):
                # room for the state's last commit, which marks done what they stored, with what
                # a commit that found the disk full lost.
                self._reserve.release()
                self._state.write_again()
            if self._clock.started:  # a run began
                # What the sinks stored is settled; a URL whose record they lost stays queued.
                scheduler = self._parts.scheduler
                self._parts.checkpoints.close(
                    self.stats, scheduler.deferred, clean=scheduler.ended_cleanly
                )
        finally:
            try:
                await self._parts.coordination.close()
            finally:
                if self._reserve is not None:
                    self._reserve.release()
                self._let_go()
        if failure is not None and error is None:
            raise failure

    def stop(self) -> None:
        """Stop gracefully: start nothing new; requests in flight get `state.stop_grace` seconds
        to finish, then are cancelled and their URLs go back to the queue; queued URLs stay."""
        self._parts.keeper.stop()

    # --- the crawl -------------------------------------------------------------------------------

    async def crawl(self, seeds: Iterable[str]) -> AsyncIterator[PageRecord]:
        """Crawl from `seeds` (URLs); yields a record per fetched URL as it completes."""
        if not self._open:
            raise RuntimeError("use the crawler as `async with Crawler(config) as crawler`")
        if self._running:
            raise RuntimeError("this Crawler is already crawling")
        self._running = True
        parts = self._parts
        self._clock.start()
        parts.outlet.start()
        run = self._state.run
        if run.stats() is None:
            self.stats.started_at = self._clock.epoch0
        run.begin_run()
        self.stats.runs = run.runs()
        self._state.commit()  # from here on, a kill counts as a kill (RunStore.clean)
        parts.checkpoints.next_at = self._clock.epoch0 + self._config.state.commit_interval
        parts.checkpoints.start(self.stats)
        parts.launcher.resume()
        seeds = list(seeds)
        admission = parts.admission
        # The crawl's scope is every worker's seeds, in a shared crawl: those known now, and,
        # through widen_scope, those added later.
        run.add_seeds(await parts.coordination.join(seeds, admission.widen_scope))
        recrawl_pending = run.recrawl_began() is not None and len(self._state.frontier) > 0
        admission.add_seeds(seeds)
        admission.release_held()
        queued_again = await parts.recrawl.begin(recrawl_pending)
        if self._finished_before and not queued_again and not self._config.recrawl.keep_fresh:
            self._say_finished_before()
        runner = asyncio.create_task(self._run())
        try:
            while True:
                record = await parts.outlet.results.get()
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
        parts = self._parts
        try:
            await parts.keeper.run(parts.launcher)
        except DiskFullError:
            # The crawl stops as on SIGTERM; its last commit gets the reserve's room (__aexit__).
            if self.stats.outcome == "running":
                self.stats.outcome = "stopped"
            raise
        finally:
            await parts.reader.close()
            # URLs in flight at a stop are back in the queue by now (a shared crawl's queue is
            # the server's, as it last said).
            _, self.stats.queued = parts.coordination.counts(len(parts.scheduler))
            parts.outlet.end()

    # --- what it tells ---------------------------------------------------------------------------

    @property
    def deferred(self) -> tuple[DeferredHost, ...]:
        """Hosts left waiting longer than politeness.max_wait when the crawl stopped."""
        return tuple(self._parts.scheduler.deferred)

    @property
    def scope(self) -> Scope:
        return self._parts.admission.scope

    @property
    def given_up(self) -> dict[str, str]:
        """Origins this run gave up, their robots.txt not to be had, and why; their URLs are
        skips ('host given up')."""
        return dict(self._parts.robots.given_up)

    @property
    def unreachable(self) -> dict[str, UnreachableHost]:
        """Origins whose robots.txt fails now: tried again until it comes or they are given up
        (then they are in `given_up`)."""
        return dict(self._parts.robots.unreachable)

    @property
    def traps(self) -> dict[str, dict[str, int]]:
        """Origins where this run met the shape of a crawler trap: URLs skipped by
        limits.max_url_length, max_path_repeats or max_path_segments, by reason, and
        'reached limits.max_pages_per_host' once the host's page budget ran out."""
        return {origin: dict(counts) for origin, counts in self._parts.traps.by_origin.items()}

    @property
    def seed_moves(self) -> tuple[tuple[str, str], ...]:
        """(seed, URL) for each host a seed's redirects led to, which joined the scope."""
        return self._state.run.seed_moves()

    @property
    def client_name(self) -> str:
        """The HTTP client the crawl's requests go through: 'http1' or 'aiohttp'."""
        return self._fetcher.client_name

    # --- what watches it (crawler.monitor) -------------------------------------------------------

    @property
    def parts(self) -> CrawlParts:
        """The crawl's parts, for what watches it (crawler.monitor): to read, never to drive."""
        return self._parts

    @property
    def politeness(self) -> Politeness:
        return self._politeness

    def now(self) -> float:
        """Epoch seconds on the crawl's clock (0.0 before it started)."""
        return self._clock.now() if self._clock.started else 0.0

    def announce(self, info: str) -> None:
        """Tell the crawl's other workers `info` (where this one serves its status), if any."""
        self._parts.coordination.announce(info)

    def host_reports(self) -> list[HostReport]:
        """How each origin was paced, busiest first."""
        return self._parts.hosts.reports(self._clock.now() if self._clock.started else 0.0)

    def __repr__(self) -> str:
        return (
            f"Crawler({self.stats.outcome}, {self._parts.scheduler.requests_in_flight} in flight, "
            f"{len(self._parts.scheduler)} hosts scheduled, {len(self._state.frontier)} queued)"
        )


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
