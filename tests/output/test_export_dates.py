"""A page's times in exports: epoch seconds as before, and beside them the same moment as an ISO
8601 date in UTC (`<name>_iso`), in pages.jsonl, `crawl export` (JSON lines, CSV, Markdown)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from crawler.output import IndexSink
from crawler.output.export import export_pages
from crawler.output.jsonl import PAGES_NAME, JsonlSink
from crawler.output.records import PageRecord, iso_utc

FETCHED = 1_795_810_503.25  # 2026-11-27 20:15:03.250 UTC
LASTMOD = 1_795_737_600.0  # 2026-11-27 00:00:00 UTC


@pytest.mark.parametrize(
    ("epoch", "iso"),
    [
        (FETCHED, "2026-11-27T20:15:03.250Z"),
        (0.0, "1970-01-01T00:00:00.000Z"),
        (None, None),
        (1e20, None),  # past any calendar: no date rather than an error
    ],
)
def test_iso_utc(epoch: float | None, iso: str | None) -> None:
    assert iso_utc(epoch) == iso


def page() -> PageRecord:
    return PageRecord(
        url="https://a.test/",
        final_url="https://a.test/",
        status=200,
        fetched_at=FETCHED,
        depth=0,
        text="a page about dates",
        markdown="a page about dates",
        lastmod=LASTMOD,
        index=True,
    )


def test_pages_jsonl_keeps_the_epoch_and_adds_the_date(tmp_path: Path) -> None:
    sink = JsonlSink(tmp_path)
    sink.page(page())
    sink.close()
    [line] = (tmp_path / PAGES_NAME).read_text("utf-8").splitlines()
    written = json.loads(line)
    assert written["fetched_at"] == FETCHED
    assert written["fetched_at_iso"] == "2026-11-27T20:15:03.250Z"
    assert written["lastmod"] == LASTMOD
    assert written["lastmod_iso"] == "2026-11-27T00:00:00.000Z"


def test_every_export_format_gives_the_date_beside_the_epoch(tmp_path: Path) -> None:
    with IndexSink(tmp_path) as sink:
        sink.page(page())
    out = io.StringIO()
    export_pages(tmp_path, out)
    exported = json.loads(out.getvalue())
    assert exported["fetched_at"] == FETCHED
    for name in ("fetched_at", "first_seen", "last_changed"):
        assert exported[f"{name}_iso"] == "2026-11-27T20:15:03.250Z"
    assert exported["lastmod_iso"] == "2026-11-27T00:00:00.000Z"
    out = io.StringIO()
    export_pages(tmp_path, out, format="csv")
    header, row = list(csv.reader(io.StringIO(out.getvalue())))
    # The new column comes last: a reader that takes the columns by position reads the old ones.
    assert header[-2:] == ["usage", "fetched_at_iso"]
    assert row[header.index("fetched_at")] == str(FETCHED)
    assert row[-1] == "2026-11-27T20:15:03.250Z"
    out = io.StringIO()
    export_pages(tmp_path, out, format="markdown")
    assert json.loads(out.getvalue())["fetched_at_iso"] == "2026-11-27T20:15:03.250Z"
