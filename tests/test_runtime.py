"""crawler.runtime: the crawl's event loop is uvloop's where it is installed, asyncio's when
asked for or when uvloop is missing; the open files limit makes room for the connections."""

from __future__ import annotations

import asyncio
import gc
import resource
import sys

import pytest

from crawler import runtime as tuning
from crawler.runtime import event_loop_name, raise_open_files_limit, run


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


class FakeLimits:
    """resource.getrlimit / setrlimit for RLIMIT_NOFILE, on numbers a test chooses."""

    def __init__(self, soft: int, hard: int, *, refuse: bool = False) -> None:
        self.soft, self.hard, self.refuse = soft, hard, refuse
        self.set_to: list[tuple[int, int]] = []

    def getrlimit(self, which: int) -> tuple[int, int]:
        assert which == resource.RLIMIT_NOFILE
        return self.soft, self.hard

    def setrlimit(self, which: int, limits: tuple[int, int]) -> None:
        assert which == resource.RLIMIT_NOFILE
        if self.refuse:
            raise ValueError("not allowed")
        self.set_to.append(limits)
        self.soft, self.hard = limits


@pytest.mark.parametrize(
    ("soft", "hard", "refuse", "expected", "set_to"),
    [
        # The common default: soft 1,024 under a high hard limit. Raised to what is wanted.
        (1024, 524_288, False, (1072, 1072), [(1072, 524_288)]),
        # The hard limit is the ceiling; the caller is told it falls short.
        (1024, 1050, False, (1050, 1072), [(1050, 1050)]),
        # Enough already: untouched.
        (4096, 524_288, False, (4096, 1072), []),
        # Refused: as it was.
        (1024, 524_288, True, (1024, 1072), []),
    ],
    ids=["raised", "capped-by-hard", "enough", "refused"],
)
def test_the_open_files_limit_is_raised_for_the_connections(
    monkeypatch: pytest.MonkeyPatch,
    soft: int,
    hard: int,
    refuse: bool,
    expected: tuple[int, int],
    set_to: list[tuple[int, int]],
) -> None:
    limits = FakeLimits(soft, hard, refuse=refuse)
    monkeypatch.setattr(resource, "getrlimit", limits.getrlimit)
    monkeypatch.setattr(resource, "setrlimit", limits.setrlimit)
    assert raise_open_files_limit(1008) == expected
    assert limits.set_to == set_to
