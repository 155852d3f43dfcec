"""Crawl figures: live counters, per-host politeness figures, deferred hosts, and the summary."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

__all__ = [
    "CARRIED_COUNTERS",
    "CARRIED_FIGURES",
    "LIVE_FIGURES",
    "CrawlStats",
    "DeferredHost",
    "HostReport",
    "Outcome",
    "SkipReason",
    "UnreachableHost",
]

SkipReason: TypeAlias = Literal[
    "invalid seed",
    "out of scope: host",
    "out of scope: deny pattern",
    "out of scope: no allow pattern",
    "over limits.max_depth",
    "over limits.max_url_length",
    "over limits.max_path_repeats",
    "over limits.max_path_segments",
    "not HTML by its extension",
    "disallowed by robots.txt",
    "host skipped",
    "host given up",
    "address refused",
    "outside the sitemap's location",
    "over sitemaps.max_depth",
    "over sitemaps.max_files",
]
"""Why a URL was not fetched: the keys of `CrawlStats.skips` and the `reason` of a skip record."""

Outcome: TypeAlias = Literal["running", "finished", "stopped", "deferred", "page limit"]


@dataclass(slots=True)
class CrawlStats:
    """Live counters of one crawl; the crawler updates them as it goes."""

    started_at: float = 0.0
    """Epoch seconds when the crawl began (its first run, for a resumed crawl)."""
    elapsed: float = 0.0
    """Seconds the crawl has run, as of the last update: the runs of a resumed crawl add up."""
    updated_at: float = 0.0
    """Epoch seconds of the last update."""
    runs: int = 1
    """Runs of the crawl, this one included: more than one once it has been resumed."""
    pages: int = 0
    """Page records produced: fetched URLs, after redirects."""
    met: int = 0
    """Distinct URLs the crawl met: seeds, links, redirect targets (robots.txt files not). Each
    is fetched, skipped, or still queued: `met == fetched + skipped + queued` at a run's end."""
    fetched: int = 0
    """URLs of `met` asked for and done with: answered (a redirect is an answer of its own), or
    failed for good."""
    requests: int = 0
    """HTTP requests made: pages, redirect hops, retries and robots.txt."""
    robots_fetches: int = 0
    tdmrep_fetches: int = 0
    """Requests for an origin's /.well-known/tdmrep.json (TDMRep), redirect hops included."""
    sitemaps: int = 0
    """Sitemap files fetched and read (a page record each, among `pages`)."""
    sitemap_urls: int = 0
    """Entries those sitemaps listed and the crawl took (URLs, or sitemaps of an index)."""
    bytes: int = 0
    retries: int = 0
    """Requests asked again after a failure (fetch.max_retries)."""
    throttled: int = 0
    """Requests the server refused (429, 503) and asked again, their retries unspent."""
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    """Failures by kind: timeout, connection, dns, payload, protocol, internal."""
    skips: Counter[SkipReason] = field(default_factory=Counter)
    """URLs not fetched, by reason: each distinct URL once."""
    changes: Counter[str] = field(default_factory=Counter)
    """Fetched URLs by what they found against their last fetch (crawler.output.records.Change):
    all 'new' in a first crawl; a recrawl's unchanged, changed, gone, failed and new."""
    page_rules: Counter[str] = field(default_factory=Counter)
    """HTML pages read, by what they allowed: 'indexed', 'noindex', 'nofollow', 'with sections',
    'links not followed' (links held back by nofollow, sections or rel), and 'cut short' (read
    only up to a bound on the parser's work or the links taken: crawler.page.bounds)."""
    usage_refused: Counter[str] = field(default_factory=Counter)
    """Pages whose text the crawl's purpose may not use (usage.purpose), by the kind of signal
    that refused it: Content-Signal, Content-Usage, noai (noai and noimageai), TDMRep; a page
    two kinds refuse counts under each. page_rules['usage refused'] counts each page once."""
    lastmod_wrong: Counter[str] = field(default_factory=Counter)
    """Origins whose sitemap lastmod said a page had not changed since its last fetch when it
    had: how many times (crawler.freshness.trust)."""
    requisites: Counter[str] = field(default_factory=Counter)
    """Page requisites (fetch.page_requisites) by their fate: 'fetched' (answered, its answer
    archived: a redirect's too), 'failed' (no answer after its retries), 'skipped' (never
    asked for). Not pages: no figure above counts them, but `requests`, `statuses` and
    `bytes`."""
    requisite_skips: Counter[str] = field(default_factory=Counter)
    """Requisites not asked for, by reason (a SkipReason: disallowed by robots.txt, ...)."""
    in_flight: int = 0
    hosts_waiting: int = 0
    """Hosts with work whose next allowed start is still to come."""
    hosts_throttled: int = 0
    """Hosts paced by a learned interval (their 429s and 503s) now."""
    queued: int = 0
    outcome: Outcome = "running"
    next_due_at: float | None = None
    """While a crawl kept fresh (recrawl.keep_fresh) waits: when the next URL comes due."""
    purpose: str = "search"
    """What the crawl is for (usage.purpose): what `usage_refused` counts refusals of."""

    def carry_over(self, saved: CrawlStats) -> None:
        """Take the figures that add up over runs from `saved` (an earlier run's), in place: a
        progress display may hold this object."""
        for name in CARRIED_FIGURES:
            setattr(self, name, getattr(saved, name))
        for name in CARRIED_COUNTERS:
            setattr(self, name, getattr(saved, name).copy())

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.elapsed if self.elapsed > 0 else 0.0


@dataclass(frozen=True, slots=True)
class HostReport:
    """How one origin was paced: what its robots.txt asked and what the crawl did."""

    origin: str
    requests: int
    interval: float
    """Seconds between request starts the crawl kept to, at the end of the crawl."""
    crawl_delay: float | None
    crawl_delay_capped: bool
    shortest_gap: float | None
    """Shortest time between two of our request starts to this origin."""
    robots: str
    """How the origin's robots.txt came out: 'status 200', 'status 404: unavailable', ..."""
    server: str | None = None
    """With politeness.per_server: the server address whose pacing group the origin is in."""
    least_interval: float | None = None
    """The interval robots.txt and min_delay ask, which no gap may be under (None: `interval`);
    `interval` may be longer, by what the host's answers taught."""
    reason: str = "min_delay"
    """Which rule sets `interval` (crawler.politeness.Politeness.why): min_delay, robots.txt
    Crawl-delay, robots.txt Request-rate, response time, learned rate; 'back-off' while backing
    off."""
    answer_time: float | None = None
    """The host's answer time, seconds to first byte (crawler.pace), its pace's measure."""
    whole_time: float | None = None
    """Smoothed seconds to the whole answer."""
    refusals: int = 0
    """429s and 503s."""
    backed_off: float = 0.0
    """Seconds held back by refusals, in all."""


@dataclass(frozen=True, slots=True)
class DeferredHost:
    """An origin with URLs left when the crawl stopped because every wait was over max_wait."""

    origin: str
    until: float
    """Epoch seconds of its next allowed start."""
    pending: int
    reason: str


@dataclass(frozen=True, slots=True)
class UnreachableHost:
    """An origin whose robots.txt could not be had, tried again until it comes or the origin is
    given up; nothing else of it is asked meanwhile."""

    origin: str
    reason: str
    """What the last try met: 'unreachable: connection: cannot connect to ...', 'status 503'."""
    since: float
    """Epoch seconds of its first failure in this run."""
    retry_at: float
    """Epoch seconds of its next try."""
    give_up_by: float
    """Epoch seconds by which it is given up if it keeps failing: the first failure plus
    robots.give_up_after, or its next try for a failure no wait mends (dns, tls)."""
    tries: int


CARRIED_FIGURES = (
    "started_at",
    "elapsed",
    "pages",
    "met",
    "fetched",
    "requests",
    "robots_fetches",
    "tdmrep_fetches",
    "sitemaps",
    "sitemap_urls",
    "bytes",
    "retries",
    "throttled",
)
"""The figures of `CrawlStats` that add up over the runs of a crawl (saved with the state)."""
CARRIED_COUNTERS = (
    "statuses",
    "errors",
    "skips",
    "changes",
    "page_rules",
    "usage_refused",
    "lastmod_wrong",
    "requisites",
    "requisite_skips",
)
LIVE_FIGURES = (
    "updated_at",
    "runs",
    "in_flight",
    "hosts_waiting",
    "hosts_throttled",
    "queued",
    "outcome",
    "next_due_at",
    "purpose",
)
"""The figures of `CrawlStats` that describe this run only (`runs` is the run store's count)."""
