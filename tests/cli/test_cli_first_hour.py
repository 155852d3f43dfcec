"""The command line's front door (issue 18, "the first hour"), as a user meets it: `crawl` in a
subprocess, URLs and standard input as seeds, the flags for common keys, "did you mean" for a
mistyped key, help with real defaults, `crawl robots` given a URL, CSV export, the exported
`index` field, and the log file."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from pathlib import Path

import pytest
from aiohttp import web
from support.commands import crawl_beside_servers, crawl_command
from support.loopback import LoopbackWeb

from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_OK
from crawler.output.index import IndexSink
from crawler.output.records import PageRecord, Skip

pytestmark = pytest.mark.loopback

A, B = "127.0.1.1", "127.0.1.2"
NO_FETCH = ("-s", "limits.max_pages=0")
"""A crawl that opens everything and fetches nothing: no network needed."""
SEEDS_ARE = (
    "SEEDS are files of URLs (one per line), http:// or https:// URLs, or - for standard input"
)


def fetched(data: Path) -> list[str]:
    """The URLs of pages.jsonl, in fetch order."""
    lines = (data / "pages.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line)["url"] for line in lines]


# --- 1. seeds: URLs, standard input, files, mixed --------------------------------------------


def test_a_url_argument_is_a_seed_not_a_file_name(tmp_path: Path) -> None:
    status, out, err = crawl_command(
        "https://example.org/", "--data", str(tmp_path / "data"), *NO_FETCH
    )
    assert status == EXIT_OK, err
    assert "cannot read seeds file" not in err
    assert "URLs: 1 met: 0 fetched, 0 skipped, 1 queued" in out


async def test_urls_files_and_standard_input_mix_and_each_url_is_crawled_once(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("")
        b.robots("")
        for path in ("/from-arg", "/from-file", "/from-stdin"):
            a.page(path)
        b.page("/")
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(f"{a.url('/from-file')}\n{a.url('/from-arg')}\n", "utf-8")
        data = tmp_path / "data"
        status, out, err = await crawl_beside_servers(
            # Seeds before, between and after options, as a shell user writes them.
            a.url("/from-arg"),
            *("--data", str(data)),
            str(seeds),
            *("--output", "jsonl"),
            "-",
            b.url("/"),
            *("--delay", "0"),
            stdin=f"# piped\n{a.url('/from-stdin')}\nnot a url\n{b.url('/')}\n",
        )
    assert status == EXIT_OK, err
    assert "crawl: standard input line 3: skipped 'not a url'" in err
    assert sorted(fetched(data)) == sorted(
        [a.url("/from-arg"), a.url("/from-file"), a.url("/from-stdin"), b.url("/")]
    )
    assert "seed lines skipped: 1" in out


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        (
            "example.org",
            "crawl: cannot read seeds file example.org: No such file or directory; "
            f"{SEEDS_ARE} (for a URL, give its scheme: https://example.org)\n",
        ),
        (
            "seeds.txt",
            f"crawl: cannot read seeds file seeds.txt: No such file or directory; {SEEDS_ARE}\n",
        ),
        (
            "ftp://example.org/file",
            "crawl: seed 'ftp://example.org/file': scheme 'ftp' is not crawled (only http and "
            f"https); {SEEDS_ARE}\n",
        ),
        ("http://", f"crawl: seed 'http://': no valid host; {SEEDS_ARE}\n"),
    ],
)
def test_an_argument_neither_url_nor_file_says_what_seeds_may_be(
    tmp_path: Path, argument: str, message: str
) -> None:
    status, _, err = crawl_command(argument, "--data", "data", *NO_FETCH, cwd=tmp_path)
    assert status == EXIT_BAD_INPUT
    assert err == message
    assert not (tmp_path / "data").exists()


def test_a_directory_as_seeds_says_what_seeds_may_be(tmp_path: Path) -> None:
    status, _, err = crawl_command(str(tmp_path), "--data", str(tmp_path / "data"), *NO_FETCH)
    assert status == EXIT_BAD_INPUT
    assert err == f"crawl: cannot read seeds file {tmp_path}: Is a directory; {SEEDS_ARE}\n"


def test_empty_standard_input_is_no_url_to_crawl(tmp_path: Path) -> None:
    status, _, err = crawl_command("-", "--data", str(tmp_path / "data"), *NO_FETCH, stdin="")
    assert status == EXIT_BAD_INPUT
    assert err == (
        "crawl: standard input: no URL to crawl; expected one http:// or https:// URL per line\n"
    )


def test_standard_input_twice_is_refused(tmp_path: Path) -> None:
    status, _, err = crawl_command("-", "-", "--data", str(tmp_path / "data"), stdin="")
    assert status == EXIT_BAD_INPUT
    assert err == "crawl: - given more than once: standard input is read once\n"


# --- 2. flags for the keys set most ------------------------------------------------------------


async def test_the_flags_for_common_keys_reach_the_crawl(tmp_path: Path) -> None:
    agent = "FirstHourBot/1.0 (+http://a.test/bot; yes: no)"  # YAML would read `yes: no`
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nDisallow:\n")
        site.page("/", "/a")
        site.page("/a", "/b")
        site.page("/b")
        deep = tmp_path / "deep"
        status, out, err = await crawl_beside_servers(
            site.url("/"),
            *("--data", str(deep), "--depth", "1", "--delay", "0", "--output", "jsonl"),
            *("--user-agent", agent),
        )
        assert status == EXIT_OK, err
        assert fetched(deep) == [site.url("/"), site.url("/a")]
        assert not (deep / "index.sqlite").exists()
        assert "skips: over limits.max_depth 1" in out
        assert {hit.user_agent for hit in net.hits} == {agent}
        # A flag and an -s for the same key: the later on the command line wins.
        few = tmp_path / "few"
        status, out, err = await crawl_beside_servers(
            site.url("/"),
            *("--data", str(few), "-s", "limits.max_pages=50", "--max-pages", "1"),
            *("--delay", "0", "--output", "both"),
        )
    assert status == EXIT_OK, err
    assert fetched(few) == [site.url("/")]
    assert (few / "index.sqlite").is_file()


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--max-pages", "lots", "limits.max_pages must be a whole number or null >= 0, not 'lots'"),
        ("--depth", "-1", "limits.max_depth must be a whole number or null >= 0, not -1"),
        ("--delay", "soon", "politeness.min_delay must be a number >= 0, not 'soon'"),
        ("--output", "csv", "output.format must be 'index' or 'jsonl' or 'both', not 'csv'"),
        ("--user-agent", "", "user_agent must be a non-empty string, not ''"),
    ],
)
def test_a_bad_flag_value_is_the_config_error_naming_its_key(
    tmp_path: Path, flag: str, value: str, message: str
) -> None:
    status, _, err = crawl_command(
        "https://example.org/", flag, value, "--data", str(tmp_path / "data")
    )
    assert status == EXIT_BAD_INPUT
    assert err == f"crawl: defaults with -s overrides: {message}\n"
    assert not (tmp_path / "data").exists()


# --- 3. "did you mean" -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "unknown", "meant"),
    [
        ("limits.max_page=5", "limits.max_page", "limits.max_pages"),
        ("max_pages=5", "max_pages", "limits.max_pages"),
        ("limit.max_pages=5", "limit", "limits.max_pages"),
        ("politeness.max_depth=2", "politeness.max_depth", "limits.max_depth"),
        ("user_agnet=Bot", "user_agnet", "user_agent"),
    ],
)
def test_an_unknown_key_suggests_the_closest(
    tmp_path: Path, override: str, unknown: str, meant: str
) -> None:
    status, _, err = crawl_command(
        "https://example.org/", "-s", override, "--data", str(tmp_path / "data")
    )
    assert status == EXIT_BAD_INPUT
    assert err.startswith(
        f"crawl: defaults with -s overrides: unknown key {unknown} (did you mean {meant}?); "
        "expected one of "
    )


def test_a_key_like_no_other_gets_no_suggestion(tmp_path: Path) -> None:
    status, _, err = crawl_command("https://example.org/", "-s", "zzz=1", "--data", "data")
    assert status == EXIT_BAD_INPUT
    assert "unknown key zzz; expected one of concurrency, " in err
    assert "did you mean" not in err


# --- 4. help and the data directory ----------------------------------------------------------


def test_help_shows_the_real_defaults() -> None:
    status, out, _ = crawl_command("--help")
    assert status == EXIT_OK
    text = " ".join(out.split())  # argparse wraps lines to the terminal's width
    assert "DIR is crawl-data unless --data" in text
    assert "--data DIR data directory (default: output.data_dir, which is crawl-data" in text
    assert "(-s limits.max_pages; default: no limit)" in text
    assert "(-s politeness.min_delay; default: 1)" in text
    assert "(-s output.format; default: index)" in text
    assert "(-s user_agent; default: PoliteBot/0.1 (+https://example.org/bot))" in text
    assert "crawl https://example.org/ --max-pages 100" in text


@pytest.mark.parametrize(
    ("command", "example"),
    [
        ("search", "-s output.data_dir=last-week"),
        ("export", "-s output.data_dir=last-week"),
        ("robots", "-s robots.precedence=first-match"),
    ],
)
def test_each_commands_help_has_an_example_of_its_own(command: str, example: str) -> None:
    status, out, _ = crawl_command(command, "--help")
    assert status == EXIT_OK
    assert example in " ".join(out.split())
    assert "politeness.min_delay" not in out


@pytest.mark.parametrize(
    "command", [("https://example.org/", *NO_FETCH), ("search", "zebra"), ("export",)]
)
def test_data_naming_a_file_says_so(tmp_path: Path, command: tuple[str, ...]) -> None:
    taken = tmp_path / "notes.txt"
    taken.write_text("not a directory\n", "utf-8")
    for data, where in ((taken, ""), (taken / "sub", f": {taken}")):
        status, out, err = crawl_command(*command, "--data", str(data))
        assert status == EXIT_BAD_INPUT
        assert err == (
            f"crawl: --data {data}{where} is a file, not a directory; the data directory holds "
            "the crawl's index and state: give a directory, new or existing\n"
        )
        assert out == ""
    assert taken.read_text("utf-8") == "not a directory\n"


def test_a_data_dir_from_the_config_naming_a_file_names_the_key(tmp_path: Path) -> None:
    (tmp_path / "crawl-data").write_text("", "utf-8")
    status, _, err = crawl_command("search", "zebra", cwd=tmp_path)
    assert status == EXIT_BAD_INPUT
    assert err.startswith("crawl: output.data_dir 'crawl-data' is a file, not a directory; ")


# --- 5. crawl robots given a URL -------------------------------------------------------------


async def test_robots_given_a_url_says_how_to_get_the_file_and_fetches_nothing() -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nDisallow: /\n")
        url = site.url("/robots.txt")
        status, out, err = await crawl_beside_servers("robots", url, "/page")
    assert status == EXIT_BAD_INPUT
    assert out == ""
    assert err == (
        f"crawl: {url} is a URL: crawl robots reads a robots.txt file on this machine and "
        f"fetches nothing. To get that one: curl -L -o robots.txt {url} "
        "then: crawl robots robots.txt URL...\n"
    )
    assert net.hits == []


# --- 6 and 7. export: CSV, and the `index` field ---------------------------------------------


def an_index(directory: Path) -> None:
    with IndexSink(directory) as sink:
        sink.page(
            PageRecord(
                "https://a.test/",
                "https://a.test/",
                200,
                1.0,
                0,
                content_type="text/html",
                title='Zebras, "striped"\nhorses',
                text="zebra text",
                links=("https://a.test/b",),
                index=True,
                follow=True,
            )
        )
        sink.page(
            PageRecord(
                "https://a.test/b",
                "https://a.test/b",
                None,
                2.0,
                1,
                error="connection refused",
                index_reason="no answer (connection refused)",
            )
        )
        sink.skip(Skip("https://a.test/private", "disallowed by robots.txt", "line 2: /private"))
        sink.skip(Skip("https://b.test/", "out of scope: host", ""))


def test_export_csv_is_a_header_and_a_row_per_page_of_single_values(tmp_path: Path) -> None:
    an_index(tmp_path)
    status, out, err = crawl_command("export", "--format", "csv", "--data", str(tmp_path))
    assert status == EXIT_OK, err
    assert err == "exported 2 pages to stdout\n"
    rows = list(csv.reader(io.StringIO(out, newline="")))
    header = [
        "url",
        "final_url",
        "status",
        "fetched_at",
        "depth",
        "content_type",
        "title",
        "description",
        "language",
        "size",
        "truncated",
        "error",
        "index",
        "index_reason",
        "follow",
        "follow_reason",
        "sections",
        "usage",
        "fetched_at_iso",
    ]
    assert rows[0] == header
    home, failed = (dict(zip(header, row, strict=True)) for row in rows[1:])
    assert home["title"] == 'Zebras, "striped"\nhorses'  # quoted, and read back whole
    assert (home["status"], home["index"], home["follow"]) == ("200", "true", "true")
    assert (failed["status"], failed["error"], failed["index"]) == (
        "",
        "connection refused",
        "false",
    )
    assert "zebra text" not in out


def test_export_skips_as_csv_to_a_file(tmp_path: Path) -> None:
    an_index(tmp_path)
    target = tmp_path / "skips.csv"
    status, _, err = crawl_command(
        "export", "--skips", "--format", "csv", "--data", str(tmp_path), "-o", str(target)
    )
    assert status == EXIT_OK, err
    assert err == f"exported 2 skipped URLs to {target}\n"
    assert target.read_bytes() == (
        b"url,reason,detail\r\n"
        b"https://a.test/private,disallowed by robots.txt,line 2: /private\r\n"
        b"https://b.test/,out of scope: host,\r\n"
    )


def test_export_names_the_index_decision_index_as_pages_jsonl_does(tmp_path: Path) -> None:
    an_index(tmp_path)
    status, out, err = crawl_command("export", "--data", str(tmp_path))
    assert status == EXIT_OK, err
    home, failed = (json.loads(line) for line in out.splitlines())
    assert (home["index"], failed["index"]) == (True, False)
    assert "indexed" not in home
    assert home["text"] == "zebra text" and failed["text"] is None


# --- 8. the log file -------------------------------------------------------------------------


async def test_the_log_file_holds_json_records_and_never_the_progress_line(tmp_path: Path) -> None:
    async with LoopbackWeb(A, B) as net:
        slow_site, greedy = net[A], net[B]
        slow_site.robots("")

        async def slow(request: web.Request) -> web.Response:
            await asyncio.sleep(0.5)  # long enough for progress lines to be written meanwhile
            return web.Response(text="<title>slow</title>", content_type="text/html")

        slow_site.routes["/"] = slow
        greedy.robots("User-agent: *\nCrawl-delay: 100000\n")
        greedy.page("/")
        log = tmp_path / "crawl.log"
        status, _, err = await crawl_beside_servers(
            slow_site.url("/"),
            greedy.url("/"),
            *("--data", str(tmp_path / "data"), "--delay", "0"),
            *("-s", "politeness.over_max_crawl_delay=skip", "-s", "output.progress_interval=0.1"),
            *("--log-file", str(log), "--log-format", "json"),
        )
    assert status == EXIT_OK, err
    records = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert records, "the warning about the Crawl-delay is logged"
    for record in records:
        assert set(record) == {"time", "level", "logger", "message"}
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", record["time"])
    [warning] = [record for record in records if "Crawl-delay" in record["message"]]
    assert warning["level"] == "WARNING" and warning["logger"] == "crawler.crawl.robots_requests"
    assert f"{greedy.origin} asks for Crawl-delay 100000 s" in warning["message"]
    # The log went to the file alone; the progress line stayed on standard error.
    assert "asks for Crawl-delay" not in err
    assert re.search(r"^\d\d:\d\d:\d\d crawl: ", err, re.MULTILINE)


async def test_a_text_log_file_is_appended_to(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    log.write_text("an earlier run\n", "utf-8")
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nCrawl-delay: 100000\n")
        site.page("/")
        status, _, err = await crawl_beside_servers(
            site.url("/"),
            *("--data", str(tmp_path / "data"), "--log-file", str(log)),
            *("-s", "politeness.over_max_crawl_delay=skip"),
        )
    assert status == EXIT_OK, err
    first, *rest = log.read_text("utf-8").splitlines()
    assert first == "an earlier run"
    assert any(" WARNING " in line and "asks for Crawl-delay" in line for line in rest)
    assert "asks for Crawl-delay" not in err


def test_a_log_file_that_cannot_be_written_exits_2(tmp_path: Path) -> None:
    log = tmp_path / "missing" / "crawl.log"
    status, _, err = crawl_command(
        "https://example.org/", "--data", str(tmp_path / "data"), "--log-file", str(log), *NO_FETCH
    )
    assert status == EXIT_BAD_INPUT
    assert err == f"crawl: --log-file {log}: cannot write it: No such file or directory\n"


def test_an_unknown_log_format_is_refused(tmp_path: Path) -> None:
    status, _, err = crawl_command("https://example.org/", "--log-format", "xml")
    assert status == EXIT_BAD_INPUT
    assert "--log-format: invalid choice: 'xml' (choose from 'text', 'json')" in err
