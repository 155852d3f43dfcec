"""crawler.tuning.run: the crawl's event loop is uvloop's where it is installed, asyncio's when
asked for or when uvloop is missing."""

from __future__ import annotations

import asyncio
import gc
import sys

import pytest

from crawler import tuning
from crawler.tuning import event_loop_name, run


async def loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_uvloop_is_the_default_where_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvloop")
    monkeypatch.delenv("CRAWLER_EVENT_LOOP", raising=False)
    assert event_loop_name() == "uvloop"
    assert run(loop_module()).startswith("uvloop")


def test_asyncio_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRAWLER_EVENT_LOOP", " AsyncIO ")
    assert event_loop_name() == "asyncio"
    assert run(loop_module()).startswith("asyncio")


def test_asyncio_when_uvloop_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRAWLER_EVENT_LOOP", raising=False)
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    assert event_loop_name() == "asyncio"
    assert run(loop_module()).startswith("asyncio")


def test_run_returns_the_result_and_raises_the_error() -> None:
    async def answer() -> int:
        return 42

    async def fail() -> None:
        raise ValueError("boom")

    assert run(answer()) == 42
    with pytest.raises(ValueError, match="boom"):
        run(fail())


def test_tune_gc_freezes_what_exists_and_makes_collections_rarer() -> None:
    before = gc.get_threshold()
    try:
        tuning.tune_gc()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (
            tuning.GC_YOUNG_THRESHOLD,
            tuning.GC_MIDDLE_THRESHOLD,
            tuning.GC_OLDEST_THRESHOLD,
        )
        # Garbage in cycles made after the freeze is still collected.
        collected: list[str] = []

        class Node:
            def __init__(self) -> None:
                self.me = self

            def __del__(self) -> None:
                collected.append("node")

        Node()
        gc.collect()
        assert collected == ["node"]
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
