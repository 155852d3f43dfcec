"""`crawl status --state URL`: what a shared crawl is doing, read from its server. Reads only:
it joins nothing, and takes one second (two readings, for the pages per second)."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict

from crawler.cli.exits import EXIT_OK
from crawler.cli.text import fit_for
from crawler.config import Config
from crawler.errors import SharedStateError
from crawler.runtime import run
from crawler.state.shared.library import ClusterStatus, SharedCrawl
from crawler.state.shared.resp import ReplyError, RespConnection

__all__ = ["SAMPLE_SECONDS", "cluster_status_command", "cluster_text"]

SAMPLE_SECONDS = 1.0


async def read_cluster(config: Config) -> tuple[ClusterStatus, ClusterStatus]:
    """Two readings of the crawl's status, SAMPLE_SECONDS apart."""
    connection = await RespConnection.open(config.state.url)
    try:
        crawl = SharedCrawl(connection, config.state.key_prefix, "status")
        try:
            first = await crawl.status()
        except SharedStateError as error:
            if "not found" in str(error).lower():
                raise SharedStateError(
                    f"no shared crawl on {connection.address}: the crawl's functions are not "
                    "loaded (no worker has joined it yet)"
                ) from None
            raise
        try:
            started = await connection.execute("HGET", f"{config.state.key_prefix}run", "format")
        except ReplyError as error:
            raise SharedStateError(f"state server {connection.address}: {error}") from None
        if started is None:
            raise SharedStateError(
                f"no crawl with the key prefix {config.state.key_prefix!r} on "
                f"{connection.address} (state.key_prefix names it)"
            )
        await asyncio.sleep(SAMPLE_SECONDS)
        return first, await crawl.status()
    finally:
        connection.close()


def cluster_text(url: str, prefix: str, first: ClusterStatus, last: ClusterStatus) -> str:
    elapsed = max(1e-6, (last.now_us - first.now_us) / 1e6)
    rate = (last.pages_started - first.pages_started) / elapsed
    if last.next_due_us is None:
        next_start = "no host scheduled"
    else:
        wait = (last.next_due_us - last.now_us) / 1e6
        next_start = "a host is due now" if wait <= 0 else f"next start in {wait:.1f} s"
    dead = last.workers - last.live_workers
    return "\n".join(
        [
            f"shared crawl at {url} (keys {prefix}*)",
            f"  URLs: {last.pending:,} queued, {last.leased:,} leased to workers",
            f"  hosts: {last.scheduled:,} scheduled, {last.due:,} due now, {last.held:,} held "
            f"by workers; {next_start}",
            f"  workers: {last.live_workers} alive"
            + (f", {dead} gone quiet (their work goes back once reaped)" if dead else ""),
            f"  pages started: {last.pages_started:,}, {rate:,.1f}/s over the last second",
        ]
    )


def cluster_status_command(config: Config, *, as_json: bool) -> int:
    first, last = run(read_cluster(config))
    if as_json:
        elapsed = max(1e-6, (last.now_us - first.now_us) / 1e6)
        document = {
            **asdict(last),
            "pages_per_s": (last.pages_started - first.pages_started) / elapsed,
        }
        print(json.dumps(document, indent=2))
        return EXIT_OK
    text = cluster_text(str(config.state.url), config.state.key_prefix, first, last)
    print(fit_for(sys.stdout, text))
    return EXIT_OK
