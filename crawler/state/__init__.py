"""The crawl state: what a crawl keeps so that it survives a stop, a kill or a reboot and resumes
where it was, fetching nothing twice beyond what was in flight.

    interface.py  CrawlState (the stores and `commit`), RunStore, the memory versions
    db.py         DIR/state.sqlite: the schema, the connection and the commit (StateDb)
    uncommitted.py  the statements since the last commit, run again after a full disk
    sqlite.py     the same stores on it (SqliteCrawlState), open_state
    frontier.py   the SQLite frontier (pending URLs on disk, a working set per host)
    seen.py       the SQLite seen set
    stores.py     the SQLite robots.txt, host timing, run and held-URL stores
    starts.py     the SQLite log of request starts (for `crawl report`)
    codec.py      values as rows and back
    lock.py       one crawl per data directory (flock)

The rules it keeps:
- Nothing queued is lost. A URL's row stays in the queue from the push until `done`; popping
  leases it and writes nothing. Opening the state queues again every URL leased and not done.
- A URL is done only once its page is stored. The crawl writes pages through sinks (the index's
  writer thread commits its own batches to DIR/index.sqlite; the JSONL files are flushed) and
  counts the records it has handed them; each sink counts the records it has stored (`stored`).
  A finished URL waits in memory with the count at its hand-over, and is marked done at the
  first commit after every sink's count has reached it. So a kill at any moment leaves every URL
  either done with its page stored, or still queued: in flight, in the sense that matters. Those
  are the only URLs fetched twice: at most the URLs leased when the kill came, plus those
  finished in the last commit interval or two.
  Why not one transaction for the index rows and the state: it would tie the state to SQLite and
  to the index's file, and the state must be able to move to a shared store (Redis) while pages
  stay where they are written. Counting stored records works for any sink and any store.
- Politeness holds across a restart. Host timing (next start, backoff, rules, counts) and
  robots.txt entries are committed with the rest, and a robots.txt answer, or the start of a
  robots.txt request, is committed before any later request to that host starts. A run that
  ended cleanly left exact timings. After a kill, the last requests to a host may not be
  committed, but they started before the new run took the directory's lock: so a resumed run
  waits one full interval from its own start before it asks a host it had asked before (the
  interval robots.txt asked for, or politeness.max_crawl_delay when the answer was lost).
- One crawl per data directory: `DataDirLock`. Many writers sharing a state (Redis) is later work.
"""

from crawler.state.frontier import SqliteFrontier
from crawler.state.interface import CrawlState, MemoryCrawlState, MemoryRunStore, RunStore
from crawler.state.lock import LOCK_NAME, DataDirLock
from crawler.state.seen import SqliteSeenSet
from crawler.state.sqlite import STATE_NAME, SqliteCrawlState, open_state, state_files
from crawler.state.stores import SqliteHostTimingStore, SqliteRobotsStore, SqliteRunStore

__all__ = [
    "LOCK_NAME",
    "STATE_NAME",
    "CrawlState",
    "DataDirLock",
    "MemoryCrawlState",
    "MemoryRunStore",
    "RunStore",
    "SqliteCrawlState",
    "SqliteFrontier",
    "SqliteHostTimingStore",
    "SqliteRobotsStore",
    "SqliteRunStore",
    "SqliteSeenSet",
    "open_state",
    "state_files",
]
