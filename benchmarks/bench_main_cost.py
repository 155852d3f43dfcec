#!/usr/bin/env python3
"""What the main content costs the page step, measured as the difference that a noisy machine
leaves least room for: the page step with and without it in one process, rounds taking turns.

    python benchmarks/bench_main_cost.py --data DIR [--limit 600] [--rounds 6] [--runs 3]

DIR is a tree of HTML pages (Debian's documentation: /usr/share/doc/python3/html), its first
--limit in path order. Each round reads every page with `read_page` (the whole page step: parse,
walk, links, META and, with it, the main content), once with `PageRules(main_content=True)` and
once with False, in turns; each side's figure is its least round, and the main content is the
difference. `bench_extract.py` times the two as separate contenders (the median of their own
rounds), which a machine whose pace drifts between them can throw by a fifth. --runs repeats the
whole. Run it with another build's python (or `PYTHONPATH`) to set two builds side by side.

Exit status: 0 when it ran, 2 for bad arguments or a tree without HTML pages.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from crawler.page.read import PageRules, read_page


def run(pages: list[tuple[bytes, str]], rounds: int) -> tuple[float, float]:
    """(the least round with the main content, without it), in seconds a page."""
    best = {True: float("inf"), False: float("inf")}
    for _ in range(rounds):
        for main in (True, False):
            rules = PageRules(main_content=main)
            start = time.perf_counter()
            for body, url in pages:
                read_page(body, url, rules=rules)
            best[main] = min(best[main], (time.perf_counter() - start) / len(pages))
    return best[True], best[False]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, metavar="DIR")
    parser.add_argument("--limit", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    files = sorted(args.data.rglob("*.html"))[: args.limit]
    if not files or args.rounds < 1 or args.runs < 1:
        print(f"bench_main_cost: no HTML pages under {args.data}, or no rounds", file=sys.stderr)
        return 2
    pages = [
        (path.read_bytes(), f"https://docs.test/{path.relative_to(args.data)}") for path in files
    ]
    print(f"{len(pages)} pages of {args.data}; the least of {args.rounds} rounds each, in turns")
    for number in range(1, args.runs + 1):
        with_main, without = run(pages, args.rounds)
        cost = with_main - without
        print(
            f"run {number}: with the main content {with_main * 1e6:,.0f} us a page, without "
            f"{without * 1e6:,.0f}: the main content {cost * 1e6:,.0f} us, "
            f"{1 / cost:,.0f} pages/s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
