"""End to end over loopback: a crawl whose User-Agent is in the browser-compatible form obeys the
robots.txt group, META robots and X-Robots-Tag of the crawler it names, not a browser's; the
command line says which name it obeys as, and refuses a User-Agent that names no crawler."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.commands import crawl_beside_servers, crawl_command
from support.crawling import by_url, make_config, run
from support.loopback import LoopbackWeb

from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_OK

pytestmark = pytest.mark.loopback

A = "127.0.1.1"
NEWCOMER = "Mozilla/5.0 (compatible; NewcomerBot/1.0; +https://mysite.example/bot)"


async def test_the_crawlers_own_group_disallows_it() -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: NewcomerBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
        site.page("/", "/next")
        site.page("/next")
        records, crawler = await run(make_config(user_agent=NEWCOMER), [site.url("/")])
    assert net.paths(A) == ["/robots.txt"]
    assert records == []
    assert crawler.stats.skips["disallowed by robots.txt"] == 1
    assert all(hit.user_agent == NEWCOMER for hit in net.hits)


async def test_a_browsers_group_is_not_obeyed() -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: Mozilla\nDisallow: /\n\nUser-agent: NewcomerBot\nAllow: /\n")
        site.page("/", "/next")
        site.page("/next")
        records, _ = await run(make_config(user_agent=NEWCOMER), [site.url("/")])
    assert net.paths(A) == ["/robots.txt", "/", "/next"]
    assert len(records) == 2


async def test_meta_robots_and_x_robots_tag_speak_to_the_same_name() -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.html(
            "/",
            '<html><head><meta name="NewcomerBot" content="noindex">'
            '<meta name="Mozilla" content="nofollow"></head>'
            '<body>seen <a href="/next">next</a></body></html>',
        )
        site.html(
            "/next",
            "<html><body>private words</body></html>",
            headers={"X-Robots-Tag": "NewcomerBot: nofollow, Mozilla: noindex"},
        )
        records, _ = await run(make_config(user_agent=NEWCOMER), [site.url("/")])
    pages = by_url(records)
    home, following = pages[site.url("/")], pages[site.url("/next")]
    assert (home.index, home.follow) == (False, True)
    assert (following.index, following.follow) == (True, False)


async def test_the_start_says_which_name_is_obeyed(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.page("/")
        status, _, err = await crawl_beside_servers(
            site.url("/"), "--data", str(tmp_path / "data"), "--user-agent", NEWCOMER
        )
    assert status == EXIT_OK, err
    assert err.splitlines()[0] == (
        "crawl: obeying robots.txt, META robots and X-Robots-Tag as NewcomerBot "
        "('compatible; NewcomerBot/1.0' in the User-Agent)"
    )


@pytest.mark.parametrize(
    ("options", "key", "said"),
    [
        (
            ("--user-agent", "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36"),
            "user_agent",
            "names no crawler: read as it is, robots.txt would be obeyed as Mozilla",
        ),
        (("-s", "robots.token=Safari"), "robots.token", "Safari is a browser's product token"),
    ],
)
def test_a_browsers_name_is_refused(
    tmp_path: Path, options: tuple[str, ...], key: str, said: str
) -> None:
    status, out, err = crawl_command(
        "http://127.0.1.1:9/", "--data", str(tmp_path / "data"), *options
    )
    assert status == EXIT_BAD_INPUT and out == ""
    assert f": {key}: " in err and said in err
    assert not (tmp_path / "data").exists()
