"""End to end over loopback: the addresses a crawl connects to. The seeds' addresses on 127.0.1.x
stand for the public site a user names; another 127.0.x.y stands for a host inside the network,
which a redirect, a link or a robots.txt redirect must not reach: its server sees no request,
and what led there is a skip ('address refused') with its reason, counted."""

from __future__ import annotations

import pytest
from support.crawling import by_url, make_config, run
from support.loopback import LoopbackWeb
from support.rawserver import RawServer, answer

pytestmark = pytest.mark.loopback

A, B, INSIDE = "127.0.1.1", "127.0.1.2", "127.0.1.9"
REFUSED = "a loopback address, not one a seed names: not connected to"

PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 23\r\n\r\n"
    b"<p>inside, never read.\n"
)


async def test_a_seeds_redirect_into_the_network_is_refused_and_counted() -> None:
    """The seed's own redirect takes its target's host into the scope (a seed's moves do), so
    only the address guard stands between the crawl and the inside."""
    inside_routes = {"/robots.txt": PAGE, "/latest/meta-data/": PAGE}
    async with RawServer(INSIDE, inside_routes) as inside, LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        site.redirect("/", inside.url("/latest/meta-data/"))
        records, crawler = await run(make_config(), [site.url("/")])
    assert inside.accepted == 0 and inside.requests == []
    assert net.paths(A) == ["/robots.txt", "/"]
    assert crawler.stats.skips["address refused"] == 1
    assert crawler.stats.errors["blocked"] == 1
    went = by_url(records)[site.url("/")]
    assert went.status == 302 and went.error is not None
    target = inside.url("/latest/meta-data/")
    assert f"redirect to {target} not followed: address refused" in went.error
    assert REFUSED in went.error


async def test_a_robots_txt_that_redirects_into_the_network_leaves_its_host_uncrawled() -> None:
    async with RawServer(INSIDE, {"/robots.txt": PAGE}) as inside, LoopbackWeb(A) as net:
        site = net[A]
        site.redirect("/robots.txt", inside.url("/robots.txt"))
        site.page("/", "/next")
        records, crawler = await run(make_config(), [site.url("/")])
    assert inside.accepted == 0
    assert net.paths(A) == ["/robots.txt"]
    assert records == []
    assert crawler.stats.skips["address refused"] == 1
    assert crawler.given_up == {}


async def test_a_link_into_the_network_is_refused_even_where_scope_lets_it_in() -> None:
    inside_routes = {"/robots.txt": PAGE, "/admin": PAGE}
    async with RawServer(INSIDE, inside_routes) as inside, LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        site.page("/", inside.url("/admin"))
        config = make_config(scope={"allow_domains": (INSIDE,)})
        records, crawler = await run(config, [site.url("/")])
    assert inside.accepted == 0
    assert [record.url for record in records] == [site.url("/")]
    assert crawler.stats.skips["address refused"] == 1


async def test_a_name_that_resolves_into_the_network_is_refused() -> None:
    """`localhost` resolves to 127.0.0.1 (and ::1), an address no seed names."""
    inside_routes = {"/robots.txt": PAGE, "/": PAGE}
    async with RawServer("127.0.0.1", inside_routes) as inside, LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        site.redirect("/", f"http://localhost:{inside.port}/")
        records, crawler = await run(make_config(), [site.url("/")])
    assert inside.accepted == 0
    assert crawler.stats.skips["address refused"] == 1
    assert "localhost is at " in (by_url(records)[site.url("/")].error or "")


async def test_the_seeds_own_addresses_stay_reachable_on_any_port() -> None:
    """Two seeds on two addresses: each is crawled, and one's redirect to another port of its
    own address is followed (another origin, the same address: the user named it)."""
    other_routes = {"/robots.txt": answer(b""), "/there": PAGE}
    async with RawServer(A, other_routes) as other_port, LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("")
        b.robots("")
        a.redirect("/", other_port.url("/there"))
        b.page("/")
        records, crawler = await run(make_config(), [a.url("/"), b.url("/")])
    requested = [request.split(b" ")[1] for request in other_port.requests]
    assert requested == [b"/robots.txt", b"/there"]
    assert net.paths(B) == ["/robots.txt", "/"]
    assert by_url(records)[a.url("/")].final_url == other_port.url("/there")
    assert crawler.stats.skips["address refused"] == 0


async def test_allow_addresses_lets_a_host_of_the_network_in() -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("")
        b.robots("")
        a.redirect("/", b.url("/in"))
        b.page("/in")
        records, _ = await run(make_config(fetch={"allow_addresses": (B,)}), [a.url("/")])
    assert net.paths(B) == ["/robots.txt", "/in"]
    assert by_url(records)[a.url("/")].final_url == b.url("/in")


async def test_block_private_addresses_refuses_the_seeds_own_but_what_is_listed() -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.page("/")
        b.page("/")
        config = make_config(fetch={"block_private_addresses": True, "allow_addresses": (B,)})
        records, crawler = await run(config, [a.url("/"), b.url("/")])
    assert net.paths(A) == []
    assert net.paths(B) == ["/robots.txt", "/"]
    assert [record.url for record in records] == [b.url("/")]
    assert crawler.stats.skips["address refused"] == 1


async def test_a_cloud_metadata_address_is_refused_whatever_the_list_says() -> None:
    """No request leaves: the refusal comes before any connection, so no metadata service is
    needed to show it (nor reached, were there one)."""
    metadata = "http://169.254.169.254/latest/meta-data/iam/"
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        site.redirect("/", metadata)
        config = make_config(fetch={"allow_addresses": ("169.254.0.0/16",)})
        records, crawler = await run(config, [site.url("/")])
    error = by_url(records)[site.url("/")].error or ""
    assert "a cloud metadata service's address" in error
    assert crawler.stats.skips["address refused"] == 1
