"""The robots.txt engine: parse once, answer many questions. Pure: no I/O, no clock, never raises
for any bytes (SPEC sections 1 to 5)."""

from crawler.robots.outcome import MAX_REDIRECTS, FetchDecision, RobotsPolicy, robots_fetch_decision
from crawler.robots.txt import (
    MAX_BODY_BYTES,
    MAX_LINE_BYTES,
    Explanation,
    RobotsOptions,
    RobotsTxt,
    product_token_from_user_agent,
    validate_product_token,
)

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_LINE_BYTES",
    "MAX_REDIRECTS",
    "Explanation",
    "FetchDecision",
    "RobotsOptions",
    "RobotsPolicy",
    "RobotsTxt",
    "product_token_from_user_agent",
    "robots_fetch_decision",
    "validate_product_token",
]
