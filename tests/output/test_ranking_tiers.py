"""What tells the page that defines a name from the pages that mention it (issue 38): a title's
name, a qualified name's qualifier, hubs (crawler.output.ranking), and search ranking by them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crawler.output.index import IndexSink
from crawler.output.ranking import (
    NAME_IS_TITLE,
    TITLE_BEGINS,
    in_prose,
    is_hub,
    name_as_typed,
    qualified_parts,
    qualifier_length,
    query_words,
    title_name,
    title_tier,
)
from crawler.output.records import PageRecord
from crawler.output.searching import search

FILLER = [
    "weather report for the coast tomorrow",
    "a recipe for bread with flour and water",
    "train timetable changes this winter",
    "notes on the history of the harbour",
]


def record(url: str, text: str, *, title: str | None = None, **fields: Any) -> PageRecord:
    defaults: dict[str, Any] = {"final_url": url, "status": 200, "fetched_at": 1.0, "depth": 0}
    return PageRecord(url=url, title=title, text=text, index=True, **(defaults | fields))


def write(directory: Path, *records: PageRecord) -> None:
    with IndexSink(directory) as sink:
        for page in (*records, *(record(f"https://f.test/{n}", t) for n, t in enumerate(FILLER))):
            sink.page(page)


def first(directory: Path, query: str) -> str:
    return search(directory, query, limit=3)[0].url


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("pickle — Python object serialization — Python 3.11 documentation", ("pickle",)),
        ("ClassUtils (Apache Commons Lang 3.12.0 API)", ("classutils",)),
        ("ClassUtils.Interfaces (Apache Commons Lang 3.12.0 API)", ("classutils", "interfaces")),
        ("CREATE TABLE", ("create", "table")),
        ("Chapter\xa071.\xa0BRIN Indexes", ("brin", "indexes")),
        ("8.12. UUID Type", ("uuid", "type")),
        ("F.47. uuid-ossp", ("uuid", "ossp")),
        ("Part VI. Reference", ("reference",)),
        ("5.1.3. List Comprehensions", ("list", "comprehensions")),
        ("Built-in Functions", ("built", "in", "functions")),
        ("Café | the menu", ("cafe",)),
        ("zip()", ("zip",)),
        ("", ()),
        (None, ()),
    ],
)
def test_a_title_names_what_stands_before_its_separator_after_its_number(
    title: str | None, name: tuple[str, ...]
) -> None:
    assert title_name(title) == name


@pytest.mark.parametrize(
    ("title", "query", "tier"),
    [
        ("ClassUtils (Apache Commons Lang API)", "ClassUtils", NAME_IS_TITLE + TITLE_BEGINS + 7),
        ("ClassUtils.Interfaces (Apache Commons Lang API)", "ClassUtils", TITLE_BEGINS + 6),
        ("CREATE TABLE", "create table", NAME_IS_TITLE + TITLE_BEGINS + 7),
        ("CREATE TABLE AS", "CREATE TABLE", TITLE_BEGINS + 6),
        ("8.12. UUID Type", "uuid", TITLE_BEGINS + 6),
        ("9.16. JSON Functions and Operators", "json", TITLE_BEGINS + 4),
        ("D.3. XML Limits and Conformance to SQL/XML", "xml", TITLE_BEGINS + 1),
        ("Widget Tools for the Long and Winding Road Home", "widget", TITLE_BEGINS),
        ("F.47. uuid-ossp", "uuid", 0),  # another name, as pickletools is not pickle
        ("pickletools — Tools for pickle developers", "pickle", 0),
        ("Index", "jsonb_set", 0),
    ],
)
def test_a_title_names_the_query_or_begins_with_it(title: str, query: str, tier: int) -> None:
    words = query_words(query)
    assert words is not None
    assert title_tier(title, words) == tier


def test_queries_of_operators_columns_or_prefixes_have_no_name() -> None:
    assert query_words('"list comprehension"') == ("list", "comprehension")
    for query in ("zip OR map", "title:zip", "zi*", '"'):
        assert query_words(query) is None


def test_a_qualified_name_is_told_and_its_qualifier_found_in_a_title() -> None:
    assert qualified_parts("DateUtils.addDays") == ("dateutils", "adddays")
    assert qualified_parts("os.path.join") == ("os", "path", "join")
    assert qualified_parts("std::vector") == ("std", "vector")
    for query in ("addDays", "date utils", "a.", "row_number"):
        assert qualified_parts(query) is None
    words = ("dateutils", "adddays")
    assert qualifier_length("DateUtils (Apache Commons Lang API)", words) == 1
    assert qualifier_length("DateFormatUtils (Apache Commons Lang API)", words) == 0
    assert qualifier_length("os.path — Common pathname manipulations", ("os", "path", "join")) == 2


@pytest.mark.parametrize(
    ("fallback", "headings", "text", "hub"),
    [
        ("no block of text to choose", 0, 3_000, True),
        (None, 139_000, 140_000, True),  # a book's index: its entries are <dt>s
        (None, 1_100, 2_000, True),  # a chapter's table of contents
        (None, 3_000, 70_000, False),  # a reference page, each function a <dt>
        (None, 700, 1_600, False),  # under half: a short page of signatures
        (None, 20, 25, False),  # a page that is little more than its heading
    ],
)
def test_a_hub_is_a_page_whose_headings_are_most_of_its_text(
    fallback: str | None, headings: int, text: int, hub: bool
) -> None:
    assert is_hub(fallback, headings, text) is hub


def test_the_page_titled_by_the_name_ranks_above_its_parts_and_the_lists(tmp_path: Path) -> None:
    listed = " ".join(f"Widget{n} — makes widget {n}" for n in range(40))
    write(
        tmp_path,
        # A nested class's page: shorter, and its title begins with the name too.
        record(
            "https://docs.test/Widget.Part",
            "Widget.Part: a part of a Widget. Widget parts.",
            title="Widget.Part (API)",
            headings="Class Widget.Part",
        ),
        record(
            "https://docs.test/Widget",
            "Widget makes widgets. " + " ".join(FILLER * 30),
            title="Widget (API)",
            headings="Class Widget Methods frobnicate",
        ),
        # A list of every class: its entries are headings, and it names Widget too.
        record(
            "https://docs.test/classes",
            "Widget — the class of widgets " + listed,
            title="All classes",
            headings="Widget — the class of widgets " + listed,
        ),
    )
    assert first(tmp_path, "widget") == "https://docs.test/Widget"
    # A member is found on its class's page though the page never spells `Widget.frobnicate`.
    assert first(tmp_path, "Widget.frobnicate") == "https://docs.test/Widget"


def test_a_hub_does_not_outrank_the_page_that_defines_a_term(tmp_path: Path) -> None:
    entries = " ".join(f"term{n}, Section {n}" for n in range(60))
    write(
        tmp_path,
        record(
            "https://docs.test/bookindex",
            f"Index jsonb_set, JSON Functions {entries}",
            title="Index",
            headings=f"jsonb_set, JSON Functions {entries}",
        ),
        record(
            "https://docs.test/functions-json",
            "JSON functions. jsonb_set ( target jsonb, path text[] ) returns target with the "
            "item designated by path replaced. Example: jsonb_set('[{\"f1\":1}]', '{0,f1}', "
            "'[2]') gives [{\"f1\": [2]}]; jsonb_set with create_if_missing false leaves it. "
            + " ".join(FILLER * 5),
            title="9.16. JSON Functions and Operators",
            headings="9.16. JSON Functions and Operators",
        ),
    )
    assert first(tmp_path, "jsonb_set") == "https://docs.test/functions-json"


@pytest.mark.parametrize(
    ("markdown", "name", "spoken_of"),
    [
        # PostgreSQL's pages as the page step writes them (tests/data/postgresql-docs)
        ("## 8.12. UUID Type\n\nThe data type `uuid` stores Universally Unique", "uuid", True),
        ("The `regexp_replace` function provides substitution of new text", "regexp_replace", True),
        ("- The `uuid` type stores them", "uuid", True),
        ("> Use `uuid` here", "uuid", True),
        # a signature or an example: a line the name begins
        ("`regexp_replace` ( *`string`* `text` ) → `text`", "regexp_replace", False),
        ("- `uuid`", "uuid", False),
        ("`gen_random_uuid` ( ) → `uuid`", "uuid", False),  # only code before it
        ("```\nThe data type `uuid` in a code block\n```", "uuid", False),
        ("````sql\n```\nThe `uuid` type\n````\nno name here", "uuid", False),
        ("````sql\n```\n````\nThe `uuid` type, after the block", "uuid", True),
        ("- item\n\n    ```\n    The `uuid` in a list's code\n    ```", "uuid", False),
        ("| The data type `uuid` | a table row |", "uuid", False),
        ("### The `uuid` type", "uuid", False),
        # not as typed, or inside a longer name
        ("The data type `UUID` stores", "uuid", False),
        ("The module `uuid-ossp` makes them", "uuid", False),
        ("A UUID is written as hexadecimal digits", "uuid", False),
        ("", "uuid", False),
        (None, "uuid", False),
    ],
)  # fmt: skip
def test_a_name_is_spoken_of_in_prose_as_code_with_words_before_it(
    markdown: str | None, name: str, spoken_of: bool
) -> None:
    assert in_prose(markdown, name) is spoken_of


def test_a_name_is_found_as_typed_and_by_its_signature() -> None:
    typed = name_as_typed("work_mem")
    assert typed is not None and typed.joined
    assert typed.anywhere.search("shared_buffers (integer) work_mem (integer)")
    assert typed.signature.search("shared_buffers (integer) work_mem (integer)")
    assert not typed.anywhere.search("Increase maintenance_work_mem")
    zip_name = name_as_typed("zip")
    assert zip_name is not None and not zip_name.joined
    assert zip_name.signature.search("vars ( object ) zip ( * iterables , strict = False )")
    assert not zip_name.anywhere.search("zipimport — Import modules from Zip archives")
    assert not zip_name.signature.search("zipapp — Manage executable Python zip archives")
    for query in ("list comprehension", '"zip"', "zip OR map", "title:zip"):
        assert name_as_typed(query) is None


def test_the_page_whose_heading_signs_a_name_ranks_above_those_naming_it(tmp_path: Path) -> None:
    write(
        tmp_path,
        record(
            "https://docs.test/zipimport",
            "zipimport — Import modules from Zip archives. Import from a zip file.",
            title="zipimport — Import modules from Zip archives",
            headings="zipimport — Import modules from Zip archives",
        ),
        record(
            "https://docs.test/zipapp",
            "zipapp — Manage executable Python zip archives. Make a zip file to run.",
            title="zipapp — Manage executable Python zip archives",
            headings="zipapp — Manage executable Python zip archives Basic Example",
        ),
        record(
            "https://docs.test/functions",
            "Built-in Functions abs(x) Return the absolute value. zip(*iterables, strict=False) "
            "Iterate over several iterables in parallel. " + " ".join(FILLER * 20),
            title="Built-in Functions",
            headings="Built-in Functions abs ( x ) zip ( * iterables , strict = False )",
        ),
        record(
            "https://docs.test/gin-tips",
            "GIN tips: raise maintenance_work_mem, and work mem for the pending list.",
            title="GIN Tips and Tricks",
            headings="GIN Tips and Tricks maintenance_work_mem",
        ),
        record(
            "https://docs.test/resource",
            "Memory settings. work_mem (integer) sets the base maximum amount of memory. "
            + " ".join(FILLER * 20),
            title="Resource Consumption",
            headings="Resource Consumption Memory shared_buffers ( integer ) work_mem ( integer )",
        ),
        record(
            "https://docs.test/spi",
            "Fetch by row number: the row number counts from one; row number zero is before.",
            title="SPI_scroll_cursor_fetch",
        ),
        record(
            "https://docs.test/window",
            "Window functions: row_number () returns bigint, the number of the current row "
            "within its partition. " + " ".join(FILLER * 20),
            title="Window Functions",
        ),
    )
    assert first(tmp_path, "zip") == "https://docs.test/functions"
    assert first(tmp_path, "work_mem") == "https://docs.test/resource"
    assert first(tmp_path, "row_number") == "https://docs.test/window"


def test_headings_holding_the_words_together_rank_above_headings_holding_them_apart(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        record(
            "https://docs.test/ast",
            "Node classes: List, ListComp, comprehension. A list display; a comprehension.",
            title="ast — Abstract Syntax Trees",
            headings="ast — Abstract Syntax Trees class ast.List class ast.comprehension",
        ),
        record(
            "https://docs.test/tutorial",
            "List comprehension provides a concise way to create lists. " + " ".join(FILLER * 20),
            title="5. Data Structures",
            headings="5. Data Structures 5.1.3. List comprehension",
        ),
    )
    assert first(tmp_path, "list comprehension") == "https://docs.test/tutorial"


def test_of_two_titles_beginning_with_the_name_the_one_saying_less_beside_it_ranks_first(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        record(
            "https://docs.test/functions-json",
            "JSON functions and operators: json_build_object builds a json object.",
            title="9.16. JSON Functions and Operators",
            headings="9.16. JSON Functions and Operators",
        ),
        record(
            "https://docs.test/datatype-json",
            "JSON data types store JSON data. " + " ".join(FILLER * 10),
            title="8.14. JSON Types",
            headings="8.14. JSON Types",
        ),
    )
    hits = search(tmp_path, "json", limit=3)
    assert [hit.url for hit in hits[:2]] == [
        "https://docs.test/datatype-json",
        "https://docs.test/functions-json",
    ]
    assert hits[1].score > hits[0].score  # BM25 alone would put the functions first
