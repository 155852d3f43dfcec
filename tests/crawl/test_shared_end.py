"""How a shared crawl ends, decided from the server's status (crawler.crawl.shared.cluster_end):
for the whole crawl, never for one worker's view of it."""

from __future__ import annotations

import pytest

from crawler.crawl.shared import cluster_end
from crawler.state.shared.library import ClusterStatus

NOW = 1_800_000_000_000_000


def status(**changes: int | None) -> ClusterStatus:
    fields: dict[str, int | None] = {
        "now_us": NOW,
        "pending": 0,
        "leased": 0,
        "scheduled": 0,
        "due": 0,
        "held": 0,
        "live_workers": 2,
        "workers": 2,
        "next_due_us": None,
        "pages_started": 0,
    }
    return ClusterStatus(**(fields | changes))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "outcome"),
    [
        ({}, "finished"),
        ({"leased": 1}, None),  # a page not yet stored may queue more
        ({"held": 1}, None),  # a request in flight
        ({"pending": 5, "next_due_us": NOW + 1_000_000}, None),
        ({"pending": 5, "pages_started": 10}, "page limit"),
        ({"pending": 5, "pages_started": 10, "leased": 2}, None),
        ({"pending": 5, "next_due_us": NOW + 700 * 1_000_000}, "deferred"),
        ({"pending": 5, "next_due_us": NOW + 700 * 1_000_000, "held": 1}, None),
    ],
)
def test_the_crawl_ends_only_when_the_cluster_has_nothing_in_hand(
    changes: dict[str, int], outcome: str | None
) -> None:
    assert cluster_end(status(**changes), max_pages=10, max_wait=600.0) == outcome
