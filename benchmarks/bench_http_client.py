#!/usr/bin/env python3
"""What a GET costs the event loop's thread: the crawl's http1 client against aiohttp's.

    python benchmarks/bench_http_client.py [--hosts 50] [--requests 20000] [--concurrency 200]
        [--rounds 3]

It generates a test web (benchmarks/support/testweb.py: pages of about 12 KB) in a temporary
directory, serves it in a subprocess, and in this process runs `crawler.http.fetcher.Fetcher` with
each client in turn (alternating, `--rounds` times each, so both meet the same machine noise):
`--concurrency` tasks GET the web's pages (each task keeps to one host), keep-alive, until
`--requests` answers. Per round it reads this process's CPU time (the server's is not counted) and
the wall time.

Figures: CPU µs per request (what the crawl's loop pays per GET, the figure that sets how late a
thousand due hosts are started, crawler/crawl/turns.py), requests/s, and the ratio aiohttp / http1
of the medians. Every answer must be a 200 with a body; the script says so if not.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support.machine import machine
from support.processes import start_server, stop_server
from support.testweb import generate

from crawler.config import FetchConfig
from crawler.http.answer import Response
from crawler.http.fetcher import Fetcher
from crawler.runtime import run

CLIENTS = ("http1", "aiohttp")
PORT = 8797


async def one_round(
    client: str, hosts: Sequence[list[str]], requests: int, concurrency: int
) -> dict[str, Any]:
    fetcher = Fetcher(FetchConfig(client=client), "BenchClient/1.0", connections=concurrency + 8)
    failures = 0
    taken = 0

    async def worker(pages: list[str]) -> None:
        # Each worker keeps to one host, as the crawl's one request in flight per host does:
        # the figure is a keep-alive GET's, not a pool's churn.
        nonlocal failures, taken
        turn = 0
        while taken < requests:
            taken += 1
            answer = await fetcher.get(pages[turn % len(pages)], html_only=True)
            turn += 1
            if not isinstance(answer, Response) or answer.status != 200 or not answer.body:
                failures += 1

    workers = [hosts[k % len(hosts)] for k in range(concurrency)]
    async with fetcher:
        # Connections opened before the clock starts: the figure is the keep-alive GET the
        # crawl makes thousands of times, not the first connect.
        await asyncio.gather(*(fetcher.get(pages[0]) for pages in workers))
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker(pages) for pages in workers))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "client": client,
        "cpu_us": 1e6 * cpu / taken,
        "per_second": taken / wall,
        "failures": failures,
    }


def host_pages(web: dict[str, Any]) -> list[list[str]]:
    return [[host["origin"] + path for path in host["allowed"]] for host in web["hosts"]]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    info = machine("aiohttp", "httptools", "uvloop")
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-http-") as temp:
        work = Path(temp)
        web = generate(
            work / "web", hosts=args.hosts, pages_per_host=8, crawl_delay=None, port=PORT
        )
        server = start_server(work / "web", work / "requests.jsonl", work / "server.err")
        try:
            for _ in range(args.rounds):
                for client in CLIENTS:
                    pages = host_pages(web)
                    results.append(run(one_round(client, pages, args.requests, args.concurrency)))
        finally:
            stop_server(server)
    print(
        f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
        f"aiohttp {info['aiohttp']}, httptools {info['httptools']}, uvloop {info['uvloop']}"
    )
    print(
        f"{args.requests} keep-alive GETs of ~12 KB pages per round, {args.concurrency} at once, "
        f"{args.hosts} hosts on loopback; CPU of this process only (the server runs apart)"
    )
    print(f"{'client':<10}{'round':>7}{'CPU us/GET':>13}{'GETs/s':>10}{'failures':>10}")
    medians: dict[str, float] = {}
    for client in CLIENTS:
        mine = [r for r in results if r["client"] == client]
        for number, result in enumerate(mine, 1):
            print(
                f"{client:<10}{number:>7}{result['cpu_us']:>13.0f}"
                f"{result['per_second']:>10.0f}{result['failures']:>10}"
            )
        medians[client] = statistics.median(r["cpu_us"] for r in mine)
    ratio = medians["aiohttp"] / medians["http1"]
    print(
        f"median CPU per GET: http1 {medians['http1']:.0f} us, "
        f"aiohttp {medians['aiohttp']:.0f} us; "
        f"aiohttp / http1 {ratio:.2f}x"
    )
    if any(r["failures"] for r in results):
        print("some GETs failed: the figures above are not comparable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
