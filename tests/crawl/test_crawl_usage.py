"""End to end over loopback: each usage signal from each of its sources, for each purpose, judged
from the records, pages.jsonl, the index's export and search, and the WARC; the tdmrep.json
request judged from the servers' logs; a resumed and a shared crawl keep the signals."""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import logging
from collections import Counter
from pathlib import Path

import pytest
from support.commands import crawl_beside_servers, crawl_command
from support.crawling import make_config, run
from support.keyvalue import StateServer
from support.loopback import EPSILON, LoopbackWeb
from warcio.archiveiterator import ArchiveIterator

from crawler import Crawler
from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_OK
from crawler.config import Config
from crawler.output.export import export_pages
from crawler.output.records import PageRecord
from crawler.output.searching import not_yet_searchable, search
from crawler.output.warc import warc_files
from crawler.usage.tdmrep import TDMREP_PATH

pytestmark = pytest.mark.loopback

A, B = "127.0.1.1", "127.0.1.2"
ROBOTS_A = (
    "User-agent: *\nAllow: /\n"
    "Content-Usage: /usage/ train-ai=n\n"
    "Content-Usage: /usage/search-no/ search=n\n"
)
TDMREP_A = json.dumps(
    [
        {"location": "/tdm-file/", "tdm-reservation": 1, "tdm-policy": "https://a.test/policy"},
        {"location": "/tdm-lifted/", "tdm-reservation": 1},
    ]
)
ROBOTS_B = "User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n"
# Path on A: (META, headers), each page with a word of its own to search for.
PAGES_A: dict[str, tuple[str, dict[str, str]]] = {
    "/plain": ("", {}),
    "/usage/a": ("", {}),
    "/usage/search-no/b": ("", {}),
    "/header-usage": ("", {"Content-Usage": "ai-use=n"}),
    "/header-signal": ("", {"Content-Signal": "ai-train=no"}),
    "/meta-noai": ('<meta name="robots" content="noai">', {}),
    "/xrt-noimageai": ("", {"X-Robots-Tag": "noimageai"}),
    "/tdm-file/x": ("", {}),
    "/tdm-header": ("", {"tdm-reservation": "1"}),
    "/tdm-meta": ('<meta name="tdm-reservation" content="1">', {}),
    "/tdm-lifted/x": ("", {"tdm-reservation": "0"}),
}
AI = {"/meta-noai", "/xrt-noimageai", "/tdm-file/x", "/tdm-header", "/tdm-meta"}
REFUSED = {
    "search": {"/usage/search-no/b"},
    "ai-input": AI | {"/header-usage"},
    "ai-train": AI | {"/usage/a", "/header-signal", "B/", "B/b1"},
}
KINDS = {
    "search": {"Content-Usage": 1},
    "ai-input": {"Content-Usage": 1, "noai": 2, "TDMRep": 3},
    "ai-train": {"Content-Usage": 1, "Content-Signal": 3, "noai": 2, "TDMRep": 3},
}


def word(path: str) -> str:
    return "word" + "".join(char for char in path if char.isalnum())


def build(net: LoopbackWeb) -> list[str]:
    site = net[A]
    site.robots(ROBOTS_A)
    site.text(TDMREP_PATH, TDMREP_A, content_type="application/json")
    site.page("/", *PAGES_A)
    for path, (meta, headers) in PAGES_A.items():
        site.html(
            path,
            f"<html><head><title>{path}</title>{meta}</head>"
            f"<body><p>{word(path)} is on this page</p></body></html>",
            headers=headers,
        )
    other = net[B]
    other.robots(ROBOTS_B)
    other.page("/", "/b1", body="<p>wordB</p>")
    other.page("/b1", body="<p>wordBb1</p>")
    return [site.url("/"), other.url("/")]


def key(record: PageRecord) -> str:
    """A's paths as they are; B's as B/PATH."""
    path = "/" + record.url.split("/", 3)[3]
    return path if f"//{A}:" in record.url else f"B{path}"


def config(purpose: str, **changes: object) -> Config:
    return make_config(usage={"purpose": purpose, "tdmrep": "always"}, **changes)


@pytest.mark.parametrize("purpose", ["search", "ai-input", "ai-train"])
async def test_each_signal_refuses_its_purposes_and_the_page_is_still_fetched_and_followed(
    purpose: str, tmp_path: Path
) -> None:
    async with LoopbackWeb(A, B) as net:
        seeds = build(net)
        records, crawler = await run(
            config(purpose, output={"format": "both"}), seeds, data_dir=tmp_path
        )
        fetched_b = net.paths(B)
    pages = {key(record): record for record in records}
    assert set(pages) == {"/", *PAGES_A, "B/", "B/b1"}  # every page fetched, B/b1 by a link
    assert "/b1" in fetched_b
    refused = {path for path, record in pages.items() if not record.index}
    assert refused == REFUSED[purpose]
    for path in refused:
        record = pages[path]
        assert record.index_reason is not None
        assert record.index_reason.startswith(f"usage: {purpose} refused by "), record
        assert record.usage_refusal == record.index_reason
    if purpose == "ai-train":
        assert pages["B/"].index_reason == (
            "usage: ai-train refused by Content-Signal 'search=yes, ai-train=no' "
            "(robots.txt line 2)"
        )
    assert crawler.stats.usage_refused == Counter(KINDS[purpose])
    assert crawler.stats.page_rules["usage refused"] == len(REFUSED[purpose])
    # The JSONL written as the crawl went: no text for a refused page, the signals kept.
    lines = [json.loads(line) for line in (tmp_path / "pages.jsonl").read_text().splitlines()]
    written = {key_of(line["url"]): line for line in lines}
    for path, line in written.items():
        if path in REFUSED[purpose]:
            assert (line["index"], line["text"]) == (False, ""), path
        else:
            assert line["index"], path
            if path in PAGES_A:
                assert word(path) in line["text"], path
    noai = written["/meta-noai"]["usage"]
    assert noai == [
        {
            "signal": "noai",
            "source": "meta robots",
            "value": "noai",
            "refuses": ["ai-input", "ai-train"],
        }
    ]
    tdm = written["/tdm-file/x"]["usage"]
    assert tdm[0]["source"] == "tdmrep.json rule 1 (/tdm-file/)"
    assert tdm[0]["policy"] == "https://a.test/policy"
    lifted = written["/tdm-lifted/x"]["usage"]
    assert [item["source"] for item in lifted] == ["tdmrep.json rule 2 (/tdm-lifted/)", "header"]
    assert written["/usage/a"]["usage"][0]["source"] == "robots.txt line 3"


def key_of(url: str) -> str:
    path = "/" + url.split("/", 3)[3]
    return path if f"//{A}:" in url else f"B{path}"


def exported(directory: Path, purpose: str | None) -> dict[str, dict[str, object]]:
    out = io.StringIO()
    export_pages(directory, out, purpose=purpose)
    return {key_of(page["url"]): page for page in map(json.loads, out.getvalue().splitlines())}


async def test_the_index_decides_again_for_another_purpose_without_a_recrawl(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A, B) as net:
        seeds = build(net)
        await run(
            config("ai-train", output={"format": "index", "warc": True}), seeds, data_dir=tmp_path
        )
        requests = len(net.hits)
    # By default, the crawl's own purpose.
    default = exported(tmp_path, None)
    assert {path for path, page in default.items() if not page["index"]} == REFUSED["ai-train"]
    for purpose, refused in REFUSED.items():
        pages = exported(tmp_path, purpose)
        assert {path for path, page in pages.items() if not page["index"]} == refused, purpose
        for path, page in pages.items():
            if path in refused:
                assert page["text"] is None
                assert str(page["index_reason"]).startswith(f"usage: {purpose} refused by ")
            else:
                assert page["text"] and page["index_reason"] is None, path
    # A search finds a page only for a purpose its owner allows.
    for path in ("/usage/a", "/usage/search-no/b", "/header-usage"):
        found = {
            purpose: [hit.url for hit in search(tmp_path, word(path), purpose=purpose)]
            for purpose in REFUSED
        }
        for purpose, urls in found.items():
            assert bool(urls) == (path not in REFUSED[purpose]), (path, purpose)
    # The CSV carries the signals in a column.
    out = io.StringIO()
    export_pages(tmp_path, out, format="csv", purpose="search")
    header, *rows = out.getvalue().splitlines()
    assert "usage" in header.split(",")
    assert any('""signal"":""noai""' in row for row in rows)
    # The WARC's metadata records keep them too.
    usage_lines = {}
    for path in warc_files(tmp_path):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type == "metadata":
                    fields = record.content_stream().read().decode()
                    usage_lines[key_of(record.rec_headers.get_header("WARC-Target-URI"))] = [
                        json.loads(line.removeprefix("usage: "))
                        for line in fields.splitlines()
                        if line.startswith("usage: ")
                    ]
    assert usage_lines["/meta-noai"][0]["signal"] == "noai"
    assert usage_lines["B/"][0]["value"] == "search=yes, ai-train=no"
    assert usage_lines["/plain"] == []
    assert requests == len(net.hits)  # nothing asked again


async def test_tdmrep_json_is_asked_once_per_origin_after_robots_txt_and_only_when_needed() -> None:
    async with LoopbackWeb(A, B) as net:
        seeds = build(net)
        await run(make_config(usage={"purpose": "ai-train"}), seeds)
        for ip in (A, B):
            paths = net.paths(ip)
            assert paths[:2] == ["/robots.txt", TDMREP_PATH], paths
            assert paths.count(TDMREP_PATH) == 1
    async with LoopbackWeb(A, B) as net:
        seeds = build(net)
        _, crawler = await run(make_config(), seeds)  # a search crawl: auto asks for none
        assert TDMREP_PATH not in net.paths(A) + net.paths(B)
        assert crawler.stats.tdmrep_fetches == 0
        # Its META and header TDM signals are read all the same.


async def test_tdmrep_json_robots_txt_disallows_is_never_asked_for() -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nDisallow: /.well-known/\n")
        site.page("/")
        records, _ = await run(make_config(usage={"purpose": "ai-train"}), [site.url("/")])
        assert net.paths(A) == ["/robots.txt", "/"]
    assert records[0].index


@pytest.mark.parametrize(
    "body",
    [b"[" * 200_000, b"{broken", b'[{"location": "/", "tdm-reservation": "1"}]', b"x" * 70_000],
)
async def test_a_hostile_tdmrep_json_is_no_reservation(body: bytes) -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nAllow: /\n")
        site.text(TDMREP_PATH, body.decode(), content_type="application/json")
        site.page("/")
        records, crawler = await run(make_config(usage={"purpose": "ai-train"}), [site.url("/")])
    # Recorded as read (a reservation of "1", a string, is unset), and refusing nothing.
    assert [(record.index, record.usage_refusal) for record in records] == [(True, None)]
    assert crawler.stats.tdmrep_fetches == 1


async def test_a_resumed_crawl_keeps_the_origins_tdmrep_and_asks_for_it_once(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A, B) as net:
        seeds = build(net)
        first, _ = await run(
            config("ai-train", limits={"max_pages": 3}), seeds[:1], data_dir=tmp_path
        )
        second, _ = await run(config("ai-train"), seeds[:1], data_dir=tmp_path)
        assert net.paths(A).count(TDMREP_PATH) == 1
        assert net.paths(A).count("/robots.txt") == 1
    pages = {key(record): record for record in [*first, *second]}
    assert pages["/tdm-file/x"].usage[0].source == "tdmrep.json rule 1 (/tdm-file/)"
    assert not pages["/tdm-file/x"].index


_prefixes = itertools.count()


async def test_a_shared_crawl_shares_the_origins_tdmrep_and_its_workers_decide_alike(
    server: StateServer, tmp_path: Path
) -> None:
    prefix = f"usage{next(_prefixes)}:"
    shared = config(
        "ai-train",
        state={"backend": "redis", "url": server.url, "key_prefix": prefix, "heartbeat": 1.0},
        output={"format": "jsonl"},
    )

    async def work(seeds: list[str], data: Path) -> list[PageRecord]:
        async with Crawler(shared, data_dir=data) as crawler:
            return [record async for record in crawler.crawl(seeds)]

    async with LoopbackWeb(A, B) as net:
        seeds = build(net)
        first, second = await asyncio.wait_for(
            asyncio.gather(work(seeds[:1], tmp_path / "w0"), work(seeds[1:], tmp_path / "w1")),
            timeout=60,
        )
        for ip in (A, B):
            assert net.paths(ip).count(TDMREP_PATH) == 1, net.paths(ip)
    pages = {key(record): record for record in [*first, *second]}
    assert {path for path, record in pages.items() if not record.index} == REFUSED["ai-train"]


async def test_the_command_line_says_the_purpose_counts_refusals_and_exports_for_another(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with LoopbackWeb(A, B) as net:
        seeds = build(net)
        status, out, err = await crawl_beside_servers(
            *seeds, "--data", str(data), "--purpose", "ai-train"
        )
    assert status == EXIT_OK, err
    said = [line for line in out.splitlines() if line.startswith("usage (purpose ai-train)")]
    assert said == [
        "usage (purpose ai-train): 12 pages with signals, 9 refused (Content-Signal 3, "
        "TDMRep 3, noai 2, Content-Usage 1); 2 tdmrep.json requests"
    ]
    summary = json.loads((data / "summary.json").read_text())
    assert summary["usage"] == {
        "purpose": "ai-train",
        "refused": {"Content-Signal": 3, "TDMRep": 3, "noai": 2, "Content-Usage": 1},
    }
    assert summary["figures"]["tdmrep_fetches"] == 2
    status, out, err = crawl_command("export", "--data", str(data), "--purpose", "search")
    assert status == EXIT_OK, err
    refused = {
        key_of(page["url"]) for page in map(json.loads, out.splitlines()) if not page["index"]
    }
    assert refused == REFUSED["search"]
    status, out, err = crawl_command("search", word("/usage/a"), "--data", str(data))
    assert (status, out.strip()) == (EXIT_OK, f"no results for {word('/usage/a')!r}")
    status, out, err = crawl_command(
        "search", word("/usage/a"), "--data", str(data), "--purpose", "search"
    )
    assert status == EXIT_OK and "/usage/a" in out, err


def test_an_unknown_purpose_is_refused_naming_the_key(tmp_path: Path) -> None:
    status, _, err = crawl_command("https://a.test/", "--data", str(tmp_path), "--purpose", "train")
    assert status == EXIT_BAD_INPUT
    assert "usage.purpose must be 'search' or 'ai-input' or 'ai-train', not 'train'" in err
    status, _, err = crawl_command("export", "--data", str(tmp_path), "--purpose", "train")
    assert status == EXIT_BAD_INPUT and "invalid choice: 'train'" in err


async def test_what_cannot_be_read_is_ignored_and_said_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="crawler")
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots(
            "User-agent: *\nAllow: /\nContent-Usage: Train-AI=n\nContent-Signal: ai-train=maybe\n"
        )
        site.text(TDMREP_PATH, '[{"location": 5}]', content_type="application/json")
        site.page("/")
        records, _ = await run(make_config(usage={"purpose": "ai-train"}), [site.url("/")])
    assert records[0].index
    said = [record.getMessage() for record in caplog.records]
    origin = site.origin
    assert f"{origin}: robots.txt line 3 Content-Usage: Train-AI=n: not a Structured Fields " in (
        "\n".join(said)
    )
    assert (
        f"{origin}: robots.txt line 4 Content-Signal: ai-train=maybe: ai-train=maybe: expected "
        "yes or no, ignored" in said
    )
    assert f"{origin}: tdmrep.json: rule 1: no location that is a path, skipped" in said


async def test_pages_read_in_the_readers_process_keep_their_meta_signals() -> None:
    async with LoopbackWeb(A, B) as net:
        seeds = build(net)
        records, crawler = await run(
            make_config(usage={"purpose": "ai-train"}, page={"reader": "process"}), seeds
        )
    assert crawler.pages_read_beside
    pages = {key(record): record for record in records}
    assert {path for path, record in pages.items() if not record.index} == REFUSED["ai-train"]
    assert pages["/meta-noai"].usage[0].source == "meta robots"


async def test_the_tdmrep_json_request_waits_the_pace_the_robots_txt_just_asked() -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nCrawl-delay: 0.4\nAllow: /\n")
        site.page("/", "/next")
        site.page("/next")
        await run(make_config(usage={"purpose": "ai-train"}), [site.url("/")])
        assert net.paths(A) == ["/robots.txt", TDMREP_PATH, "/", "/next"]
        times = net.times(A)
    assert min(later - earlier for earlier, later in itertools.pairwise(times)) >= 0.4 - EPSILON


async def test_a_host_its_robots_txt_retires_is_not_asked_for_its_tdmrep_json() -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nCrawl-delay: 100000\n")
        site.page("/")
        config = make_config(
            usage={"purpose": "ai-train"}, politeness={"over_max_crawl_delay": "skip"}
        )
        records, _ = await run(config, [site.url("/")])
        assert net.paths(A) == ["/robots.txt"]
    assert records == []


async def test_a_crawl_whose_every_page_is_refused_still_makes_them_searchable_for_others(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(B) as net:
        other = net[B]
        other.robots(ROBOTS_B)
        other.page("/", "/b1", body="<p>wordB</p>")
        other.page("/b1", body="<p>wordBb1</p>")
        records, _ = await run(config("ai-train"), [other.url("/")], data_dir=tmp_path)
    assert [record.index for record in records] == [False, False]
    assert not_yet_searchable(tmp_path) == 0
    assert search(tmp_path, "wordB", purpose="ai-train") == []
    assert [hit.url for hit in search(tmp_path, "wordB", purpose="search")] == [other.url("/")]
