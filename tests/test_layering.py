"""The package's shape: its imports point down (no circle, no layer importing one above it, no
pure module importing I/O or the clock), and no module is over 450 lines. Read from the source
with `ast`, every import counted: at the top, inside functions, and under `if TYPE_CHECKING`
(which none may use: a circle hidden from the runtime is still a circle)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "crawler"

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "crawler._version",
        "crawler.errors",
        "crawler.canonical_urls",
        "crawler.selectors",
        "crawler.urls",
        "crawler.frontier",
        "crawler.stats",
        "crawler.runtime",
        "crawler._sqlite",
        "crawler._faces",
        "crawler.child",
    ),
    ("crawler.usage",),
    ("crawler.robots", "crawler.page"),
    ("crawler.config", "crawler.identity"),
    ("crawler.politeness", "crawler.pace", "crawler.freshness", "crawler.http"),
    ("crawler.output",),
    ("crawler.state",),
    ("crawler.crawl",),
    ("crawler.monitor", "crawler.crawl_report"),
    ("crawler.cli",),
    ("crawler", "crawler.__main__"),
)
"""Bottom first. A module may import its own layer (without a circle) and those below it."""

PURE = (
    "crawler.selectors",
    "crawler.usage",
    "crawler.robots",
    "crawler.page",
    "crawler.canonical_urls",
    "crawler.urls",
    "crawler.politeness",
    "crawler.pace",
    "crawler.freshness",
    "crawler.frontier",
    "crawler.stats",
    "crawler.identity",
    "crawler.config.schema",
    "crawler.config.extensions",
    "crawler.config.values",
    "crawler.config.users",
    "crawler.config.fetch",
    "crawler.config.checks",
    "crawler.config.mapping",
    "crawler.crawl.decide",
    "crawler.crawl_report",
    "crawler.crawl.scope",
    "crawler.crawl.coordination",
    "crawler.crawl.tallies",
    "crawler.http.answer",
    "crawler.http.addresses",
    "crawler.http.coding",
    "crawler.state.codec",
    "crawler.output.query",
    "crawler.output.cjk",
    "crawler.output.index_schema",
    "crawler.monitor.history",
    "crawler.monitor.hosts",
    "crawler.monitor.snapshot",
    "crawler.monitor.metrics",
    "crawler.monitor.workers",
)
"""Modules (or packages) that decide without doing: no I/O, no threads, no clock."""
IMPURE_EXCEPTIONS = {
    "crawler.page.compiled": "reads CRAWLER_PAGE_WALK from the environment to choose the walk",
    "crawler.page.compiled_main": "reads CRAWLER_PAGE_WALK to choose the main content reading",
}
FORBIDDEN_IN_PURE = frozenset(
    {
        "asyncio",
        "socket",
        "ssl",
        "selectors",
        "sqlite3",
        "threading",
        "concurrent",
        "multiprocessing",
        "subprocess",
        "os",
        "time",
        "aiohttp",
        "httptools",
        "uvloop",
        "yaml",
    }
)
CLOCK_CALLS = frozenset({"now", "utcnow", "today", "monotonic", "perf_counter"})
MAX_MODULE_LINES = 450
"""A module past this is asking to be split along a seam (shared/STYLE.md). Python modules only:
the compiled walk (page/_pagescan.c) is one C file on purpose."""


# --- reading the source --------------------------------------------------------------------------


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_sources() -> dict[str, str]:
    return {module_name(path): path.read_text(encoding="utf-8") for path in PACKAGE.rglob("*.py")}


EXTENSIONS = frozenset(module_name(path) for path in PACKAGE.rglob("*.pyi"))
"""Compiled modules (their stubs stand for them): imported, never importing."""


@functools.cache
def parsed(source: str) -> ast.Module:
    return ast.parse(source)


def imports_of(name: str, source: str, known: Mapping[str, str]) -> Iterator[tuple[str, int]]:
    """(module imported, line) for every import in `source`, relative ones resolved; `from X
    import y` is module X.y when that is a module of the package."""
    is_package = f"{name}.__init__" in known or any(other.startswith(name + ".") for other in known)
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = name.split(".")
                parent = parent if is_package else parent[:-1]
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                is_module = submodule in known or submodule in EXTENSIONS
                yield (submodule if is_module else base), node.lineno


def internal_graph(sources: Mapping[str, str]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, source in sources.items():
        for imported, _line in imports_of(name, source, sources):
            if imported in sources and imported != name:
                graph[name].add(imported)
    return graph


def find_circle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """A circle of imports, as the modules on it (first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found is not None:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found is not None:
                return found
    return None


def layer_of(name: str) -> int:
    best, depth = -1, -1
    for index, members in enumerate(LAYERS):
        for member in members:
            if (name == member or name.startswith(member + ".")) and len(member) > depth:
                best, depth = index, len(member)
    if best < 0:
        raise AssertionError(f"{name} is in no layer of tests/test_layering.py's LAYERS")
    return best


def upward_imports(sources: Mapping[str, str]) -> list[str]:
    found = []
    for name, source in sources.items():
        for imported, line in imports_of(name, source, sources):
            if imported in sources and layer_of(imported) > layer_of(name):
                found.append(f"{name} line {line} imports {imported}, a layer above it")
    return found


def is_pure(name: str) -> bool:
    if name in IMPURE_EXCEPTIONS:
        return False
    return any(name == pure or name.startswith(pure + ".") for pure in PURE)


def impurities(name: str, source: str, known: Mapping[str, str]) -> list[str]:
    found = []
    for imported, line in imports_of(name, source, known):
        top = imported.split(".")[0]
        if top in FORBIDDEN_IN_PURE:
            found.append(f"{name} line {line} imports {imported}")
    found.extend(
        f"{name} line {node.lineno} reads a clock (.{node.func.attr}())"
        for node in ast.walk(parsed(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CLOCK_CALLS
    )
    return found


def oversized(sources: Mapping[str, str]) -> list[str]:
    """Modules over MAX_MODULE_LINES lines, with their length."""
    return [
        f"{name}: {lines} lines"
        for name, source in sorted(sources.items())
        if (lines := len(source.splitlines())) > MAX_MODULE_LINES
    ]


def type_checking_blocks(source: str) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(parsed(source))
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
    ]


# --- the package ---------------------------------------------------------------------------------

SOURCES = package_sources()


def test_every_module_is_in_a_layer() -> None:
    for name in SOURCES:
        layer_of(name)


def test_no_import_circle() -> None:
    assert find_circle(internal_graph(SOURCES)) is None


def test_imports_point_down() -> None:
    assert upward_imports(SOURCES) == []


def test_no_module_is_over_450_lines() -> None:
    assert oversized(SOURCES) == []


@pytest.mark.parametrize("name", sorted(name for name in SOURCES if is_pure(name)))
def test_pure_modules_do_no_io_and_read_no_clock(name: str) -> None:
    assert impurities(name, SOURCES[name], SOURCES) == []


def test_the_pure_core_is_all_there() -> None:
    """Each name in PURE is a module or package of ours: a rename cannot empty the check."""
    for pure in PURE:
        assert any(name == pure or name.startswith(pure + ".") for name in SOURCES), pure


TYPE_CHECKING_EXCEPTIONS = {
    "crawler": "the package's names, imported when first used (PEP 562), typed for checkers",
    "crawler.crawl": "Crawler, imported when first used (PEP 562), typed for checkers",
    "crawler.http": "the client and its answers, imported when first used (PEP 562), typed",
    "crawler.output": "the sinks, search and export, imported when first used (PEP 562), typed",
    "crawler.output.records": "a record's page and answer, typed: the index writer's process "
    "unpickles records, and needs neither the page step nor HTTP",
}
"""Packages whose interface is imported lazily, so that a process of the crawl's own
(crawler.child: the page reader, the index and WARC writers) starts without the whole crawler; their
imports still count above, circles and layers alike."""


def test_nothing_hides_behind_type_checking() -> None:
    found = {
        name: lines
        for name, source in SOURCES.items()
        if (lines := type_checking_blocks(source)) and name not in TYPE_CHECKING_EXCEPTIONS
    }
    assert found == {}


# --- the checks themselves fail where they must --------------------------------------------------


def test_a_module_over_the_limit_is_found() -> None:
    sources = {
        "crawler.crawl.grown": "x = 1\n" * (MAX_MODULE_LINES + 1),
        "crawler.crawl.kept": "x = 1\n" * MAX_MODULE_LINES,
    }
    assert oversized(sources) == [f"crawler.crawl.grown: {MAX_MODULE_LINES + 1} lines"]


def test_a_circle_is_found_through_a_lazy_import() -> None:
    sources = {
        "crawler.http.fetcher": "def open():\n    from crawler.http.http1 import Client\n",
        "crawler.http.http1": "from crawler.http.fetcher import Response\n",
    }
    circle = find_circle(internal_graph(sources))
    assert circle is not None and set(circle) == set(sources)


def test_a_circle_is_found_through_type_checking() -> None:
    sources = {
        "crawler.state.frontier": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from crawler.state.sqlite import StateDb\n"
        ),
        "crawler.state.sqlite": "from crawler.state.frontier import SqliteFrontier\n",
    }
    assert find_circle(internal_graph(sources)) is not None
    assert type_checking_blocks(sources["crawler.state.frontier"]) == [2]


def test_a_lower_layer_importing_the_shell_is_found() -> None:
    sources = {
        "crawler.state.codec": "from crawler.crawl.robots_cache import RobotsEntry\n",
        "crawler.crawl.robots_cache": "",
        "crawler.output.records": "from .. import cli\n",
        "crawler.cli": "",
    }
    assert upward_imports(sources) == [
        "crawler.state.codec line 1 imports crawler.crawl.robots_cache, a layer above it",
        "crawler.output.records line 1 imports crawler.cli, a layer above it",
    ]


@pytest.mark.parametrize(
    "source",
    [
        "import asyncio\n",
        "import sqlite3\n",
        "from socket import socket\n",
        "import threading\n",
        "import time\n",
        "from time import monotonic\n",
        "from datetime import datetime\nstamp = datetime.now()\n",
        "import os.path\n",
    ],
)
def test_a_pure_module_doing_io_is_found(source: str) -> None:
    assert impurities("crawler.robots.txt", source, {}) != []


def test_no_test_module_imports_another() -> None:
    """Shared set-up is a fixture (tests/conftest.py) or a helper of tests/support, never a
    test file's function."""
    tests = Path(__file__).resolve().parent
    names = {path.stem for path in tests.rglob("test_*.py")}
    found = [
        f"{path.relative_to(tests)} line {line} imports {imported}"
        for path in tests.rglob("*.py")
        for imported, line in imports_of(path.stem, path.read_text(encoding="utf-8"), {})
        if imported.split(".")[0] in names
    ]
    assert found == []
