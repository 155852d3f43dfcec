"""Exporting the crawl's full-text index (DIR/index.sqlite, opened by crawler.output.index_read):
`export_pages`, `export_changes` and `export_skips`.

An export is JSON lines (one object per page, its fields named as `PageRecord` names them), or CSV:
a header row, then a row per page of its single-valued fields (`CSV_PAGE_FIELDS`), then its user
fields, a column `fields.NAME` each (a list as JSON). CSV leaves the
links and the text out: lists do not fit a cell, and a page's text, long and of many lines, makes a
file spreadsheets open badly; the title and description say what a page is. Its `usage` cell is
the page's usage signals as JSON (empty when it has none).

An export is for a purpose (crawler.usage: by default the last crawl's): a page whose owner
refuses it is exported with `index` false, `index_reason` naming the signals, and no text.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from crawler.errors import ConfigError, OutputError
from crawler.output.cjk import unmarked
from crawler.output.index_read import find_index, index_purpose, reading
from crawler.output.index_schema import (
    BOOL_COLUMNS,
    FIELDS_COLUMNS,
    HISTORY_COLUMNS,
    JSON_COLUMNS,
    MAIN_COLUMNS,
    PAGE_COLUMNS,
    USAGE_COLUMNS,
)
from crawler.output.records import TIME_FIELDS, compact_json, iso_utc
from crawler.usage.purposes import check_purpose, purpose_bit
from crawler.usage.signals import refusal, signals_from_json

__all__ = [
    "CSV_PAGE_FIELDS",
    "CSV_SKIP_FIELDS",
    "EXPORT_FORMATS",
    "MARKDOWN_FIELDS",
    "export_changes",
    "export_pages",
    "export_skips",
]

EXPORT_FORMATS = ("jsonl", "csv", "markdown")
MARKDOWN_FIELDS = (
    "url",
    "final_url",
    "title",
    "language",
    "fetched_at",
    "fetched_at_iso",
    "main_fallback",
    "markdown",
)
"""What `--format markdown` writes of each page indexed for the purpose, a JSON object a line:
its main content as Markdown, and what says which page it is."""
_EXPORT_NAMES = {"indexed": "index"}
"""Table columns whose export name differs: `index` is an SQL keyword, so the table says
`indexed`; an export says `index`, as `PageRecord` and pages.jsonl do."""
_CSV_COLUMNS = tuple(column for column in PAGE_COLUMNS if column not in JSON_COLUMNS)
CSV_PAGE_FIELDS = (
    *(_EXPORT_NAMES.get(column, column) for column in _CSV_COLUMNS),
    "usage",
    "fetched_at_iso",
)
"""The columns of `crawl export --format csv`: a page's fields that hold one value (the date as
text last: a column added after the others moves none of theirs)."""
CSV_SKIP_FIELDS = ("url", "reason", "detail")


def _check_format(format: str) -> None:
    if format not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {format!r} (known: {', '.join(EXPORT_FORMATS)})")


def export_pages(
    directory: Path,
    out: TextIO,
    *,
    format: str = "jsonl",
    header: bool = True,
    purpose: str | None = None,
) -> int:
    """Write every fetched page to `out`, in fetch order; returns the count. jsonl: one JSON object
    a line, `text` and `nosnippet_text` null unless the page is indexed for `purpose` (by default
    the last crawl's). csv: a header row of `CSV_PAGE_FIELDS` (unless not `header`), then a row a
    page (true/false for booleans, empty for null). markdown: a JSON object a line of each page
    indexed for `purpose`, `MARKDOWN_FIELDS`: its main content as Markdown (an index from before
    schema version 5 has none)."""
    _check_format(format)
    check_purpose(purpose)
    count = 0
    with reading(directory) as (connection, layout):
        usage = USAGE_COLUMNS if layout.version >= 4 else ()
        main = MAIN_COLUMNS if layout.version >= 5 else ()
        user = FIELDS_COLUMNS if layout.version >= 7 else ()
        history = HISTORY_COLUMNS if layout.version >= 3 else ()
        names = PAGE_COLUMNS + history + usage + main + user
        columns = ", ".join(f"pages.{column}" for column in names)
        main_texts = "texts.main_text, texts.markdown" if main else "NULL, NULL"
        sql = (
            f"SELECT {columns}, texts.text, texts.nosnippet_text, {layout.headings}, "
            f"{main_texts} FROM pages LEFT JOIN {layout.texts} AS texts ON texts.id = pages.id "
            "ORDER BY pages.fetched_at, pages.id"
        )
        if format == "csv":  # neither text nor lists: no need to read them
            names = _CSV_COLUMNS + usage + user
            columns = ", ".join(f"pages.{column}" for column in names)
            sql = f"SELECT {columns} FROM pages ORDER BY pages.fetched_at, pages.id"
        chosen = purpose or index_purpose(connection, layout)
        rows = connection.execute(sql)  # a cursor: rows stream, never all in memory
        if format == "csv":
            writer = csv.writer(out)
            named = _field_names(connection) if user else []
            if header:
                writer.writerow([*CSV_PAGE_FIELDS, *(f"fields.{name}" for name in named)])
            for row in rows:
                page = _export_object(row, names, chosen)
                usage_cell = compact_json(page["usage"]) if page["usage"] else None
                page["usage"] = usage_cell
                found = page.get("fields") or {}
                writer.writerow(
                    [_csv_cell(page[field]) for field in CSV_PAGE_FIELDS]
                    + [_field_cell(found.get(name)) for name in named]
                )
                count += 1
            return count
        for row in rows:
            page = _export_object(row, names, chosen)
            if format == "markdown":
                if not page["index"] or not page["markdown"]:
                    continue
                page = {field: page[field] for field in MARKDOWN_FIELDS}
            out.write(compact_json(page) + "\n")
            count += 1
    return count


def export_changes(directory: Path, out: TextIO, since: float) -> int:
    """Write every page that appeared, changed or went away at `since` (epoch seconds) or later
    to `out`, one JSON object a line, in the order of those changes: url, change (new, changed or
    gone: its last change), at (when its last fetch saw it), first_seen, status, title. Returns
    the count. OutputError for an index older than the page history (schema version 3)."""
    count = 0
    with reading(directory) as (connection, layout):
        if layout.version < 3:
            raise OutputError(
                f"index {find_index(directory)} keeps no page history (schema version "
                f"{layout.version}, from an older crawler): the next crawl into it adds one"
            )
        rows = connection.execute(
            "SELECT url, gone, first_seen, last_changed, status, title FROM pages "
            "WHERE last_changed >= ? ORDER BY last_changed, id",
            (since,),
        )
        for url, gone, first_seen, last_changed, status, title in rows:
            change = "gone" if gone else "new" if first_seen >= since else "changed"
            line = {
                "url": url,
                "change": change,
                "at": iso_utc(last_changed),
                "first_seen": iso_utc(first_seen),
                "status": status,
                "title": title,
            }
            out.write(compact_json(line) + "\n")
            count += 1
    return count


def export_skips(
    directory: Path,
    out: TextIO,
    *,
    reason: str | None = None,
    format: str = "jsonl",
    header: bool = True,
) -> int:
    """Write every URL the crawl met and did not fetch to `out`, in the order first skipped: one
    JSON object a line (url, reason, detail), or with format csv a header row (unless not
    `header`) and a row each; only those skipped for `reason` when given. Returns the count."""
    _check_format(format)
    sql = "SELECT url, reason, detail FROM skips"
    parameters: tuple[str, ...] = ()
    if reason is not None:
        sql += " WHERE reason = ?"
        parameters = (reason,)
    count = 0
    with reading(directory) as (connection, _):
        rows = connection.execute(sql + " ORDER BY id", parameters)
        if format == "csv":
            writer = csv.writer(out)
            if header:
                writer.writerow(CSV_SKIP_FIELDS)
            for row in rows:
                writer.writerow(row)
                count += 1
            return count
        for url, why, detail in rows:
            out.write(compact_json({"url": url, "reason": why, "detail": detail}) + "\n")
            count += 1
    return count


def _field_names(connection: Any) -> list[str]:
    """The names of the pages' user fields, in the order they first appear (a CSV column each,
    `fields.NAME`, after the others)."""
    names: dict[str, None] = {}
    for (value,) in connection.execute("SELECT fields FROM pages WHERE fields IS NOT NULL"):
        names.update(dict.fromkeys(json.loads(value)))
    return list(names)


def _field_cell(value: object) -> object:
    """A field as a CSV cell: text as it is, a list (or anything else) as JSON."""
    if value is None or isinstance(value, str | int | float):
        return _csv_cell(value)
    return compact_json(value)


def _csv_cell(value: object) -> object:
    """A value as a CSV cell: booleans as JSON writes them, null as an empty cell."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


def _export_object(
    row: Sequence[Any], columns: Sequence[str] = PAGE_COLUMNS, purpose: str = "search"
) -> dict[str, Any]:
    """A page row (`columns`, then its text, nosnippet text and headings if selected) as
    exported for `purpose`."""
    page: dict[str, Any] = {}
    refuses = 0
    for column, value in zip(columns, row, strict=False):
        name = _EXPORT_NAMES.get(column, column)
        if column == "refuses":
            refuses = value or 0
            continue
        if column == "usage":
            signals = signals_from_json(value)
            page["usage"] = [signal.to_json() for signal in signals]
            if refuses & purpose_bit(purpose) and page["index"]:
                # Its robots rules let it be indexed; its owner refuses this purpose.
                page["index"], page["index_reason"] = False, refusal(signals, purpose)
            continue
        if column == "fields":
            # Shown as the text is: for a page indexed for the purpose.
            page["fields"] = json.loads(value) if value is not None and page["index"] else None
            continue
        if column in JSON_COLUMNS:
            page[name] = json.loads(value)
        elif column in BOOL_COLUMNS:
            page[name] = bool(value)
        elif column in ("fetched_at", "first_seen", "last_changed"):
            page[name] = round(value, 3)
        else:
            page[name] = value
    for time_field in TIME_FIELDS:
        if time_field in page:
            page[f"{time_field}_iso"] = iso_utc(page[time_field])
    page.setdefault("usage", [])
    if len(row) > len(columns):
        text, nosnippet_text, headings, main_text, markdown = row[len(columns) :]
        indexed = page["index"]
        page["text"] = unmarked(text) if indexed and text is not None else None
        page["nosnippet_text"] = (
            unmarked(nosnippet_text) if indexed and nosnippet_text is not None else None
        )
        page["headings"] = unmarked(headings) if indexed and headings is not None else None
        page.setdefault("main_fallback", None)
        if page["main_fallback"] is not None:
            main_text = text  # a page without main content of its own falls back to its text
        page["main_text"] = unmarked(main_text) if indexed and main_text is not None else None
        page["markdown"] = markdown if indexed else None
    return page
