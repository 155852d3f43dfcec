"""Crawls as the tests run them: a fast, still polite configuration, and a whole crawl in one
call."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from crawler import Config, Crawler
from crawler.config import FetchConfig, PolitenessConfig, RobotsConfig
from crawler.output.records import PageRecord

__all__ = ["PUBLIC_LOOPBACK", "by_url", "make_config", "run"]

PUBLIC_LOOPBACK = {"allow_addresses": ("127.0.0.0/8",)}
"""fetch: for a test whose hosts other than the seeds' stand for public ones. By default a crawl
connects to no loopback (or other non-public) address but those its seeds name (crawler.http.
addresses): a redirect or link from one 127.0.1.x to another is refused."""


def make_config(**changes: Any) -> Config:
    """Fast, still polite: no minimum delay unless a test sets one, short backoffs. `changes`:
    a section's name and a dict of its keys to change, or a whole value."""
    config = Config(
        politeness=PolitenessConfig(min_delay=0.0, backoff_initial=0.05, backoff_max=0.2),
        robots=RobotsConfig(retry_initial=0.05, retry_max=0.2),
        fetch=FetchConfig(connect_timeout=2.0, read_timeout=2.0, max_retries=2),
    )
    for section, values in changes.items():
        if isinstance(values, dict):
            values = replace(getattr(config, section), **values)
        config = replace(config, **{section: values})
    return config


async def run(config: Config, seeds: list[str], **options: Any) -> tuple[list[PageRecord], Crawler]:
    """Crawl from `seeds` to the end: every record, and the crawler (its stats and reports)."""
    async with Crawler(config, **options) as crawler:
        records = [record async for record in crawler.crawl(seeds)]
    return records, crawler


def by_url(records: list[PageRecord]) -> dict[str, PageRecord]:
    return {record.url: record for record in records}
