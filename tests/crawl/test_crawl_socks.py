"""fetch.proxy through a real SOCKS5 proxy (Debian's microsocks, asking for a login), as a user
runs it: the `crawl` command against loopback sites, plain http and https. The proxy connects to
the sites from an address of its own (127.0.2.9), so each site's log tells a request that came
through it from one that did not; the proxy's log says which host it was asked for (a name: it
resolved it). Then every file the crawl wrote, and all it printed, searched for the password."""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import ssl
from pathlib import Path
from typing import Literal

import pytest
from aiohttp import web
from support.commands import crawl_beside_servers
from support.crawling import make_config, run
from support.loopback import LoopbackWeb
from support.socks_proxy import MICROSOCKS, socks_proxy

from crawler.config import FetchConfig
from crawler.http.answer import FetchFailure
from crawler.http.fetcher import Fetcher
from crawler.http.users import ProxyLogin, Secret, UserRequests

pytestmark = [
    pytest.mark.loopback,
    pytest.mark.skipif(
        MICROSOCKS is None,
        reason="no microsocks binary on this machine (apt-get install microsocks)",
    ),
]

SITE = "127.0.1.1"
SECURE = "127.0.1.2"  # tests/data/tls/cert.pem names it
PROXY_PASSWORD = "s3cret-socks-pw-5150"


def links(*paths: str) -> str:
    return "<html><body>" + "".join(f'<a href="{p}">{p}</a> ' for p in paths) + "</body></html>"


async def serve_tls(net_site_handler: web.Application, tls: ssl.SSLContext) -> web.AppRunner:
    runner = web.AppRunner(net_site_handler, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, SECURE, 0, ssl_context=tls).start()
    return runner


@pytest.mark.parametrize("client", ["http1", "aiohttp"])
async def test_every_request_goes_through_the_socks5_proxy(
    tmp_path: Path, test_data: Path, monkeypatch: pytest.MonkeyPatch, client: str
) -> None:
    """socks5:// with a login: robots.txt and pages of an http site (named through
    fetch.resolve: the crawl resolves it, and asks the proxy for the address) and of an https
    site (TLS end to end, the certificate checked) all reach the sites from the proxy."""
    secure_peers: list[tuple[str, str]] = []

    async def secure_page(request: web.Request) -> web.Response:
        secure_peers.append((request.path, request.remote or ""))
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        return web.Response(
            text=links("/two") if request.path == "/" else "<p>two</p>", content_type="text/html"
        )

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", secure_page)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(test_data / "tls" / "cert.pem", test_data / "tls" / "key.pem")
    secure = await serve_tls(app, tls)
    secure_port = secure.addresses[0][1]
    monkeypatch.setenv("TEST_SOCKS_PW", PROXY_PASSWORD)
    data = tmp_path / "data"
    try:
        async with LoopbackWeb(SITE) as net:
            site = net[SITE]
            site.robots("")
            site.html("/", links("/a", "/b"))
            site.html("/a", links("/b"))
            site.html("/b", "<html><body><p>b</p></body></html>")
            with socks_proxy(tmp_path, "crawler", PROXY_PASSWORD) as proxy:
                config = tmp_path / "crawler.yaml"
                config.write_text(
                    "politeness: {min_delay: 0}\n"
                    "output: {format: both, warc: true}\n"
                    "fetch:\n"
                    f"  proxy: {proxy.url('socks5')}\n"
                    "  proxy_username: crawler\n"
                    "  proxy_password_env: TEST_SOCKS_PW\n"
                    f"  resolve: {{shop.test: {SITE}}}\n"
                    f"  ca_bundle: {test_data / 'tls' / 'cert.pem'}\n",
                    encoding="utf-8",
                )
                args = [f"http://shop.test:{site.port}/", f"https://{SECURE}:{secure_port}/"]
                if client == "aiohttp":
                    args += ["-s", "fetch.client=aiohttp", "-s", "output.warc=false"]
                status, out, err = await crawl_beside_servers(
                    *args,
                    "-c",
                    str(config),
                    "--data",
                    str(data),
                    "--log-file",
                    str(tmp_path / "log"),
                )
                connected = proxy.connected()
    finally:
        await secure.cleanup()
    assert status == 0, err
    assert sorted(net.paths(SITE)) == ["/", "/a", "/b", "/robots.txt"]
    assert {path for path, _ in secure_peers} == {"/robots.txt", "/", "/two"}
    # Every request came from the proxy's address: none went around it.
    assert {hit.peer for hit in net.hits} == {proxy.source}
    assert {peer for _, peer in secure_peers} == {proxy.source}
    # The crawl resolved shop.test itself and asked the proxy for the address.
    assert set(connected) == {f"{SITE}:{site.port}", f"{SECURE}:{secure_port}"}
    pages = [
        json.loads(line) for line in (data / "pages.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert sorted(page["url"] for page in pages) == sorted(
        [
            f"http://shop.test:{site.port}/",
            f"http://shop.test:{site.port}/a",
            f"http://shop.test:{site.port}/b",
            f"https://{SECURE}:{secure_port}/",
            f"https://{SECURE}:{secure_port}/two",
        ]
    )

    # The password is nowhere the crawl wrote, nor in what it printed.
    written = [path for path in data.rglob("*") if path.is_file()] + [tmp_path / "log"]
    assert {"state.sqlite", "index.sqlite", "pages.jsonl"} <= {path.name for path in written}
    assert any(path.suffix == ".gz" for path in written) or client == "aiohttp"  # the WARC
    encoded = base64.b64encode(f"crawler:{PROXY_PASSWORD}".encode())
    for path in written:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        for needle in (PROXY_PASSWORD.encode(), encoded):
            assert needle not in raw, f"{needle!r} in {path}"
    assert PROXY_PASSWORD not in out and PROXY_PASSWORD not in err


async def test_socks5h_lets_the_proxy_resolve_the_names(tmp_path: Path) -> None:
    """socks5h://: the name goes to the proxy, which resolves it (its log names the host as
    asked); the site, on 127.0.0.1, sees only the proxy."""
    peers: list[tuple[str, str]] = []

    async def page(request: web.Request) -> web.Response:
        peers.append((request.path, request.remote or ""))
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        return web.Response(
            text=links("/next") if request.path == "/" else "<p>next</p>", content_type="text/html"
        )

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    try:
        with socks_proxy(tmp_path, "crawler", PROXY_PASSWORD) as proxy:
            config = make_config(
                fetch={
                    "proxy": proxy.url("socks5h"),
                    "proxy_username": "crawler",
                    "proxy_password_env": "TEST_SOCKS_PW_H",
                },
                politeness={"min_delay": 0},
            )
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("TEST_SOCKS_PW_H", PROXY_PASSWORD)
                records, _ = await run(config, [f"http://localhost:{port}/"])
            connected = proxy.connected()
    finally:
        await runner.cleanup()
    assert sorted(record.url for record in records) == [
        f"http://localhost:{port}/",
        f"http://localhost:{port}/next",
    ]
    assert [path for path, _ in peers] == ["/robots.txt", "/", "/next"]
    assert {peer for _, peer in peers} == {proxy.source}
    assert set(connected) == {f"localhost:{port}"}


async def test_a_wrong_socks5_password_reaches_no_site_and_is_said(tmp_path: Path) -> None:
    """The proxy refuses the login: robots.txt is unreachable (retried, then the origin given
    up, saying why), not "allow all"; nothing reaches the site."""
    async with LoopbackWeb(SITE) as net:
        site = net[SITE]
        site.robots("")
        site.html("/", "<html><body><h1>Home</h1></body></html>")
        with socks_proxy(tmp_path, "crawler", PROXY_PASSWORD) as proxy:
            config = make_config(
                fetch={
                    "proxy": proxy.url(),
                    "proxy_username": "crawler",
                    "proxy_password_env": "TEST_SOCKS_PW_BAD",
                },
                robots={"retry_initial": 0.05, "retry_max": 0.1, "give_up_after": 0.3},
            )
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("TEST_SOCKS_PW_BAD", "not-the-password")
                records, crawler = await run(config, [site.url("/")])
    assert net.hits == []
    assert records == []
    (why,) = crawler.given_up.values()
    assert f"the SOCKS proxy 127.0.0.1:{proxy.port} refused" in why


async def test_each_host_keeps_its_own_pace_through_the_socks5_proxy(tmp_path: Path) -> None:
    """Through one SOCKS5 proxy, the interval holds per target host (measured at each host) and
    the hosts' requests interleave: the proxy is no host of its own to the pacing."""
    other = "127.0.1.3"
    delay = 0.25
    async with LoopbackWeb(SITE, other) as net:
        for ip in (SITE, other):
            site = net[ip]
            site.robots("")
            site.html("/", links(*(f"/p{n}" for n in range(1, 5))))
            for n in range(1, 5):
                site.html(f"/p{n}", f"<html><body><p>page {n}</p></body></html>")
        with socks_proxy(tmp_path, "crawler", PROXY_PASSWORD) as proxy:
            config = make_config(
                fetch={
                    "proxy": proxy.url(),
                    "proxy_username": "crawler",
                    "proxy_password_env": "TEST_SOCKS_PW_PACE",
                },
                politeness={"min_delay": delay},
            )
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("TEST_SOCKS_PW_PACE", PROXY_PASSWORD)
                records, _ = await run(config, [net[SITE].url("/"), net[other].url("/")])
    assert len(records) == 10
    assert {hit.peer for hit in net.hits} == {proxy.source}
    for ip in (SITE, other):
        assert len(net.paths(ip)) == 6
        assert min(net.gaps(ip)) >= delay - 1e-3
    order = [hit.host for hit in net.hits]
    assert sum(1 for a, b in itertools.pairwise(order) if a != b) >= 4


@pytest.mark.parametrize("client", ["http1", "aiohttp"])
async def test_failures_through_the_socks5_proxy_are_said_as_without_one(
    tmp_path: Path, test_data: Path, client: Literal["http1", "aiohttp"]
) -> None:
    """A certificate not trusted is a tls failure, TLS being end to end through the proxy; a
    proxy that is not there a connection failure naming it."""
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(test_data / "tls" / "cert.pem", test_data / "tls" / "key.pem")
    app = web.Application()

    async def hello(request: web.Request) -> web.Response:
        return web.Response(text="hi")

    app.router.add_route("GET", "/", hello)
    secure = await serve_tls(app, tls)
    port = secure.addresses[0][1]
    target = f"https://{SECURE}:{port}/"
    try:
        with socks_proxy(tmp_path, "crawler", PROXY_PASSWORD) as proxy:
            users = UserRequests((), (), None, ProxyLogin("crawler", Secret(PROXY_PASSWORD)))
            config = FetchConfig(client=client, proxy=proxy.url(), connect_timeout=2.0)
            async with Fetcher(config, "SocksBot/1.0", users=users) as fetcher:
                untrusted = await fetcher.get(target)
            connected = proxy.connected()
        nowhere = FetchConfig(client=client, proxy=f"socks5://127.0.0.1:{proxy.port}")
        async with Fetcher(nowhere, "SocksBot/1.0", users=users) as fetcher:
            refused = await fetcher.get(target)
    finally:
        await secure.cleanup()
    assert isinstance(untrusted, FetchFailure) and untrusted.kind == "tls", untrusted
    assert connected == [f"{SECURE}:{port}"]
    assert isinstance(refused, FetchFailure) and refused.kind == "connection", refused
    assert f"127.0.0.1:{proxy.port}" in refused.message
