"""When a crawl's work becomes durable: the moments the crawl state is committed, and the rule that
a URL is done only once its record is stored (crawler.state says why it is done this way).

The crawl tells the `Checkpointer`:
- `handed()` each time a record (a page or a skip) has gone to every sink;
- `archived()` each time an exchange has gone to the archive sinks (WARC, crawler.output.warc):
  an archive sink counts exchanges and records alike, in the order given, so a URL waits for
  every answer archived before its work ended (its redirect hops', its retries');
- `finished(item)` when a leased URL's work is over (its record, if it has one, handed; or the
  next hop of its redirect queued); `skipped`, the reason, when it was skipped at its turn
  (robots.txt, a retired host). The URL waits in memory with the count of records handed;
- `robots_moved()` when a robots.txt request is about to start or its answer is in, and
  `pace_moved()` when a host refused a request (its learned interval and back-off): the state is
  then committed by `before_requests()`, which the crawl calls after launching requests and before
  they run (when it launched some: a wake that starts nothing has nothing to commit for), so that
  no later request to the host starts with that fact only in memory; a refusal is committed by
  `after_request()` as soon as its request's work ends, so that a kill does not shorten its
  back-off either.

`tick()`, whenever the crawl wakes: every `state.commit_interval` seconds a checkpoint (mark done
every finished URL whose record each sink has stored, flush the sinks, save the figures,
commit); in between, as soon as a sink has stored more (the index's writer thread commits a batch
a moment after the flush handed it over), mark those URLs done and commit. So a URL is marked
done about one interval after it finished, at most two. `close()` settles once the sinks are
closed, and records whether the run ended cleanly.

A full disk met by a sink or the state is kept as `full`, not raised: the crawl then stops as on
SIGTERM (crawler.crawl.scheduler), its requests in flight finishing, their records kept in memory
by the sinks and the state, which write them at the close, once the crawl has made room
(crawler.output.reserve).
"""

from __future__ import annotations

import copy
from collections import Counter, deque
from collections.abc import Callable, Sequence

from crawler.errors import DiskFullError
from crawler.frontier import QueuedUrl
from crawler.http.cookies import CookieJar
from crawler.output.sinks import ArchiveSink, PageSink
from crawler.state import CrawlState
from crawler.stats import CrawlStats, DeferredHost, SkipReason

__all__ = ["Checkpointer"]


class Checkpointer:
    def __init__(
        self,
        state: CrawlState,
        sinks: Sequence[PageSink],
        interval: float,
        jar: CookieJar | None = None,
    ) -> None:
        """`jar`: the crawl's cookies (fetch.cookies), saved with the figures when changed."""
        self._state = state
        self._jar = jar
        self._sinks = sinks
        self._interval = interval
        self._handed = 0
        self._events = 0
        """Records and exchanges handed: what an archive sink counts."""
        self._finished: deque[tuple[int, int, QueuedUrl, int, int, SkipReason | None]] = deque()
        """Per finished URL: records and events handed, the URL, the run's fetched and pages
        figures once it was counted, and its skip's reason if it was skipped at its turn."""
        self._stats: CrawlStats | None = None
        self._settled_figures = (0, 0)
        self._unsettled_skips: Counter[SkipReason] = Counter()
        """Skips (by reason) of queued URLs skipped at their turn and not marked done: the state
        still queues them, and a resumed crawl skips them again."""
        """fetched and pages as the last URL marked done left them: the rest belongs to URLs the
        state still holds as queued, which a resumed crawl fetches (or skips) again."""

        self._kinds: list[bool] = []
        self._robots_moved = False
        self._pace_moved = False
        self.next_at = 0.0
        """When the next checkpoint is due (epoch seconds on the crawl's clock)."""
        self.full: DiskFullError | None = None
        """The first full disk met (see the module doc)."""

    def start(self, stats: CrawlStats) -> None:
        """The run begins with `stats` (the runs' before carried over)."""
        self._stats = stats
        self._settled_figures = (stats.fetched, stats.pages)

    def handed(self) -> None:
        self._handed += 1
        self._events += 1

    def archived(self) -> None:
        self._events += 1

    def finished(self, item: QueuedUrl, skipped: SkipReason | None = None) -> None:
        stats = self._stats
        fetched, pages = (stats.fetched, stats.pages) if stats is not None else (0, 0)
        skip = skipped if item.requisite_of is None else None  # a requisite's is counted apart
        if skip is not None:
            self._unsettled_skips[skip] += 1
        self._finished.append((self._handed, self._events, item, fetched, pages, skip))

    def robots_moved(self) -> None:
        self._robots_moved = True

    def pace_moved(self) -> None:
        self._pace_moved = True

    def after_request(self) -> None:
        """A request's work ended: a refusal's back-off is committed now (refusals are rare; a
        wave of robots.txt answers waits for `before_requests`)."""
        if self._pace_moved:
            self._pace_moved = self._robots_moved = False
            self._keeping_full(self._commit)

    def before_requests(self) -> None:
        if self._robots_moved or self._pace_moved:
            self._robots_moved = self._pace_moved = False
            self._keeping_full(self._commit)

    def tick(self, now: float, stats: CrawlStats) -> None:
        self._keeping_full(self._tick, now, stats)

    def _keeping_full(self, work: Callable[..., None], *args: object) -> None:
        if self.full is not None:
            return  # the crawl is stopping: what is in memory waits for the close
        try:
            work(*args)
        except DiskFullError as full:
            self.full = full

    def _tick(self, now: float, stats: CrawlStats) -> None:
        if now >= self.next_at:
            self._settle()
            for sink in self._sinks:
                sink.flush()
            self._state.run.save_stats(self.books(stats))
            self._save_cookies()
            self._robots_moved = self._pace_moved = False
            self._state.commit()
            self.next_at = now + self._interval
        elif any(sink.failed for sink in self._sinks):
            for sink in self._sinks:
                sink.flush()  # raises the failure: the crawl stops now, with little in memory
        elif self._sinks and self._settle():
            self._commit()

    def close(self, stats: CrawlStats, deferred: Sequence[DeferredHost], *, clean: bool) -> None:
        """The last checkpoint, once the sinks are closed (and so have stored all they will).
        `clean`: no request is left in flight, every lease ended or given back."""
        self._settle()
        self._give_back(stats)
        # Leased and not done: the frontier in memory no longer counts them; the state queues
        # them again.
        stats.queued += len(self._finished)
        run = self._state.run
        run.save_stats(stats)
        run.save_deferred(deferred)
        self._save_cookies()
        if clean:
            run.end_run()
        self._state.commit()

    def _save_cookies(self) -> None:
        if self._jar is not None and self._jar.changed:
            self._state.run.save_cookies(self._jar.dump())

    def _commit(self) -> None:
        """Commit, the figures with the rest: what a commit writes (URLs met and queued, done
        marks) must agree with the figures a kill leaves."""
        if self._stats is not None:
            self._state.run.save_stats(self.books(self._stats))
        self._state.commit()

    def _settle(self) -> bool:
        """Mark done the finished URLs whose records are stored; True when there were some."""
        records, events = self._handed, self._events
        for sink, archives in zip(self._sinks, self._archives(), strict=True):
            if archives:
                events = min(events, sink.stored)
            else:
                records = min(records, sink.stored)
        finished, done = self._finished, self._state.frontier.done
        if not finished or finished[0][0] > records or finished[0][1] > events:
            return False
        skips = self._unsettled_skips
        while finished and finished[0][0] <= records and finished[0][1] <= events:
            _, _, item, fetched, pages, skip = finished.popleft()
            done(item)
            if skip is not None:
                skips[skip] -= 1
                if skips[skip] <= 0:
                    del skips[skip]
        self._settled_figures = (fetched, pages)
        return True

    def books(self, stats: CrawlStats) -> CrawlStats:
        """`stats` as the state holds the crawl: a URL not marked done yet (its record not
        stored) is counted as queued, not as fetched or skipped, since a resumed crawl meets it
        again. So `met == fetched + skipped + queued` holds after any stop, a kill included."""
        settled = (stats.fetched, stats.pages) == self._settled_figures
        if self._stats is None or (settled and not self._unsettled_skips):
            return stats
        books = copy.copy(stats)
        books.skips = Counter(stats.skips)
        self._give_back(books)
        return books

    def _give_back(self, stats: CrawlStats) -> None:
        """Take the URLs not marked done out of `stats`' fetched and pages figures, and the
        queued URLs skipped at their turn out of its skips."""
        if self._stats is None:
            return
        stats.fetched, stats.pages = self._settled_figures
        skips = stats.skips
        for reason, count in self._unsettled_skips.items():
            skips[reason] -= count
            if skips[reason] <= 0:
                del skips[reason]

    def _archives(self) -> list[bool]:
        """Which sinks archive (a crawler adds its own sinks once open): a check of a
        runtime-checkable protocol is slow, and this runs at every tick."""
        if len(self._kinds) != len(self._sinks):
            self._kinds = [isinstance(sink, ArchiveSink) for sink in self._sinks]
        return self._kinds

    @property
    def unsettled(self) -> int:
        """Finished URLs waiting for their records to be stored."""
        return len(self._finished)

    def __repr__(self) -> str:
        return f"Checkpointer({self._handed} records handed, {len(self._finished)} unsettled)"
