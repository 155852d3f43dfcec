"""crawler.cli.text: counts read as English, and report lines fit a terminal's width without the
terminal wrapping them."""

from __future__ import annotations

import io

import pytest

from crawler.cli.text import (
    CONTINUATION,
    ELLIPSIS,
    columns,
    counted,
    ellipsis_for,
    fit,
    fit_text,
    printable,
    terminal_width,
    wrap,
)


@pytest.mark.parametrize(
    ("count", "noun", "plural", "expected"),
    [
        (0, "URL", None, "0 URLs"),
        (1, "URL", None, "1 URL"),
        (2, "URL", None, "2 URLs"),
        (1, "host", None, "1 host"),
        (56, "host", None, "56 hosts"),
        (1, "retry", "retries", "1 retry"),
        (3, "retry", "retries", "3 retries"),
        (1, "robots.txt fetch", "robots.txt fetches", "1 robots.txt fetch"),
        (-1, "page", None, "-1 pages"),
    ],
)
def test_counted(count: int, noun: str, plural: str | None, expected: str) -> None:
    assert counted(count, noun, plural) == expected


@pytest.mark.parametrize(
    ("text", "width"),
    [("abc", 3), ("日本", 4), ("e\u0301", 1), ("", 0)],
)
def test_columns_count_wide_characters_twice_and_marks_not_at_all(text: str, width: int) -> None:
    assert columns(text) == width


@pytest.mark.parametrize(
    ("line", "width", "expected"),
    [
        ("pages 12", 20, "pages 12"),
        ("pages 12", 8, "pages 12"),
        ("pages 12345", 8, f"pages 1{ELLIPSIS}"),
        ("a b c d e", 4, f"a b{ELLIPSIS}"),  # no space left before the ellipsis
        ("日本語のページ", 7, f"日本語{ELLIPSIS}"),
        ("abc", 1, ELLIPSIS),
        ("abc", 0, ""),
    ],
)
def test_fit_cuts_with_an_ellipsis(line: str, width: int, expected: str) -> None:
    fitted = fit(line, width)
    assert fitted == expected
    assert columns(fitted) <= width


def test_control_characters_are_shown_not_sent() -> None:
    hostile = "status 200\x1b[2J\rX\x00"
    assert printable(hostile) == "status 200\\x1b[2J\\rX\\x00"
    assert "\x1b" not in fit(hostile, 80) and "\r" not in fit_text(hostile, None)


def test_a_host_line_wraps_between_its_fields() -> None:
    line = (
        "  http://a.test  requests 15  interval 2 s  gap 2.010 s  Crawl-delay 2 s  "
        "robots.txt status 200"
    )
    assert wrap(line, 60) == [
        "  http://a.test  requests 15  interval 2 s  gap 2.010 s",
        f"  {CONTINUATION}Crawl-delay 2 s  robots.txt status 200",
    ]


def test_prose_wraps_at_spaces_and_a_word_longer_than_a_line_is_cut() -> None:
    line = "skips: out of scope: host 5, disallowed by robots.txt 3, over limits.max_depth 2"
    assert wrap(line, 40) == [
        "skips: out of scope: host 5, disallowed",
        f"{CONTINUATION}by robots.txt 3, over",
        f"{CONTINUATION}limits.max_depth 2",
    ]
    url = "output: /" + "x" * 100
    wrapped = wrap(url, 40)
    assert wrapped[0] == "output:"
    assert wrapped[1].endswith(ELLIPSIS) and columns(wrapped[1]) == 40


@pytest.mark.parametrize("width", [1, 5, 12, 20, 39, 40, 79, 80, 120])
def test_every_line_of_a_report_fits(width: int) -> None:
    report = "\n".join(
        [
            "crawl finished after 10.0 s: 20 pages (2.0/s), 25 requests, 2 robots.txt fetches, "
            "3.5 MB, 1 retry",
            "politeness per host (our request starts; gap = shortest between two):",
            "  https://a-rather-long-host-name.example.org:8443  requests 15  interval 2 s  "
            "gap 2.010 s  Crawl-delay 120 s (capped)  robots.txt status 404: unavailable",
            "  ... and 5 more hosts",
            "",
        ]
    )
    fitted = fit_text(report, width)
    assert all(columns(line) <= width for line in fitted.split("\n"))
    if width >= 60:  # every word fits a line: none is lost, only moved
        assert "".join(fitted.split()) == "".join(report.split())


def test_without_a_width_a_report_is_left_whole() -> None:
    report = "a line " * 40 + "\n  a host  figures"
    assert fit_text(report, None) == report


class _Terminal(io.StringIO):
    def __init__(self, encoding: str = "utf-8") -> None:
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str:
        return self._encoding

    def isatty(self) -> bool:
        return True


def test_terminal_width_is_one_column_short_of_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    assert terminal_width(_Terminal()) == 39
    assert terminal_width(io.StringIO()) is None  # a file: no width


def test_the_ellipsis_is_ascii_where_the_stream_cannot_write_it() -> None:
    assert ellipsis_for(_Terminal("utf-8")) == ELLIPSIS
    assert ellipsis_for(_Terminal("ascii")) == "..."
    assert ellipsis_for(_Terminal("no-such-codec")) == "..."
