#!/usr/bin/env python3
"""The loopback sites of benchmarks/bench_pacing.py: one scenario a process, judged by its own log.

    python benchmarks/support/pacing_web.py --scenario NAME --report PATH [--lifetime 600]

Each host is its own loopback address (127.0.1.1, 127.0.1.2, ...), all on one free port. The
first line on stdout is JSON: {"port", "seeds", "hosts"}; the seeds are each host's `/`. Every
request is logged (host, path, status, and its start and end as the server's time.monotonic():
the start at the top of the handler, the end when the handler returns). On SIGTERM or SIGINT, or
after --lifetime seconds (so that the server stops by itself if its benchmark died), the report
(the figures below, as JSON) goes to --report and the process exits 0.

Scenarios (the slow and rate-limited sites are tests/support/sites.py's, loaded by its path, so
that the tests and the benchmark judge by the same servers):

    slow                 one OneWorkerSite: 40 pages, 0.2 s each, 1.0 s while the worker was
                         busy more than half of the last 5 s
    limiter              one RateLimitedSite: 31 pages, one request accepted per 2 s, 429 sooner
    limiter-retry-after  the same, each 429 with a Retry-After
    unavailable          the same as limiter, refusing with 503
    fast                 one plain site of 60 pages, each linking to a few others
    drip                 5 control hosts of 20 fast pages each, and 70 dripping hosts whose `/`
                         sends its headers at once, then one body byte a second until the client
                         goes (their seeds first: a crawler that takes seeds in order meets them
                         first); every robots.txt fast and allowing everything
    drip-control         the 5 control hosts alone, the same addresses

The report: requests, their statuses, and per role of host (slow, limiter, fast, control, drip):
requests, pages fetched (distinct host and path answered 200, robots.txt aside) of those expected,
the median and least gap between two request starts to one host (robots.txt included), and span
(the first request's start to the last one's end); the slow site's worker_share, slowed_seconds and
requests_slowed, the rate-limited site's refused_share, refused, accepted and pace_share; how long
the dripping hosts held their clients.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import itertools
import json
import signal
import socket
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from aiohttp import web

REPO = Path(__file__).resolve().parents[2]
SITES_PATH = REPO / "tests" / "support" / "sites.py"
SCENARIOS = (
    "slow",
    "limiter",
    "limiter-retry-after",
    "unavailable",
    "fast",
    "drip",
    "drip-control",
)
FAST_PAGES = 60
CONTROL_HOSTS, CONTROL_PAGES = 5, 20
DRIP_HOSTS = 70
DRIP_INTERVAL_S = 1.0
ROBOTS_ALLOW_ALL = "User-agent: *\nAllow: /\n"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def load_sites() -> ModuleType:
    """tests/support/sites.py by its path (the benchmarks' own `support` package shadows the
    tests' one), registered before it runs, as its dataclasses need."""
    spec = importlib.util.spec_from_file_location("pacing_sites", SITES_PATH)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {SITES_PATH}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Entry:
    host: str
    path: str
    start: float
    end: float | None = None
    status: int | None = None


@dataclass
class Host:
    address: str
    role: str
    handler: Handler
    pages: int  # pages expected fetched (0 for a dripping host)


# ---------------------------------------------------------------------------------------------
# The plain sites


def fast_paths(pages: int) -> list[str]:
    return ["/", *(f"/p{n}" for n in range(1, pages))]


def fast_links(path: str, pages: int) -> list[str]:
    """`/` links to the first three pages; page n to n + 1 (so every page is reachable), to two
    pages further off, and back to `/`."""
    if path == "/":
        return [f"/p{n}" for n in range(1, min(4, pages))]
    n = int(path[2:])
    targets = {(n + 1) % pages, (2 * n) % pages, (n + 17) % pages} - {n}
    return [f"/p{target}" if target else "/" for target in sorted(targets)] + ["/"]


def fast_handler(pages: int) -> Handler:
    paths = set(fast_paths(pages))

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(text=ROBOTS_ALLOW_ALL, content_type="text/plain")
        if request.path not in paths:
            return web.Response(status=404, text="not found")
        links = " ".join(f'<a href="{link}">{link}</a>' for link in fast_links(request.path, pages))
        html = f"<html><head><title>{request.path}</title></head><body><p>{links}</p></body></html>"
        return web.Response(text=html, content_type="text/html")

    return handle


async def drip(request: web.Request) -> web.StreamResponse:
    """robots.txt at once; `/` its headers at once, then a byte a second until the client goes."""
    if request.path == "/robots.txt":
        return web.Response(text=ROBOTS_ALLOW_ALL, content_type="text/plain")
    if request.path != "/":
        return web.Response(status=404, text="not found")
    response = web.StreamResponse(headers={"Content-Type": "text/html"})
    await response.prepare(request)
    with contextlib.suppress(ConnectionError, RuntimeError):
        while request.transport is not None and not request.transport.is_closing():
            await response.write(b" ")
            await asyncio.sleep(DRIP_INTERVAL_S)
    return response


def as_coroutine(handle: Callable[[web.Request], Any]) -> Handler:
    """A handler of sites.py that may be a plain function, as aiohttp wants it."""

    async def handler(request: web.Request) -> web.StreamResponse:
        answer = handle(request)
        return await answer if asyncio.iscoroutine(answer) else answer

    return handler


# ---------------------------------------------------------------------------------------------
# The scenario


def build(scenario: str, sites: ModuleType) -> tuple[list[Host], Any]:
    """The hosts of `scenario`, in seed order, and its slow or rate-limited site (else None)."""
    addresses = (f"127.0.1.{n}" for n in range(1, 255))
    if scenario == "slow":
        site = sites.OneWorkerSite(pages=40, service=0.2, slowed=1.0, window=5.0, threshold=0.5)
        return [Host(next(addresses), "slow", as_coroutine(site.handle), 40)], site
    if scenario in ("limiter", "limiter-retry-after", "unavailable"):
        site = sites.RateLimitedSite(
            pages=31,
            period=2.0,
            status=503 if scenario == "unavailable" else 429,
            retry_after=scenario == "limiter-retry-after",
        )
        return [Host(next(addresses), "limiter", as_coroutine(site.handle), 31)], site
    if scenario == "fast":
        return [Host(next(addresses), "fast", fast_handler(FAST_PAGES), FAST_PAGES)], None
    controls = [
        Host(next(addresses), "control", fast_handler(CONTROL_PAGES), CONTROL_PAGES)
        for _ in range(CONTROL_HOSTS)
    ]
    if scenario == "drip-control":
        return controls, None
    drips = [Host(next(addresses), "drip", drip, 0) for _ in range(DRIP_HOSTS)]
    return drips + controls, None


def bind_all(addresses: list[str], tries: int = 20) -> tuple[int, list[socket.socket]]:
    """Listening sockets on one port free on every address: the first address's free port, tried
    on the others, another one when it is taken there."""
    for _ in range(tries):
        sockets: list[socket.socket] = []
        try:
            for address in addresses:
                listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sockets.append(listener)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind((address, sockets[0].getsockname()[1] if len(sockets) > 1 else 0))
                listener.listen(512)
            return sockets[0].getsockname()[1], sockets
        except OSError:
            for listener in sockets:
                listener.close()
    raise OSError(f"no port free on all of {addresses[0]}..{addresses[-1]}")


# ---------------------------------------------------------------------------------------------
# The report


def gaps(entries: list[Entry]) -> list[float]:
    """Gaps between consecutive request starts to one host, over the hosts of `entries`."""
    starts: dict[str, list[float]] = {}
    for entry in entries:
        starts.setdefault(entry.host, []).append(entry.start)
    ordered = [sorted(times) for times in starts.values()]
    return [b - a for times in ordered for a, b in itertools.pairwise(times)]


def role_figures(entries: list[Entry], hosts: list[Host]) -> dict[str, Any]:
    between = gaps(entries)
    fetched = {(e.host, e.path) for e in entries if e.status == 200 and e.path != "/robots.txt"}
    ends = [e.end if e.end is not None else e.start for e in entries]
    return {
        "hosts": len(hosts),
        "requests": len(entries),
        "pages_fetched": len(fetched),
        "pages_expected": sum(host.pages for host in hosts),
        "median_gap": statistics.median(between) if between else None,
        "min_gap": min(between) if between else None,
        "span": max(ends) - min(e.start for e in entries) if entries else None,
    }


def report(
    scenario: str, hosts: list[Host], log: list[Entry], site: Any, now: float, why: str
) -> dict[str, Any]:
    statuses: dict[str, int] = {}
    for entry in log:
        key = str(entry.status) if entry.status is not None else "open"
        statuses[key] = statuses.get(key, 0) + 1
    role_of = {host.address: host.role for host in hosts}
    result: dict[str, Any] = {
        "scenario": scenario,
        "stopped_by": why,
        "requests": len(log),
        "statuses": statuses,
        "roles": {
            role: role_figures(
                [entry for entry in log if role_of.get(entry.host) == role],
                [host for host in hosts if host.role == role],
            )
            for role in sorted(set(role_of.values()))
        },
    }
    if scenario == "slow":
        result["site"] = {
            "worker_share": site.worker_share(),
            "slowed_seconds": site.slowed_seconds(),
            "requests_slowed": site.requests_slowed,
            "served": len(site.served),
        }
    elif site is not None:
        result["site"] = {
            "refused_share": site.refused_share(),
            "refused": len(site.refused),
            "accepted": len(site.accepted),
            "pace_share": site.pace_share(),
        }
    dripped = [e for e in log if role_of.get(e.host) == "drip" and e.path == "/"]
    if "drip" in role_of.values():
        held = [(e.end if e.end is not None else now) - e.start for e in dripped]
        result["drip"] = {
            "requests": len(dripped),
            "hosts_asked": len({e.host for e in dripped}),
            "held_seconds_total": sum(held),
            "held_seconds_max": max(held, default=0.0),
            "still_open": sum(e.end is None for e in dripped),
        }
    result["log"] = [asdict(entry) for entry in log]
    return result


# ---------------------------------------------------------------------------------------------
# Serving


async def serve(scenario: str, report_path: Path, lifetime: float) -> None:
    hosts, site = build(scenario, load_sites())
    by_address = {host.address: host for host in hosts}
    log: list[Entry] = []

    async def dispatch(request: web.Request) -> web.StreamResponse:
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        address = sockname[0] if sockname else ""
        entry = Entry(address, request.path, time.monotonic())
        log.append(entry)
        host = by_address.get(address)
        try:
            response = await host.handler(request) if host else web.Response(status=421)
            entry.status = response.status
            return response
        finally:
            entry.end = time.monotonic()

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", dispatch)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    port, sockets = bind_all(list(by_address))
    for listener in sockets:
        await web.SockSite(runner, listener).start()
    seeds = [f"http://{host.address}:{port}/" for host in hosts]
    hello = {"port": port, "seeds": seeds, "hosts": {h.address: h.role for h in hosts}}
    print(json.dumps(hello), flush=True)

    stop = asyncio.Event()
    why = "lifetime"
    loop = asyncio.get_running_loop()

    def on_signal(name: str) -> None:
        nonlocal why
        why = name
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig.name)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), lifetime)
    figures = report(scenario, hosts, log, site, time.monotonic(), why)
    partial = report_path.with_suffix(report_path.suffix + ".part")
    partial.write_text(json.dumps(figures))
    partial.replace(report_path)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(runner.cleanup(), 5.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--scenario", required=True, choices=SCENARIOS)
    parser.add_argument("--report", required=True, type=Path, help="where the JSON report goes")
    parser.add_argument(
        "--lifetime", type=float, default=600.0, help="seconds after which it stops by itself"
    )
    args = parser.parse_args(argv)
    asyncio.run(serve(args.scenario, args.report, args.lifetime))
    return 0


if __name__ == "__main__":
    sys.exit(main())
