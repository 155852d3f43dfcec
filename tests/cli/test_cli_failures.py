"""What goes wrong is said when it happens: `crawl` on seeds whose hosts refuse connections names
each at its first failure, with how long it keeps trying, long before it gives them up."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from support.commands import crawl_command
from support.keyvalue import free_port

from crawler.cli.exits import EXIT_NOTHING_CRAWLED

pytestmark = pytest.mark.loopback


def test_a_host_that_refuses_connections_is_named_at_its_first_failure(tmp_path: Path) -> None:
    port = free_port()  # free on 127.0.0.1; nothing listens on 127.0.1.x either
    seeds = [f"http://127.0.1.{n}:{port}/" for n in range(41, 44)]
    began = time.monotonic()
    status, _, err = crawl_command(
        *seeds,
        "--data",
        str(tmp_path / "data"),
        "-s",
        "robots.retry_initial=3",  # tried at 0 s and 3 s, then given up: the next try is past
        "-s",
        "robots.give_up_after=5",
        "-s",
        "politeness.backoff_initial=1",
    )
    assert status == EXIT_NOTHING_CRAWLED, err
    for seed in seeds:
        origin = seed.rstrip("/")
        said = f"crawl: {origin}/robots.txt: connection: cannot connect to {origin[7:]}:"
        assert said in err, err
        notice = err[err.index(said) :].split("\n")[0]
        # The wait left when the progress line says it: 3 s after the failure, less the moments
        # before the line's next tick (a busy machine said 2 s).
        again = re.search(
            r"Connection refused\. Its URLs wait: the crawl tries again in (\d+) s", notice
        )
        assert again is not None, notice
        assert int(again[1]) <= 3, notice
        assert "if it still fails (robots.give_up_after 5 s)" in notice
        # Said once, before the host was given up.
        assert err.count(said) == 1
        assert err.index(said) < err.index(f"giving {origin} up")
    assert time.monotonic() - began < 30
