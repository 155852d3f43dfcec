"""Run `crawl` with every commit of its state timed: how long the crawl's thread waited in each
`StateDb.commit` (a checkpoint the commit ran included), and the state's WAL after it.

    .venv/bin/python benchmarks/state_commits.py LOG -- SEEDS --data DIR [crawl's options]

LOG gets a line a commit: epoch seconds, milliseconds in the commit, the WAL's bytes after it;
the summary goes to standard error once the crawl ends. The crawler measured is the one this
Python imports (PYTHONPATH=ANOTHER/CHECKOUT for another build).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import crawler.state.db as state_db
from crawler.cli import main as crawl


def timed_crawl(log_path: Path, arguments: list[str]) -> int:
    commit = state_db.StateDb.commit
    waits: list[float] = []
    largest_wal = 0
    with log_path.open("w") as log:

        def timed_commit(db: state_db.StateDb) -> None:
            nonlocal largest_wal
            started = time.perf_counter()
            try:
                commit(db)
            finally:
                waited = time.perf_counter() - started
                wal = db.path.with_name(db.path.name + "-wal")
                wal_bytes = wal.stat().st_size if wal.exists() else 0
                waits.append(waited)
                largest_wal = max(largest_wal, wal_bytes)
                log.write(f"{time.time():.3f} {waited * 1e3:.2f} {wal_bytes}\n")

        state_db.StateDb.commit = timed_commit  # type: ignore[method-assign,assignment]
        status = crawl(arguments)
    waits.sort()
    if waits:
        print(
            f"{len(waits)} commits, {sum(waits):.2f} s in all; the longest "
            f"{', '.join(f'{wait * 1e3:.1f}' for wait in waits[-3:][::-1])} ms; "
            f"{sum(wait > 0.01 for wait in waits)} over 10 ms; the WAL at most "
            f"{largest_wal / 1e6:.1f} MB",
            file=sys.stderr,
        )
    return status


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[2] != "--":
        sys.exit("usage: state_commits.py LOG -- SEEDS --data DIR [crawl's options]")
    sys.exit(timed_crawl(Path(sys.argv[1]), sys.argv[3:]))
