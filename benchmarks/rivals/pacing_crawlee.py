#!/usr/bin/env python3
"""Crawlee for Python set up for the pacing servers of benchmarks/bench_pacing.py.

    /work/crawlee-venv/bin/python benchmarks/rivals/pacing_crawlee.py SEEDS [--throttling]
        [--storage DIR]

Crawlee (1.11, its own venv: its dependencies are not the crawler's) with its ParselCrawler, no
browser: robots.txt obeyed (respect_robots_txt_file), every link to the page's own host followed
(enqueue_links, strategy same-hostname, so within the seeds' hosts), its defaults otherwise:
an autoscaled pool of 10 to 100 tasks, no per-host delay and no per-host limit on requests in
flight (Crawlee has no setting like DOWNLOAD_DELAY or per-host concurrency), three retries of a
failed request (a 5xx, a timeout), ten session rotations on 401, 403 and 429.

--throttling wraps the request queue in its ThrottlingRequestManager, the seeds' hosts as its
domains: a 429 from one of them holds the host back (2 s doubling up to 60 s, or the Retry-After)
and the request is asked again later without counting a retry; robots.txt's Crawl-delay would be
kept too (the pacing servers give none). It handles 429 only: a 503 is a failure retried like any
other. The storages live in --storage (CRAWLEE_STORAGE_DIR), a temporary directory by default,
removed at the end. At the end the script prints one JSON line: pages handled and Crawlee's final
statistics.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


async def crawl(seeds: Sequence[str], throttling: bool) -> dict[str, Any]:
    # Imported here: CRAWLEE_STORAGE_DIR must be set before Crawlee reads its configuration.
    from crawlee.crawlers import ParselCrawler, ParselCrawlingContext
    from crawlee.errors import PersistentRateLimitError
    from crawlee.request_loaders import ThrottlingRequestManager
    from crawlee.storages import RequestQueue

    hosts = sorted({urlsplit(url).hostname or "" for url in seeds} - {""})
    manager = None
    if throttling:
        manager = ThrottlingRequestManager(
            await RequestQueue.open(), domains=hosts, request_manager_opener=RequestQueue.open
        )
    crawler = ParselCrawler(
        request_manager=manager, respect_robots_txt_file=True, configure_logging=False
    )
    figures: dict[str, Any] = {"pages": 0, "throttling": throttling}

    @crawler.router.default_handler
    async def page(context: ParselCrawlingContext) -> None:
        figures["pages"] += 1
        await context.enqueue_links(strategy="same-hostname")

    try:
        final = await crawler.run(list(seeds))
    except PersistentRateLimitError as error:
        figures["gave_up"] = str(error)
        return figures
    figures |= final.to_dict()
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("seeds", type=Path, help="one URL per line")
    parser.add_argument("--throttling", action="store_true", help="ThrottlingRequestManager")
    parser.add_argument("--storage", type=Path, help="CRAWLEE_STORAGE_DIR (default: temporary)")
    args = parser.parse_args(argv)
    seeds = [line.strip() for line in args.seeds.read_text().splitlines() if line.strip()]
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    storage = args.storage or Path(tempfile.mkdtemp(prefix="crawlee-storage-"))
    os.environ["CRAWLEE_STORAGE_DIR"] = str(storage)
    try:
        figures = asyncio.run(crawl(seeds, args.throttling))
    finally:
        if args.storage is None:
            shutil.rmtree(storage, ignore_errors=True)
    print(json.dumps(figures, default=str), flush=True)
    return 0 if "gave_up" not in figures else 1


if __name__ == "__main__":
    sys.exit(main())
