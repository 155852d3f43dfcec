"""Freshness that is earned: how often a page is asked for again, and whether a host's sitemap
lastmod may spare the request. Pure: no I/O, no clock (time comes in as `now`).

    rates.py    a page's change rate from what its revisits found; the revisit intervals that
                keep a host's pages freshest for its budget of requests
    trust.py    a host's lastmod trust: earned, sampled, lost and earned again
"""

from crawler.freshness.rates import (
    CHANGEFREQ_SECONDS,
    DAY,
    PRIOR_VISITS,
    ChangeHistory,
    HostSchedule,
    RevisitBounds,
    estimate_rate,
    expected_freshness,
    host_schedule,
    prior_rate,
    revisit_interval,
    weight_of,
)
from crawler.freshness.trust import (
    DISTRUSTED,
    TRUSTED,
    UNTRUSTED,
    LastmodPolicy,
    LastmodTrust,
    TrustLevel,
    TrustMode,
    lastmod_brings_forward,
    lastmod_evidence,
    lastmod_spares,
    trust_after,
)

__all__ = [
    "CHANGEFREQ_SECONDS",
    "DAY",
    "DISTRUSTED",
    "PRIOR_VISITS",
    "TRUSTED",
    "UNTRUSTED",
    "ChangeHistory",
    "HostSchedule",
    "LastmodPolicy",
    "LastmodTrust",
    "RevisitBounds",
    "TrustLevel",
    "TrustMode",
    "estimate_rate",
    "expected_freshness",
    "host_schedule",
    "lastmod_brings_forward",
    "lastmod_evidence",
    "lastmod_spares",
    "prior_rate",
    "revisit_interval",
    "trust_after",
    "weight_of",
]
