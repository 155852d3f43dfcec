"""What the index's writer thread (crawler.output.index) does to DIR/index.sqlite: a batch of
records stored in one transaction, rows made from them, and a chunk of stored texts made
searchable after.

A URL written again (a recrawl, or a rerun into the same directory) updates its row in place,
keeping its id and first_seen: never a duplicate. A new or changed page replaces its text and its
FTS entry (a change when its digest or status differs: times_changed, last_changed); an unchanged
or failed fetch only counts itself (fetched_at, times_fetched, fresher validators), its text
stays; a gone page (404, 410) keeps its row, marked gone, and leaves the FTS table: not found
by a search.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from crawler._sqlite import bound_chunks, write_rows
from crawler.output.cjk import marked
from crawler.output.index_schema import (
    FIELDS_COLUMNS,
    HISTORY_COLUMNS,
    JSON_COLUMNS,
    MAIN_COLUMNS,
    PAGE_COLUMNS,
    USAGE_COLUMNS,
)
from crawler.output.records import PageRecord, Skip, Unskip, compact_json
from crawler.usage.purposes import refused_bits
from crawler.usage.signals import refused_purposes

__all__ = [
    "INDEX_CHUNK_PAGES",
    "SEARCHABLE",
    "index_chunk",
    "keeps_text",
    "unindexed_count",
    "write_batch",
]

# A batch is written a few hundred rows to a statement, each statement's values bound in a
# VALUES list (crawler._sqlite says why: the GIL). `{values}` is that list.
_SAME_PAGE = "pages.digest IS excluded.digest AND pages.status IS excluded.status"
_ROW_COLUMNS = PAGE_COLUMNS + HISTORY_COLUMNS + USAGE_COLUMNS + MAIN_COLUMNS + FIELDS_COLUMNS
_UPSERT_PAGES = (
    f"INSERT INTO pages ({', '.join(_ROW_COLUMNS)}) {{values}} "
    "ON CONFLICT (url) DO UPDATE SET "
    + ", ".join(
        f"{column} = excluded.{column}"
        for column in PAGE_COLUMNS[1:] + USAGE_COLUMNS + MAIN_COLUMNS + FIELDS_COLUMNS
    )
    + ", etag = excluded.etag, last_modified = excluded.last_modified, digest = excluded.digest, "
    "lastmod = excluded.lastmod, times_fetched = pages.times_fetched + 1, gone = 0, "
    # A page fetched again as it was (a URL fetched twice around a kill) is no change.
    f"change = CASE WHEN {_SAME_PAGE} THEN 'unchanged' ELSE excluded.change END, "
    f"times_changed = pages.times_changed + NOT ({_SAME_PAGE}), "
    f"last_changed = CASE WHEN {_SAME_PAGE} THEN pages.last_changed ELSE excluded.fetched_at END"
)
# An unchanged or failed fetch: counted, validators freshened; what the page said stays.
_FETCHED_AGAIN = (
    "UPDATE pages SET fetched_at = row.column2, change = row.column3, error = row.column4, "
    "etag = coalesce(row.column5, pages.etag), "
    "last_modified = coalesce(row.column6, pages.last_modified), "
    "times_fetched = pages.times_fetched + 1 "
    "FROM ({values}) AS row WHERE pages.url = row.column1"
)
# Gone (404, 410): the row stays, marked, out of the FTS table.
_GONE = (
    "UPDATE pages SET fetched_at = row.column2, status = row.column3, error = row.column4, "
    "index_reason = row.column5, change = 'gone', gone = 1, indexed = 0, "
    "times_fetched = pages.times_fetched + 1, times_changed = pages.times_changed + 1, "
    "last_changed = row.column2 FROM ({values}) AS row WHERE pages.url = row.column1"
)
_OLD_IDS = "SELECT id, url FROM pages WHERE url IN ({values})"
# An external-content FTS5 table forgets a row only when told the words it indexed for it: its
# content, texts as the view texts_fts gives them (index_schema).
_FTS_COLUMNS = "title, headings, text, nosnippet_text, main_text"
_FORGET_INDEXED = (
    f"INSERT INTO pages_fts (pages_fts, rowid, {_FTS_COLUMNS}) "
    f"SELECT 'delete', id, {_FTS_COLUMNS} FROM texts_fts "
    "WHERE id IN ({values}) AND id NOT IN (SELECT id FROM unindexed)"
)
_DELETE_TEXTS = "DELETE FROM texts WHERE id IN ({values})"
_DELETE_UNINDEXED = "DELETE FROM unindexed WHERE id IN ({values})"
# Each text row comes with its page's id, looked up once the pages are written: joined to pages
# by URL in the statement, SQLite copied every text into a table of its own first (MATERIALIZE),
# and storing a batch took twice as long (benchmarks/README.md, "The index writer").
_INSERT_TEXTS = (
    "INSERT INTO texts (id, title, headings, text, nosnippet_text, main_text, markdown, "
    "frame_text) {values}"
)
_QUEUE_TEXTS = "INSERT INTO unindexed (id) {values}"
_NEXT_UNINDEXED = "SELECT id FROM unindexed ORDER BY id LIMIT ?"
_INDEX_CHUNK = (
    f"INSERT INTO pages_fts (rowid, {_FTS_COLUMNS}) "
    f"SELECT id, {_FTS_COLUMNS} FROM texts_fts WHERE id IN ({_NEXT_UNINDEXED})"
)
_DROP_CHUNK = f"DELETE FROM unindexed WHERE id IN ({_NEXT_UNINDEXED})"
_ANY_UNINDEXED = "SELECT EXISTS (SELECT 1 FROM unindexed)"
_COUNT_UNINDEXED = "SELECT count(*) FROM unindexed"
INDEX_CHUNK_PAGES = 500
"""Pages made searchable in one transaction: FTS5 writes a segment a transaction, and fewer,
larger segments are merged less often; a chunk takes about 0.2 s, the longest a batch handed
over meanwhile waits to be stored."""
_UPSERT_SKIPS = (
    "INSERT INTO skips (url, reason, detail) {values} "
    "ON CONFLICT (url) DO UPDATE SET reason = excluded.reason, detail = excluded.detail"
)

_DELETE_SKIPS = "DELETE FROM skips WHERE url IN ({values})"

_Batch = list[PageRecord | Skip | Unskip]


SEARCHABLE = "searchable"
"""What the sink sends the writer process (crawler.output.index_writer) to ask for every stored
page to be made searchable before it answers."""


def write_batch(connection: sqlite3.Connection, batch: _Batch) -> None:
    """Store a batch in one transaction: page rows, texts (in `unindexed`, for `index_chunk`),
    skips."""
    # The last record of a URL wins; two text rows for one id would be a constraint error.
    records = {item.url: item for item in batch if isinstance(item, PageRecord)}
    skips: dict[str, Skip] = {}
    unskipped: dict[str, None] = {}
    for item in batch:
        if isinstance(item, Skip):
            skips[item.url] = item
            unskipped.pop(item.url, None)
        elif isinstance(item, Unskip):
            skips.pop(item.url, None)
            unskipped[item.url] = None
    skip_rows = [[skip.url, skip.reason, skip.detail] for skip in skips.values()]
    connection.execute("BEGIN IMMEDIATE")
    try:
        _write_pages(connection, records)
        if skip_rows:
            write_rows(connection, _UPSERT_SKIPS, skip_rows, 3)
        if unskipped:
            write_rows(connection, _DELETE_SKIPS, [(url,) for url in unskipped], 1)
        connection.execute("COMMIT")
    except BaseException:
        # SQLite may have rolled back already (a full disk, say); a second ROLLBACK would fail.
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _write_pages(connection: sqlite3.Connection, records: dict[str, PageRecord]) -> None:
    """The batch's page records, inside its transaction (see the module doc)."""
    if not records:
        return
    old = _ids(connection, records)
    pages: dict[str, PageRecord] = {}
    again: list[list[Any]] = []
    gone: list[list[Any]] = []
    for url, record in records.items():
        if url not in old or record.change in ("new", "changed"):
            pages[url] = record
        elif record.change == "gone":
            gone.append([url, record.fetched_at, record.status, record.error, record.index_reason])
        else:
            fetched = [url, record.fetched_at, record.change, record.error]
            again.append([*fetched, record.etag, record.last_modified])
    if again:
        write_rows(connection, _FETCHED_AGAIN, again, 6)
    if gone:
        forget = [(old[row[0]],) for row in gone]
        for statement in (_FORGET_INDEXED, _DELETE_TEXTS, _DELETE_UNINDEXED):
            write_rows(connection, statement, forget, 1)
        write_rows(connection, _GONE, gone, 5)
    if not pages:
        return
    page_rows = [_page_row(record) for record in pages.values()]
    replaced = [(old[url],) for url in pages if url in old]
    if replaced:  # fetched before: these URLs' old words and texts go first
        for statement in (_FORGET_INDEXED, _DELETE_TEXTS, _DELETE_UNINDEXED):
            write_rows(connection, statement, replaced, 1)
    write_rows(connection, _UPSERT_PAGES, page_rows, len(_ROW_COLUMNS))
    kept = [record for record in pages.values() if keeps_text(record)]
    if kept:
        ids = _ids(connection, {record.url: record for record in kept})
        texts = [_text_row(ids[record.url], record) for record in kept]
        write_rows(connection, _INSERT_TEXTS, texts, 8)
        write_rows(connection, _QUEUE_TEXTS, [(text[0],) for text in texts], 1)


def _ids(connection: sqlite3.Connection, records: dict[str, PageRecord]) -> dict[str, int]:
    """The ids of those of these URLs that have a row in pages."""
    urls = [(url,) for url in records]
    return {
        url: row_id
        for values, parameters in bound_chunks(connection, urls, 1)
        for row_id, url in connection.execute(_OLD_IDS.format(values=values), parameters)
    }


def index_chunk(connection: sqlite3.Connection) -> bool:
    """Make up to INDEX_CHUNK_PAGES stored texts searchable, in one transaction; whether any are
    left."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute(_INDEX_CHUNK, (INDEX_CHUNK_PAGES,))
        connection.execute(_DROP_CHUNK, (INDEX_CHUNK_PAGES,))
        left = bool(connection.execute(_ANY_UNINDEXED).fetchone()[0])
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return left


def _text_row(page_id: int, record: PageRecord) -> list[int | str | None]:
    """A page's row of texts: what pages_fts reads of it marked for CJK (crawler.output.cjk).

    A page with no main content of its own (a link hub, a book's index) is searched by its text
    alone: its main content is that text, and must not weigh as one. One with main content is
    searched by it and by the text outside it (frame_text), so that no word is tokenised twice;
    its whole text, which pages_fts then never reads, is kept as it is. No frame (a record made
    without the page step's, or no main text read: `page.main_content: false`): the whole text
    is searched beside the main text."""
    framed = record.main_fallback is None and record.frame_text is not None
    return [
        page_id,
        None if record.title is None else marked(record.title),
        marked(record.headings),
        record.text if framed else marked(record.text),
        marked(record.nosnippet_text),
        marked(record.main_text) if record.main_fallback is None else "",
        record.markdown,
        marked(record.frame_text) if framed and record.frame_text is not None else None,
    ]


def keeps_text(record: PageRecord) -> bool:
    """Its robots rules let its text be indexed: the index keeps the text of a page the crawl's
    purpose may not use, for a search or export for another purpose."""
    return record.index or record.usage_refusal is not None


def _page_row(record: PageRecord) -> list[Any]:
    # The record's own JSON form names every field once; the table calls `index` `indexed`, and
    # keeps the lists as JSON text. As a first fetch: the upsert keeps an existing row's history.
    # `indexed` and `index_reason` are the page's robots rules' word; its usage signals decide
    # for each purpose as the index is read.
    fields = record.to_json()
    if record.usage_refusal is not None:
        fields["index"], fields["index_reason"] = True, None
    fields["indexed"] = fields["index"]
    for column in JSON_COLUMNS:
        fields[column] = compact_json(fields[column])
    fetched_at = record.fetched_at
    usage = record.usage
    fields.update(
        first_seen=fetched_at,
        last_changed=fetched_at,
        times_fetched=1,
        times_changed=0,
        gone=0,
        usage=compact_json(fields["usage"]) if usage else None,
        refuses=refused_bits(refused_purposes(usage)) if usage else 0,
        # Kept as the text is, whatever the purpose; an export shows them as it shows the text.
        fields=compact_json(record.fields) if record.fields is not None else None,
    )
    return [fields[column] for column in _ROW_COLUMNS]


def unindexed_count(connection: sqlite3.Connection) -> int:
    """Pages stored and not yet searchable."""
    return int(connection.execute(_COUNT_UNINDEXED).fetchone()[0])
