"""Page requisites (fetch.page_requisites): a loopback site whose pages use each kind, some on a
second host whose robots.txt disallows part of them. Judged from the servers' request logs and
from the WARC files, read by warcio and FastWARC, each record's digests checked."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from aiohttp import web
from fastwarc.warc import ArchiveIterator as FastIterator
from support.commands import crawl_beside_servers, crawl_command
from support.crawling import PUBLIC_LOOPBACK, make_config, run
from support.loopback import LoopbackWeb
from warcio.archiveiterator import ArchiveIterator

from crawler.config import Config, LimitsConfig
from crawler.output.warc import warc_files

pytestmark = pytest.mark.loopback

A, B = "127.0.1.1", "127.0.1.2"
IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201ff2dd9d4"
    "0000000049454e44ae426082"
)
"""A 1x1 PNG."""


@dataclass(frozen=True)
class Archived:
    kind: str
    uri: str
    profile: str
    concurrent_to: str
    record_id: str
    truncated: str


def read_warc(data: Path) -> list[Archived]:
    """Every record of DIR/warc, after FastWARC checked every digest and warcio read every record
    with its digests checked too."""
    files = warc_files(data)
    assert files
    records: list[Archived] = []
    for path in files:
        with path.open("rb") as stream:
            for fast in FastIterator(stream, parse_http=False):
                assert fast.verify_block_digest()
                headers = dict(fast.headers)
                records.append(
                    Archived(
                        headers["WARC-Type"],
                        headers.get("WARC-Target-URI", ""),
                        headers.get("WARC-Profile", ""),
                        headers.get("WARC-Concurrent-To", ""),
                        headers["WARC-Record-ID"],
                        headers.get("WARC-Truncated", ""),
                    )
                )
    read_by_warcio = 0
    for path in files:
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream, check_digests=True):
                record.content_stream().read()
                read_by_warcio += 1
    assert read_by_warcio == len(records)
    return records


def binary(body: bytes, content_type: str) -> web.Response:
    return web.Response(body=body, content_type=content_type)


def build(net: LoopbackWeb) -> str:
    a, b = net[A], net[B]
    cdn = b.origin
    a.robots("User-agent: *\nAllow: /\n")
    b.robots(f"User-agent: *\nDisallow: /private/\nSitemap: {cdn}/sitemap.xml\n")
    b.text("/sitemap.xml", "<urlset/>", content_type="application/xml")
    a.html(
        "/",
        f"""<html><head><title>home</title>
<link rel="stylesheet" href="/css/style.css">
<link rel="alternate stylesheet" href="/css/alternate.css">
<link rel="icon" href="/favicon.ico">
<link rel="preload" as="image" href="/preloaded.png">
<style>.hero {{ background: url("/hero.png") }}</style>
<script src="{cdn}/cdn/app.js"></script>
</head><body style="background-image: url('/body.png')">
<img src="/img.png" srcset="/img-2x.png 2x, /img-3x.png 3x">
<picture><source srcset="/pic.webp" type="image/webp"><img src="/pic.png"></picture>
<img src="{cdn}/private/secret.png">
<img src="data:image/png;base64,AAAA">
<video poster="/poster.png"><source src="/movie.mp4"></video>
<iframe src="/frame.html"></iframe><iframe src="{cdn}/cdn/widget.html"></iframe>
<embed src="/embedded.svg"><object data="/object.svg"></object>
<a href="/second.html">second</a> <a href="{cdn}/cdn/page.html">on the CDN</a>
</body></html>""",
    )
    a.html(
        "/second.html",
        '<html><head><link rel="stylesheet" href="/css/style.css"></head>'
        '<body><img src="/copy.png"><a href="/">home</a></body></html>',
    )
    a.html(
        "/frame.html",
        '<html><body><img src="/frame.png"><a href="/frame-link.html">a link</a></body></html>',
    )
    a.page("/frame-link.html")
    # A frame out of scope is a requisite: its own requisites too, never its links.
    b.html("/cdn/widget.html", '<img src="widget.png"><a href="never.html">never followed</a>')
    b.routes["/cdn/widget.png"] = lambda request: binary(PNG + b"w", "image/png")
    a.text(
        "/css/style.css",
        '@import "more.css";\n'
        f".logo {{ background: url(../logo.png) }}\n.cdn {{ background: url({cdn}/cdn/b.png) }}\n"
        '@font-face { font-family: F; src: url("fonts/f.woff2") format("woff2") }\n'
        "/* url(commented.png) */\n",
        content_type="text/css",
    )
    a.text("/css/more.css", "p { cursor: url(pointer.png), auto }", content_type="text/css")
    a.text("/css/fonts/f.woff2", "wOF2", content_type="font/woff2")
    for path in (
        "/favicon.ico", "/preloaded.png", "/hero.png", "/body.png", "/img.png", "/img-2x.png",
        "/img-3x.png", "/pic.webp", "/pic.png", "/poster.png", "/frame.png", "/logo.png",
        "/css/pointer.png", "/copy.png",
    ):  # fmt: skip
        a.routes[path] = lambda request: binary(PNG, "image/png")
    a.text("/embedded.svg", "<svg/>", content_type="image/svg+xml")
    a.text("/object.svg", "<svg></svg>", content_type="image/svg+xml")
    a.routes["/movie.mp4"] = lambda request: binary(bytes(300_000), "video/mp4")
    b.text("/cdn/app.js", "console.log(1)", content_type="application/javascript")
    b.routes["/cdn/b.png"] = lambda request: binary(PNG + b"b", "image/png")
    b.page("/cdn/page.html", "/cdn/other.html")
    return a.url("/")


def config(reader: str = "auto", **fetch: object) -> Config:
    return make_config(
        fetch={**PUBLIC_LOOPBACK, "page_requisites": True, **fetch},
        output={"warc": True},
        page={"reader": reader},
    )


A_REQUISITES = {
    "/css/style.css", "/css/more.css", "/css/fonts/f.woff2", "/css/pointer.png", "/logo.png",
    "/favicon.ico", "/preloaded.png", "/hero.png", "/body.png", "/img.png", "/img-2x.png",
    "/img-3x.png", "/pic.webp", "/pic.png", "/poster.png", "/frame.png",
    "/embedded.svg", "/object.svg", "/copy.png",
}  # fmt: skip
B_REQUISITES = {"/cdn/app.js", "/cdn/b.png", "/cdn/widget.html", "/cdn/widget.png"}
A_PAGES = {"/", "/frame.html", "/frame-link.html", "/second.html"}
"""The seed, its frame (in scope: a page, as without requisites), the frame's link, a link."""


@pytest.mark.parametrize("reader", ["loop", "process"])
async def test_each_kind_of_requisite_is_fetched_once_under_its_hosts_robots(
    tmp_path: Path, reader: str
) -> None:
    async with LoopbackWeb(A, B) as net:
        seed = build(net)
        records, crawler = await run(config(reader), [seed], data_dir=tmp_path)
        a, b = net[A], net[B]
    asked_a, asked_b = Counter(net.paths(A)), Counter(net.paths(B))
    # Each requisite once per crawl (the stylesheet both pages use, too); pages and robots.txt.
    assert asked_a == Counter({path: 1 for path in {*A_REQUISITES, *A_PAGES, "/robots.txt"}})
    # The CDN: its robots.txt first, what it allows, never what it disallows, never its pages
    # (nor its sitemap: what it lists is not the crawl's).
    assert net.paths(B)[0] == "/robots.txt"
    assert asked_b == Counter({path: 1 for path in {*B_REQUISITES, "/robots.txt"}})
    # Requisites are no pages: the records are the pages' (the frame in scope among them).
    assert sorted(record.url for record in records) == sorted(a.url(path) for path in A_PAGES)
    stats = crawler.stats
    assert stats.requisites == Counter(fetched=len(A_REQUISITES) + len(B_REQUISITES), skipped=1)
    assert stats.requisite_skips == Counter({"disallowed by robots.txt": 1})
    assert stats.skips["out of scope: host"] == 1  # the CDN's page, linked, not crawled
    archived = read_warc(tmp_path)
    requests = Counter(r.uri for r in archived if r.kind == "request")
    answers = Counter(r.uri for r in archived if r.kind in ("response", "revisit"))
    every = {a.url(path) for path in asked_a} | {b.url(path) for path in asked_b}
    assert requests == answers == Counter({url: 1 for url in every})
    # The same PNG under another URL: a revisit of the first payload, as pywb reads it.
    revisits = {r.uri: r.profile for r in archived if r.kind == "revisit"}
    assert revisits[a.url("/copy.png")] == IDENTICAL
    assert b.url("/private/secret.png") not in answers
    # Metadata records only for pages.
    assert {r.uri for r in archived if r.kind == "metadata"} == {a.url(path) for path in A_PAGES}


async def test_the_summary_its_json_and_crawl_status_count_requisites(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with LoopbackWeb(A, B) as net:
        seed = build(net)
        status, out, err = await crawl_beside_servers(
            seed,
            *("--data", str(data)),
            "--warc",
            "--page-requisites",
            *("--delay", "0"),
            *("-s", "fetch.allow_addresses=[127.0.0.0/8]"),
        )
    assert status == 0, err
    fetched = len(A_REQUISITES) + len(B_REQUISITES)
    line = f"page requisites: {fetched} fetched, 1 skipped (disallowed by robots.txt 1), 0 failed"
    assert line in out
    summary = json.loads((data / "summary.json").read_text())
    assert summary["requisites"] == {
        "fetched": fetched,
        "skipped": 1,
        "failed": 0,
        "skips": {"disallowed by robots.txt": 1},
    }
    assert summary["figures"]["pages"] == len(A_PAGES)
    status, out, err = crawl_command("status", "--data", str(data))
    assert status == 0, err
    assert line in out


async def test_the_page_limit_waits_for_the_requisites_of_the_pages_started(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A, B) as net:
        seed = build(net)
        limited = replace(config(), limits=LimitsConfig(max_pages=1))
        records, crawler = await run(limited, [seed], data_dir=tmp_path)
        assert [record.url for record in records] == [seed]
        assert crawler.stats.outcome == "page limit"
        # Every requisite of the one page (the stylesheet's imports too), not the other pages'.
        seed_needs = A_REQUISITES - {"/copy.png", "/frame.png"}
        assert set(net.paths(A)) == {*seed_needs, "/", "/robots.txt"}
        assert set(net.paths(B)) == {*B_REQUISITES, "/robots.txt"}
        # Resumed with room for the other pages: their own requisites, nothing asked twice.
        more = replace(config(), limits=LimitsConfig(max_pages=len(A_PAGES)))
        records, crawler = await run(more, [seed], data_dir=tmp_path)
    assert {record.url for record in records} == {net[A].url(path) for path in A_PAGES - {"/"}}
    assert Counter(net.paths(A)) == Counter(
        {path: 1 for path in {*A_REQUISITES, *A_PAGES, "/robots.txt"}}
    )
    assert crawler.stats.requisites["fetched"] == len(A_REQUISITES) + len(B_REQUISITES)


async def test_the_caps_on_count_and_bytes_and_media_when_asked_for(tmp_path: Path) -> None:
    async with LoopbackWeb(A, B) as net:
        seed = build(net)
        capped = config(max_requisites_per_page=3)
        await run(capped, [seed], data_dir=tmp_path / "capped")
        capped_paths = set(net.paths(A)) | {f"B{path}" for path in net.paths(B)}
        net.hits.clear()
        media = config(requisite_media=True, max_requisite_bytes=1000)
        _, crawler = await run(media, [seed], data_dir=tmp_path / "media")
        media_paths = set(net.paths(A))
    # The first three of the seed page, in document order (the alternate stylesheet is none);
    # the first three of its stylesheet; the other pages' own.
    page_three = {"/css/style.css", "/favicon.ico", "/preloaded.png"}
    sheet_three = {"/css/more.css", "/logo.png", "B/cdn/b.png"}
    assert capped_paths - {*A_PAGES, "/robots.txt", "B/robots.txt"} == (
        page_three | sheet_three | {"/css/pointer.png", "/frame.png", "/copy.png"}
    )
    # Media too; a body past the cap cut there, and archived as cut (one that came whole in
    # the same read is archived whole: crawler.output.warc).
    assert "/movie.mp4" in media_paths
    truncated = {
        record.uri: record.truncated
        for record in read_warc(tmp_path / "media")
        if record.kind == "response" and record.truncated
    }
    assert truncated[net[A].url("/movie.mp4")] == "length"
    assert net[A].url("/embedded.svg") not in truncated
    assert crawler.stats.requisites["fetched"] > len(A_REQUISITES)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--page-requisites"],
            "fetch.page_requisites (--page-requisites) fetches what a page needs to be replayed, "
            "for the archive: it needs output.warc true (--warc)",
        ),
        (
            ["--warc", "-s", "fetch.max_requisites_per_page=0"],
            "fetch.max_requisites_per_page must be a whole number >= 1, not 0",
        ),
    ],
)
def test_a_bad_requisites_setting_exits_2_naming_the_key(
    tmp_path: Path, args: list[str], message: str
) -> None:
    status, _, err = crawl_command("http://127.0.1.1/", "--data", str(tmp_path), *args)
    assert status == 2
    assert message in err


async def test_requisites_left_queued_are_fetched_when_the_crawl_is_resumed(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A, B) as net:
        seed = build(net)
        robots_b = "User-agent: *\nDisallow: /private/\n"
        net[B].sequence(
            "/robots.txt",
            lambda request: web.Response(status=503, text="down"),
            lambda request: web.Response(text=robots_b),
        )
        # The CDN's robots.txt cannot be had, and its next try is past max_wait: the crawl
        # stops deferred, the CDN's requisites queued in its state.
        waits = {"retry_initial": 2.0, "retry_max": 2.0, "give_up_after": 600.0}
        first = replace(config(), robots=replace(config().robots, **waits))
        first = replace(first, politeness=replace(first.politeness, max_wait=0.5))
        _, crawler = await run(first, [seed], data_dir=tmp_path)
        assert crawler.stats.outcome == "deferred"
        assert net.paths(B) == ["/robots.txt"]
        # Resumed: the robots.txt comes, then every requisite of the CDN, once.
        _, crawler = await run(
            replace(first, politeness=config().politeness), [seed], data_dir=tmp_path
        )
    assert crawler.stats.outcome == "finished"
    assert Counter(net.paths(B)) == Counter(
        {"/robots.txt": 2, **{path: 1 for path in B_REQUISITES}}
    )
    archived = {r.uri for r in read_warc(tmp_path) if r.kind == "response"}
    assert {net[B].url(path) for path in B_REQUISITES} <= archived
