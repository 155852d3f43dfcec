"""Shared test setup: the hypothesis profile, the markers, and the fixtures more than one test
file uses.

Markers (`pytest -m "not loopback and not slow"` is the inner loop, a few seconds):
- `loopback`: real servers on 127.0.x.y, or the crawl command in a subprocess. Set per file or
  per test where they are.
- `slow`: every hypothesis property test (marked here, by what it is), and the runs that kill a
  process to see what survives.

On CI (environment variable CI == "true") hypothesis derandomizes, so a run is reproducible from
the commit alone; locally the default profile keeps exploring new examples from run to run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from support.keyvalue import StateServer, start_server

settings.register_profile("ci", derandomize=True)
settings.register_profile("dev")
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")

TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        function = getattr(item, "function", None)
        if getattr(function, "is_hypothesis_test", False):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository's root: config/, the README."""
    return TESTS.parent


@pytest.fixture(scope="session")
def test_data() -> Path:
    """tests/data: the robots.txt conformance vectors, a TLS certificate for loopback servers."""
    return TESTS / "data"


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StateServer]:
    """A real Valkey server (tests/support/keyvalue.py) for the shared state's tests; each test
    keeps to its own key prefix."""
    running = start_server(tmp_path_factory.mktemp("valkey"))
    yield running
    running.stop()
