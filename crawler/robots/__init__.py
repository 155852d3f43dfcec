"""The robots.txt engine: parse once, answer many questions. Pure: no I/O, no clock, and it never
raises for any bytes (SPEC sections 1 to 5).

    txt.py      RobotsTxt: the public face
    agent.py    our product token: read from a User-Agent, valid, no browser's
    lines.py    lines into groups, as Google's parser reads them
    rules.py    RobotsOptions; which rule decides for an agent
    rates.py    Crawl-delay, Request-rate and Visit-time values
    outcome.py  what a robots.txt fetch's outcome means (RFC 9309 section 2.3.1)
    entry.py    an origin's rules with their fetch times, and the stores that keep them
"""

from crawler.robots.agent import (
    AgentToken,
    agent_token_of,
    product_token_from_user_agent,
    validate_product_token,
)
from crawler.robots.entry import MemoryRobotsStore, RobotsEntry, RobotsStore
from crawler.robots.lines import MAX_BODY_BYTES, MAX_LINE_BYTES
from crawler.robots.outcome import (
    MAX_REDIRECTS,
    FetchDecision,
    RobotsPolicy,
    robots_fetch_decision,
)
from crawler.robots.rates import RequestRate, TimeWindow
from crawler.robots.rules import RobotsOptions
from crawler.robots.txt import Explanation, RobotsTxt

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_LINE_BYTES",
    "MAX_REDIRECTS",
    "AgentToken",
    "Explanation",
    "FetchDecision",
    "MemoryRobotsStore",
    "RequestRate",
    "RobotsEntry",
    "RobotsOptions",
    "RobotsPolicy",
    "RobotsStore",
    "RobotsTxt",
    "TimeWindow",
    "agent_token_of",
    "product_token_from_user_agent",
    "robots_fetch_decision",
    "validate_product_token",
]
