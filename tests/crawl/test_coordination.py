"""crawler.crawl.coordination: the process's own host coordination (`LocalHosts`), as tables, and
the seam's shape: a shared crawl is chosen in one place, and nothing else in the crawl asks which
coordination it has."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from crawler.crawl.coordination import LocalHosts
from crawler.crawl.hosts import Host
from crawler.frontier import MemoryFrontier, QueuedUrl
from crawler.politeness import HostTiming
from crawler.stats import Outcome

NOW = 1_700_000_000.0
CRAWL = Path(__file__).resolve().parents[2] / "crawler" / "crawl"


@pytest.mark.parametrize(
    ("next_due", "expected"),
    [
        (None, "finished"),  # nothing scheduled, nothing in flight
        (NOW, None),
        (NOW + 60.0, None),
        (NOW + 600.0, None),  # exactly politeness.max_wait away: waited for
        (NOW + 600.5, "deferred"),  # further: its URLs stay queued for a later run
    ],
)
def test_a_crawl_in_one_process_ends(next_due: float | None, expected: Outcome | None) -> None:
    assert LocalHosts(MemoryFrontier(), max_wait=600.0).end(NOW, next_due) == expected


async def test_every_host_is_the_process_own() -> None:
    frontier = MemoryFrontier()
    frontier.push("https://a.example", QueuedUrl("https://a.example/1", 0))
    frontier.push("https://a.example", QueuedUrl("https://a.example/2", 0))
    local = LocalHosts(frontier, max_wait=600.0)
    host = Host(HostTiming("https://a.example"))
    assert local.keep(host, None) and local.keep(host, NOW)
    assert local.keep_until(host, NOW + 10.0)
    assert local.may_launch()
    assert local.counts(3) == (3, 2)
    assert await local.join(["https://b.example/"], lambda seeds: None) == ()
    assert local.background(lambda: 1, lambda host, at: None, lambda origin: None) is None
    await local.close()


def names_in(path: Path) -> set[str]:
    """Every name a module uses or imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.name.rsplit(".", 1)[-1])
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


SHARED_NAMES = {"SharedHosts", "ClaimedFrontier", "SharedSchedule", "crawler.crawl.shared"}
SHARED_MODULES = {"shared.py", "shared_recrawl.py", "claimed.py"}


def test_only_the_shared_crawl_names_its_parts() -> None:
    """The scheduler and the crawl's parts never ask whether the crawl is shared; the crawler
    only chooses it (join_shared_crawl)."""
    found = {
        path.relative_to(CRAWL).as_posix(): sorted(names_in(path) & SHARED_NAMES)
        for path in CRAWL.rglob("*.py")
        if path.name not in SHARED_MODULES
    }
    assert {module: names for module, names in found.items() if names} == {
        "crawler.py": ["crawler.crawl.shared"]
    }


def test_the_check_finds_a_part_that_asks(tmp_path: Path) -> None:
    path = tmp_path / "asks.py"
    path.write_text(
        "from crawler.crawl.shared import SharedHosts\nisinstance(x, SharedHosts)\n",
        encoding="utf-8",
    )
    assert names_in(path) & SHARED_NAMES == {"SharedHosts", "crawler.crawl.shared"}
