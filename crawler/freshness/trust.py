"""Whether a host's sitemap lastmod is trusted to spare a recrawl's request, earned per host as
Google's rule has it (lastmod is used where it is consistently right for that site). Pure: no
I/O, no clock.

The rules this module keeps:
- A host starts untrusted: what its lastmod claims unchanged is asked for all the same, with a
  conditional request (a 304 costs the server almost nothing), and every answer is evidence.
- `confirmations` right claims in a row make it trusted: its lastmod then spares the request,
  except for a sample (`sample_share` of the claims, drawn afresh each pass) asked for anyway.
- A claim proved wrong (the sitemap said unchanged, the page had changed) makes it distrusted at
  once, whatever it was; it is trusted again after as many right claims in a row as at first.
- A claim that a page changed proves nothing either way. A trusted host's claim that a page
  changed after our last fetch makes the page due at once, whatever its revisit interval.
Every state is a value with the reason it holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TypeAlias

__all__ = [
    "DISTRUSTED",
    "TRUSTED",
    "UNTRUSTED",
    "LastmodPolicy",
    "LastmodTrust",
    "TrustLevel",
    "TrustMode",
    "lastmod_brings_forward",
    "lastmod_evidence",
    "lastmod_spares",
    "trust_after",
]

TrustLevel: TypeAlias = Literal["untrusted", "trusted", "distrusted"]
TrustMode: TypeAlias = Literal["earned", "always", "never"]
UNTRUSTED: TrustLevel = "untrusted"
TRUSTED: TrustLevel = "trusted"
DISTRUSTED: TrustLevel = "distrusted"


@dataclass(frozen=True, slots=True)
class LastmodPolicy:
    """recrawl.lastmod_trust and its two numbers."""

    mode: TrustMode = "earned"
    """earned: per host, by the rules above. always: every lastmod spares (before issue 42).
    never: no lastmod spares a request."""
    confirmations: int = 5
    sample_share: float = 0.1


@dataclass(frozen=True, slots=True)
class LastmodTrust:
    """One host's standing."""

    level: TrustLevel = UNTRUSTED
    right: int = 0
    """Right claims in a row since the host started or was last proved wrong."""
    since: float | None = None
    """When the level began (epoch seconds); None for a host never judged."""
    reason: str = "its sitemap's lastmod has not been checked yet"

    def describe(self, policy: LastmodPolicy) -> str:
        """The level, why, and what would change it, for `crawl status`."""
        if policy.mode != "earned":
            return f"{policy.mode} trusted (recrawl.lastmod_trust {policy.mode})"
        needed = max(0, policy.confirmations - self.right)
        right = _times(self.right)
        if self.level == TRUSTED:
            return f"trusted: {self.reason}; right {right} in all"
        if self.level == DISTRUSTED:
            return f"distrusted: {self.reason}; right {right} since, {needed} more to be trusted"
        return f"untrusted: {self.reason}; right {right}, {needed} more to be trusted"


def lastmod_evidence(
    lastmod: float | None, fetched_before: float, changed: bool | None
) -> bool | None:
    """What a revisit's answer (`changed`; None when it compares nothing: new, failed, gone)
    says of a sitemap's claim that the page was last modified at `lastmod`, when it was fetched
    before at `fetched_before`: True when the claim was that it had not changed and it had not,
    False when it had, None when there was no such claim or nothing to compare."""
    if lastmod is None or lastmod > fetched_before or changed is None:
        return None
    return not changed


def trust_after(
    trust: LastmodTrust, right: bool, url: str, now: float, policy: LastmodPolicy
) -> LastmodTrust:
    """`trust` once the claim about `url` proved `right` (or wrong) at `now`."""
    if not right:
        return LastmodTrust(
            DISTRUSTED,
            0,
            now,
            f"{url} had changed though the sitemap's lastmod said not (at {_utc(now)})",
        )
    count = trust.right + 1
    if trust.level == TRUSTED:
        return LastmodTrust(TRUSTED, count, trust.since, trust.reason)
    if count >= policy.confirmations:
        again = " again" if trust.level == DISTRUSTED else ""
        return LastmodTrust(
            TRUSTED,
            count,
            now,
            f"its lastmod proved right{again} {count} times in a row (at {_utc(now)})",
        )
    if trust.level == DISTRUSTED:
        return LastmodTrust(DISTRUSTED, count, trust.since, trust.reason)
    return LastmodTrust(UNTRUSTED, count, trust.since or now, "its lastmod is being checked")


def lastmod_spares(trust: LastmodTrust, policy: LastmodPolicy, draw: float) -> bool:
    """Whether a claim of this host's lastmod that a page is unchanged spares its request:
    `draw` in [0, 1), drawn per page and pass, picks the sample a trusted host is checked on."""
    if policy.mode == "always":
        return True
    if policy.mode == "never":
        return False
    return trust.level == TRUSTED and draw >= policy.sample_share


def lastmod_brings_forward(trust: LastmodTrust, policy: LastmodPolicy) -> bool:
    """Whether this host's lastmod, saying a page changed after our last fetch, makes it due
    now rather than at the end of its revisit interval."""
    if policy.mode == "earned":
        return trust.level == TRUSTED
    return policy.mode == "always"


def _times(count: int) -> str:
    return {0: "no time", 1: "once", 2: "twice"}.get(count, f"{count} times")


def _utc(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")
