"""A web of real HTTP hosts on loopback addresses (127.0.1.x), for tests of the I/O shell.

Each host is its own aiohttp server on its own address, so origins differ as they do on the web.
Every request is logged with the server's monotonic clock at the moment its handler starts: tests
measure politeness where a site owner would, on the server side.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType

from aiohttp import web

ADDRESSES = tuple(f"127.0.1.{number}" for number in range(1, 255))
"""Loopback addresses, each a host of its own."""
EPSILON = 1e-3
"""Server-side gaps are compared with a hair of slack for float rounding between two clocks'
readings of the same instant, never more."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse] | web.StreamResponse]


@dataclass(frozen=True, slots=True)
class Hit:
    host: str
    path: str
    """Path and query as requested."""
    at: float
    """Server-side time.monotonic() when the handler started."""
    user_agent: str
    sender: str = ""
    """The From header, as sent ("" without one)."""
    conditions: tuple[tuple[str, str], ...] = ()
    """The conditional headers sent (If-None-Match, If-Modified-Since)."""
    peer: str = ""
    """The address the request's connection came from."""


@dataclass
class Site:
    ip: str
    routes: dict[str, Handler] = field(default_factory=dict)
    port: int = 0

    @property
    def origin(self) -> str:
        return f"http://{self.ip}:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def robots(self, text: str) -> None:
        self.text("/robots.txt", text)

    def text(
        self, path: str, text: str, status: int = 200, content_type: str = "text/plain"
    ) -> None:
        self.routes[path] = lambda request: web.Response(
            text=text, status=status, content_type=content_type
        )

    def page(self, path: str, *links: str, title: str = "", body: str = "") -> None:
        anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
        html = (
            f"<html><head><title>{title or path}</title></head><body>{body}{anchors}</body></html>"
        )
        self.routes[path] = lambda request: web.Response(text=html, content_type="text/html")

    def html(self, path: str, html: str, headers: dict[str, str] | None = None) -> None:
        """Answer `path` with this HTML document, and these extra headers."""
        self.routes[path] = lambda request: web.Response(
            text=html, content_type="text/html", headers=headers or {}
        )

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.routes[path] = lambda request: web.Response(
            status=status, headers={"Location": location}
        )

    def status(self, path: str, status: int, headers: dict[str, str] | None = None) -> None:
        self.routes[path] = lambda request: web.Response(status=status, headers=headers or {})

    def sequence(self, path: str, *handlers: Handler) -> None:
        """Answer the n-th request for `path` with the n-th handler (the last one repeats)."""
        calls = iter(range(1_000_000))

        def answer(request: web.Request) -> Awaitable[web.StreamResponse] | web.StreamResponse:
            return handlers[min(next(calls), len(handlers) - 1)](request)

        self.routes[path] = answer


class LoopbackWeb:
    """`async with LoopbackWeb("127.0.1.1", "127.0.1.2") as net:` then `net[ip]` is a Site."""

    def __init__(self, *ips: str) -> None:
        self.sites = {ip: Site(ip) for ip in ips}
        self.hits: list[Hit] = []
        self._runners: list[web.AppRunner] = []

    def __getitem__(self, ip: str) -> Site:
        return self.sites[ip]

    async def __aenter__(self) -> LoopbackWeb:
        for site in self.sites.values():
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", self._handler(site))
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            tcp = web.TCPSite(runner, site.ip, 0)
            await tcp.start()
            server = tcp._server
            assert server is not None
            site.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
            self._runners.append(runner)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for runner in self._runners:
            await runner.cleanup()

    def _handler(self, site: Site) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            self.hits.append(
                Hit(
                    site.ip,
                    request.path_qs,
                    time.monotonic(),
                    request.headers.get("User-Agent", ""),
                    request.headers.get("From", ""),
                    tuple(
                        (name, request.headers[name])
                        for name in ("If-None-Match", "If-Modified-Since")
                        if name in request.headers
                    ),
                    request.remote or "",
                )
            )
            route = site.routes.get(request.path_qs) or site.routes.get(request.path)
            if route is None:
                return web.Response(status=404, text="not found")
            answer = route(request)
            if not isinstance(answer, web.StreamResponse):
                answer = await answer
            return answer

        return handle

    def paths(self, ip: str) -> list[str]:
        return [hit.path for hit in self.hits if hit.host == ip]

    def times(self, ip: str) -> list[float]:
        return [hit.at for hit in self.hits if hit.host == ip]

    def gaps(self, ip: str) -> list[float]:
        times = self.times(ip)
        return [later - earlier for earlier, later in itertools.pairwise(times)]
