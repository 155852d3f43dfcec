"""The fetcher's seam: any `Client` can stand in for the HTTP clients, the way httpx's transports
take a handler. No server: the client given answers."""

from __future__ import annotations

from multidict import CIMultiDict, CIMultiDictProxy

from crawler.config import FetchConfig
from crawler.http import Client, Fetcher, FetchFailure, Response


class Handler:
    """A client whose answers a function gives; it notes what was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int, bool]] = []
        self.closed = False

    async def get(
        self, url: str, max_bytes: int, *, html_only: bool = False
    ) -> Response | FetchFailure:
        self.asked.append((url, max_bytes, html_only))
        if url.endswith("/gone"):
            return FetchFailure(url, "dns", "no such host")
        headers = CIMultiDictProxy(CIMultiDict({"Content-Type": "text/html"}))
        return Response(url, 200, headers, "text/html", None, b"<p>hi</p>")

    async def close(self) -> None:
        self.closed = True


async def test_a_client_given_answers_every_get_and_is_closed_with_the_fetcher() -> None:
    handler = Handler()
    client: Client = handler
    config = FetchConfig(max_body_bytes=1234)
    async with Fetcher(config, "TestBot/1.0", client=client) as fetcher:
        assert fetcher.client_name == "Handler"
        page = await fetcher.get("https://example.org/", html_only=True)
        failure = await fetcher.get("https://example.org/gone", max_bytes=10)
    assert isinstance(page, Response) and page.body == b"<p>hi</p>"
    assert isinstance(failure, FetchFailure) and failure.kind == "dns"
    assert handler.asked == [
        ("https://example.org/", 1234, True),
        ("https://example.org/gone", 10, False),
    ]
    assert handler.closed
