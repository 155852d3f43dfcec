"""The crawl end to end against real HTTP servers on loopback addresses.

Politeness is measured where a site owner measures it: by the server, from the times its handlers
start. The assertions are lower bounds on gaps (behaviour), never durations of the test.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from support.crawling import PUBLIC_LOOPBACK, by_url, make_config, run
from support.iterations import start_iteration_counter
from support.loopback import ADDRESSES, EPSILON, LoopbackWeb

from crawler import Crawler
from crawler.config import Config, LimitsConfig, ScopeConfig
from crawler.crawl.answers import Answers
from crawler.crawl.robots_requests import RobotsRequests
from crawler.frontier import QueuedUrl
from crawler.http.answer import Response
from crawler.robots.txt import RobotsTxt
from crawler.state import MemoryCrawlState

pytestmark = pytest.mark.loopback

A, B, C, D = ADDRESSES[:4]
UA = "PoliteBot/0.1 (+https://example.org/bot)"


# --- robots.txt rules --------------------------------------------------------------------------


async def test_no_disallowed_url_is_ever_requested() -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("User-agent: *\nDisallow: /private/\nAllow: /private/open\n")
        b.robots("User-agent: PoliteBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
        a.page("/", "/one", "/private/secret", "/private/open", b.url("/"), "/go", "/go-b")
        a.page("/one", "/private/deeper?x=1", "/two")
        a.page("/two")
        a.page("/private/open", "/private/also-secret")
        a.redirect("/go", "/private/by-redirect")
        a.redirect("/go-b", b.url("/anything"))
        b.page("/", "/x")
        config = make_config(scope=ScopeConfig(allow_domains=(B,)), fetch=PUBLIC_LOOPBACK)
        records, crawler = await run(config, [a.url("/")])
    assert net.paths(A) == ["/robots.txt", "/", "/one", "/private/open", "/go", "/go-b", "/two"]
    assert net.paths(B) == ["/robots.txt"]
    assert crawler.stats.skips["disallowed by robots.txt"] == 6
    redirected = by_url(records)[a.url("/go")]
    assert redirected.status == 302
    assert redirected.error is not None and "disallowed by robots.txt" in redirected.error
    cross = by_url(records)[a.url("/go-b")]
    assert cross.final_url == a.url("/go-b") and cross.status == 302
    assert cross.error is not None and "Disallow: /" in cross.error


async def test_robots_txt_comes_first_once_per_origin_and_the_user_agent_is_sent() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("User-agent: *\nAllow: /\n")
        links = [f"/p{n}" for n in range(8)]
        a.page("/", *links)
        for link in links:
            a.page(link, *links)
        await run(make_config(concurrency=16), [a.url("/")])
    paths = net.paths(A)
    assert paths[0] == "/robots.txt" and paths.count("/robots.txt") == 1
    assert sorted(paths[1:]) == sorted(["/", *links])
    assert {hit.user_agent for hit in net.hits} == {UA}


@pytest.mark.parametrize(
    ("status", "auth_disallows", "pages_fetched"),
    [
        (404, False, True),
        (410, False, True),
        (401, False, True),
        (403, False, True),
        (401, True, False),
        (403, True, False),
    ],
)
async def test_robots_txt_4xx_means_unavailable(
    status: int, auth_disallows: bool, pages_fetched: bool
) -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.status("/robots.txt", status)
        a.page("/", "/next")
        a.page("/next")
        config = make_config(robots={"auth_disallows": auth_disallows})
        _records, crawler = await run(config, [a.url("/")])
    if pages_fetched:
        assert net.paths(A) == ["/robots.txt", "/", "/next"]
    else:
        assert net.paths(A) == ["/robots.txt"]
        assert crawler.stats.skips["disallowed by robots.txt"] == 1


async def test_robots_txt_503_disallows_everything_and_keeps_the_urls_queued() -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.status("/robots.txt", 503)
        a.page("/", "/next")
        b.page("/")
        config = make_config(
            # Given up only after two hours: this is about a wait past max_wait.
            robots={"retry_initial": 3600.0, "retry_max": 3600.0, "give_up_after": 7200.0},
            politeness={"max_wait": 60.0},
            scope=ScopeConfig(allow_domains=(B,)),
        )
        _records, crawler = await run(config, [a.url("/"), b.url("/")])
    assert net.paths(A) == ["/robots.txt"]
    assert net.paths(B) == ["/robots.txt", "/"]
    assert crawler.stats.outcome == "deferred"
    (deferred,) = crawler.deferred
    assert deferred.origin == a.origin and deferred.pending == 1
    assert "503" in deferred.reason


async def test_robots_txt_503_is_retried_with_backoff_then_obeyed() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        real = "User-agent: *\nDisallow: /private\n"
        a.sequence(
            "/robots.txt",
            lambda request: __import__("aiohttp").web.Response(status=503),
            lambda request: __import__("aiohttp").web.Response(text=real),
        )
        a.page("/", "/private", "/public")
        a.page("/public")
        _records, _crawler = await run(make_config(), [a.url("/")])
    assert net.paths(A) == ["/robots.txt", "/robots.txt", "/", "/public"]
    gap = net.gaps(A)[0]
    assert gap >= 0.05 - EPSILON  # robots.retry_initial


async def test_robots_txt_redirects_are_followed_across_hosts_for_the_original_origin() -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.redirect("/robots.txt", b.url("/hop1"), status=301)
        b.redirect("/hop1", "/hop2")
        b.redirect("/hop2", "/rules.txt", status=307)
        b.text("/rules.txt", "User-agent: *\nDisallow: /no\n")
        a.page("/", "/no", "/yes")
        a.page("/yes")
        await run(make_config(fetch=PUBLIC_LOOPBACK), [a.url("/")])
    assert net.paths(A) == ["/robots.txt", "/", "/yes"]
    assert net.paths(B) == ["/hop1", "/hop2", "/rules.txt"]


async def test_robots_txt_more_than_five_redirects_is_unavailable() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.redirect("/robots.txt", "/r1")
        for n in range(1, 7):
            a.redirect(f"/r{n}", f"/r{n + 1}")
        a.text("/r7", "User-agent: *\nDisallow: /\n")
        a.page("/", "/next")
        a.page("/next")
        await run(make_config(), [a.url("/")])
    assert net.paths(A) == ["/robots.txt", "/r1", "/r2", "/r3", "/r4", "/r5", "/", "/next"]


# --- politeness --------------------------------------------------------------------------------


async def test_crawl_delay_holds_between_request_starts_robots_txt_included() -> None:
    async with LoopbackWeb(A, B) as net:
        for ip in (A, B):
            site = net[ip]
            site.robots("User-agent: *\nCrawl-delay: 0.2\n")
            site.page("/", "/1", "/2", "/3")
            for n in (1, 2, 3):
                site.page(f"/{n}", "/4")
            site.page("/4")
        config = make_config(scope=ScopeConfig(allow_domains=(B,)))
        _records, crawler = await run(config, [net[A].url("/"), net[B].url("/")])
    for ip in (A, B):
        assert len(net.paths(ip)) == 6
        assert min(net.gaps(ip)) >= 0.2 - EPSILON
    assert crawler.stats.pages == 10


async def test_min_delay_holds_without_a_crawl_delay_and_a_larger_crawl_delay_wins() -> None:
    async with LoopbackWeb(A, B) as net:
        net[A].robots("User-agent: *\nAllow: /\n")
        net[B].robots("User-agent: *\nCrawl-delay: 0.25\n")
        for ip in (A, B):
            net[ip].page("/", "/1", "/2")
            net[ip].page("/1")
            net[ip].page("/2")
        config = make_config(politeness={"min_delay": 0.15}, scope=ScopeConfig(allow_domains=(B,)))
        await run(config, [net[A].url("/"), net[B].url("/")])
    assert min(net.gaps(A)) >= 0.15 - EPSILON
    assert min(net.gaps(B)) >= 0.25 - EPSILON


async def test_crawl_delay_above_the_cap_is_crawled_at_the_cap_or_skipped() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("User-agent: *\nCrawl-delay: 3600\n")
        a.page("/", "/1")
        a.page("/1")
        capped = make_config(politeness={"max_crawl_delay": 0.1})
        _, crawler = await run(capped, [a.url("/")])
        assert net.paths(A) == ["/robots.txt", "/", "/1"]
        assert min(net.gaps(A)) >= 0.1 - EPSILON
        (report,) = crawler.host_reports()
        assert report.crawl_delay == 3600 and report.crawl_delay_capped and report.interval == 0.1
        net.hits.clear()
        skipping = make_config(politeness={"max_crawl_delay": 0.1, "over_max_crawl_delay": "skip"})
        _records, crawler = await run(skipping, [a.url("/")])
    assert net.paths(A) == ["/robots.txt"]
    assert crawler.stats.skips["host skipped"] == 1


async def test_request_rate_holds() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("User-agent: *\nRequest-rate: 4/1s\n")
        a.page("/", "/1", "/2", "/3")
        for n in (1, 2, 3):
            a.page(f"/{n}")
        await run(make_config(), [a.url("/")])
    assert len(net.paths(A)) == 5
    assert min(net.gaps(A)) >= 0.25 - EPSILON


async def test_visit_time_window_holds_requests_until_it_opens() -> None:
    # The crawl's clock starts 0.4 s before midnight UTC; the window opens at midnight.
    start = 20_000 * 86_400 - 0.4
    async with LoopbackWeb(A, B) as net:
        net[A].robots("User-agent: *\nVisit-time: 0000-0100\n")
        net[B].robots("User-agent: *\nAllow: /\n")
        for ip in (A, B):
            net[ip].page("/", "/1")
            net[ip].page("/1")
        config = make_config(scope=ScopeConfig(allow_domains=(B,)))
        began = asyncio.get_running_loop().time()
        _records, _crawler = await run(config, [net[A].url("/"), net[B].url("/")], start_time=start)
    a_pages = [hit for hit in net.hits if hit.host == A and hit.path != "/robots.txt"]
    assert [hit.path for hit in a_pages] == ["/", "/1"]
    assert a_pages[0].at - began >= 0.4 - EPSILON
    assert net.paths(B) == ["/robots.txt", "/", "/1"]
    b_first_page = next(hit for hit in net.hits if hit.host == B and hit.path == "/")
    assert b_first_page.at < a_pages[0].at  # the rest of the crawl did not wait


async def test_a_window_hours_away_defers_its_host_and_the_crawl_reports_it() -> None:
    start = 20_000 * 86_400 + 12 * 3600  # noon UTC
    async with LoopbackWeb(A, B) as net:
        net[A].robots("User-agent: *\nVisit-time: 1800-1900\n")
        net[B].robots("")
        for ip in (A, B):
            net[ip].page("/", "/1")
            net[ip].page("/1")
        config = make_config(scope=ScopeConfig(allow_domains=(B,)))
        _records, crawler = await run(config, [net[A].url("/"), net[B].url("/")], start_time=start)
    assert net.paths(A) == ["/robots.txt"]
    assert net.paths(B) == ["/robots.txt", "/", "/1"]
    assert crawler.stats.outcome == "deferred"
    (deferred,) = crawler.deferred
    assert deferred.origin == net[A].origin and deferred.pending == 1
    assert deferred.until == pytest.approx(start + 6 * 3600, abs=1)
    assert "Visit-time" in deferred.reason


async def test_429_with_retry_after_backs_the_host_off_and_the_url_is_retried() -> None:
    from aiohttp import web

    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        a.sequence(
            "/",
            lambda request: web.Response(status=429, headers={"Retry-After": "1"}),
            lambda request: web.Response(text="<a href='/next'>n</a>", content_type="text/html"),
        )
        a.page("/next")
        # Retry-After is honoured up to politeness.backoff_max (make_config's is 0.2 s).
        config = make_config(politeness={"min_delay": 0.0, "backoff_max": 5.0})
        records, crawler = await run(config, [a.url("/")])
    assert net.paths(A) == ["/robots.txt", "/", "/", "/next"]
    times = net.times(A)
    assert times[2] - times[1] >= 1.0 - EPSILON
    assert by_url(records)[a.url("/")].status == 200
    # Throttled, not failed: the retries meant for broken servers are not spent.
    assert crawler.stats.throttled == 1 and crawler.stats.retries == 0
    assert crawler.stats.statuses[429] == 1


async def test_503_without_retry_after_is_throttled_then_retried_then_given_up() -> None:
    """A refusal is asked again without spending fetch.max_retries, while the host's refusals in
    a row are at most politeness.max_refusals; past them each counts as a failure."""
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        a.status("/", 503)
        config = make_config(politeness={"max_refusals": 2, "min_delay": 0.01})
        records, crawler = await run(config, [a.url("/")])
    # 2 throttled, then fetch.max_retries = 2 retries, then given up.
    assert net.paths(A) == ["/robots.txt", "/", "/", "/", "/", "/"]
    gaps = net.gaps(A)
    # The learned interval: 3 times the interval in force at each refusal, up to backoff_max.
    assert gaps[1] >= 0.03 - EPSILON and gaps[2] >= 0.09 - EPSILON
    assert all(gap <= 0.2 * 1.1 + 0.15 for gap in gaps[1:])  # backoff_max 0.2, a tenth of jitter
    (record,) = records
    assert record.status == 503 and record.error == "status 503, throttled (3 tries)"
    assert (crawler.stats.throttled, crawler.stats.retries) == (2, 2)


# --- URLs, links, redirects ---------------------------------------------------------------------


async def test_links_that_normalise_alike_are_fetched_once() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        host = f"HTTP://{A}:{a.port}"
        a.page(
            "/",
            "/p?x=1#top",
            "./p?x=1",
            "/q/../p?x=1",
            f"{host}/p?x=1",
            "/%70?x=1",
            "p?x=1#other",
        )
        a.page("/p?x=1", "/", "/index.html#x")
        a.page("/index.html")
        records, _crawler = await run(make_config(), [a.url("/")])
    assert net.paths(A) == ["/robots.txt", "/", "/p?x=1", "/index.html"]
    assert by_url(records)[a.url("/")].links == (a.url("/p?x=1"),)


async def test_redirects_are_followed_by_the_crawler_and_recorded_as_one_chain() -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("")
        b.robots("")
        a.page("/", "/old")
        a.redirect("/old", b.url("/moved"), status=301)
        b.redirect("/moved", "/final")
        b.page("/final", "/x")
        b.page("/x")
        config = make_config(scope=ScopeConfig(allow_domains=(B,)), fetch=PUBLIC_LOOPBACK)
        records, _crawler = await run(config, [a.url("/")])
    chain = by_url(records)[a.url("/old")]
    assert chain.final_url == b.url("/final") and chain.status == 200
    assert chain.redirects == (a.url("/old"), b.url("/moved"))
    assert chain.links == (b.url("/x"),)
    assert net.paths(B) == ["/robots.txt", "/moved", "/final", "/x"]


async def test_redirect_out_of_scope_is_not_followed() -> None:
    async with LoopbackWeb(A, B) as net:
        a = net[A]
        a.robots("")
        a.page("/", "/away")
        a.redirect("/away", net[B].url("/"))
        records, _crawler = await run(make_config(), [a.url("/")])
    assert net.paths(B) == []
    away = by_url(records)[a.url("/away")]
    assert away.error is not None and "out of scope" in away.error


async def test_a_seed_that_redirects_to_another_host_crawls_that_host() -> None:
    """`http://example.org/` -> `https://www.example.org/`: the target's host joins the scope, and
    is crawled as a seed's host would be; a redirect from a page that is not a seed's chain keeps
    the scope as it was."""
    async with LoopbackWeb(A, B, C) as net:
        a, b, c = net[A], net[B], net[C]
        a.robots("")
        b.robots("User-agent: *\nDisallow: /private\n")
        c.robots("")
        a.redirect("/", b.url("/home"), status=301)
        b.page("/home", "/one", "/private/x", "/away")
        b.page("/one", "/two", c.url("/"))
        b.page("/two")
        b.redirect("/away", c.url("/elsewhere"))
        c.page("/")
        c.page("/elsewhere")
        records, crawler = await run(make_config(fetch=PUBLIC_LOOPBACK), [a.url("/")])
    assert net.paths(A) == ["/robots.txt", "/"]
    assert sorted(net.paths(B)) == ["/away", "/home", "/one", "/robots.txt", "/two"]
    assert net.paths(C) == []
    assert crawler.seed_moves == ((a.url("/"), b.url("/home")),)
    home = by_url(records)[a.url("/")]
    assert (home.final_url, home.status, home.redirects) == (b.url("/home"), 200, (a.url("/"),))
    away = by_url(records)[b.url("/away")]
    assert away.error is not None and "out of scope: host" in away.error
    assert crawler.stats.skips["out of scope: host"] == 2  # c's / from /one, and /away's target


async def test_a_resumed_crawl_keeps_the_host_a_seed_redirected_to(tmp_path: Path) -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("")
        b.robots("")
        a.redirect("/", b.url("/"), status=301)
        b.page("/", "/more")
        b.page("/more")
        config = make_config(limits={"max_pages": 2}, fetch=PUBLIC_LOOPBACK)
        _records, first = await run(config, [a.url("/")], data_dir=tmp_path)
        assert first.stats.outcome == "page limit"
        config = make_config(fetch=PUBLIC_LOOPBACK)
        _records, second = await run(config, [a.url("/")], data_dir=tmp_path)
    assert second.seed_moves == ((a.url("/"), b.url("/")),)
    assert sorted(net.paths(B)) == ["/", "/more", "/robots.txt"]
    assert second.stats.skips["out of scope: host"] == 0


# --- hosts that cannot be reached ----------------------------------------------------------------


async def test_a_refused_host_is_given_up_in_the_time_configured() -> None:
    """Nothing listens on D: every robots.txt attempt is refused. The host is retried with backoff
    until its next try would come after robots.give_up_after, then given up: its URL is a skip
    with the error, the refusals are errors as they happen, and the live host is crawled."""
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        a.page("/")
        dead = f"http://{D}:9/"  # nothing listens there
        config = make_config(robots={"retry_initial": 0.05, "retry_max": 0.2, "give_up_after": 0.5})
        records, crawler = await run(config, [a.url("/"), dead])
    assert [record.url for record in records] == [a.url("/")]
    origin = dead.rstrip("/")
    assert list(crawler.given_up) == [origin]
    assert "robots.txt unreachable: connection" in crawler.given_up[origin]
    assert crawler.stats.skips["host given up"] == 1
    assert crawler.stats.errors["connection"] >= 3
    assert crawler.stats.outcome == "finished"


async def test_a_name_that_does_not_resolve_is_given_up_at_its_second_try() -> None:
    config = make_config(robots={"retry_initial": 0.05, "retry_max": 0.2, "give_up_after": 3600.0})
    records, crawler = await run(config, ["http://nowhere.invalid/", "http://nowhere.invalid/b"])
    assert records == []
    assert list(crawler.given_up) == ["http://nowhere.invalid"]
    assert "(2 tries)" in crawler.given_up["http://nowhere.invalid"]
    assert crawler.stats.errors["dns"] == 2
    assert crawler.stats.skips["host given up"] == 2


async def test_a_certificate_that_fails_is_given_up_at_its_second_try(test_data: Path) -> None:
    tls = test_data / "tls"
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tls / "cert.pem", tls / "key.pem")
    handshakes = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal handshakes
        handshakes += 1
        writer.close()

    server = await asyncio.start_server(serve, A, 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    config = make_config(robots={"retry_initial": 0.05, "retry_max": 0.2, "give_up_after": 3600.0})
    try:
        records, crawler = await run(config, [f"https://{A}:{port}/"])
    finally:
        server.close()
        await server.wait_closed()
    assert records == []
    assert list(crawler.given_up) == [f"https://{A}:{port}"]
    assert crawler.stats.errors["tls"] == 2


async def test_a_redirect_out_of_scope_is_one_skip(tmp_path: Path) -> None:
    """Counted once and written once (it was counted twice: the redirect path counted it and
    then handed it to the one place that counts skips)."""
    async with LoopbackWeb(A, B) as net:
        a = net[A]
        a.robots("")
        a.page("/", "/away")
        a.redirect("/away", net[B].url("/"))
        config = make_config(output={"format": "jsonl"})
        _records, crawler = await run(config, [a.url("/")], data_dir=tmp_path)
    assert crawler.stats.skips == {"out of scope: host": 1}
    lines = (tmp_path / "skips.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {
            "url": net[B].url("/"),
            "reason": "out of scope: host",
            "detail": f"redirect from {a.url('/away')}",
        }
    ]


async def test_a_frameset_site_is_crawled_through_its_frames_iframes_and_refreshes() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("User-agent: *\nDisallow: /private\n")
        a.text(
            "/",
            "<html><head><title>frames</title></head><frameset>"
            "<frame src='/nav.html'><frame src='/private/admin.html'><frame src='/main.html'>"
            "</frameset></html>",
            content_type="text/html",
        )
        a.page("/nav.html", "/one")
        a.text(
            "/main.html",
            '<html><head><meta http-equiv="refresh" content="10; url=/moved.html"></head>'
            "<body><iframe src='/embedded.html'>no frames</iframe></body></html>",
            content_type="text/html",
        )
        a.page("/one")
        a.page("/moved.html")
        a.page("/embedded.html")
        a.page("/private/admin.html")
        records, crawler = await run(make_config(), [a.url("/")])
    assert sorted(net.paths(A)) == [
        "/",
        "/embedded.html",
        "/main.html",
        "/moved.html",
        "/nav.html",
        "/one",
        "/robots.txt",
    ]
    assert crawler.stats.skips["disallowed by robots.txt"] == 1
    front = by_url(records)[a.url("/")]
    assert front.links == (a.url("/nav.html"), a.url("/private/admin.html"), a.url("/main.html"))


async def test_links_to_images_archives_and_media_are_counted_not_fetched() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        a.page("/", "/photo.JPG", "/archive.tar.gz", "/doc.pdf?v=1", "/next.html", "/jpg/")
        a.page("/next.html")
        a.page("/jpg/")
        _records, crawler = await run(make_config(), [a.url("/")])
    assert sorted(net.paths(A)) == ["/", "/jpg/", "/next.html", "/robots.txt"]
    assert crawler.stats.skips["not HTML by its extension"] == 3


async def test_non_html_is_recorded_not_parsed() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        a.page("/", "/doc.pdf")
        a.text("/doc.pdf", "<a href='/hidden'>x</a>", content_type="application/pdf")
        a.page("/hidden")
        # Every link tried: this is about the answer a non-HTML link gets.
        config = make_config(scope={"skip_extensions": ()})
        records, _crawler = await run(config, [a.url("/")])
    assert net.paths(A) == ["/robots.txt", "/", "/doc.pdf"]
    pdf = by_url(records)[a.url("/doc.pdf")]
    assert pdf.content_type == "application/pdf" and pdf.links == () and pdf.size == 0


async def test_body_cap_applies_to_decoded_bytes() -> None:
    from aiohttp import web

    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")

        def compressed(request: web.Request) -> web.Response:
            response = web.Response(text="<p>" + "x" * 200_000 + "</p>", content_type="text/html")
            response.enable_compression()
            return response

        a.routes["/"] = compressed
        config = make_config(fetch={"max_body_bytes": 10_000})
        records, _crawler = await run(config, [a.url("/")])
    (record,) = records
    assert record.truncated and record.size == 10_000


async def test_base_href_and_area_links() -> None:
    from aiohttp import web

    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        html = (
            '<html><head><base href="/docs/"></head><body><a href="guide">g</a>'
            '<map><area href="/map-target"></map><a href="mailto:x@example.org">m</a>'
            '<a href="javascript:void(0)">j</a></body></html>'
        )
        a.routes["/"] = lambda request: web.Response(text=html, content_type="text/html")
        a.page("/docs/guide")
        a.page("/map-target")
        _records, _crawler = await run(make_config(), [a.url("/")])
    assert sorted(net.paths(A)) == ["/", "/docs/guide", "/map-target", "/robots.txt"]


# --- limits, scope, control --------------------------------------------------------------------


async def test_limits_on_pages_depth_and_pages_per_host() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        for n in range(10):
            a.page(f"/{n}", f"/{n + 1}", f"/{n + 2}")
        records, crawler = await run(make_config(limits=LimitsConfig(max_pages=3)), [a.url("/0")])
        assert len(records) == 3 and crawler.stats.outcome == "page limit"
        assert crawler.stats.queued > 0  # the rest stays queued, not dropped
        records, crawler = await run(make_config(limits=LimitsConfig(max_depth=1)), [a.url("/0")])
        assert sorted(record.depth for record in records) == [0, 1, 1]
        assert crawler.stats.skips["over limits.max_depth"] > 0
        per_host = make_config(limits=LimitsConfig(max_pages_per_host=4))
        records, crawler = await run(per_host, [a.url("/0")])
        assert len(records) == 4


async def test_scope_is_the_seeds_hosts_unless_the_config_widens_it() -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("")
        b.robots("")
        a.page("/", b.url("/"), "/admin/x", "/ok")
        a.page("/ok")
        a.page("/admin/x")
        b.page("/")
        _records, crawler = await run(make_config(scope={"deny": ("/admin/",)}), [a.url("/")])
        assert net.paths(B) == [] and "/admin/x" not in net.paths(A)
        assert crawler.stats.skips["out of scope: host"] == 1
        assert crawler.stats.skips["out of scope: deny pattern"] == 1
        config = make_config(scope={"allow_domains": (B,)}, fetch=PUBLIC_LOOPBACK)
        await run(config, [a.url("/")])
    assert net.paths(B) == ["/robots.txt", "/"]


async def test_stop_finishes_requests_in_flight_and_keeps_the_queue() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("User-agent: *\nCrawl-delay: 0.05\n")
        for n in range(50):
            a.page(f"/{n}", f"/{n + 1}", f"/{n + 2}")
        async with Crawler(make_config()) as crawler:
            records = []
            async for record in crawler.crawl([a.url("/0")]):
                records.append(record)
                if len(records) == 2:
                    crawler.stop()
    assert len(records) in (2, 3)
    assert crawler.stats.outcome == "stopped"
    assert crawler.stats.queued > 0 and crawler.stats.in_flight == 0


async def test_two_crawlers_run_side_by_side_in_one_process() -> None:
    async with LoopbackWeb(A, B) as net:
        for ip in (A, B):
            net[ip].robots("User-agent: *\nCrawl-delay: 0.05\n")
            net[ip].page("/", "/1", "/2")
            net[ip].page("/1")
            net[ip].page("/2")
        (records_a, crawler_a), (records_b, crawler_b) = await asyncio.gather(
            run(make_config(), [net[A].url("/")]), run(make_config(), [net[B].url("/")])
        )
    assert {r.final_url for r in records_a} == {net[A].url(p) for p in ("/", "/1", "/2")}
    assert {r.final_url for r in records_b} == {net[B].url(p) for p in ("/", "/1", "/2")}
    assert crawler_a.stats.pages == crawler_b.stats.pages == 3


async def test_unreachable_host_is_deferred_not_dropped() -> None:
    config = make_config(
        # Inside robots.give_up_after, a host whose next try is past max_wait waits for it.
        robots={"retry_initial": 3600.0, "retry_max": 3600.0, "give_up_after": 7200.0},
        politeness={"max_wait": 10.0},
    )
    # Nothing listens on this port: connection refused.
    records, crawler = await run(config, ["http://127.0.1.9:9/"])
    assert records == []
    assert crawler.stats.outcome == "deferred"
    (deferred,) = crawler.deferred
    assert deferred.pending == 1 and "unreachable" in deferred.reason


async def test_the_log_says_when_robots_txt_is_really_tried_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The next try is the later of robots.retry_* and the host's own backoff after a failure;
    the log line once gave the first (0.2 s) while the crawl waited the second (1 s here)."""
    config = make_config(
        robots={"retry_initial": 0.2, "retry_max": 0.2, "give_up_after": 0.5},
        politeness={"backoff_initial": 1.0, "backoff_max": 1.0},
    )
    with caplog.at_level(logging.INFO, logger="crawler.crawl.robots_requests"):
        await run(config, ["http://127.0.1.9:9/"])  # connection refused
    waits = [
        float(record.getMessage().rsplit("next try in ", 1)[1].split()[0])
        for record in caplog.records
        if "next try in" in record.getMessage()
    ]
    assert waits and min(waits) >= 0.9


async def test_jsonl_output_has_one_object_per_fetched_url(tmp_path: Any) -> None:
    import json

    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("User-agent: *\nDisallow: /no\n")
        a.page("/", "/yes", "/no")
        a.page("/yes", title="Yes page")
        await run(make_config(output={"format": "jsonl"}), [a.url("/")], data_dir=tmp_path)
    pages = [json.loads(line) for line in (tmp_path / "pages.jsonl").read_text().splitlines()]
    skips = [json.loads(line) for line in (tmp_path / "skips.jsonl").read_text().splitlines()]
    assert [page["url"] for page in pages] == [a.url("/"), a.url("/yes")]
    required = {
        "url",
        "final_url",
        "status",
        "fetched_at",
        "depth",
        "content_type",
        "title",
        "links",
        "index",
        "index_reason",
        "follow",
        "text",
    }
    assert required <= set(pages[0])
    # Links are the page's own: /no is one, though robots.txt keeps the crawl from fetching it.
    assert pages[0]["links"] == [a.url("/yes"), a.url("/no")] and pages[1]["title"] == "Yes page"
    assert skips == [
        {
            "url": a.url("/no"),
            "reason": "disallowed by robots.txt",
            "detail": skips[0]["detail"],
        }
    ]
    assert "line 2" in skips[0]["detail"]


async def test_per_host_concurrency_and_the_global_limit_hold() -> None:
    from aiohttp import web

    in_flight = {"now": 0, "most": 0}

    async def slow(request: web.Request) -> web.Response:
        in_flight["now"] += 1
        in_flight["most"] = max(in_flight["most"], in_flight["now"])
        await asyncio.sleep(0.1)
        in_flight["now"] -= 1
        return web.Response(text="<p>leaf</p>", content_type="text/html")

    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("User-agent: *\nCrawl-delay: 0.02\n")
        links = [f"/{n}" for n in range(8)]
        a.page("/", *links)
        for link in links:
            a.routes[link] = slow
        config = make_config(politeness={"per_host_concurrency": 3})
        _, crawler = await run(config, [a.url("/")])
        assert in_flight["most"] == 3
        # Our starts stay an interval apart. (With several in flight, a new connection's setup
        # can shift what the server sees; with one in flight the gap also counts from the answer.)
        (report,) = crawler.host_reports()
        assert report.shortest_gap is not None and report.shortest_gap >= 0.02 - EPSILON
        in_flight["most"] = 0
        net.hits.clear()
        await run(make_config(concurrency=2, politeness={"per_host_concurrency": 3}), [a.url("/")])
    assert in_flight["most"] == 2


async def test_an_internal_error_backs_the_host_off_instead_of_asking_again_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug of ours that recurs on every try must not become requests at the host's full pace
    (with min_delay 0: a tight loop)."""
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.page("/")

        def broken(self: RobotsRequests, *args: Any) -> None:
            raise RuntimeError("a bug")

        monkeypatch.setattr(RobotsRequests, "obey", broken)
        config = make_config(
            politeness={"backoff_initial": 3600.0, "backoff_max": 3600.0, "max_wait": 60.0}
        )
        _records, crawler = await run(config, [a.url("/")])
    assert net.paths(A) == ["/robots.txt"]
    assert crawler.stats.errors["internal"] == 1
    assert crawler.stats.outcome == "deferred"
    (deferred,) = crawler.deferred
    assert deferred.reason == "backing off after errors"


async def test_a_kept_alive_connection_closed_unanswered_is_asked_again_at_the_hosts_pace() -> None:
    """The server closes the connection robots.txt came on as the next request arrives. The
    fetcher does not send it again at once (the server may have read it); the crawl asks again
    a full interval later, without a backoff."""
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("User-agent: *\nCrawl-delay: 0.2\n")

        async def drop(request: web.Request) -> web.StreamResponse:
            assert request.transport is not None
            request.transport.close()
            raise asyncio.CancelledError  # aiohttp's own way out of a lost connection

        a.page("/again")
        a.sequence(
            "/",
            drop,
            lambda request: web.Response(text="<a href=/again>x</a>", content_type="text/html"),
        )
        config = make_config(
            fetch={"client": "http1"},
            politeness={"backoff_initial": 3600.0, "backoff_max": 3600.0, "max_wait": 60.0},
        )
        records, crawler = await run(config, [a.url("/")])
    assert net.paths(A) == ["/robots.txt", "/", "/", "/again"]
    assert min(net.gaps(A)) >= 0.2 - EPSILON
    assert crawler.stats.outcome == "finished"
    assert crawler.stats.errors["closed"] == 1 and crawler.stats.retries == 1
    assert [record.url for record in records if record.status == 200] == [
        a.url("/"),
        a.url("/again"),
    ]


async def test_a_host_goes_on_while_its_last_page_waits_to_be_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page that waits long to be read (for a turn at the CPU, or for the page reader's
    process) does not hold its host: the next request starts at the host's interval after the
    answer, not after the read."""
    read_answer = Answers._read_answer
    slow_s, delay_s = 0.6, 0.2

    async def slow_read(self: Answers, item: QueuedUrl, answer: Response) -> object:
        await asyncio.sleep(slow_s)
        return await read_answer(self, item, answer)

    monkeypatch.setattr(Answers, "_read_answer", slow_read)
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots(f"User-agent: *\nCrawl-delay: {delay_s}\n")
        site.page("/", *(f"/{n}" for n in range(1, 6)))
        for n in range(1, 6):
            site.page(f"/{n}")
        _records, crawler = await run(make_config(), [site.url("/")])
    assert crawler.stats.pages == 6
    assert net.paths(A)[:2] == ["/robots.txt", "/"]
    # After the home page's read (its links), the five pages come at the interval, each while
    # the one before waits out its slow read.
    page_gaps = net.gaps(A)[2:]
    assert len(page_gaps) == 4
    assert min(page_gaps) >= delay_s - EPSILON
    assert max(page_gaps) < slow_s, page_gaps


WAVE_DELAY_S = 0.3
WAVE_HOSTS = ADDRESSES[:12]


async def crawl_a_robots_wave(config: Config) -> LoopbackWeb:
    """Crawl WAVE_HOSTS, each with a robots.txt asking for WAVE_DELAY_S and a home page. No
    robots.txt is answered until every host has asked for it, then all are: a wave of answers
    reaching the crawl in the same moment. Returns the web, its hits."""
    asked = 0
    everyone = asyncio.Event()

    async def answer(request: web.Request) -> web.Response:
        nonlocal asked
        asked += 1
        if asked == len(WAVE_HOSTS):
            everyone.set()
        await everyone.wait()
        return web.Response(text=f"User-agent: *\nCrawl-delay: {WAVE_DELAY_S}\n")

    async with LoopbackWeb(*WAVE_HOSTS) as net:
        for ip in WAVE_HOSTS:
            net[ip].routes["/robots.txt"] = answer
            net[ip].page("/")
        _records, crawler = await run(config, [net[ip].url("/") for ip in WAVE_HOSTS])
    assert crawler.stats.pages == len(WAVE_HOSTS)
    return net


async def test_robots_txt_answers_that_come_together_are_read_in_turns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A wave of robots.txt answers is read one answer per iteration of the event loop (its
    parse and its rules: crawler.crawl.turns), so the loop polls between them and the answers
    behind are stamped as they come, not after the whole wave has been read."""
    iteration = start_iteration_counter(asyncio.get_running_loop())
    parsed_at: list[int] = []
    parse = RobotsTxt.parse.__func__  # type: ignore[attr-defined]

    def parse_counted(cls: type[RobotsTxt], body: bytes | str, **options: object) -> RobotsTxt:
        parsed_at.append(iteration())
        return parse(cls, body, **options)  # type: ignore[no-any-return]

    monkeypatch.setattr(RobotsTxt, "parse", classmethod(parse_counted))
    await crawl_a_robots_wave(make_config())
    assert len(parsed_at) == len(WAVE_HOSTS)
    assert len(set(parsed_at)) == len(WAVE_HOSTS), parsed_at


async def test_robots_txt_answers_are_committed_with_the_requests_after_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What robots.txt answers changed is committed before the next request starts, once for
    the requests launched together, not at every wake of the scheduler in between (a wave of
    2,000 answers made as many commits on the loop)."""
    commits: list[float] = []
    commit = MemoryCrawlState.commit

    def commit_timed(self: MemoryCrawlState) -> None:
        commits.append(time.monotonic())
        commit(self)

    monkeypatch.setattr(MemoryCrawlState, "commit", commit_timed)
    net = await crawl_a_robots_wave(make_config(state={"commit_interval": 10.0}))
    robots_asked = max(hit.at for hit in net.hits if hit.path == "/robots.txt")
    first_page = min(hit.at for hit in net.hits if hit.path == "/")
    assert first_page - robots_asked >= WAVE_DELAY_S - EPSILON
    # Between the wave of answers and the pages a Crawl-delay later, nothing was launched:
    # nothing to commit for.
    between = [at for at in commits if robots_asked < at < first_page - WAVE_DELAY_S / 2]
    assert between == [], f"{len(between)} commits while no request started"
