"""robots.txt per origin: fetched once, shared, cached, with the outcome policy of SPEC section 1.

The rules this module keeps:
- One fetch per origin at a time: every caller that wants an origin while its fetch runs awaits
  that same fetch.
- The outcome of the last hop decides (crawler.robots.outcome): 2xx parses the first 500 KiB, 3xx is
  followed up to 5 hops (across hosts too; the rules apply to the origin asked for), 4xx allows
  everything, 429/5xx/network errors disallow everything for now and ask for a retry after a backoff
  that doubles up to `retry_max`.
- A copy stays fresh for `cache_ttl`. While an origin is unreachable, the last good copy is used
  past its expiry (RFC 9309 section 2.4), and the retry is still scheduled.
- Entries (crawler.robots.entry) live in a `RobotsStore`: memory by default, SQLite in
  crawler.state (with their fetch and expiry times, so a resumed crawl keeps its cache).
- With `tdmrep_token`, rules that let the crawl in (a parsed file, or none to be had) are
  followed by the origin's /.well-known/tdmrep.json (TDMRep section 6.1), if they allow it for
  that token: paced as a redirect hop is, by the pace those rules ask (their Crawl-delay,
  Request-rate, Visit-time), redirects followed within the origin, read by
  crawler.usage.tdmrep and kept in the entry. A 4xx is no file; a failure or a 5xx is no
  reservation from the file until the entry is fetched again. Either way it is never a reason to
  hold the origin's pages back: their own headers and META still speak.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import asdict, replace

from crawler.config import RobotsConfig
from crawler.http.answer import FetchFailure, Response
from crawler.robots.entry import MemoryRobotsStore, RobotsEntry, RobotsStore
from crawler.robots.outcome import MAX_REDIRECTS, RobotsPolicy, robots_fetch_decision
from crawler.robots.txt import MAX_BODY_BYTES, RobotsTxt
from crawler.urls import InvalidUrlError, origin_of, resolve_url, robots_url_of
from crawler.usage.tdmrep import MAX_TDMREP_BYTES, TDMREP_PATH, TdmRep, read_tdmrep

__all__ = ["RobotsCache"]

Get = Callable[[str, int], Awaitable[Response | FetchFailure]]
"""`get(url, max_bytes)`: one request, redirects not followed."""
Pace = Callable[[str, RobotsTxt | None], Awaitable[bool]]
"""`pace(url, rules)`: awaited before each redirect hop of a robots.txt fetch, with the hop's URL
(a hop is a request to its host like any other, and waits its turn), and before the tdmrep.json
request with the rules just read, which it waits by; False: do not make that request (the rules
retire the host)."""


class RobotsCache:
    """robots.txt for any origin, fetched through `get` at most once at a time per origin."""

    def __init__(
        self,
        config: RobotsConfig,
        get: Get,
        *,
        store: RobotsStore | None = None,
        clock: Callable[[], float],
        tdmrep_token: str | None = None,
    ) -> None:
        self._config = config
        self._options = asdict(config.options())
        self._get = get
        self._store: RobotsStore = store if store is not None else MemoryRobotsStore()
        self._clock = clock
        self._running: dict[str, asyncio.Future[RobotsEntry]] = {}
        self._tdmrep_token = tdmrep_token

    @property
    def store(self) -> RobotsStore:
        return self._store

    def cached(self, origin: str, now: float) -> RobotsEntry | None:
        """The entry to use at `now` without fetching, or None when a fetch is due."""
        entry = self._store.get(origin)
        if entry is not None and entry.fresh(now):
            return entry
        return None

    def fetching(self, origin: str) -> bool:
        return origin in self._running

    async def get(self, origin: str, pace: Pace | None = None) -> RobotsEntry:
        """The fresh entry for `origin`, fetching it if needed; concurrent callers share one
        fetch (paced by the first caller's `pace`)."""
        entry = self.cached(origin, self._clock())
        if entry is not None:
            return entry
        running = self._running.get(origin)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[RobotsEntry] = asyncio.get_running_loop().create_future()
        self._running[origin] = future
        try:
            entry = await self._fetch(origin, pace)
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: callers that share it see it raised themselves
            raise
        finally:
            del self._running[origin]
        future.set_result(entry)
        return entry

    async def _fetch(self, origin: str, pace: Pace | None) -> RobotsEntry:
        url = robots_url_of(origin)
        hops: list[str] = []
        redirects = 0
        while True:
            if hops and pace is not None:
                await pace(url, None)
            hops.append(url)
            answer = await self._get(url, MAX_BODY_BYTES)
            if isinstance(answer, FetchFailure):
                decision = robots_fetch_decision(None, error=str(answer))
            else:
                location = answer.location
                decision = robots_fetch_decision(
                    answer.status,
                    redirects=redirects,
                    has_location=bool(location),
                    auth_disallows=self._config.auth_disallows,
                )
            if decision.policy is not RobotsPolicy.FOLLOW:
                break
            assert isinstance(answer, Response) and answer.location is not None
            try:
                url = resolve_url(url, answer.location)
            except InvalidUrlError as error:
                decision = robots_fetch_decision(answer.status, has_location=False)
                reason = f"{decision.reason} (Location {error.reason})"
                return self._entry(origin, RobotsTxt.allow_all(reason), reason, hops, answer)
            redirects += 1
        if decision.policy is RobotsPolicy.PARSE:
            assert isinstance(answer, Response)
            robots = RobotsTxt.parse(answer.body, **self._options)
        elif decision.policy is RobotsPolicy.ALLOW_ALL:
            robots = RobotsTxt.allow_all(decision.reason)
        else:
            robots = None
        if robots is not None:
            tdmrep = None
            if self._tdmrep_token is not None:
                tdmrep, last = await self._tdmrep(origin, robots, pace)
                # When the host last answered; a failed tdmrep.json request is no failure of
                # the robots.txt's.
                answer = last if isinstance(last, Response) else answer
            return self._entry(origin, robots, decision.reason, hops, answer, tdmrep)
        if not decision.retry:
            robots = RobotsTxt.disallow_all(decision.reason)
            return self._entry(origin, robots, decision.reason, hops, answer)
        return self._unreachable(origin, decision.reason, hops, answer)

    def _entry(
        self,
        origin: str,
        robots: RobotsTxt,
        reason: str,
        hops: list[str],
        answer: Response | FetchFailure,
        tdmrep: TdmRep | None = None,
    ) -> RobotsEntry:
        now = self._clock()
        expires_at = now + self._config.cache_ttl
        entry = RobotsEntry(
            origin, robots, now, expires_at, reason, hops=tuple(hops), tdmrep=tdmrep
        )
        return self._keep(entry, answer)

    async def _tdmrep(
        self, origin: str, robots: RobotsTxt, pace: Pace | None
    ) -> tuple[TdmRep, Response | FetchFailure | None]:
        """The origin's tdmrep.json as read, and the last answer of its fetch (None: not
        asked)."""
        url = origin + TDMREP_PATH
        assert self._tdmrep_token is not None
        if not robots.can_fetch(url, self._tdmrep_token):
            return TdmRep("not asked: robots.txt disallows it"), None
        answer: Response | FetchFailure | None = None
        for _ in range(MAX_REDIRECTS + 1):
            if pace is not None and not await pace(url, robots):
                return TdmRep("not asked: the host is not crawled by its rules"), answer
            answer = await self._get(url, MAX_TDMREP_BYTES)
            if isinstance(answer, FetchFailure):
                why = f"unreachable ({answer.kind}): no reservation from the file"
                return TdmRep(why), answer
            status = answer.status
            if 300 <= status < 400 and answer.location:
                try:
                    target = resolve_url(url, answer.location)
                except InvalidUrlError:
                    return TdmRep(f"status {status}: its Location is no URL"), answer
                if origin_of(target) != origin:
                    why = f"status {status}: redirects to another origin, not followed"
                    return TdmRep(why), answer
                url = target
                continue
            if 200 <= status < 300:
                if answer.truncated:
                    limit = f"over {MAX_TDMREP_BYTES:,} bytes: not read"
                    return TdmRep(f"status {status}", problems=(limit,)), answer
                return read_tdmrep(answer.body, f"status {status}"), answer
            if 400 <= status < 500 and status != 429:
                return TdmRep(f"status {status}: no file"), answer
            return TdmRep(f"status {status}: no reservation from the file"), answer
        return TdmRep("too many redirects: no file"), answer

    def _keep(self, entry: RobotsEntry, answer: Response | FetchFailure) -> RobotsEntry:
        """Store `entry`; return it with what the last answer was and when it came, which are
        not stored."""
        self._store.put(entry)
        if isinstance(answer, FetchFailure):
            return replace(entry, error=answer.kind)
        error = f"status {answer.status}" if entry.unreachable else None
        if error is not None or answer.answered_at is not None:
            return replace(entry, error=error, answered_at=answer.answered_at)
        return entry

    def _unreachable(
        self, origin: str, reason: str, hops: list[str], answer: Response | FetchFailure
    ) -> RobotsEntry:
        now = self._clock()
        previous = self._store.get(origin)
        failures = previous.failures + 1 if previous is not None and previous.unreachable else 1
        backoff = self._config.retry_initial * 2.0 ** min(failures - 1, 30)
        wait = min(backoff, self._config.retry_max)
        stale = previous is not None and (previous.stale or not previous.unreachable)
        if previous is not None and stale:
            # The last good copy stands while the origin cannot be reached (RFC 9309 2.4).
            robots, fetched_at = previous.robots, previous.fetched_at
            reason = f"{reason}; using the copy fetched earlier"
        else:
            robots, fetched_at = RobotsTxt.disallow_all(reason), now
        entry = RobotsEntry(
            origin, robots, fetched_at, now + wait, reason, True, failures, stale, tuple(hops)
        )
        return self._keep(entry, answer)

    def __repr__(self) -> str:
        return f"RobotsCache({len(self._running)} fetching)"
