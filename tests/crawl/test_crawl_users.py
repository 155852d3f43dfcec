"""What users bring, end to end, as a user runs it: the `crawl` command with a config of fields,
a header, a cookie jar, Basic credentials and a forward proxy (a real tinyproxy asking for its own
credentials), against loopback sites, plain http and https through a CONNECT tunnel. Judged from
the sites' own request logs and the proxy's log; then every file the crawl wrote, and all it
printed, searched for the passwords."""

from __future__ import annotations

import base64
import csv
import gzip
import io
import itertools
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web
from support.commands import crawl_beside_servers, crawl_command
from support.crawling import make_config, run
from support.forward_proxy import TINYPROXY, ForwardProxy, forward_proxy
from support.loopback import LoopbackWeb

pytestmark = pytest.mark.loopback

needs_tinyproxy = pytest.mark.skipif(
    TINYPROXY is None, reason="no tinyproxy binary on this machine (apt-get install tinyproxy)"
)

SITE = "127.0.1.1"
SECURE = "127.0.1.2"  # tests/data/tls/cert.pem names it
SITE_PASSWORD = "s3cret-site-pw-4471"
PROXY_PASSWORD = "s3cret-proxy-pw-9012"
TOKEN = "tok-123"


@dataclass
class Seen:
    """One request as the site saw it."""

    path: str
    headers: dict[str, str]


@dataclass
class Site:
    """A site whose pages need what users bring; it logs every request with its headers."""

    log: list[Seen] = field(default_factory=list)

    def app(self, *, secure: bool) -> web.Application:
        async def handle(request: web.Request) -> web.StreamResponse:
            self.log.append(Seen(request.path_qs, dict(request.headers)))
            return route(request, secure)

        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", handle)
        return app


def html(body: str, status: int = 200) -> web.Response:
    return web.Response(
        text=f"<html><body>{body}</body></html>", status=status, content_type="text/html"
    )


def product(number: int) -> str:
    return (
        f'<h1>Product {number}</h1><meta itemprop="sku" content="SKU-{number}">'
        f'<p class="price">{number}.50</p><ul><li class="tag">red</li><li class="tag">big</li></ul>'
    )


def route(request: web.Request, secure: bool) -> web.Response:
    path = request.path
    if path == "/robots.txt":
        return web.Response(text="User-agent: *\nAllow: /\n")
    if secure:
        expected = "Basic " + base64.b64encode(f"reader:{SITE_PASSWORD}".encode()).decode()
        if request.headers.get("Authorization") != expected:
            return html("who are you?", 401)
        return html(product(3) + '<a href="/more">more</a>')
    if path == "/":
        answer = html(
            '<a href="/members">m</a> <a href="/needs-header">h</a> <a href="/private/">p</a>'
            ' <a href="/products/1">1</a> <a href="/products/2">2</a>'
        )
        answer.set_cookie("session", "abc42", path="/")
        return answer
    if path == "/members":
        if request.cookies.get("session") != "abc42":
            return html("log in first", 403)
        return html("<h1>Members</h1>")
    if path == "/needs-header":
        if request.headers.get("X-Token") != TOKEN:
            return html("token?", 403)
        return html("<h1>Header ok</h1>")
    if path == "/private/":
        expected = "Basic " + base64.b64encode(f"reader:{SITE_PASSWORD}".encode()).decode()
        if request.headers.get("Authorization") != expected:
            return html("who are you?", 401)
        return html("<h1>Private</h1>")
    if path.startswith("/products/"):
        return html(product(int(path.rsplit("/", 1)[1])))
    return html("nothing", 404)


async def serve(app: web.Application, host: str, tls: ssl.SSLContext | None) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, 0, ssl_context=tls).start()
    return runner


def port_of(runner: web.AppRunner) -> int:
    server = runner.server
    assert server is not None
    sockets = [site._server.sockets for site in runner.sites]  # type: ignore[attr-defined]
    return int(sockets[0][0].getsockname()[1])


@pytest.fixture
async def sites(test_data: Path) -> AsyncIterator[tuple[Site, Site, int, int]]:
    plain, secure = Site(), Site()
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(test_data / "tls" / "cert.pem", test_data / "tls" / "key.pem")
    first = await serve(plain.app(secure=False), SITE, None)
    second = await serve(secure.app(secure=True), SECURE, tls)
    try:
        yield plain, secure, port_of(first), port_of(second)
    finally:
        await first.cleanup()
        await second.cleanup()


def config_text(proxy: ForwardProxy, port: int, secure_port: int, ca: Path) -> str:
    return f"""
user_agent: "UsersBot/1.0 (+https://example.org/bot)"
politeness: {{min_delay: 0}}
output: {{format: both, warc: true}}
fetch:
  proxy: "{proxy.url}"
  proxy_username: crawler
  proxy_password_env: TEST_PROXY_PW
  ca_bundle: "{ca}"
  headers: {{X-Token: {TOKEN}}}
  cookies: true
  auth:
    - {{url: "http://{SITE}:{port}/private/", username: reader, password_env: TEST_SITE_PW}}
    - {{url: "https://{SECURE}:{secure_port}/", username: reader, password_env: TEST_SITE_PW}}
extract:
  name: h1::text
  price: ".price::text"
  sku: "meta[itemprop=sku]::attr(content)"
  tags: {{css: ".tag::text", all: true}}
"""


@needs_tinyproxy
@pytest.mark.parametrize("client", ["http1", "aiohttp"])
async def test_fields_headers_cookies_and_credentials_through_a_real_proxy(
    sites: tuple[Site, Site, int, int],
    tmp_path: Path,
    test_data: Path,
    monkeypatch: pytest.MonkeyPatch,
    client: str,
) -> None:
    plain, secure, port, secure_port = sites
    monkeypatch.setenv("TEST_SITE_PW", SITE_PASSWORD)
    monkeypatch.setenv("TEST_PROXY_PW", PROXY_PASSWORD)
    data = tmp_path / "data"
    config = tmp_path / "crawler.yaml"
    with forward_proxy(tmp_path, "crawler", PROXY_PASSWORD) as proxy:
        config.write_text(
            config_text(proxy, port, secure_port, test_data / "tls" / "cert.pem"),
            encoding="utf-8",
        )
        args = [f"http://{SITE}:{port}/", f"https://{SECURE}:{secure_port}/"]
        if client == "aiohttp":
            args += ["-s", "fetch.client=aiohttp", "-s", "output.warc=false"]
        status, out, err = await crawl_beside_servers(
            *args, "-c", str(config), "--data", str(data), "--log-file", str(tmp_path / "log")
        )
        relayed = proxy.relayed()
    assert status == 0, err

    # Every request went through the proxy: the plain site's each came with tinyproxy's Via,
    # and the proxy logged each, the https site's as its tunnel.
    assert plain.log and all("tinyproxy" in seen.headers.get("Via", "") for seen in plain.log)
    plain_asked = {f"GET http://{SITE}:{port}{seen.path} HTTP/1.1" for seen in plain.log}
    assert plain_asked <= set(relayed)
    assert f"CONNECT {SECURE}:{secure_port} HTTP/1.1" in relayed
    assert {seen.path for seen in secure.log} >= {"/robots.txt", "/", "/more"}

    by_path = {seen.path: seen for seen in plain.log}
    # robots.txt: none of what users bring.
    robots = by_path["/robots.txt"].headers
    assert not {"X-Token", "Cookie", "Authorization"} & set(robots)
    # The header went to every page; the cookie the site set came back; the credentials went
    # only under their prefix.
    assert by_path["/needs-header"].headers["X-Token"] == TOKEN
    assert by_path["/members"].headers.get("Cookie") == "session=abc42"
    assert "Authorization" in by_path["/private/"].headers
    assert all(
        "Authorization" not in seen.headers for seen in plain.log if seen.path != "/private/"
    )

    pages = {
        json.loads(line)["url"]: json.loads(line)
        for line in (data / "pages.jsonl").read_text(encoding="utf-8").splitlines()
    }
    for path in ("/members", "/needs-header", "/private/"):
        assert pages[f"http://{SITE}:{port}{path}"]["status"] == 200, path
    assert pages[f"http://{SITE}:{port}/products/2"]["fields"] == {
        "name": "Product 2",
        "price": "2.50",
        "sku": "SKU-2",
        "tags": ["red", "big"],
    }
    assert pages[f"https://{SECURE}:{secure_port}/"]["fields"]["sku"] == "SKU-3"
    assert pages[f"http://{SITE}:{port}/members"]["fields"] == {
        "name": "Members",
        "price": None,
        "sku": None,
        "tags": [],
    }

    # The index keeps them too: `crawl export --format csv` gives a column to each.
    code, exported, _ = crawl_command("export", "--data", str(data), "--format", "csv")
    assert code == 0
    rows = {row["url"]: row for row in csv.DictReader(io.StringIO(exported))}
    product = rows[f"http://{SITE}:{port}/products/2"]
    assert (product["fields.name"], product["fields.price"], product["fields.sku"]) == (
        "Product 2",
        "2.50",
        "SKU-2",
    )
    assert product["fields.tags"] == '["red","big"]'

    # The passwords are nowhere the crawl wrote, nor in what it printed.
    written = [path for path in data.rglob("*") if path.is_file()] + [tmp_path / "log"]
    assert any(path.suffix == ".gz" for path in written) or client == "aiohttp"
    for secret in (SITE_PASSWORD, PROXY_PASSWORD):
        encoded = base64.b64encode(f"reader:{secret}".encode())
        proxy_encoded = base64.b64encode(f"crawler:{secret}".encode())
        for path in written:
            raw = path.read_bytes()
            if path.suffix == ".gz":
                raw = gzip.decompress(raw)
            for needle in (secret.encode(), encoded, proxy_encoded):
                assert needle not in raw, f"{needle!r} in {path}"
        assert written_are_all(written, data)
        assert secret not in out and secret not in err
    if client == "http1":
        warc = b"".join(gzip.decompress(path.read_bytes()) for path in data.rglob("*.warc.gz"))
        assert b"Authorization: Basic [redacted]" in warc


def written_are_all(written: list[Path], data: Path) -> bool:
    """What the crawl wrote includes its state, index, JSONL, summary and WARC files."""
    names = {path.name for path in written}
    return {"state.sqlite", "index.sqlite", "pages.jsonl"} <= names and any(
        "summary" in name for name in names
    )


async def test_a_password_variable_not_set_is_refused_naming_the_key(tmp_path: Path) -> None:
    config = tmp_path / "crawler.yaml"
    config.write_text(
        "fetch:\n  auth:\n    - {url: 'https://example.org/', username: u, "
        "password_env: TEST_UNSET_PW_VARIABLE}\n",
        encoding="utf-8",
    )
    status, _, err = await crawl_beside_servers(
        "https://example.org/", "-c", str(config), "--data", str(tmp_path / "d")
    )
    assert status == 2
    assert "fetch.auth[0].password_env: the environment variable TEST_UNSET_PW_VARIABLE" in err


async def test_the_cookie_jar_is_kept_in_the_state_for_the_next_run(tmp_path: Path) -> None:
    """A crawl stopped after the page that set the session cookie goes on, in a new process's
    run, sending it: the jar is in DIR/state.sqlite."""
    cookies: list[str | None] = []

    def members(request: web.Request) -> web.Response:
        cookies.append(request.headers.get("Cookie"))
        return html("members" if request.cookies.get("session") == "abc42" else "no", 200)

    def home(request: web.Request) -> web.Response:
        answer = html('<a href="/members">m</a>')
        answer.set_cookie("session", "abc42", path="/", max_age=3600)
        return answer

    async with LoopbackWeb(SITE) as net:
        site = net[SITE]
        site.robots("")
        site.routes["/"] = home
        site.routes["/members"] = members
        data = tmp_path / "data"
        first = make_config(fetch={"cookies": True}, limits={"max_pages": 1})
        records, _ = await run(first, [site.url("/")], data_dir=data)
        assert [record.url for record in records] == [site.url("/")]
        assert cookies == []
        second = make_config(fetch={"cookies": True}, limits={"max_pages": 2})
        records, _ = await run(second, [site.url("/")], data_dir=data)
    assert [record.url for record in records] == [site.url("/members")]
    assert cookies == ["session=abc42"]


@needs_tinyproxy
async def test_a_proxy_asking_for_credentials_not_given_is_said(tmp_path: Path) -> None:
    """Without the proxy's credentials, its 407 is no robots.txt of the site's (not read as
    "allow all"): the origin is given up, saying why, and nothing reaches the site."""
    async with LoopbackWeb(SITE) as net:
        site = net[SITE]
        site.robots("")
        site.html("/", "<html><body><h1>Home</h1></body></html>")
        with forward_proxy(tmp_path, "crawler", PROXY_PASSWORD) as proxy:
            config = make_config(
                fetch={"proxy": proxy.url},
                robots={"retry_initial": 0.05, "retry_max": 0.1, "give_up_after": 0.3},
            )
            records, crawler = await run(config, [site.url("/")])
            relayed = proxy.relayed()
    assert net.paths(SITE) == []
    assert relayed and all(line.startswith(f"GET http://{SITE}:") for line in relayed)
    assert records == []
    (why,) = crawler.given_up.values()
    assert "status 407: the proxy asks for credentials" in why


async def test_a_selector_lexbor_cannot_read_stops_the_crawl_before_it_starts(
    tmp_path: Path,
) -> None:
    config = tmp_path / "crawler.yaml"
    config.write_text("extract:\n  price: 'p:contains(EUR)::text'\n", encoding="utf-8")
    status, _, err = await crawl_beside_servers(
        "https://example.org/", "-c", str(config), "--data", str(tmp_path / "d")
    )
    assert status == 2
    assert "crawler.yaml line 2: extract.price: 'p:contains(EUR)::text'" in err
    assert not (tmp_path / "d").exists()


@needs_tinyproxy
async def test_each_host_keeps_its_own_pace_through_one_proxy(tmp_path: Path) -> None:
    """Through one proxy, the interval holds per target host (measured at each host), and the
    two hosts' requests interleave: the proxy is no host of its own to the pacing."""
    other = "127.0.1.3"
    delay = 0.25
    async with LoopbackWeb(SITE, other) as net:
        for ip in (SITE, other):
            site = net[ip]
            site.robots("")
            links = "".join(f'<a href="/p{n}">{n}</a>' for n in range(1, 5))
            site.html("/", f"<html><body>{links}</body></html>")
            for n in range(1, 5):
                site.html(f"/p{n}", f"<html><body><p>page {n}</p></body></html>")
        with forward_proxy(tmp_path, "crawler", PROXY_PASSWORD) as proxy:
            config = make_config(
                fetch={
                    "proxy": proxy.url,
                    "proxy_username": "crawler",
                    "proxy_password_env": "TEST_PROXY_PW_PACE",
                },
                politeness={"min_delay": delay, "backoff_initial": 0.05, "backoff_max": 0.2},
            )
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("TEST_PROXY_PW_PACE", PROXY_PASSWORD)
                records, _ = await run(config, [net[SITE].url("/"), net[other].url("/")])
            relayed = proxy.relayed()
    assert len(records) == 10
    assert len(relayed) == len(net.hits) == 12  # every request, robots.txt's too, relayed
    for ip in (SITE, other):
        assert len(net.paths(ip)) == 6
        assert min(net.gaps(ip)) >= delay - 1e-3
    order = [hit.host for hit in net.hits]
    switches = sum(1 for a, b in itertools.pairwise(order) if a != b)
    assert switches >= 4  # not one host's six requests, then the other's
