"""fetch.resolve: a host name's connections go to the address given, as curl's --resolve, while
the URL, the Host header and robots.txt stay the name's. Over loopback, with both clients."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web
from support.crawling import make_config, run
from support.loopback import ADDRESSES, LoopbackWeb

from crawler.config import load_config
from crawler.errors import ConfigError

A = ADDRESSES[0]


@pytest.mark.loopback
@pytest.mark.parametrize("client", ["http1", "aiohttp"])
async def test_a_pinned_name_is_crawled_at_its_address_under_its_name(
    client: str, tmp_path: Path
) -> None:
    hosts: list[str] = []
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nDisallow: /private\n")

        def page(request: web.Request) -> web.Response:
            hosts.append(request.host)
            html = '<title>home</title><a href="/next">n</a> <a href="/private/x">p</a>'
            return web.Response(text=html, content_type="text/html")

        site.routes["/"] = page
        site.page("/next")
        name = f"pinned.test:{site.port}"
        config = make_config(fetch={"client": client, "resolve": (f"pinned.test={A}",)})
        records, _ = await run(config, [f"http://{name}/"])
    assert sorted(record.url for record in records) == [f"http://{name}/", f"http://{name}/next"]
    assert hosts == [name]  # the Host header names the name, not the address
    assert net.paths(A) == ["/robots.txt", "/", "/next"]  # its robots.txt obeyed


def test_resolve_is_a_mapping_or_host_equals_address_strings() -> None:
    mapping = load_config(None, ["fetch.resolve={Staging.Example.org: 10.0.0.5, v6.test: '::1'}"])
    assert mapping.fetch.pinned() == {"staging.example.org": "10.0.0.5", "v6.test": "::1"}
    listed = load_config(None, ["fetch.resolve=[a.test=127.0.1.1]"])
    assert listed.fetch.pinned() == {"a.test": "127.0.1.1"}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{a.test: not-an-address}", "fetch.resolve: a.test maps to 'not-an-address', not an IP"),
        ("[a.test]", "fetch.resolve: 'a.test' names no host name; expected HOST=ADDRESS"),
        ("[=10.0.0.1]", "names no host name"),
        ("7", "fetch.resolve must be a mapping of host names to IP addresses"),
    ],
)
def test_a_bad_resolve_entry_says_what_was_expected(value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("'", "'")):
        load_config(None, [f"fetch.resolve={value}"])
