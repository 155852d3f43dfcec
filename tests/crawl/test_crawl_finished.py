"""A Crawler over a data directory whose crawl an earlier run finished says so (a log line and
`Crawler.finished_before`) instead of silently yielding nothing. Against real servers on
loopback."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from support.crawling import make_config, run
from support.loopback import LoopbackWeb

from crawler import Crawler

pytestmark = pytest.mark.loopback

A, B = "127.0.1.1", "127.0.1.2"
LOGGER = "crawler.crawl.crawler"


def site(net: LoopbackWeb, ip: str) -> None:
    net[ip].robots("User-agent: *\n")
    net[ip].page("/", "/a", "/b")
    net[ip].page("/a", "/b")
    net[ip].page("/b", "/deep")
    net[ip].page("/deep")


async def test_a_finished_crawl_says_so_and_fetches_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with LoopbackWeb(A) as net:
        site(net, A)
        first, crawler = await run(make_config(), [net[A].url("/")], data_dir=tmp_path)
        assert crawler.stats.outcome == "finished" and not crawler.finished_before
        requests = len(net.hits)
        with caplog.at_level(logging.INFO, logger=LOGGER):
            again, crawler = await run(make_config(), [net[A].url("/")], data_dir=tmp_path)
    assert len(first) == 4 and again == []
    assert crawler.finished_before
    assert len(net.hits) == requests  # not even robots.txt: it is cached
    (said,) = [record for record in caplog.records if record.name == LOGGER]
    assert said.levelno == logging.WARNING
    message = said.getMessage()
    assert f"the crawl in {tmp_path} was finished by an earlier run (4 pages)" in message
    assert "nothing to fetch" in message and "--fresh" in message
    assert crawler.stats.pages == 4 and crawler.stats.runs == 2


async def test_a_new_seed_on_a_finished_crawl_is_crawled_and_the_log_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with LoopbackWeb(A, B) as net:
        site(net, A)
        site(net, B)
        await run(make_config(), [net[A].url("/")], data_dir=tmp_path)
        with caplog.at_level(logging.INFO, logger=LOGGER):
            records, crawler = await run(
                make_config(), [net[A].url("/"), net[B].url("/")], data_dir=tmp_path
            )
    assert crawler.finished_before
    assert sorted(record.url for record in records) == sorted(
        net[B].url(path) for path in ("/", "/a", "/b", "/deep")
    )
    (said,) = [record for record in caplog.records if record.name == LOGGER]
    assert said.levelno == logging.INFO
    assert "finished by an earlier run (4 pages); 1 URL of new seeds is queued" in (
        said.getMessage()
    )


async def test_a_crawl_left_with_urls_queued_or_held_is_not_finished(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with LoopbackWeb(A) as net:
        site(net, A)
        seeds = [net[A].url("/")]
        # Stopped at the page limit with URLs queued: a resume, not a finished crawl.
        limited = make_config(limits={"max_pages": 2})
        _, crawler = await run(limited, seeds, data_dir=tmp_path / "limited")
        assert crawler.stats.outcome == "page limit"
        async with Crawler(limited, data_dir=tmp_path / "limited") as crawler:
            assert not crawler.finished_before
        # Finished at depth 1, /deep held past it: finished, unless the depth is raised.
        shallow = make_config(limits={"max_depth": 1})
        records, _ = await run(shallow, seeds, data_dir=tmp_path / "shallow")
        assert len(records) == 3
        async with Crawler(shallow, data_dir=tmp_path / "shallow") as crawler:
            assert crawler.finished_before
        with caplog.at_level(logging.INFO, logger=LOGGER):
            deeper, crawler = await run(make_config(), seeds, data_dir=tmp_path / "shallow")
    assert not crawler.finished_before
    assert [record.url for record in deeper] == [net[A].url("/deep")]
    assert not [record for record in caplog.records if record.name == LOGGER]


async def test_a_new_directory_or_memory_state_is_not_finished(tmp_path: Path) -> None:
    async with Crawler(make_config(), data_dir=tmp_path) as crawler:
        assert not crawler.finished_before
    async with Crawler(make_config()) as crawler:
        assert not crawler.finished_before
