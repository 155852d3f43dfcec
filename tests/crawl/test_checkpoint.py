"""crawler.crawl.checkpoint: a finished URL is marked done only once every sink has stored its
record;
the state is committed at each checkpoint, and before requests that follow a robots.txt event."""

from __future__ import annotations

from multidict import CIMultiDict, CIMultiDictProxy

from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.outlet import Outlet
from crawler.frontier import QueuedUrl
from crawler.http.answer import Response
from crawler.output.records import PageRecord, Skip, Unskip
from crawler.output.warc import Exchange
from crawler.state import MemoryCrawlState
from crawler.stats import CrawlStats

A = "http://a.test"


class CountingSink:
    """A sink whose `stored` the test sets, as a writer thread would move it."""

    def __init__(self) -> None:
        self.stored = 0
        self.flushes = 0
        self.failed = False

    def page(self, record: PageRecord) -> None:
        pass

    def skip(self, skip: Skip) -> None:
        pass

    def unskip(self, unskip: Unskip) -> None:
        pass

    def flush(self) -> None:
        self.flushes += 1

    def close(self) -> None:
        pass


class CountingArchive(CountingSink):
    """An archive sink (WARC): its `stored` counts answers and records alike."""

    def exchange(self, exchange: Exchange) -> None:
        pass


class CountingState(MemoryCrawlState):
    commits: int = 0

    def commit(self) -> None:
        self.commits += 1


def leased(state: MemoryCrawlState, *paths: str) -> list[QueuedUrl]:
    for path in paths:
        state.frontier.push(A, QueuedUrl(f"{A}/{path}"))
    items = []
    while (item := state.frontier.pop(A)) is not None:
        items.append(item)
    return items


def test_a_finished_url_is_done_once_every_sink_has_stored_its_record() -> None:
    state = CountingState()
    index, jsonl = CountingSink(), CountingSink()
    checkpoints = Checkpointer(state, [index, jsonl], interval=0.5)
    first, second = leased(state, "1", "2")
    checkpoints.handed()
    checkpoints.finished(first)  # its record is the first handed
    checkpoints.handed()
    checkpoints.finished(second)
    checkpoints.tick(0.0, CrawlStats())
    assert state.frontier.leased() == 2 and (index.flushes, jsonl.flushes) == (1, 1)
    index.stored = 2
    jsonl.stored = 1
    checkpoints.tick(0.1, CrawlStats())  # between checkpoints: settles what is stored, commits
    assert state.frontier.leased() == 1 and checkpoints.unsettled == 1
    assert state.commits == 2
    checkpoints.tick(0.2, CrawlStats())  # nothing new stored: nothing to commit
    assert state.commits == 2
    jsonl.stored = 2
    checkpoints.close(CrawlStats(pages=2), (), clean=True)
    assert state.frontier.leased() == 0
    assert state.run.stats() == CrawlStats(pages=2)


def test_a_url_waits_for_every_answer_archived_on_its_way() -> None:
    """A redirect hop's answer is archived, then the hop's URL is finished with no record of its
    own: it is done only once the archive has written that answer too."""
    state = CountingState()
    index, warc = CountingSink(), CountingArchive()
    checkpoints = Checkpointer(state, [index, warc], interval=0.5)
    hop, page = leased(state, "hop", "page")
    checkpoints.archived()  # the hop's 301
    checkpoints.finished(hop)
    checkpoints.archived()  # the page's 200
    checkpoints.handed()  # its record
    checkpoints.finished(page)
    checkpoints.tick(0.0, CrawlStats())
    assert state.frontier.leased() == 2  # the index has stored nothing, the archive nothing
    index.stored = 1  # the index has the record; the archive has not written the hop's answer
    checkpoints.tick(0.1, CrawlStats())
    assert state.frontier.leased() == 2
    warc.stored = 1  # the hop's answer
    checkpoints.tick(0.2, CrawlStats())
    assert state.frontier.leased() == 1
    warc.stored = 2  # the page's answer, not yet its record (the metadata)
    checkpoints.tick(0.3, CrawlStats())
    assert state.frontier.leased() == 1
    warc.stored = 3
    checkpoints.tick(0.4, CrawlStats())
    assert state.frontier.leased() == 0


def test_the_outlet_counts_an_answer_it_archives() -> None:
    """Through the Outlet, as the crawl hands them: the archive's count includes the answer."""
    state = CountingState()
    warc = CountingArchive()
    checkpoints = Checkpointer(state, [warc], interval=0.5)
    outlet = Outlet([warc], checkpoints, CrawlStats(), state.fetches)
    outlet.start()
    (item,) = leased(state, "hop")
    answer = Response(item.url, 301, CIMultiDictProxy(CIMultiDict()), "", None, b"", raw=b"x")
    outlet.archive(Exchange(item.url, 0.0, answer))
    checkpoints.finished(item)
    checkpoints.tick(0.0, CrawlStats())
    assert state.frontier.leased() == 1
    warc.stored = 1
    checkpoints.tick(0.1, CrawlStats())
    assert state.frontier.leased() == 0


def test_without_sinks_urls_settle_at_each_checkpoint() -> None:
    state = CountingState()
    checkpoints = Checkpointer(state, [], interval=0.5)
    (item,) = leased(state, "1")
    checkpoints.finished(item)
    checkpoints.tick(0.0, CrawlStats())
    assert state.frontier.leased() == 0 and state.commits == 1
    assert checkpoints.next_at == 0.5


def test_a_robots_event_is_committed_before_the_requests_after_it() -> None:
    state = CountingState()
    checkpoints = Checkpointer(state, [], interval=0.5)
    checkpoints.before_requests()
    assert state.commits == 0
    checkpoints.robots_moved()
    checkpoints.before_requests()
    checkpoints.before_requests()
    assert state.commits == 1


def skipped(stats: CrawlStats) -> int:
    return sum(stats.skips.values())


def test_the_books_balance_with_a_skip_of_a_queued_url_not_yet_stored() -> None:
    """A queued URL skipped at its turn (robots.txt): until its skip is stored, the state still
    queues it and a resumed crawl skips it again, so the books count it queued, not skipped."""
    state = CountingState()
    index = CountingSink()
    checkpoints = Checkpointer(state, [index], interval=60.0)
    stats = CrawlStats(met=2, queued=2)
    checkpoints.start(stats)
    fetched_one, skipped_one = leased(state, "1", "2")
    stats.fetched += 1
    stats.pages += 1
    stats.queued -= 1
    checkpoints.handed()
    checkpoints.finished(fetched_one)
    stats.skips["disallowed by robots.txt"] += 1
    stats.queued -= 1
    checkpoints.handed()
    checkpoints.finished(skipped_one, skipped="disallowed by robots.txt")

    def balanced(books: CrawlStats) -> bool:
        return books.met == books.fetched + skipped(books) + books.queued

    index.stored = 1  # the page's record stored, the skip's not yet
    checkpoints.tick(0.0, stats)
    books = checkpoints.books(stats)
    assert (books.fetched, skipped(books)) == (1, 0)
    assert skipped(stats) == 1  # the live figures are left as they are
    books.queued += checkpoints.unsettled  # as the last commit counts them
    assert balanced(books)
    # A stop now: the state queues the skipped URL again, and the figures say so.
    checkpoints.close(stats, [], clean=True)
    assert (stats.fetched, skipped(stats), stats.queued) == (1, 0, 1) and balanced(stats)
    assert state.frontier.leased() == 1
