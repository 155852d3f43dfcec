"""Hostile local files (issue 17, "Local files"), as a user meets them: `crawl` in a subprocess on
a seeds file, a config, an index or a crawl state that is binary, enormous, damaged or built to
explode. Each is a message naming the file (and the line or key), exit status 2, and nothing
already stored changed."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest
from support.commands import crawl_command

from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_OK
from crawler.cli.seeds import MAX_PROBLEMS
from crawler.output.index import IndexSink
from crawler.output.records import PageRecord

pytestmark = pytest.mark.loopback

NO_FETCH = ("-s", "limits.max_pages=0")
"""A crawl that opens everything and fetches nothing: no network needed."""


def digests(directory: Path) -> dict[str, str]:
    """Every file in `directory` but the lock (a crawl writes its process id there)."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.iterdir())
        if path.name != "lock"
    }


def an_index(directory: Path) -> Path:
    with IndexSink(directory) as sink:
        for n in range(20):
            url = f"https://a.test/{n}"
            sink.page(PageRecord(url, url, 200, float(n), 0, text=f"otters page {n}", index=True))
    return directory / "index.sqlite"


def seeds_file(tmp_path: Path, text: str = "http://a.test/\n") -> Path:
    path = tmp_path / "seeds.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_binary_seeds_file_exits_2_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "seeds.bin"
    path.write_bytes(b"http://a.test/\n" + bytes(range(256)) * 64)
    status, _, err = crawl_command(str(path), "--data", str(tmp_path / "data"), *NO_FETCH)
    assert status == EXIT_BAD_INPUT
    assert err == (
        f"crawl: {path} line 2: a NUL byte: a binary file, not a list of URLs; "
        "expected UTF-8 text, one http:// or https:// URL per line\n"
    )
    assert not (tmp_path / "data").exists()


def test_many_bad_seed_lines_make_a_few_messages_and_the_crawl_goes_on(tmp_path: Path) -> None:
    lines = (f"http://a.test/{n}" if n % 2 else f"bad line {n}" for n in range(20_000))
    path = seeds_file(tmp_path, "\n".join(lines))
    status, _, err = crawl_command(
        str(path), "--data", str(tmp_path / "data"), *NO_FETCH, "-s", "state.durable=false"
    )
    assert status == EXIT_OK
    reported = [line for line in err.splitlines() if line.startswith(f"crawl: {path}")]
    assert len(reported) == MAX_PROBLEMS + 1
    assert reported[0] == (
        f"crawl: {path} line 1: skipped 'bad line 0': not an absolute URL "
        "(expected http:// or https://)"
    )
    assert reported[-1] == (
        f"crawl: {path}: {10_000 - MAX_PROBLEMS} more lines skipped "
        f"(10000 in all; the first {MAX_PROBLEMS} are shown)"
    )


def test_a_billion_laughs_config_exits_2_at_once(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(
        'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
        + "".join(
            f"{name}: &{name} {{{', '.join(f'k{n}: *{previous}' for n in range(9))}}}\n"
            for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        encoding="utf-8",
    )
    status, _, err = crawl_command(
        str(seeds_file(tmp_path)), "-c", str(bomb), "--data", str(tmp_path / "data")
    )
    assert status == EXIT_BAD_INPUT
    assert err.startswith(f"crawl: {bomb} line 2: an alias (*a): a config spells every value out")
    assert "Traceback" not in err


def test_a_long_query_exits_2_before_it_runs(tmp_path: Path) -> None:
    an_index(tmp_path)
    status, out, err = crawl_command(
        "search", " ".join(["otters"] * 10_000), "--data", str(tmp_path)
    )
    assert status == EXIT_BAD_INPUT
    assert out == ""
    assert err == "crawl: search query of 69999 characters; at most 1000 are searched\n"
    words = " ".join(["otters"] * 40)
    status, out, err = crawl_command("search", words, "--data", str(tmp_path))
    assert status == EXIT_BAD_INPUT
    assert err.startswith("crawl: search query of 40 words; at most 32 are searched")


def test_a_query_of_undecodable_bytes_exits_2(tmp_path: Path) -> None:
    an_index(tmp_path)
    status, _, err = crawl_command("search", b"otters \xff\xfe", "--data", str(tmp_path))
    assert status == EXIT_BAD_INPUT
    assert err == (
        "crawl: search query: byte 0xff at character 8 is not UTF-8 text "
        "(is the terminal's encoding UTF-8?)\n"
    )


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
@pytest.mark.parametrize("command", [("search", "otters"), ("export",)], ids=["search", "export"])
def test_a_damaged_index_exits_2_naming_it(
    tmp_path: Path, damage: str, command: tuple[str, ...]
) -> None:
    path = an_index(tmp_path)
    size = path.stat().st_size
    if damage == "garbage":
        path.write_bytes(os.urandom(size))
    elif damage == "truncated":
        os.truncate(path, size // 3)
    else:
        path.write_bytes(b"")
    before = path.read_bytes()
    status, out, err = crawl_command(*command, "--data", str(tmp_path))
    assert status == EXIT_BAD_INPUT
    assert out == ""
    expected = "is empty (0 bytes)" if damage == "empty" else "is damaged or is not an index"
    assert err.startswith(f"crawl: index {path} {expected}")
    assert "--fresh" in err
    assert "Traceback" not in err
    # Only read (SQLite's read-only connection may leave an empty -wal and a -shm beside it, as
    # every search of a sound index does).
    assert path.read_bytes() == before


@pytest.mark.parametrize("damage", ["empty", "garbage"])
def test_resuming_on_a_damaged_state_exits_2_and_changes_nothing(
    tmp_path: Path, damage: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    an_index(data)
    state = data / "state.sqlite"
    state.write_bytes(b"" if damage == "empty" else b"\x13\x37 not SQLite " * 1000)
    before = digests(data)
    status, _, err = crawl_command(str(seeds_file(tmp_path)), "--data", str(data), *NO_FETCH)
    assert status == EXIT_BAD_INPUT
    expected = "is empty (0 bytes)" if damage == "empty" else "is damaged or is not a crawl state"
    assert err.startswith(f"crawl: crawl state {state} {expected}")
    assert "nothing in the data directory was changed; to start over, crawl with --fresh" in err
    assert digests(data) == before


@pytest.mark.parametrize("damage", ["garbage", "other-schema"])
def test_resuming_on_a_damaged_index_exits_2_and_changes_nothing(
    tmp_path: Path, damage: str
) -> None:
    """The index is checked before the crawl state opens: a crawl that cannot write its index
    leaves the state as the last run left it (it once wrote state.sqlite, then exited 2). An
    empty index file is a new index, not a damaged one."""
    data = tmp_path / "data"
    status, _, err = crawl_command(str(seeds_file(tmp_path)), "--data", str(data), *NO_FETCH)
    assert status != EXIT_BAD_INPUT, err
    index = data / "index.sqlite"
    if damage == "garbage":
        index.write_bytes(b"\x13\x37 not SQLite " * 1000)
    else:
        with sqlite3.connect(index) as connection:
            connection.execute("PRAGMA user_version = 99")
        connection.close()
    before = digests(data)
    status, _, err = crawl_command(str(seeds_file(tmp_path)), "--data", str(data), *NO_FETCH)
    assert status == EXIT_BAD_INPUT
    if damage == "garbage":
        assert err.startswith(f"crawl: cannot open index {index}: it is damaged"), err
        assert "nothing was written to it; to start over, crawl with --fresh" in err
    else:
        assert err.startswith(f"crawl: index {index} "), err
        assert "99" in err
    assert "Traceback" not in err
    assert digests(data) == before


def test_robots_reads_a_huge_file_as_a_crawl_would(tmp_path: Path) -> None:
    # A sparse file: 1 GB on the file system's books, no disk. Read whole it took 1 GB of memory.
    path = tmp_path / "robots.txt"
    with path.open("wb") as file:
        file.write(b"User-agent: *\nDisallow: /private\n")
        file.truncate(1 << 30)
    status, out, err = crawl_command(
        "robots", str(path), "https://a.test/private/x", "https://a.test/public"
    )
    assert status == EXIT_OK
    assert err == (
        f"crawl: {path} is longer than 500 KiB; only that much is read, as a crawl reads a "
        "robots.txt (RFC 9309 section 2.5)\n"
    )
    assert out.startswith("disallowed  https://a.test/private/x\n")


def test_a_crawl_asking_for_another_stemming_than_its_index_exits_2_and_changes_nothing(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    # An index made without stemming (as every index was before `auto` became the default).
    status, _, err = crawl_command(
        str(seeds_file(tmp_path)), "--data", str(data), *NO_FETCH, "-s", "index.stemming=none"
    )
    assert status != EXIT_BAD_INPUT, err
    before = digests(data)
    english = ("-s", "index.stemming=english")
    status, out, err = crawl_command(
        str(seeds_file(tmp_path)), "--data", str(data), *NO_FETCH, *english
    )
    assert status == EXIT_BAD_INPUT
    assert out == ""
    assert err.startswith(
        f"crawl: index {data / 'index.sqlite'} was created with index.stemming none, and "
        "this crawl asks for english"
    )
    assert "--fresh" in err and "Traceback" not in err
    assert digests(data) == before
    # The default (auto) crawls on into it as it was made.
    status, _, err = crawl_command(str(seeds_file(tmp_path)), "--data", str(data), *NO_FETCH)
    assert status != EXIT_BAD_INPUT, err
