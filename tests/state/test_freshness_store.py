"""The freshness store: what revisits found per page and each origin's lastmod trust, kept by
the memory and the SQLite state alike, across a reopen, and gained by a state of schema 6."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.config import StateConfig
from crawler.freshness import DISTRUSTED, TRUSTED, ChangeHistory, LastmodTrust
from crawler.robots import RobotsOptions
from crawler.state import CrawlState, MemoryCrawlState, open_state
from crawler.state.db import SCHEMA_VERSION
from crawler.state.sqlite import STATE_NAME

A = "http://a.test"


def opened(directory: Path) -> CrawlState:
    return open_state(directory, StateConfig(), RobotsOptions())


@pytest.fixture(params=["memory", "sqlite"])
def state(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CrawlState]:
    made = MemoryCrawlState() if request.param == "memory" else opened(tmp_path)
    yield made
    made.close()


def test_revisits_add_up_and_a_sitemaps_word_is_kept(state: CrawlState) -> None:
    store = state.freshness
    store.revisited(f"{A}/p", 100.0, True)
    store.revisited(f"{A}/p", 50.0, False)
    store.listed(f"{A}/p", "daily", 0.8)
    store.listed(f"{A}/q", None, 0.2)
    state.commit()
    store.revisited(f"{A}/p", 10.0, True)
    pages = {page.url: page for page in store.histories()}
    assert pages[f"{A}/p"].changes == ChangeHistory(3, 2, 160.0, 110.0)
    assert (pages[f"{A}/p"].changefreq, pages[f"{A}/p"].priority) == ("daily", 0.8)
    assert pages[f"{A}/q"].changes == ChangeHistory()
    assert pages[f"{A}/q"].priority == 0.2


def test_trust_per_origin(state: CrawlState) -> None:
    store = state.freshness
    assert store.trust(A) == LastmodTrust()
    trusted = LastmodTrust(TRUSTED, 5, 1_800_000_000.0, "proved right")
    store.set_trust(A, trusted)
    assert store.trust(A) == trusted
    assert store.trusts() == {A: trusted}


def test_what_was_committed_outlives_the_process(tmp_path: Path) -> None:
    state = opened(tmp_path)
    state.freshness.revisited(f"{A}/p", 100.0, True)
    wrong = LastmodTrust(DISTRUSTED, 0, 1_800_000_000.0, f"{A}/p had changed")
    state.freshness.set_trust(A, wrong)
    state.commit()
    state.freshness.revisited(f"{A}/p", 100.0, True)  # not committed: a kill loses it
    del state  # a kill: no close
    again = opened(tmp_path)
    assert [page.changes for page in again.freshness.histories()] == [
        ChangeHistory(1, 1, 100.0, 100.0)
    ]
    assert again.freshness.trust(A) == wrong
    again.close()


def test_a_version_6_state_gains_the_freshness_tables(tmp_path: Path) -> None:
    state = opened(tmp_path)
    state.seen.add(f"{A}/kept")
    state.close()
    connection = sqlite3.connect(tmp_path / STATE_NAME)
    connection.execute("DROP TABLE page_history")
    connection.execute("DROP TABLE lastmod_trust")
    connection.execute("PRAGMA user_version = 6")
    connection.commit()
    connection.close()
    state = opened(tmp_path)
    assert f"{A}/kept" in state.seen
    state.freshness.revisited(f"{A}/p", 5.0, False)
    state.close()
    state = opened(tmp_path)
    assert [page.changes for page in state.freshness.histories()] == [ChangeHistory(1, 0, 5.0)]
    state.close()
    connection = sqlite3.connect(tmp_path / STATE_NAME)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
    connection.close()
