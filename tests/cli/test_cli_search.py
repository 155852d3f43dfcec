"""`crawl search` and `crawl export` as a user runs them, in a subprocess, against an index built
with `IndexSink`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.commands import crawl_command

from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_DISK_FULL, EXIT_OK
from crawler.output.index import IndexSink
from crawler.output.records import PageRecord, Skip, Unskip

pytestmark = pytest.mark.loopback


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("data")
    pages = [
        PageRecord(
            "https://a.test/",
            "https://a.test/",
            200,
            1.0,
            0,
            title="All about otters",
            text="Otters hold hands while they sleep.\nThey live near rivers.",
            main_text="Otters hold hands while they sleep.",
            markdown="Otters hold hands while they *sleep*.",
            index=True,
        ),
        PageRecord(
            "https://a.test/rivers",
            "https://a.test/rivers",
            200,
            2.0,
            1,
            title="Rivers",
            text="Rivers where otters and herons live; a river guide.",
            index=True,
        ),
        PageRecord(
            "https://a.test/private",
            "https://a.test/private",
            200,
            3.0,
            1,
            title="Private otters",
            index=False,
            index_reason="meta robots: noindex",
        ),
    ]
    pages += [
        PageRecord(f"https://b.test/{n}", f"https://b.test/{n}", 200, 4.0 + n, 1, text=text)
        for n, text in enumerate(["bread recipes", "train times", "harbour history", "weather"])
    ]
    with IndexSink(directory) as sink:
        for page in pages:
            sink.page(page)
        sink.skip(Skip("https://a.test/secret", "disallowed by robots.txt", "line 2"))
        sink.skip(Skip("https://a.test/deep", "over limits.max_depth", "found at depth 3"))
        sink.skip(Skip("https://c.test/", "out of scope: host", "c.test is not a seed's host"))
        sink.unskip(Unskip("https://a.test/deep"))
    return directory


def test_search_prints_ranked_results_with_snippets(data: Path) -> None:
    status, out, err = crawl_command("search", "otters", "--data", str(data))
    assert status == EXIT_OK, err
    lines = out.splitlines()
    assert lines[:3] == [
        " 1. All about otters",
        "    https://a.test/",
        # From the page's main text, where the word is.
        "    [Otters] hold hands while they sleep.",
    ]
    assert lines[3] == " 2. Rivers"
    assert "Private" not in out


def test_search_json_and_limit(data: Path) -> None:
    status, out, err = crawl_command("search", "otters OR rivers", "--data", str(data), "--json")
    assert status == EXIT_OK, err
    hits = [json.loads(line) for line in out.splitlines()]
    assert [hit["url"] for hit in hits] == ["https://a.test/rivers", "https://a.test/"]
    assert set(hits[0]) == {"url", "title", "snippet", "score"}
    status, out, err = crawl_command("search", "otters", "--data", str(data), "--limit", "1")
    assert status == EXIT_OK, err
    assert "1. All about otters" in out and "2." not in out


def test_search_says_when_nothing_matches(data: Path) -> None:
    status, out, _ = crawl_command("search", "penguins", "--data", str(data))
    assert status == EXIT_OK
    assert out == "no results for 'penguins'\n"
    status, out, _ = crawl_command("search", "penguins", "--data", str(data), "--json")
    assert (status, out) == (EXIT_OK, "")


@pytest.mark.parametrize("query", ["otters AND", '"otters', "title:"])
def test_a_malformed_fts_query_exits_2_with_one_line(data: Path, query: str) -> None:
    status, out, err = crawl_command("search", query, "--fts", "--data", str(data))
    assert status == EXIT_BAD_INPUT
    assert err.startswith(f"crawl: bad search query {query!r}: ")
    assert "Traceback" not in err and err.count("\n") == 1
    assert out == ""


@pytest.mark.parametrize(
    ("words", "urls"),
    [
        # A trailing AND is the word "and": the page with "otters and herons" only.
        (("otters", "AND"), ["https://a.test/rivers"]),
        (('"otters',), ["https://a.test/", "https://a.test/rivers"]),
        (("herons", "river"), ["https://a.test/rivers"]),  # several arguments: one query
        (("hold-hands",), ["https://a.test/"]),  # the phrase "hold hands"
        (("hands-hold",), []),
        (("river", "guide."), ["https://a.test/rivers"]),
    ],
)
def test_what_people_type_is_searched_as_written(
    data: Path, words: tuple[str, ...], urls: list[str]
) -> None:
    status, out, err = crawl_command("search", *words, "--data", str(data), "--json")
    assert status == EXIT_OK, err
    assert sorted(json.loads(line)["url"] for line in out.splitlines()) == urls


def test_a_query_of_punctuation_alone_exits_2(data: Path) -> None:
    status, out, err = crawl_command("search", "++", "--data", str(data))
    assert status == EXIT_BAD_INPUT
    assert err == "crawl: search query '++' has no word to search\n"
    assert out == ""


def test_missing_index_exits_2(tmp_path: Path) -> None:
    for command in ("search", "export"):
        args = [command, "x"] if command == "search" else [command]
        status, _, err = crawl_command(*args, "--data", str(tmp_path / "none"))
        assert status == EXIT_BAD_INPUT
        assert f"crawl: no index in {tmp_path / 'none'}" in err
        assert "Traceback" not in err


def test_data_directory_comes_from_the_config(data: Path, tmp_path: Path) -> None:
    config = tmp_path / "crawler.yaml"
    config.write_text(f"output:\n  data_dir: {data}\n", "utf-8")
    status, out, err = crawl_command("search", "herons", "-c", str(config))
    assert status == EXIT_OK, err
    assert "https://a.test/rivers" in out
    status, out, err = crawl_command("search", "herons", "-s", f"output.data_dir={data}")
    assert status == EXIT_OK, err
    assert "https://a.test/rivers" in out
    # Without either, the default directory is relative to where the command runs.
    status, _, err = crawl_command("search", "herons", cwd=tmp_path)
    assert status == EXIT_BAD_INPUT
    assert "no index in crawl-data" in err


def test_export_to_stdout(data: Path) -> None:
    status, out, err = crawl_command("export", "--data", str(data))
    assert status == EXIT_OK, err
    pages = [json.loads(line) for line in out.splitlines()]
    assert [page["url"] for page in pages][:3] == [
        "https://a.test/",
        "https://a.test/rivers",
        "https://a.test/private",
    ]
    assert pages[2]["index"] is False and pages[2]["text"] is None
    assert err == f"exported {len(pages)} pages to stdout\n"


def test_export_markdown_is_a_json_object_a_line_of_each_page_with_markdown(data: Path) -> None:
    status, out, err = crawl_command("export", "--format", "markdown", "--data", str(data))
    assert status == EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {
            "url": "https://a.test/",
            "final_url": "https://a.test/",
            "title": "All about otters",
            "language": None,
            "fetched_at": 1.0,
            "fetched_at_iso": "1970-01-01T00:00:01.000Z",
            "main_fallback": None,
            "markdown": "Otters hold hands while they *sleep*.",
        }
    ]
    assert err == "exported 1 page to stdout\n"
    status, _, err = crawl_command("export", "--skips", "--format", "markdown", "--data", str(data))
    assert status == EXIT_BAD_INPUT
    assert "--skips writes jsonl or csv" in err


def test_export_skips_lists_each_url_not_fetched_with_its_reason(data: Path) -> None:
    status, out, err = crawl_command("export", "--skips", "--data", str(data))
    assert status == EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"url": "https://a.test/secret", "reason": "disallowed by robots.txt", "detail": "line 2"},
        {
            "url": "https://c.test/",
            "reason": "out of scope: host",
            "detail": "c.test is not a seed's host",
        },
    ]
    assert err == "exported 2 skipped URLs to stdout\n"
    status, out, err = crawl_command(
        "export", "--skips", "--reason", "out of scope: host", "--data", str(data)
    )
    assert status == EXIT_OK, err
    assert [json.loads(line)["url"] for line in out.splitlines()] == ["https://c.test/"]


def test_export_skips_of_an_unknown_reason_exits_2_naming_the_known(data: Path) -> None:
    status, _, err = crawl_command("export", "--skips", "--reason", "bored", "--data", str(data))
    assert status == EXIT_BAD_INPUT
    assert "invalid choice: 'bored'" in err and "'over limits.max_depth'" in err


def test_export_to_a_file(data: Path, tmp_path: Path) -> None:
    target = tmp_path / "pages.jsonl"
    status, out, err = crawl_command("export", "--data", str(data), "-o", str(target))
    assert status == EXIT_OK, err
    assert out == ""
    lines = target.read_text("utf-8").splitlines()
    assert len(lines) == 7
    assert json.loads(lines[0])["text"].startswith("Otters hold hands")
    assert err == f"exported 7 pages to {target}\n"


def test_export_to_an_unwritable_file_exits_2(data: Path, tmp_path: Path) -> None:
    targets = [tmp_path / "missing" / "pages.jsonl", tmp_path]
    if os.geteuid() != 0:  # root writes into a read-only directory all the same
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        targets.append(locked / "pages.jsonl")
    for target in targets:
        status, _, err = crawl_command("export", "--data", str(data), "-o", str(target))
        assert status == EXIT_BAD_INPUT
        assert err.startswith(f"crawl: cannot write {target}: ")
        assert "Traceback" not in err
    if Path("/dev/full").is_char_device():  # opens, then every write fails: a full disk
        status, _, err = crawl_command("export", "--data", str(data), "-o", "/dev/full")
        assert status == EXIT_DISK_FULL
        assert err == (
            "crawl: disk full writing /dev/full (No space left on device): free space and run "
            "it again\n"
        )
        assert Path("/dev/full").is_char_device()  # written to, never replaced


def test_export_with_a_missing_index_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "pages.jsonl"
    status, _, _ = crawl_command("export", "--data", str(tmp_path), "-o", str(target))
    assert status == EXIT_BAD_INPUT
    assert not target.exists()


def test_export_skips_of_a_jsonl_crawl_says_where_its_skips_are(tmp_path: Path) -> None:
    (tmp_path / "pages.jsonl").write_text("", "utf-8")
    (tmp_path / "skips.jsonl").write_text("", "utf-8")
    status, _, err = crawl_command("export", "--skips", "--data", str(tmp_path))
    assert status == EXIT_BAD_INPUT
    assert f"no index in {tmp_path} (crawl with output.format index first; this crawl " in err
    assert f"{tmp_path / 'skips.jsonl'})" in err


def test_help_lists_the_commands() -> None:
    status, out, _ = crawl_command("--help")
    assert status == EXIT_OK
    assert "crawl search QUERY" in out and "crawl export" in out
    status, out, _ = crawl_command("search", "--help")
    assert status == EXIT_OK
    assert "FTS5" in out and "--limit N" in out


def test_search_reads_the_searchs_modules_not_the_crawls(data: Path) -> None:
    # A search answers a person waiting at the terminal: it reads no module of the crawl's
    # (the event loop, the HTTP client, the crawl state, the report), which doubled its time.
    code = (
        "import sys\nfrom crawler.cli import main\n"
        f"status = main(['search', 'otters', '--data', {str(data)!r}])\n"
        "print(status, ' '.join(sys.modules))"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    status, *loaded = ran.stdout.split("\n")[-2].split()
    assert int(status) == EXIT_OK
    crawls = ("asyncio", "crawler.crawl.crawler", "crawler.http.fetcher", "crawler.state.frontier")
    assert [name for name in crawls if name in loaded] == []
    assert "crawler.output.searching" in loaded
