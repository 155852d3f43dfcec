"""`Admission`: each URL coming in (a seed, a link, a sitemap or its entry, a redirect's next hop,
a URL due again) is queued at its host, or skipped with its reason, once per URL.

- The seeds of every run so far set the scope, and so does every host their redirects led to.
- A URL is checked against robots.txt when it is queued, if its origin's rules are known (and
  again just before it is fetched, crawler.crawl.launch).
- A URL past limits.max_depth is held, not lost: a shorter way to it, or a greater limit in a
  later run, queues it after all (its skip withdrawn).
- The decisions are crawler.crawl.decide's; this part keeps the seen and held sets, the counts
  and the skips in step with them.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from crawler.config import LimitsConfig, ScopeConfig, SitemapsConfig
from crawler.crawl.clock import CrawlClock
from crawler.crawl.coordination import HostCoordination
from crawler.crawl.decide import (
    OUTSIDE_SITEMAP,
    OVER_MAX_DEPTH,
    TRAP_REASONS,
    URL_TOO_LONG,
    Hop,
    Stop,
    long_url_name,
    out_of_bounds,
    redirect_hop,
    robots_skip,
    sitemap_refusal,
    trap_detail,
    why_out,
)
from crawler.crawl.hosts import Host, HostTable
from crawler.crawl.outlet import Outlet, record_for
from crawler.crawl.scheduler import Scheduler
from crawler.crawl.scope import Scope
from crawler.crawl.tallies import TrapTally
from crawler.frontier import ONLY_BY_LINK, QueuedUrl
from crawler.output.records import Skip
from crawler.state.interface import CrawlState
from crawler.stats import CrawlStats, SkipReason
from crawler.urls import InvalidUrlError, normalize_url, origin_of

__all__ = ["Admission"]

log = logging.getLogger(__name__)


class Admission:
    """What comes into the crawl, and whether it is queued."""

    def __init__(
        self,
        scope: ScopeConfig,
        limits: LimitsConfig,
        sitemaps: SitemapsConfig,
        *,
        token: str,
        max_redirects: int,
        state: CrawlState,
        hosts: HostTable,
        scheduler: Scheduler,
        coordination: HostCoordination,
        outlet: Outlet,
        clock: CrawlClock,
        stats: CrawlStats,
        traps: TrapTally,
        seeds_named: Callable[[Iterable[str]], None] = lambda seeds: None,
    ) -> None:
        """`seeds_named(seeds)`: told every seed of the crawl so far, each time there are more
        (the address guard lets in the addresses they name, crawler.http.guard)."""
        self._scope_config = scope
        self._limits = limits
        self._max_url_length = limits.max_url_length
        self._sitemaps = sitemaps
        self._token = token
        self._max_redirects = max_redirects
        self._run = state.run
        self._frontier = state.frontier
        self._seen = state.seen
        self._held = state.held
        self._hosts = hosts
        self._scheduler = scheduler
        self._coordination = coordination
        self._outlet = outlet
        self._clock = clock
        self._stats = stats
        self._traps = traps
        self._seeds_named = seeds_named
        self.scope = Scope()
        self._seeds: set[str] = set()
        self.sitemap_files: Counter[str] = Counter()
        """Sitemap files queued in this run, by the origin whose robots.txt led to them."""
        self.requisites_waiting = 0
        """Requisites queued in this run and not yet settled (fetched, failed, skipped): the
        page limit (limits.max_pages) waits for them, so that the last pages replay too."""

    # --- seeds and scope -------------------------------------------------------------------------

    def add_seeds(self, seeds: Iterable[str]) -> None:
        """Queue the seeds new to the crawl; the seeds of every run so far set the scope."""
        normal: list[str] = []
        for seed in seeds:
            try:
                normal.append(normalize_url(seed))
            except InvalidUrlError as error:
                self._stats.met += 1
                self._outlet.skip(Skip(seed, "invalid seed", error.reason))
        self._run.add_seeds(normal)
        self._seeds = set(self._run.seeds())
        self._seeds_named(self._seeds)
        self._rescope()
        for url in normal:
            self.offer(url, 0)

    def widen_scope(self, seeds: Sequence[str]) -> None:
        """Seeds another worker of a shared crawl gave: the scope is theirs too (their URLs are
        that worker's to queue)."""
        self._run.add_seeds(seeds)
        self._seeds = set(self._run.seeds())
        self._seeds_named(self._seeds)
        self._rescope()

    def _rescope(self) -> None:
        """The scope of every seed given so far, and of every host their redirects led to."""
        run = self._run
        scope = self._scope_config
        moved = tuple(target for _seed, target in run.seed_moves())
        self.scope = Scope.for_seeds(
            run.seeds() + moved,
            seed_hosts=scope.seed_hosts,
            include_subdomains=scope.include_subdomains,
            allow_domains=scope.allow_domains,
            allow=scope.allow,
            deny=scope.deny,
            skip_extensions=scope.skip_extensions,
        )

    # --- URLs found ------------------------------------------------------------------------------

    def offer(self, url: str, depth: int, lastmod: float | None = None) -> bool:
        """Queue a normal URL found at `depth` (with its sitemap `lastmod`, if a sitemap listed
        it), unless a rule says no (then it is a skip, once per URL); True when queued."""
        if len(url) > self._max_url_length:
            return self._too_long(url)
        if not self._seen.add(url):
            if self._held and (held := self._held.depth(url)) is not None and depth < held:
                return self._reconsider(url, depth, held)
            return False
        self._stats.met += 1
        reason = out_of_bounds(url, depth, scope=self.scope, limits=self._limits)
        if reason is not None:
            if reason == OVER_MAX_DEPTH:
                self._held.hold(url, depth)
            elif reason in TRAP_REASONS:
                self._count_trap(url, reason)
            self._outlet.skip(Skip(url, reason, self._why_out(url, reason, depth)))
            return False
        return self.queue(QueuedUrl(url, depth, lastmod=lastmod))

    def _met_first(self, url: str) -> bool:
        """Whether `url` is met for the first time (then counted as met); a URL too long is a
        skip instead."""
        if len(url) > self._max_url_length:
            return self._too_long(url)
        if not self._seen.add(url):
            return False
        self._stats.met += 1
        return True

    def _too_long(self, url: str) -> bool:
        name = long_url_name(url)
        if self._seen.add(name):
            self._count_trap(url, URL_TOO_LONG)
            self._stats.met += 1
            detail = trap_detail(url, URL_TOO_LONG, self._limits)
            self._outlet.skip(Skip(name, URL_TOO_LONG, detail))
        return False

    def _count_trap(self, url: str, reason: str) -> None:
        try:
            origin = origin_of(url)
        except ValueError:
            return
        self._traps.count(origin, reason)

    def _why_out(self, url: str, reason: SkipReason, depth: int) -> str:
        return why_out(url, reason, depth, self.scope, self._limits)

    def _reconsider(self, url: str, depth: int, held: int) -> bool:
        """A URL held (past limits.max_depth at depth `held`, or listed where a sitemap could
        not list it), found again at `depth`, less than before."""
        reason = out_of_bounds(url, depth, scope=self.scope, limits=self._limits)
        outlet = self._outlet
        if reason == OVER_MAX_DEPTH:
            self._held.hold(url, depth)
            if held == ONLY_BY_LINK:
                outlet.unskip(url, OUTSIDE_SITEMAP)
                outlet.skip(Skip(url, reason, self._why_out(url, reason, depth)))
            return False
        self._held.release(url)
        outlet.unskip(url, OUTSIDE_SITEMAP if held == ONLY_BY_LINK else OVER_MAX_DEPTH)
        if reason is not None:
            outlet.skip(Skip(url, reason, self._why_out(url, reason, depth)))
            return False
        return self.queue(QueuedUrl(url, depth))

    def release_held(self) -> int:
        """Queue the URLs an earlier run held past limits.max_depth that the depth now allows
        (it was raised); how many."""
        released = 0
        for url, depth in self._held.within(self._limits.max_depth):
            released += self._reconsider(url, depth, depth)
        return released

    def queue_again(self, item: QueuedUrl) -> bool:
        """A URL fetched before, due again in a recrawl: met again and counted as such (`met`
        stays fetched + skipped + queued); a sitemap counts among its origin's files."""
        if item.sitemap:
            self.sitemap_files[item.declared_by or origin_of(item.url)] += 1
        self._stats.met += 1
        return self.queue(item)

    def queue(self, item: QueuedUrl) -> bool:
        """Queue `item` at its host, unless the host is retired or robots.txt disallows it."""
        url = item.url
        origin = origin_of(url)
        host = self._hosts.get(origin)
        if host.retired is not None:
            if host.over_budget:
                # Kept for a run with a greater limits.max_pages_per_host.
                self._frontier.push(origin, item)
                return True
            self._outlet.skip(Skip(url, host.retired_as, host.retired))
            return False
        skip = robots_skip(host.robots, url, self._token)
        if skip is not None:
            self.skip(item, skip, None)
            return False
        self._frontier.push(origin, item)
        self._scheduler.reschedule(host, None)
        return True

    def skip(self, item: QueuedUrl, skip: Skip, now: float | None) -> None:
        """`item`, met and queued (or about to be), is not fetched after all (robots.txt
        disallows it, its host is retired): its skip; a redirect's hop ends its chain's record,
        as the hop before it. A requisite's skip is counted apart: it is no page."""
        if item.requisite_of is not None:
            self._requisite_skipped(skip, item.requisite_of)
            self.requisite_settled()
            return
        self._outlet.skip(skip)
        if item.redirected_from:
            error = f"redirect to {item.url} not followed: {skip.reason} ({skip.detail})"
            at = now if now is not None else self._clock.now()
            record = record_for(
                item, at, None, status=item.redirect_status, error=error, reached=False
            )
            self._outlet.page(record, item)

    # --- page requisites -------------------------------------------------------------------------

    def offer_requisites(self, urls: Sequence[str], needed_by: str) -> int:
        """Queue `urls`, normal URLs that `needed_by` (a page, a stylesheet, a frame) needs to
        be shown, each at its own host whatever the scope (the host does not join it), ahead of
        that host's pages: a page's requisites come soon after it. A URL the crawl met before
        (as a page or a requisite: each is fetched once per crawl) is left out; one on a retired
        host, one robots.txt disallows or one too long is a skip, counted apart from pages'.
        How many were queued."""
        taken: list[tuple[Host, QueuedUrl]] = []
        for url in urls:
            if len(url) > self._max_url_length:
                detail = f"a requisite of {needed_by}"
                self._requisite_skipped(Skip(url, URL_TOO_LONG, detail), needed_by)
                continue
            if not self._seen.add(url):
                continue
            host = self._hosts.get(origin_of(url))
            if host.retired is not None:
                # Over its page budget too: a retired host starts nothing more in this run.
                skip: Skip | None = Skip(url, host.retired_as, host.retired)
            else:
                skip = robots_skip(host.robots, url, self._token)
            if skip is not None:
                self._requisite_skipped(skip, needed_by)
                continue
            taken.append((host, QueuedUrl(url, requisite_of=needed_by)))
        for host, item in reversed(taken):  # each to its host's front: in document order there
            self._frontier.push_front(host.origin, item)
        for host, _ in taken:
            self._scheduler.reschedule(host, None)
        self.requisites_waiting += len(taken)
        return len(taken)

    def takes_as_page(self, url: str, depth: int) -> bool:
        """Whether a link to `url` found at `depth` would be queued as a page (were it new): in
        scope, within the limits."""
        if len(url) > self._max_url_length:
            return False
        return out_of_bounds(url, depth, scope=self.scope, limits=self._limits) is None

    def requisite_settled(self) -> None:
        """A requisite queued in this run is done with (fetched, failed or skipped)."""
        self.requisites_waiting = max(0, self.requisites_waiting - 1)

    def _requisite_skipped(self, skip: Skip, needed_by: str) -> None:
        stats = self._stats
        stats.requisites["skipped"] += 1
        stats.requisite_skips[skip.reason] += 1
        log.info(
            "requisite %s of %s not fetched: %s (%s)", skip.url, needed_by, skip.reason, skip.detail
        )

    # --- sitemaps --------------------------------------------------------------------------------

    def offer_sitemap(self, url: str, level: int, declared_by: str, named_in: str) -> None:
        """Queue a sitemap at `level`, named in `named_in`, unless a rule says no (a skip)."""
        if not self._met_first(url):
            return
        files = self.sitemap_files
        skip = sitemap_refusal(
            url,
            level,
            declared_by,
            named_in,
            scope=self.scope,
            config=self._sitemaps,
            files=files[declared_by],
        )
        if skip is not None:
            self._outlet.skip(skip)
            return
        files[declared_by] += 1
        self.queue(QueuedUrl(url, 0, sitemap=level, declared_by=declared_by))

    def refuse(self, url: str, detail: str) -> None:
        """A URL a sitemap may not list: a skip, held so that a page's link can still queue
        it."""
        if not self._met_first(url):
            return
        self._held.hold(url, ONLY_BY_LINK)
        self._outlet.skip(Skip(url, OUTSIDE_SITEMAP, detail))

    # --- redirects -------------------------------------------------------------------------------

    def redirect(
        self, item: QueuedUrl, status: int, location: str, started_at: float
    ) -> Stop | None:
        """A redirect from `item`, started at `started_at`, to `location`: its next hop queued
        like any URL (robots.txt, scope and politeness apply to it), else None once a record of
        the chain is handed (robots.txt disallowed the hop); or why the chain stops there, its
        target's skip handed. The caller marks `item` finished after this (and, for a stop,
        hands its record first)."""
        fate = redirect_hop(
            item,
            status,
            location,
            scope=self.scope,
            seen=self._seen,
            max_redirects=self._max_redirects,
            limits=self._limits,
            from_seed=item.first_url in self._seeds,
        )
        if not isinstance(fate, Hop):
            if fate.skip is not None:
                # Met here for the first time (redirect_hop stops at a URL seen before).
                self._seen.add(fate.skip.url)
                self._stats.met += 1
                if fate.skip.reason in TRAP_REASONS:
                    self._count_trap(item.url, fate.skip.reason)
                self._outlet.skip(fate.skip)
            return fate
        hop = fate.item
        if fate.seed_moved:
            self._run.add_seed_move(item.first_url, hop.url)
            self._rescope()
            self._coordination.scope_widened(hop.url)
            log.info("seed %s redirected to %s: its host joins the scope", item.first_url, hop.url)
        self._seen.add(hop.url)
        self._stats.met += 1
        origin = origin_of(hop.url)
        host = self._hosts.get(origin)
        if host.retired is not None and not host.over_budget:
            # Nothing of it is fetched any more: queued, the hop would wait for ever.
            self.skip(hop, Skip(hop.url, host.retired_as, host.retired), started_at)
            return None
        skip = robots_skip(host.robots, hop.url, self._token)
        if skip is not None:
            self.skip(hop, skip, started_at)
            return None
        self._frontier.push(origin, hop)
        self._scheduler.reschedule(host, None)
        return None

    def __repr__(self) -> str:
        return f"Admission({len(self._seeds)} seeds, {self.scope!r})"
