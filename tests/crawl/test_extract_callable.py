"""The library's per-page callable (`Crawler(config, extract=...)`): a plain function, a coroutine
function, and one that fails, on a loopback site; its fields go into the records beside those of
`extract:`, a failure is recorded on its page and the crawl goes on; and it never holds the loop
(a plain function runs on a worker thread)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from support.crawling import by_url, make_config, run
from support.loopback import LoopbackWeb

from crawler import PageDocument
from crawler.page.fields import field_selector

pytestmark = pytest.mark.loopback

A = "127.0.1.1"


def product(number: int) -> str:
    return (
        f"<html><body><h1>Lamp {number}</h1><p class=price>{number}.90</p>"
        f'<a href="/p/{number + 1}">next</a></body></html>'
    )


async def crawl(function: Any, *selectors: str) -> dict[str, Any]:
    """Crawl the site with `function` as the callable, and `selectors` (NAME=CSS) as extract:."""
    extract = tuple(field_selector(*given.split("=", 1)) for given in selectors)
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        for number in range(1, 4):
            site.html(f"/p/{number}", product(number))
        site.html("/p/4", '<html><head><meta name="robots" content="noindex"></head>x</html>')
        config = make_config(extract=extract)
        records, _ = await run(config, [site.url("/p/1")], extract=function)
    return {record.url.rsplit("/", 1)[1]: record for record in records}


async def test_a_plain_function_runs_off_the_loop() -> None:
    threads: set[str] = set()
    loop_thread = threading.current_thread().name

    def fields(page: PageDocument) -> dict[str, Any]:
        threads.add(threading.current_thread().name)
        node = page.tree.css_first("h1")
        return {"heading": node.text() if node else None, "price": page.css_first(".price::text")}

    records = await crawl(fields)
    assert records["1"].fields == {"heading": "Lamp 1", "price": "1.90"}
    assert records["3"].fields == {"heading": "Lamp 3", "price": "3.90"}
    assert records["1"].fields_error is None
    assert records["4"].fields is None  # noindex: its text, and so its fields, not read
    assert threads and loop_thread not in threads


async def test_a_coroutine_function_is_awaited_and_its_fields_join_the_configs() -> None:
    seen: list[str] = []

    async def fields(page: PageDocument) -> dict[str, Any]:
        await asyncio.sleep(0)
        seen.append(page.url)
        return {"links": page.css("a::attr(href)"), "name": "from the callable"}

    records = await crawl(fields, "name=h1::text", "price=.price::text")
    assert records["2"].fields == {
        "name": "from the callable",  # the callable's value wins over extract:'s
        "price": "2.90",
        "links": ["/p/3"],
    }
    assert len(seen) == 3
    assert records["2"].to_json()["fields"]["links"] == ["/p/3"]


async def test_a_failing_function_is_recorded_on_its_page_and_the_crawl_goes_on() -> None:
    def fields(page: PageDocument) -> Any:
        if page.url.endswith("/2"):
            raise LookupError("no price here")
        if page.url.endswith("/3"):
            return {"when": object()}
        return ["not", "a", "mapping"]

    records = await crawl(fields, "name=h1::text")
    assert records["2"].fields_error == "LookupError: no price here"
    assert records["2"].fields == {"name": "Lamp 2"}  # extract:'s fields stay
    assert records["3"].fields_error is not None
    assert "JSON cannot hold" in records["3"].fields_error
    assert records["1"].fields_error == "TypeError: extract returned list, not a mapping of names"
    assert [records[n].status for n in "1234"] == [200, 200, 200, 200]
    assert records["2"].to_json()["fields_error"] == "LookupError: no price here"


def test_something_not_callable_is_refused_at_once() -> None:
    from crawler import Crawler

    with pytest.raises(TypeError, match="extract must be a function"):
        Crawler(make_config(), extract="h1::text")  # type: ignore[arg-type]
    assert by_url([]) == {}
