"""`FreshnessLedger`: what each revisit teaches (crawler.freshness): a page's change history for
its revisit interval, and, where a sitemap's lastmod had claimed the page unchanged, evidence for
or against its host's lastmod trust. Kept in the crawl state (crawler.state.freshness); the
decisions are crawler.freshness's, this is their shell."""

from __future__ import annotations

import hashlib
import logging

from crawler.config import RecrawlConfig
from crawler.freshness import (
    DISTRUSTED,
    TRUSTED,
    LastmodPolicy,
    lastmod_brings_forward,
    lastmod_evidence,
    lastmod_spares,
    trust_after,
)
from crawler.frontier import Earlier, QueuedUrl
from crawler.output.records import Change
from crawler.state.freshness import FreshnessStore
from crawler.stats import CrawlStats
from crawler.urls import origin_of

__all__ = ["FreshnessLedger", "lastmod_policy"]

log = logging.getLogger(__name__)


def lastmod_policy(config: RecrawlConfig) -> LastmodPolicy:
    return LastmodPolicy(config.lastmod_trust, config.lastmod_confirmations, config.lastmod_sample)


class FreshnessLedger:
    """Revisits recorded, lastmod claims judged."""

    __slots__ = ("_claims", "_forward", "_policy", "_stats", "_store", "pass_began")

    def __init__(self, config: RecrawlConfig, store: FreshnessStore, stats: CrawlStats) -> None:
        self._policy = lastmod_policy(config)
        self._store = store
        self._stats = stats
        self._claims: dict[str, float] = {}
        """URLs asked for though a sitemap's lastmod claimed them unchanged: the lastmod."""
        self._forward: set[str] = set()
        """URLs asked for before their interval ended, a trusted lastmod saying they changed:
        their answer says nothing of how often they change (they were asked for because they
        had), and is kept out of their history."""
        self.pass_began = 0.0
        """When the recrawl pass began: the sample of a trusted host's claims is drawn afresh
        each pass."""

    def spares(self, item: QueuedUrl, lastmod: float) -> bool:
        """A sitemap read again in this pass dates `item` (fetched before) at `lastmod`, no later
        than its last fetch: whether that spares its request. When not, the answer will be
        judged against the claim."""
        origin = origin_of(item.url)
        draw = _draw(item.url, self.pass_began)
        if lastmod_spares(self._store.trust(origin), self._policy, draw):
            return True
        self._claims[item.first_url] = lastmod
        return False

    def brings_forward(self, origin: str) -> bool:
        """Whether `origin`'s sitemap lastmod, dating a page after its last fetch, makes it due
        now."""
        return lastmod_brings_forward(self._store.trust(origin), self._policy)

    def brought_forward(self, url: str) -> None:
        """`url` was queued before its interval ended: a trusted lastmod said it changed."""
        self._forward.add(url)

    def fetched(self, item: QueuedUrl, change: Change, fetched_at: float) -> None:
        """`item`'s fetch at `fetched_at` found `change` against its last one."""
        earlier = item.earlier
        if earlier is None:
            return
        changed = {"changed": True, "unchanged": False}.get(change)
        url = item.first_url
        if changed is not None and url not in self._forward:
            self._store.revisited(url, fetched_at - earlier.fetched_at, changed)
        self._forward.discard(url)
        lastmod = self._claims.pop(url, None)
        if lastmod is not None and self._policy.mode == "earned":
            self._judge(url, lastmod, earlier, changed, fetched_at)

    def _judge(
        self, url: str, lastmod: float, earlier: Earlier, changed: bool | None, now: float
    ) -> None:
        right = lastmod_evidence(lastmod, earlier.fetched_at, changed)
        if right is None:
            return
        origin = origin_of(url)
        before = self._store.trust(origin)
        after = trust_after(before, right, url, now, self._policy)
        self._store.set_trust(origin, after)
        if not right:
            self._stats.lastmod_wrong[origin] += 1
        if after.level == before.level:
            return
        if after.level == DISTRUSTED:
            log.warning(
                "%s: the sitemap's lastmod proved wrong (%s); it spares no request until it "
                "proves right again",
                origin,
                after.reason,
            )
        elif after.level == TRUSTED:
            log.info("%s: the sitemap's lastmod is trusted: %s", origin, after.reason)

    def __repr__(self) -> str:
        return f"FreshnessLedger({self._policy.mode}, {len(self._claims)} claims to judge)"


def _draw(url: str, pass_began: float) -> float:
    """A number in [0, 1) for `url` in the pass begun at `pass_began`: the same within a pass (a
    resumed pass samples the same pages), another in the next."""
    digest = hashlib.blake2b(f"{pass_began!r} {url}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64
