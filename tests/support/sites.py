"""Servers that behave like small real sites under a crawler's load, judged by their own logs (the
pacing tests, and benchmarks/bench_pacing.py, which loads this file by its path):

- `OneWorkerSite`: one worker; each request waits its turn, takes `service` seconds, and
  `slowed` seconds while the worker was busy more than `threshold` of the last `window` seconds
  (a small site whose pages slow down when a crawler keeps it busy).
- `RateLimitedSite`: accepts one request per `period` seconds (from the last one it accepted) and
  refuses any sooner with `status` (429, or 503), with or without a Retry-After in whole seconds
  (what a rate limiter in front of a site does).

Both serve a small web: `/` links to /p1 ... /p{pages - 1}, and robots.txt allows everything (it
counts as a request like any other). Every time is the server's `time.monotonic()`.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field

from aiohttp import web

__all__ = ["OneWorkerSite", "RateLimitedSite", "site_paths"]


def site_paths(pages: int) -> list[str]:
    return ["/", *(f"/p{n}" for n in range(1, pages))]


def _page(path: str, pages: int) -> web.Response:
    links = "".join(f'<a href="{link}">{link}</a> ' for link in site_paths(pages)[1:])
    body = links if path == "/" else f"<p>page {path}</p>"
    html = f"<html><head><title>{path}</title></head><body>{body}</body></html>"
    return web.Response(text=html, content_type="text/html")


def _answer(path: str, pages: int) -> web.Response:
    if path == "/robots.txt":
        return web.Response(text="User-agent: *\nAllow: /\n", content_type="text/plain")
    if path in site_paths(pages):
        return _page(path, pages)
    return web.Response(status=404, text="not found")


@dataclass
class OneWorkerSite:
    pages: int = 20
    service: float = 0.2
    slowed: float = 1.0
    window: float = 5.0
    threshold: float = 0.5
    served: list[tuple[float, float, bool]] = field(default_factory=list)
    """(start, end, slowed) of each request the worker served."""
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def busy_within(self, since: float, until: float) -> float:
        return sum(max(0.0, min(end, until) - max(start, since)) for start, end, _ in self.served)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        async with self._lock:
            start = time.monotonic()
            busy = self.busy_within(start - self.window, start)
            slowed = busy > self.threshold * self.window
            await asyncio.sleep(self.slowed if slowed else self.service)
            self.served.append((start, time.monotonic(), slowed))
        return _answer(request.path, self.pages)

    def worker_share(self) -> float:
        """Of the time from the first request to the last answer, the share the worker was busy."""
        if not self.served:
            return 0.0
        span = self.served[-1][1] - self.served[0][0]
        return self.busy_within(self.served[0][0], self.served[-1][1]) / span if span else 1.0

    def slowed_seconds(self, step: float = 0.05) -> float:
        """Seconds, from the first request to the last answer, during which the site was in its
        slowed state (busy more than `threshold` of the trailing window)."""
        if not self.served:
            return 0.0
        first, last = self.served[0][0], self.served[-1][1]
        steps = math.ceil((last - first) / step)
        return step * sum(
            self.busy_within(at - self.window, at) > self.threshold * self.window
            for at in (first + index * step for index in range(steps))
        )

    @property
    def requests_slowed(self) -> int:
        return sum(slowed for _, _, slowed in self.served)


@dataclass
class RateLimitedSite:
    pages: int = 31
    period: float = 2.0
    status: int = 429
    retry_after: bool = False
    accepted: list[float] = field(default_factory=list)
    refused: list[float] = field(default_factory=list)

    def handle(self, request: web.Request) -> web.StreamResponse:
        now = time.monotonic()
        last = self.accepted[-1] if self.accepted else -math.inf
        if now - last < self.period:
            self.refused.append(now)
            headers = {}
            if self.retry_after:
                headers["Retry-After"] = str(math.ceil(last + self.period - now))
            return web.Response(status=self.status, text="slow down", headers=headers)
        self.accepted.append(now)
        return _answer(request.path, self.pages)

    def refused_share(self) -> float:
        total = len(self.accepted) + len(self.refused)
        return len(self.refused) / total if total else 0.0

    def pace_share(self) -> float:
        """The pace we kept, as a share of the one the site allows: accepted requests after the
        first, each worth `period`, over the time from the first accepted to the last."""
        if len(self.accepted) < 2:
            return 0.0
        return (len(self.accepted) - 1) * self.period / (self.accepted[-1] - self.accepted[0])
