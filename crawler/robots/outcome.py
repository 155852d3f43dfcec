"""What a robots.txt fetch outcome means (RFC 9309 section 2.3.1, SPEC section 1): parse the body,
allow everything, disallow everything for now (and ask again later), or follow the redirect. Pure.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

__all__ = ["MAX_REDIRECTS", "FetchDecision", "RobotsPolicy", "robots_fetch_decision"]

MAX_REDIRECTS: Final = 5


class RobotsPolicy(enum.Enum):
    PARSE = "parse"
    ALLOW_ALL = "allow-all"
    DISALLOW_ALL = "disallow-all"
    FOLLOW = "follow-redirect"


@dataclass(frozen=True, slots=True)
class FetchDecision:
    policy: RobotsPolicy
    reason: str
    retry: bool = False
    """True when the origin is unreachable: fetch robots.txt again later, with backoff."""


def robots_fetch_decision(
    status: int | None,
    *,
    redirects: int = 0,
    error: str | None = None,
    has_location: bool = True,
    auth_disallows: bool = False,
) -> FetchDecision:
    """Map one robots.txt response (or network `error`) to what the crawler does next (RFC 9309
    section 2.3.1). `redirects` counts the hops already followed to get this response."""
    if error is not None or status is None:
        return FetchDecision(
            RobotsPolicy.DISALLOW_ALL, f"unreachable: {error or 'no response'}", retry=True
        )
    if 200 <= status < 300:
        return FetchDecision(RobotsPolicy.PARSE, f"status {status}")
    if 300 <= status < 400:
        if not has_location:
            return FetchDecision(
                RobotsPolicy.ALLOW_ALL, f"status {status} without Location: unavailable"
            )
        if redirects >= MAX_REDIRECTS:
            return FetchDecision(
                RobotsPolicy.ALLOW_ALL, f"more than {MAX_REDIRECTS} redirects: unavailable"
            )
        return FetchDecision(RobotsPolicy.FOLLOW, f"status {status}: redirect {redirects + 1}")
    if status == 429:
        return FetchDecision(RobotsPolicy.DISALLOW_ALL, "status 429: unreachable", retry=True)
    if status == 407:
        # The proxy's answer (fetch.proxy), not the site's: the file is not reached.
        return FetchDecision(
            RobotsPolicy.DISALLOW_ALL,
            "status 407: the proxy asks for credentials (fetch.proxy_username): unreachable",
            retry=True,
        )
    if status in (401, 403) and auth_disallows:
        return FetchDecision(
            RobotsPolicy.DISALLOW_ALL, f"status {status}: access denied, read as disallow-all"
        )
    if 400 <= status < 500:
        return FetchDecision(RobotsPolicy.ALLOW_ALL, f"status {status}: unavailable")
    return FetchDecision(RobotsPolicy.DISALLOW_ALL, f"status {status}: unreachable", retry=True)
