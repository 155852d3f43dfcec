"""crawler.cli.seeds: one URL a line; comments and blank lines allowed; bad lines reported by line
and
skipped; a file with nothing to crawl is a SeedError naming the file."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from crawler.cli.seeds import MAX_LINE_BYTES, MAX_PROBLEMS, Seeds, parse_seeds, read_seeds
from crawler.errors import ConfigError, SeedError

WHERE = "seeds.txt"


def urls(text: str) -> tuple[str, ...]:
    return parse_seeds(text, WHERE).urls


PARSE_CASES = [
    # (id, text, urls)
    ("one-url", "http://a.test/\n", ("http://a.test/",)),
    ("no-final-newline", "http://a.test/x", ("http://a.test/x",)),
    ("normalised", "HTTP://A.Test:80/./x#top\n", ("http://a.test/x",)),
    ("comment-line", "# my seeds\nhttp://a.test/\n", ("http://a.test/",)),
    ("indented-comment", "   # note\nhttp://a.test/\n", ("http://a.test/",)),
    (
        "blank-lines",
        "\n\nhttp://a.test/\n   \n\t\nhttps://b.test/\n\n",
        (
            "http://a.test/",
            "https://b.test/",
        ),
    ),
    ("trailing-comment", "http://a.test/x  # the front page\n", ("http://a.test/x",)),
    ("trailing-comment-after-tab", "http://a.test/x\t# tab\n", ("http://a.test/x",)),
    ("fragment-is-no-comment", "http://a.test/x#part\n", ("http://a.test/x",)),
    ("surrounding-whitespace", "   http://a.test/x   \n", ("http://a.test/x",)),
    ("crlf", "http://a.test/1\r\nhttp://a.test/2\r\n", ("http://a.test/1", "http://a.test/2")),
    ("duplicates-merged", "http://a.test/\nhttp://a.test/\n", ("http://a.test/",)),
    (
        "duplicates-after-normalisation",
        "http://a.test/x\nHTTP://A.TEST:80/x\nhttp://a.test/y/../x#f\nhttp://a.test/%78\n",
        ("http://a.test/x",),
    ),
    (
        "file-order-kept",
        "https://c.test/\nhttp://a.test/\nhttps://c.test/\nhttp://b.test/\n",
        ("https://c.test/", "http://a.test/", "http://b.test/"),
    ),
    ("idn", "http://Bücher.de/\n", ("http://xn--bcher-kva.de/",)),
    ("empty-file", "", ()),
    ("comments-only", "# a\n# b\n", ()),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [case[1:] for case in PARSE_CASES],
    ids=[case[0] for case in PARSE_CASES],
)
def test_parse_seeds(text: str, expected: tuple[str, ...]) -> None:
    seeds = parse_seeds(text, WHERE)
    assert seeds.urls == expected
    assert seeds.problems == ()


def test_bad_lines_are_reported_with_file_and_line_and_skipped() -> None:
    text = (
        "# seeds\n"
        "http://a.test/\n"
        "mailto:me@a.test\n"
        "\n"
        "/relative/path\n"
        "https://b.test/  # fine\n"
        "http://a.test:99999/\n"
        "ftp://c.test/file  # not http\n"
    )
    seeds = parse_seeds(text, WHERE)
    assert seeds.urls == ("http://a.test/", "https://b.test/")
    assert len(seeds.problems) == 4
    mailto, relative, port, ftp = seeds.problems
    assert mailto.startswith("seeds.txt line 3: ")
    assert "mailto:me@a.test" in mailto
    assert "scheme 'mailto' is not crawled" in mailto
    assert relative.startswith("seeds.txt line 5: ")
    assert "not an absolute URL" in relative
    assert port.startswith("seeds.txt line 7: ")
    assert "port" in port
    assert ftp.startswith("seeds.txt line 8: ")
    # The comment is not part of the entry the message quotes.
    assert "'ftp://c.test/file'" in ftp
    assert "not http" not in ftp


def test_read_seeds_names_the_file_in_its_problems(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_text("http://a.test/\nnot a url\n", encoding="utf-8")
    seeds = read_seeds(path)
    assert seeds == Seeds(("http://a.test/",), seeds.problems, skipped=1)
    assert seeds.problems[0].startswith(f"{path} line 2: ")


def test_seed_error_is_a_config_error() -> None:
    assert issubclass(SeedError, ConfigError)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no URL to crawl"),
        ("# only a comment\n\n", "no URL to crawl"),
        ("mailto:x@y\n/relative\n", "no URL to crawl (2 lines skipped)"),
    ],
)
def test_a_file_without_a_usable_url_is_a_seed_error(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "seeds.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SeedError) as caught:
        read_seeds(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)
    assert "expected one http:// or https:// URL per line" in str(caught.value)


def test_a_missing_file_is_a_seed_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "absent.txt"
    with pytest.raises(SeedError, match=r"cannot read seeds file .*absent\.txt"):
        read_seeds(path)


def test_a_directory_is_a_seed_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SeedError, match="cannot read seeds file"):
        read_seeds(tmp_path)


def test_a_file_that_is_not_utf8_is_a_seed_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("http://caf\xe9.test/\n".encode("latin-1"))
    with pytest.raises(SeedError) as caught:
        read_seeds(path)
    assert str(path) in str(caught.value)
    assert "not UTF-8" in str(caught.value)


def test_a_byte_order_mark_is_not_part_of_the_first_url(tmp_path: Path) -> None:
    # As Windows Notepad writes it.
    path = tmp_path / "seeds.txt"
    path.write_bytes(b"\xef\xbb\xbfhttp://a.test/\nhttp://b.test/\n")
    seeds = read_seeds(path)
    assert seeds.urls == ("http://a.test/", "http://b.test/")
    assert seeds.problems == ()


def test_a_lone_carriage_return_ends_a_line() -> None:
    seeds = parse_seeds("http://a.test/\rbad\r\nhttp://b.test/", WHERE)
    assert seeds.urls == ("http://a.test/", "http://b.test/")
    assert seeds.problems[0].startswith("seeds.txt line 2: ")


@pytest.mark.parametrize("odd", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029"])
def test_bad_line_numbers_count_only_real_line_ends(odd: str) -> None:
    seeds = parse_seeds(f"http://a.test/{odd}\nbad\n", WHERE)
    assert seeds.problems[0].startswith("seeds.txt line 2: ")


# --- hostile files (issue 17): read as a stream, bounded, reported briefly ---------------------


def test_an_endless_line_is_skipped_unread_in_bounded_memory(tmp_path: Path) -> None:
    # 8 MiB stands for the 1 GB line: either is read in 64 KiB blocks and dropped as it comes,
    # so the peak is the same (tracemalloc counts what Python allocates: under 1 MiB).
    at_the_bound = "http://a.test/" + "x" * (MAX_LINE_BYTES - len("http://a.test/"))
    path = tmp_path / "seeds.txt"
    with path.open("wb") as file:
        file.write(b"http://a.test/\n")
        file.write(b"http://b.test/" + b"x" * (8 * 1024 * 1024) + b"\n")
        file.write(at_the_bound.encode() + b"\n")  # a line of MAX_LINE_BYTES is still read
        file.write(b"http://c.test/\n")
    seeds, peak = peak_bytes(lambda: read_seeds(path))
    assert seeds.urls == ("http://a.test/", at_the_bound, "http://c.test/")
    assert seeds.skipped == 1
    assert seeds.problems == (
        f"{path} line 2: skipped a line of more than {MAX_LINE_BYTES} bytes, not read "
        "(expected one URL per line)",
    )
    assert peak < 1024 * 1024


def test_many_bad_lines_are_counted_and_only_the_first_reported(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    lines = (f"http://a.test/{n}" if n % 2 else f"not a url {n}" for n in range(20_000))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    seeds = read_seeds(path)
    assert len(seeds.urls) == 10_000
    assert seeds.skipped == 10_000
    assert len(seeds.problems) == MAX_PROBLEMS + 1
    assert seeds.problems[0].startswith(f"{path} line 1: skipped 'not a url 0'")
    assert seeds.problems[-1] == (
        f"{path}: {10_000 - MAX_PROBLEMS} more lines skipped "
        f"(10000 in all; the first {MAX_PROBLEMS} are shown)"
    )


def test_a_long_bad_entry_is_quoted_cut(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_text("http://a.test/\nftp://" + "y" * 10_000 + "\n", encoding="utf-8")
    (problem,) = read_seeds(path).problems
    assert len(problem) < 400
    assert "(10006 characters)" in problem


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"http://a.test/\n\x00\x00\x01bad\n", "line 2: a NUL byte: a binary file"),
        (b"http://a.test/\nhttp://b.test/\n\xff\xfe\x80garbage\n", "line 3: not UTF-8 text"),
        (bytes(range(256)) * 16, "line 1: a NUL byte: a binary file"),
    ],
    ids=["nul", "invalid-utf8", "binary"],
)
def test_a_binary_file_is_a_seed_error_naming_the_line(
    tmp_path: Path, data: bytes, message: str
) -> None:
    path = tmp_path / "seeds.bin"
    path.write_bytes(data)
    with pytest.raises(SeedError) as caught:
        read_seeds(path)
    assert str(caught.value).startswith(f"{path} {message}")
    assert "expected UTF-8 text, one http:// or https:// URL per line" in str(caught.value)


def peak_bytes(read: Callable[[], Seeds]) -> tuple[Seeds, int]:
    """What `read` returns, and the most memory Python held meanwhile."""
    tracemalloc.start()
    try:
        seeds = read()
        return seeds, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("at", [-2, -1, 0, 1])
def test_line_ends_across_the_reading_blocks_count_once(tmp_path: Path, at: int) -> None:
    # The file is read 64 KiB at a time, never whole (2 MiB of comments, then a CR LF that
    # straddles two blocks, or ends one): a CR LF split between two blocks is one line end.
    filler = ("#" + "f" * 1022 + "\n") * 2048
    comment = "#" + "x" * 40_000 + "\n"
    url = "http://a.test/#" + "x" * (64 * 1024 - len(comment) - len("http://a.test/#") + at)
    path = tmp_path / "seeds.txt"
    path.write_bytes(f"{filler}{comment}{url}\r\nbad\r\nhttp://b.test/\r".encode())
    seeds, peak = peak_bytes(lambda: read_seeds(path))
    assert seeds.urls == ("http://a.test/", "http://b.test/")
    assert seeds.problems[0].startswith(f"{path} line 2051: ")
    assert peak < 1024 * 1024
