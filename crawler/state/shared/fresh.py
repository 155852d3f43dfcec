"""`SharedFreshness`: what a recrawl of a shared crawl reads and learns, kept in the server
(fresh.lua) so that any worker can revisit any page: the fetch log (per URL, what its last fetch
found: validators, time, digest), each page's change history and sitemap hints, each host's
lastmod trust, and the revisits queued.

When: what this worker learns waits in buffers and goes with its tick (crawler.state.shared.
schedule), in the tick's one round trip: fetch records, change counts, hints and trust first
(before the offers: a lease never ends before its fetch is recorded), revisits after the offers,
and the end of each revisit's lease after the done-marks. What a recrawl pass decides from is
read whole (`load`) as the pass begins and before each wait of a crawl kept fresh: the decisions
are the single process's (crawler.crawl.recrawl, revisits), on `SharedFetchLog.latest` and
`SharedFreshnessStore.histories` as read then.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from crawler.errors import SharedStateError
from crawler.freshness import ChangeHistory, LastmodTrust, TrustLevel
from crawler.frontier import Earlier, QueuedUrl
from crawler.state.codec import item_from_row, item_row
from crawler.state.freshness import PageHistory
from crawler.state.interface import MemoryCrawlState
from crawler.state.shared.library import SharedCrawl
from crawler.state.shared.resp import ReplyError

__all__ = [
    "SCAN_COUNT",
    "SharedFetchLog",
    "SharedFreshness",
    "SharedFreshnessStore",
    "SharedWorkerState",
    "trust_of",
    "version_of",
]

Commands = list[list[object]]

SCAN_COUNT = 1000
"""Fields asked for per HSCAN while reading the fetch log: a round trip each."""


def version_of(earlier: Earlier) -> str:
    """A fetch's version, as `fetched` keeps it: its time, exactly as written."""
    return repr(earlier.fetched_at)


def trust_of(text: str) -> LastmodTrust:
    """A host's lastmod trust as `trust` keeps it."""
    level, right, since, reason = json.loads(text)
    return LastmodTrust(cast(TrustLevel, level), right, since, reason)


def _text(item: QueuedUrl) -> str:
    return json.dumps(item_row(item), separators=(",", ":"))


class SharedFetchLog:
    """A `FetchLog` (crawler.state.interface) whose rows are the server's: `add` sends them at
    the next tick; `latest` is what the last `SharedFreshness.load` read, with this worker's
    fetches since."""

    def __init__(self, fresh: SharedFreshness) -> None:
        self._fresh = fresh
        self.rows: dict[str, QueuedUrl] = {}

    def add(self, item: QueuedUrl, found: Earlier) -> None:
        url = item.first_url
        row = QueuedUrl(
            url, item.depth, sitemap=item.sitemap, declared_by=item.declared_by, earlier=found
        )
        self._fresh.fetched[url] = f"{version_of(found)}\n{_text(row)}"
        if self._fresh.loaded:
            self.rows[url] = row

    def latest(self) -> Iterator[QueuedUrl]:
        def order(item: QueuedUrl) -> tuple[bool, float]:
            assert item.earlier is not None
            return (not item.sitemap, item.earlier.fetched_at)

        return iter(sorted(self.rows.values(), key=order))

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"SharedFetchLog({len(self.rows)} URLs read)"


class SharedFreshnessStore:
    """A `FreshnessStore` (crawler.state.freshness) whose pages and trust are the server's."""

    def __init__(self, fresh: SharedFreshness) -> None:
        self._fresh = fresh
        self.pages: dict[str, PageHistory] = {}
        self.trusted: dict[str, LastmodTrust] = {}
        self.lastmods: dict[str, float] = {}
        """The lastmods heard in this pass, by any worker (`SharedFreshness.read`)."""

    def revisited(self, url: str, interval: float, changed: bool) -> None:
        interval = max(0.0, interval)
        self._fresh.changes += (url, int(changed), repr(interval))
        page = self.pages.get(url) or PageHistory(url, ChangeHistory())
        self.pages[url] = PageHistory(
            url, page.changes.after_visit(interval, changed), page.changefreq, page.priority
        )

    def listed(self, url: str, changefreq: str | None, priority: float | None) -> None:
        self._fresh.hints[url] = json.dumps([changefreq, priority])
        page = self.pages.get(url) or PageHistory(url, ChangeHistory())
        self.pages[url] = PageHistory(url, page.changes, changefreq, priority)

    def histories(self) -> Iterator[PageHistory]:
        return iter(list(self.pages.values()))

    def trust(self, origin: str) -> LastmodTrust:
        return self.trusted.get(origin) or LastmodTrust()

    def set_trust(self, origin: str, trust: LastmodTrust) -> None:
        self.trusted[origin] = trust
        self._fresh.trust[origin] = json.dumps(
            [trust.level, trust.right, trust.since, trust.reason]
        )

    def trusts(self) -> dict[str, LastmodTrust]:
        return dict(self.trusted)

    def heard(self, url: str, lastmod: float) -> None:
        self._fresh.heard[url] = repr(lastmod)
        self.lastmods[url] = lastmod

    def lastmod_heard(self, url: str) -> float | None:
        return self.lastmods.pop(url, None)

    def forget_heard(self) -> None:
        """The pass's are read again, all of them (the server forgets the last pass's)."""
        self.lastmods.clear()
        self._fresh.heard_seen = 0

    def __repr__(self) -> str:
        return f"SharedFreshnessStore({len(self.pages)} pages, {len(self.trusted)} origins)"


class SharedFreshness:
    """This worker's buffers of what a recrawl learns, the commands that carry them, and the
    reads and calls of a recrawl pass (see the module doc)."""

    def __init__(self, worker: str) -> None:
        self.worker = worker
        self.fetched: dict[str, str] = {}
        """URL -> its version and record, to write into `fetched`."""
        self.changes: list[object] = []
        self.hints: dict[str, str] = {}
        self.trust: dict[str, str] = {}
        self.revisits: list[object] = []
        self.heard: dict[str, str] = {}
        self.heard_seen = 0
        """The server's last change number of `lastmods` this worker has read up to."""
        self.ended: set[str] = set()
        """URLs whose revisit's lease ended: their `revisits` mark goes."""
        self.loaded = False
        self.fetches = SharedFetchLog(self)
        self.store = SharedFreshnessStore(self)
        self._sent: tuple[Any, ...] = ()
        self._pass: bytes | None = None
        """The recrawl pass this worker takes part in, as the server names it."""

    def revisit(self, url: str, origin: str, item: str, version: str) -> None:
        """Queue `url` again (its queue item `item`) if its last fetch is still `version`."""
        self.revisits += (url, origin, version, item)

    def revisit_ended(self, url: str) -> None:
        self.ended.add(url)

    @property
    def buffered(self) -> bool:
        return bool(
            self.fetched
            or self.changes
            or self.hints
            or self.trust
            or self.revisits
            or self.heard
            or self.ended
        )

    def take(self, prefix: str) -> tuple[Commands, Commands, Commands]:
        """The commands carrying what is buffered: (before the offers, after the offers, after
        the done-marks). The buffers are empty after; `unsent` fills them again."""
        before: Commands = []
        if self.fetched:
            fields = [part for pair in self.fetched.items() for part in pair]
            before.append(["HSET", f"{prefix}fetched", *fields])
        if self.changes:
            before.append(["FCALL", "crawler_changes", 0, prefix, *self.changes])
        if self.hints:
            before.append(["HSET", f"{prefix}hints", *(p for kv in self.hints.items() for p in kv)])
        if self.trust:
            before.append(["HSET", f"{prefix}trust", *(p for kv in self.trust.items() for p in kv)])
        if self.heard:
            heard = (part for pair in self.heard.items() for part in pair)
            before.append(["FCALL", "crawler_heard", 0, prefix, self.worker, *heard])
        offers: Commands = []
        if self.revisits:
            offers.append(["FCALL", "crawler_revisit", 0, prefix, *self.revisits])
        after: Commands = []
        if self.ended:
            after.append(["HDEL", f"{prefix}revisits", *sorted(self.ended)])
        self._sent = (
            self.fetched,
            self.changes,
            self.hints,
            self.trust,
            self.revisits,
            self.heard,
            self.ended,
        )
        self.fetched, self.changes, self.hints, self.trust = {}, [], {}, {}
        self.revisits, self.heard, self.ended = [], {}, set()
        return before, offers, after

    def unsent(self) -> None:
        """The last `take` may not have reached the server: it goes again with the next (every
        command is idempotent but the change counts, which may count a revisit twice)."""
        if not self._sent:
            return
        fetched, changes, hints, trust, revisits, heard, ended = self._sent
        self.fetched = {**fetched, **self.fetched}
        self.changes = changes + self.changes
        self.hints = {**hints, **self.hints}
        self.trust = {**trust, **self.trust}
        self.revisits = revisits + self.revisits
        self.heard = {**heard, **self.heard}
        self.ended = ended | self.ended
        self._sent = ()

    def read(self, prefix: str) -> list[object] | None:
        """The command reading the lastmods the others heard since the last read; None before
        a recrawl pass read the fetch log (no pass: nothing to hear)."""
        if not self.loaded:
            return None
        return ["FCALL", "crawler_heard_since", 0, prefix, self.heard_seen]

    def take_heard(self, reply: Any) -> None:
        """Take what `read` brought back but this worker's own (which it holds already, or
        has used: a lastmod is used once)."""
        self.heard_seen = int(reply[0])
        lastmods = self.store.lastmods
        for url, value in zip(reply[1::2], reply[2::2], strict=True):
            worker, _, lastmod = value.decode().partition("\n")
            if worker != self.worker:
                lastmods[url.decode()] = float(lastmod)

    # --- a recrawl pass's reads and calls ----------------------------------------------------

    async def load(self, crawl: SharedCrawl) -> None:
        """Read the crawl's fetch log, change histories, hints and trust, as the server has
        them now (this worker's buffers sent before, by the caller)."""
        prefix = crawl.prefix
        rows: dict[str, QueuedUrl] = {}
        for url, value in await _scan(crawl, f"{prefix}fetched"):
            _, _, text = value.partition("\n")
            rows[url] = item_from_row(*json.loads(text))
        counts = dict(await _scan(crawl, f"{prefix}changes"))
        hints = dict(await _scan(crawl, f"{prefix}hints"))
        pages = {}
        for url in counts.keys() | hints.keys():
            visits, changes, observed, observed_changed = (counts.get(url) or "0 0 0 0").split()
            changefreq, priority = json.loads(hints[url]) if url in hints else (None, None)
            history = ChangeHistory(
                int(visits), int(changes), float(observed), float(observed_changed)
            )
            pages[url] = PageHistory(url, history, changefreq, priority)
        trusted = {origin: trust_of(text) for origin, text in await _scan(crawl, f"{prefix}trust")}
        self.fetches.rows, self.store.pages, self.store.trusted = rows, pages, trusted
        self.loaded = True

    async def begin_pass(self, crawl: SharedCrawl) -> tuple[float, bool]:
        """The recrawl pass this worker takes part in (fresh.lua's crawler_pass): when it began
        (epoch seconds, the server's clock), and whether it began now."""
        reply = await _call(crawl, "crawler_pass", crawl.worker)
        self._pass = reply[0]
        return int(reply[0]) / 1e6, reply[1] == b"1"

    async def pass_over(self, crawl: SharedCrawl) -> None:
        """The pass this worker took part in found nothing left: the next recrawl begins
        another."""
        if self._pass is not None:
            await _call(crawl, "crawler_pass_over", self._pass)

    def __repr__(self) -> str:
        return f"SharedFreshness({self.fetches!r}, {self.store!r})"


@dataclass(slots=True)
class SharedWorkerState(MemoryCrawlState):
    """A shared crawl's worker's state: in memory, but for its frontier, fetch log and
    freshness, which are the server's, and outlive the worker (a recrawl reads them)."""

    @property
    def durable(self) -> bool:
        return True


async def _call(crawl: SharedCrawl, function: str, *args: object) -> Any:
    try:
        return await crawl.connection.execute("FCALL", function, 0, crawl.prefix, *args)
    except ReplyError as error:
        raise SharedStateError(
            f"state server {crawl.connection.address}: {function}: {error}"
        ) from None


async def _scan(crawl: SharedCrawl, key: str) -> list[tuple[str, str]]:
    """Every field of the hash `key`, SCAN_COUNT at a time."""
    found: list[tuple[str, str]] = []
    cursor: bytes | str = "0"
    while True:
        try:
            cursor, page = await crawl.connection.execute("HSCAN", key, cursor, "COUNT", SCAN_COUNT)
        except ReplyError as error:
            raise SharedStateError(f"state server {crawl.connection.address}: {error}") from None
        found += ((k.decode(), v.decode()) for k, v in zip(page[::2], page[1::2], strict=True))
        if cursor == b"0":
            return found
