"""`Monitor`: the HTTP server of a crawl's live status, on the crawl's own event loop (aiohttp's
web server; the crawl runs on uvloop where installed). Read-only: GET /, /status.json, /metrics.

What serving costs the crawl, and how it is kept from the crawl's pace:
- nothing per page: the page, the JSON and the metrics are made from a `Snapshot`, taken when a
  request comes and the last one is stale; requests meanwhile (a browser every 2 s, Prometheus
  every 15 s, both at once) get the one taken;
- a snapshot reads every host (its row for the table): the reading yields to the event loop
  every SLICE hosts, so requests to hosts start on time meanwhile; and one that took long is kept
  longer (`MOST_TIME_SPENT` of the loop's time at most, as summary.json's refreshes are);
- what is sent is made once per snapshot and view (a page of a table of 100,000 hosts is a pass
  over them): a second browser, or the same one before the next snapshot, gets the same bytes;
- the history for the charts is sampled once a second (`SAMPLE_EVERY`): a few counters read.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import hashlib
import heapq
import importlib.resources
import ipaddress
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from aiohttp import web
from prometheus_client import ProcessCollector

from crawler.config import ServeAddress
from crawler.crawl.crawler import Crawler
from crawler.crawl.hosts import host_report
from crawler.errors import ServeError
from crawler.monitor.history import History, Sample
from crawler.monitor.hosts import HostQuery, QueryError, host_row
from crawler.monitor.metrics import CONTENT_TYPE, exposition
from crawler.monitor.snapshot import STATUS_HOSTS, Snapshot, copy_stats, status_document
from crawler.stats import HostReport

__all__ = ["MOST_TIME_SPENT", "SAMPLE_EVERY", "Monitor", "SummaryOf"]

SAMPLE_EVERY = 1.0
"""Seconds between two samples of the history."""
FRESH_FOR = 1.0
"""Seconds a snapshot is served before a request takes a new one, at least."""
MOST_TIME_SPENT = 0.02
"""The share of the crawl's time snapshots may take: one that took 0.1 s is kept 5 s."""
KEPT_BODIES = 16
"""Answers kept per snapshot, at most (views of the table asked for meanwhile)."""
SLICE = 500
"""Hosts read between two yields to the event loop (a few milliseconds' work)."""

SummaryOf = Callable[[Sequence[HostReport]], Mapping[str, Any]]
"""The summary document (summary.json's) with these hosts (crawler.cli.summary_file)."""


def _page() -> tuple[bytes, str]:
    """The status page, and the Content-Security-Policy that lets its one script run and
    nothing be fetched but from this server."""
    text = importlib.resources.files(__package__).joinpath("page.html").read_text("utf-8")
    scripts = re.findall(r"<script>(.*?)</script>", text, re.DOTALL)
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
        for script in scripts
    )
    policy = (
        f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"
    )
    return text.encode(), policy


class Monitor:
    """Serves the live status of the crawl it is given to `watch`, at `address`."""

    def __init__(
        self,
        address: ServeAddress,
        *,
        metrics_hosts: int,
        max_pages: int | None,
        info: Mapping[str, str],
    ) -> None:
        self.address = address
        self.url = ""
        """http://HOST:PORT/ once bound (the port the system chose, for port 0)."""
        self._metrics_hosts = metrics_hosts
        self._max_pages = max_pages
        self._info = dict(info)
        self._runner: web.AppRunner | None = None
        self._crawler: Crawler | None = None
        self._summary: SummaryOf | None = None
        self._history = History(SAMPLE_EVERY)
        self._sampler: asyncio.Task[None] | None = None
        self._snapshot: Snapshot | None = None
        self._fresh_until = 0.0
        self._taking: asyncio.Task[Snapshot] | None = None
        self._bodies: dict[HostQuery | None, bytes] = {}
        """What was sent from the current snapshot, by the table's query (None: /metrics): a
        page of a table of 100,000 hosts is a pass over them, made once per snapshot."""
        self._page, self._policy = _page()
        self.snapshots = 0
        """Snapshots taken (for tests and benchmarks: requests share them)."""

    async def start(self) -> str:
        """Bind and serve; the URL. ServeError when the address cannot be bound."""
        app = web.Application(middlewares=[self._named_as_served])
        app.router.add_get("/", self._index)
        app.router.add_get("/status.json", self._status)
        app.router.add_get("/metrics", self._metrics)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.address.host, self.address.port, reuse_address=True)
        try:
            await site.start()
        except OSError as error:
            await runner.cleanup()
            raise ServeError(self._cannot_bind(error)) from None
        self._runner = runner
        port = int(runner.addresses[0][1])
        self.url = self.address.url(port)
        self._info["serve"] = self.url
        return self.url

    @web.middleware
    async def _named_as_served(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """On loopback, answer only requests that name this server by an address, `localhost`
        or the host --serve gave: a web page the operator opens cannot read the status through
        a name of its own that resolves to 127.0.0.1 (DNS rebinding). Served on every
        interface (0.0.0.0), the names others know the machine by are the operator's to give."""
        host = (request.url.host or "").lower()
        if (
            _is_loopback(self.address.host)
            and host not in ("localhost", self.address.host.lower())
            and not _is_address(host)
        ):
            return web.Response(
                status=403, text="this status page answers to its address, not to other names\n"
            )
        return await handler(request)

    def _cannot_bind(self, error: OSError) -> str:
        given = str(self.address)
        if error.errno == errno.EADDRINUSE:
            return (
                f"--serve {given}: the port is in use (another crawl's status page, or another "
                "server): give another port, or 0 for any free one"
            )
        return f"--serve {given}: cannot serve there: {error.strerror or error}"

    def watch(self, crawler: Crawler, summary: SummaryOf) -> None:
        """Serve `crawler`'s status from now on; `summary` makes its summary document."""
        self._crawler = crawler
        self._summary = summary
        self._info.setdefault("http_client", crawler.client_name)
        self._sampler = asyncio.create_task(self._sample())

    async def _sample(self) -> None:
        assert self._crawler is not None
        stats = self._crawler.stats
        while True:
            self._history.add(Sample.of(stats, time.time()))
            await asyncio.sleep(SAMPLE_EVERY)

    async def close(self) -> None:
        if self._sampler is not None:
            self._sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sampler
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- snapshots -------------------------------------------------------------------------------

    async def snapshot(self) -> Snapshot | None:
        """The snapshot to serve: the last one while fresh, else a new one (requests that come
        while it is taken wait for it). None before the crawl is watched."""
        if self._crawler is None:
            return None
        if self._snapshot is not None and time.monotonic() < self._fresh_until:
            return self._snapshot
        if self._taking is None or self._taking.done():
            self._taking = asyncio.create_task(self._take())
        # Shielded: a browser that goes away does not cancel what the others wait for.
        return await asyncio.shield(self._taking)

    async def _take(self) -> Snapshot:
        crawler, summary = self._crawler, self._summary
        assert crawler is not None and summary is not None
        spent = 0.0
        began = time.perf_counter()
        stats = copy_stats(crawler.stats)
        now = crawler.now() or time.time()
        politeness, frontier = crawler.politeness, crawler.parts.state.frontier
        hosts = list(crawler.parts.hosts)
        rows = []
        for first in range(0, len(hosts), SLICE):
            rows += [
                host_row(host, politeness, frontier.pending(host.origin), now)
                for host in hosts[first : first + SLICE]
            ]
            if first + SLICE < len(hosts):
                spent += time.perf_counter() - began
                await asyncio.sleep(0)
                began = time.perf_counter()
        busiest = heapq.nlargest(STATUS_HOSTS, hosts, key=lambda host: host.timing.requests)
        reports = [host_report(host, politeness, now) for host in busiest if host.timing.requests]
        snapshot = Snapshot.of(
            time.time(),
            stats,
            rows,
            summary(reports),
            self._history,
            max_pages=self._max_pages,
            info=self._info,
        )
        spent += time.perf_counter() - began
        self._snapshot = snapshot
        self._bodies.clear()
        self._fresh_until = time.monotonic() + max(FRESH_FOR, spent / MOST_TIME_SPENT)
        self.snapshots += 1
        return snapshot

    # --- the endpoints ---------------------------------------------------------------------------

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.Response(
            body=self._page,
            content_type="text/html",
            charset="utf-8",
            headers={"Content-Security-Policy": self._policy, "Cache-Control": "no-store"},
        )

    async def _status(self, request: web.Request) -> web.StreamResponse:
        try:
            query = HostQuery.parse(request.query)
        except QueryError as error:
            return _json({"error": str(error)}, status=400)
        snapshot = await self.snapshot()
        if snapshot is None:
            return _json({"error": "the crawl is starting"}, status=503)
        body = self._bodies.get(query)
        if body is None:
            if len(self._bodies) >= KEPT_BODIES:
                self._bodies.clear()
            body = self._bodies[query] = _json_body(status_document(snapshot, query))
        return _json_answer(body)

    async def _metrics(self, request: web.Request) -> web.StreamResponse:
        snapshot = await self.snapshot()
        if snapshot is None:
            return web.Response(status=503, text="the crawl is starting\n")
        body = self._bodies.get(None)
        if body is None:
            # The process's CPU, memory and open files, as every Prometheus client gives them.
            process = ProcessCollector(registry=None)
            body = self._bodies[None] = exposition(snapshot, self._metrics_hosts, [process])
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    def __repr__(self) -> str:
        return f"Monitor({self.url or self.address.url()}, {self.snapshots} snapshots)"


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _json_body(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode()


def _json_answer(body: bytes, status: int = 200) -> web.Response:
    return web.Response(
        body=body,
        status=status,
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _json(document: Mapping[str, Any], status: int = 200) -> web.Response:
    return _json_answer(_json_body(document), status)
