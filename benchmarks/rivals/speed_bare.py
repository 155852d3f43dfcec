#!/usr/bin/env python3
"""The bare loop of benchmarks/bench_speed.py: the least a crawler in Python can do per page.

    python benchmarks/rivals/speed_bare.py SEEDS [--workers 64] [--loop auto|uvloop|asyncio]

One process: an aiohttp ClientSession with a connection pool as large as the workers, a queue of
URLs, N worker tasks. Each takes a URL, fetches it, parses it with `LexborHTMLParser(body)`, takes
every `a[href]` through `urljoin` (fragment dropped), takes the body's text with
`text(separator=" ")`, and queues each link to the same host (scheme, host and port) it has not
seen. No robots.txt, no politeness, no output, no normalisation beyond urljoin. It ends when the
queue is empty and no worker is busy, and prints one JSON line: pages, links, text characters,
errors, the loop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
from selectolax.lexbor import LexborHTMLParser

USER_AGENT = "BareLoop/1.0"


async def crawl(seeds: Sequence[str], workers: int) -> dict[str, Any]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    seen = set(seeds)
    for url in seeds:
        queue.put_nowait(url)
    figures = {"pages": 0, "not_ok": 0, "links": 0, "text_chars": 0, "errors": 0}
    connector = aiohttp.TCPConnector(limit=workers, limit_per_host=0)
    headers = {"User-Agent": USER_AGENT}

    async def worker(session: aiohttp.ClientSession) -> None:
        while True:
            url = await queue.get()
            try:
                async with session.get(url) as response:
                    body = await response.read()
                    status = response.status
                if status != 200:
                    figures["not_ok"] += 1
                    continue
                figures["pages"] += 1
                tree = LexborHTMLParser(body)
                links = [urljoin(url, a.attributes.get("href") or "") for a in tree.css("a[href]")]
                text = tree.body.text(separator=" ") if tree.body is not None else ""
                figures["links"] += len(links)
                figures["text_chars"] += len(text)
                netloc = urlsplit(url).netloc
                for link in links:
                    new = link.split("#", 1)[0]
                    if new not in seen and urlsplit(new).netloc == netloc:
                        seen.add(new)
                        queue.put_nowait(new)
            except (TimeoutError, aiohttp.ClientError, ValueError):
                figures["errors"] += 1
            finally:
                queue.task_done()

    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
        tasks = [asyncio.create_task(worker(session)) for _ in range(workers)]
        await queue.join()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return figures


def run(seeds: Sequence[str], workers: int, loop: str) -> dict[str, Any]:
    if loop in ("auto", "uvloop"):
        try:
            import uvloop
        except ImportError:
            if loop == "uvloop":
                raise
        else:
            started = time.monotonic()
            figures = uvloop.run(crawl(seeds, workers))
            return {**figures, "loop": "uvloop", "seconds": time.monotonic() - started}
    started = time.monotonic()
    figures = asyncio.run(crawl(seeds, workers))
    return {**figures, "loop": "asyncio", "seconds": time.monotonic() - started}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("seeds", type=Path, help="one URL per line")
    parser.add_argument("--workers", type=int, default=64, help="worker tasks and connections")
    parser.add_argument("--loop", choices=("auto", "uvloop", "asyncio"), default="auto")
    args = parser.parse_args(argv)
    seeds = [line.strip() for line in args.seeds.read_text().splitlines() if line.strip()]
    print(json.dumps(run(seeds, args.workers, args.loop)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
