"""Sitemaps: which of those a robots.txt names are taken (sitemaps.max_files), whether one met is
refused (its host out of scope, too deep, one file too many), and the record a sitemap read
leaves."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from crawler.config import SitemapsConfig
from crawler.crawl.scope import Scope
from crawler.output.records import PageRecord, Skip
from crawler.page.sitemap import SitemapRead
from crawler.robots.entry import RobotsEntry
from crawler.stats import SkipReason
from crawler.urls import InvalidUrlError, resolve_url

__all__ = [
    "OUTSIDE_SITEMAP",
    "OVER_SITEMAP_DEPTH",
    "OVER_SITEMAP_FILES",
    "SitemapsNamed",
    "sitemap_record",
    "sitemap_refusal",
    "sitemaps_named",
]

OUTSIDE_SITEMAP: SkipReason = "outside the sitemap's location"
OVER_SITEMAP_DEPTH: SkipReason = "over sitemaps.max_depth"
OVER_SITEMAP_FILES: SkipReason = "over sitemaps.max_files"

KINDS = {"index": "a sitemap index", "urlset": "a sitemap", "text": "a text sitemap"}


@dataclass(frozen=True, slots=True)
class SitemapsNamed:
    """The sitemaps an origin's robots.txt leads to, each a request to its own host."""

    robots_url: str
    urls: tuple[str, ...]
    """Those taken, resolved against the robots.txt's URL, in the order named."""
    unusable: tuple[tuple[str, str], ...] = ()
    """(a Sitemap line's value, why it is no URL), of those taken."""
    named: int = 0
    """How many the robots.txt named (or the one tried by default)."""
    room: int | None = None
    """How many sitemaps.max_files left room for, when fewer than were named (the rest are
    not read); None when all were taken."""


def sitemaps_named(
    entry: RobotsEntry, origin: str, config: SitemapsConfig, queued: int
) -> SitemapsNamed | None:
    """The sitemaps `origin`'s robots.txt `entry` names (or /sitemap.xml, if asked to try it when
    none is named), as many as sitemaps.max_files leaves room for after the `queued` files the
    origin has led to in this run; None when sitemaps are not read, or there are no rules."""
    if not config.enabled or entry.blocks:
        return None
    robots_url = origin + "/robots.txt"
    named = entry.robots.sitemaps
    if not named and config.try_default:
        named = ("/sitemap.xml",)
    room = max(0, config.max_files - queued)
    # 100,000 Sitemap lines would be as many offers on the loop, and as many skips.
    taken = named[:room]
    urls: list[str] = []
    unusable: list[tuple[str, str]] = []
    for value in taken:
        try:
            urls.append(resolve_url(robots_url, value))
        except InvalidUrlError as error:
            unusable.append((value, str(error)))
    return SitemapsNamed(
        robots_url, tuple(urls), tuple(unusable), len(named), room if len(named) > room else None
    )


def sitemap_refusal(
    url: str,
    level: int,
    declared_by: str,
    named_in: str,
    *,
    scope: Scope,
    config: SitemapsConfig,
    files: int,
) -> Skip | None:
    """Why a sitemap at `level`, named in `named_in`, is not queued (its host is out of scope,
    it is too deep, or `declared_by` has led to sitemaps.max_files `files` already), or None."""
    reason = scope.reason_out_of_hosts(url)
    if reason is not None:
        return Skip(url, reason, f"a sitemap named in {named_in}: {scope.explain(url, reason)}")
    if level > config.max_depth:
        detail = f"a sitemap at level {level}, named in {named_in}; sitemaps.max_depth is "
        return Skip(url, OVER_SITEMAP_DEPTH, f"{detail}{config.max_depth}")
    if files >= config.max_files:
        detail = (
            f"a sitemap named in {named_in}: {declared_by} has led to "
            f"sitemaps.max_files ({config.max_files}) sitemaps in this run"
        )
        return Skip(url, OVER_SITEMAP_FILES, detail)
    return None


def sitemap_record(
    record: PageRecord, sitemap: SitemapRead, *, truncated: bool, max_bytes: int
) -> PageRecord:
    """The record of a sitemap read into `sitemap`: what it was and held, what it lists as its
    links, and why it was cut short or could not be read (`truncated`: the download stopped at
    sitemaps.max_bytes)."""
    cut, error = sitemap.cut, sitemap.error
    if truncated:
        # Cut by the download's cap: whatever broke at the cut is the cut.
        cut = cut or f"more than sitemaps.max_bytes ({max_bytes} bytes)"
        error = None
    described = KINDS[sitemap.kind] if sitemap.kind is not None else "no sitemap"
    unusable = f", {len(sitemap.skipped)} unusable" if sitemap.skipped else ""
    refused = f", {len(sitemap.refused)} refused" if sitemap.refused else ""
    return dataclasses.replace(
        record,
        index_reason=f"{described}: {len(sitemap.entries)} entries{refused}{unusable}",
        follow=sitemap.kind is not None,
        follow_reason=None if sitemap.kind is not None else error,
        links=tuple(entry.url for entry in sitemap.entries),
        cut=cut,
        error=error,
    )
