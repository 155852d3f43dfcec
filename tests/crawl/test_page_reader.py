"""The page reader's process (crawler.crawl.page_reader): it reads a page as read_page does on the
loop, skips an unchanged one, survives its own death, and starts only when it is worth it."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from crawler.crawl.page_reader import (
    MAX_RESTARTS,
    START_ANSWERS_PER_S,
    START_HOSTS_PER_S,
    PageReader,
    PageReaderError,
    PageReaderGoneError,
)
from crawler.output.records import body_digest
from crawler.page.fields import field_selector
from crawler.page.read import PageRules, read_page

DATA = Path(__file__).resolve().parents[1] / "data"
RULES = PageRules("politebot", follow_rel_nofollow=False)
BASE = "http://127.0.1.1:8080/"


def real_pages() -> list[tuple[str, bytes]]:
    """HTML nobody here wrote: Python's library docs, Debian's FAQ in Japanese and Chinese."""
    paths = sorted((DATA / "python-docs" / "library").glob("*.html"))
    paths += sorted((DATA / "debian-faq").glob("*/*.html"))[:6]
    return [(BASE + path.name, path.read_bytes()) for path in paths]


async def read(reader: PageReader, url: str, body: bytes, unchanged: str | None = None) -> object:
    return await reader.read(body, url, charset=None, x_robots_tag=(), unchanged_digest=unchanged)


async def started(reader: PageReader) -> int:
    """The process id of the reader's process, once it runs."""
    for _ in range(5000):
        if reader.process_id is not None:
            return reader.process_id
        await asyncio.sleep(0.001)
    raise AssertionError("the page reader process did not start")


async def test_a_page_is_read_as_on_the_loop() -> None:
    pages = real_pages()
    assert len(pages) >= 10
    reader = PageReader(RULES, "process")
    assert reader.takes()
    try:
        results = await asyncio.gather(*(read(reader, url, body) for url, body in pages))
    finally:
        await reader.close()
    for (url, body), result in zip(pages, results, strict=True):
        assert result == (body_digest(body), read_page(body, url, rules=RULES)), url
    assert reader.started == 1
    assert reader.pages == len(pages)


async def test_the_users_fields_are_read_in_the_process_as_on_the_loop() -> None:
    rules = PageRules(
        "politebot",
        fields=(
            field_selector("title", "title::text"),
            field_selector("sections", "h2::text", all=True),
        ),
    )
    pages = real_pages()[:5]
    reader = PageReader(rules, "process")
    assert reader.takes()  # started
    try:
        results = await asyncio.gather(*(read(reader, url, body) for url, body in pages))
    finally:
        await reader.close()
    for (url, body), (_, page) in zip(pages, results, strict=True):
        assert page is not None and page.fields is not None and page.fields["title"], url
        assert page == read_page(body, url, rules=rules), url


async def test_headers_and_charset_reach_the_process() -> None:
    body = "<html><head><title>Ça</title></head><body><a href=/x>x</a>é</body>".encode("latin-1")
    reader = PageReader(RULES, "process")
    reader.takes()
    try:
        _, page = await reader.read(
            body,
            BASE,
            charset="iso-8859-1",
            x_robots_tag=("politebot: nofollow",),
            unchanged_digest=None,
        )
    finally:
        await reader.close()
    expected = read_page(
        body, BASE, charset="iso-8859-1", x_robots_tag=("politebot: nofollow",), rules=RULES
    )
    assert page == expected
    assert page is not None and page.title == "Ça" and not page.links and page.nofollow_links


async def test_an_unchanged_page_is_not_read() -> None:
    url, body = real_pages()[0]
    reader = PageReader(RULES, "process")
    reader.takes()
    try:
        same = await read(reader, url, body, unchanged=body_digest(body))
        other = await read(reader, url, body, unchanged="0" * 32)
    finally:
        await reader.close()
    assert same == (body_digest(body), None)
    assert other == (body_digest(body), read_page(body, url, rules=RULES))


async def test_a_death_fails_the_oldest_page_and_a_new_process_reads_the_rest() -> None:
    pages = real_pages()[:4]
    reader = PageReader(RULES, "process")
    reader.takes()
    try:
        reads = [asyncio.ensure_future(read(reader, url, body)) for url, body in pages]
        # Killed while it starts: no page can have been answered yet.
        os.kill(await started(reader), signal.SIGKILL)
        results = await asyncio.gather(*reads, return_exceptions=True)
    finally:
        await reader.close()
    first = results[0]
    assert isinstance(first, PageReaderError)
    assert "exit status -9" in str(first)
    for (url, body), result in zip(pages[1:], results[1:], strict=True):
        assert result == (body_digest(body), read_page(body, url, rules=RULES))
    assert reader.started == 2


async def test_a_process_that_keeps_dying_is_given_up() -> None:
    pages = real_pages()[: MAX_RESTARTS + 3]
    reader = PageReader(RULES, "process")
    reader.takes()
    try:
        reads = [asyncio.ensure_future(read(reader, url, body)) for url, body in pages]
        for _ in range(MAX_RESTARTS + 1):
            pid = await started(reader)
            os.kill(pid, signal.SIGKILL)
            while reader.process_id == pid:
                await asyncio.sleep(0.001)
        results = await asyncio.gather(*reads, return_exceptions=True)
    finally:
        await reader.close()
    # Each death took the oldest page with it; the pages left are for the loop to read.
    assert all(isinstance(r, PageReaderError) for r in results[: MAX_RESTARTS + 1])
    assert all(isinstance(r, PageReaderGoneError) for r in results[MAX_RESTARTS + 1 :])
    assert reader.started == MAX_RESTARTS + 1
    assert not reader.takes()


async def test_close_ends_the_process_and_cancels_what_waits() -> None:
    url, body = real_pages()[0]
    reader = PageReader(RULES, "process")
    reader.takes()
    waiting = asyncio.ensure_future(read(reader, url, body))
    pid = await started(reader)
    await reader.close()
    assert waiting.cancelled() or waiting.done()
    with pytest.raises(ProcessLookupError):
        for _ in range(500):  # reaped by the loop's child watcher
            os.kill(pid, 0)
            await asyncio.sleep(0.01)
    assert not reader.takes()
    with pytest.raises(PageReaderGoneError):
        await read(reader, url, body)


async def test_auto_starts_when_many_hosts_answer_within_a_second() -> None:
    reader = PageReader(RULES, "auto", cores=2)
    try:
        # A few hosts answering at a pace, or many answering slowly: pages are read on the loop.
        for i in range(5000):
            reader.answered(f"http://h{i % 20}", i / (START_ANSWERS_PER_S - 10))
            assert not reader.takes()
        for i in range(300):
            reader.answered(f"http://h{i}", 30 + i / (START_HOSTS_PER_S // 2))
            assert not reader.takes()
        assert reader.started == 0
        taken = []
        for i in range(200):
            reader.answered(f"http://h{i}", 40.0 + i / (4 * START_HOSTS_PER_S))
            taken.append(reader.takes())
        assert taken.index(True) == START_HOSTS_PER_S - 1
        assert all(taken[START_HOSTS_PER_S - 1 :])
        assert reader.started == 1
    finally:
        await reader.close()


async def test_auto_starts_when_a_few_hosts_answer_fast() -> None:
    # Reading a page with its main content costs the loop about 1 ms: at hundreds a second, the
    # process pays, however few the hosts.
    reader = PageReader(RULES, "auto", cores=2)
    try:
        taken = []
        for i in range(START_ANSWERS_PER_S + 10):
            reader.answered(f"http://h{i % 3}", i / 1000)
            taken.append(reader.takes())
        assert taken.index(True) == START_ANSWERS_PER_S - 1
        assert reader.started == 1
    finally:
        await reader.close()


def test_auto_never_starts_on_one_core_nor_loop_ever() -> None:
    for reader in (PageReader(RULES, "auto", cores=1), PageReader(RULES, "loop", cores=8)):
        for i in range(1000):
            reader.answered(f"http://h{i}", i / 1000)
            assert not reader.takes()
        assert reader.started == 0
