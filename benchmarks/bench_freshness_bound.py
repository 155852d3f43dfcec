#!/usr/bin/env python3
"""What the best revisit schedule can reach against a uniform one, for the same requests.

    python benchmarks/bench_freshness_bound.py [--pages 1500] [--search 3000] [--seed 1] [--json]

Issue 42 asks for a schedule whose average freshness is at least 1.5 times a uniform revisit's
and whose average age is at most half of it. This computes the frontier no schedule can pass:
every page's true change rate known, its revisits spread by the best allocation there is for a
weighted sum of freshness and age, the weight swept from freshness alone to age alone.

Why it bounds every schedule. A page changing as a Poisson process is memoryless: once fetched
it is fresh whatever its past, so knowing the past (what a crawl learns by revisiting) is worth
nothing once the rate is known, and a schedule that learns rates can at best match one that knows
them. For a page with rate l revisited every I, freshness (1 - e^-lI) / (lI) is concave and age
I/2 - 1/l + (1 - e^-lI) / (l^2 I) convex in I, so for any weight the best of all ways to spend a
page's share of the budget is a fixed interval (Cho and Garcia-Molina, "Synchronizing a database
to improve freshness", SIGMOD 2000, make the same argument for freshness alone). The budget is
spread by one Lagrange multiplier, found by bisection; intervals lie between 1 hour and the
longest bound. Splitting a class of pages between two intervals reaches any mix of two
allocations, so the frontier is the convex hull that the weight sweep traces.

Webs: the rates bench_freshness.py simulates (0.001-10 and 0.01-100 changes a day, log-uniform
and skewed), and the rates Cho and Garcia-Molina measured ("The evolution of the web and
implications for an incremental crawler", VLDB 2000: of 720,000 pages, 23% changed at least
daily, 15% weekly, 16% monthly, 16% within four months, 30% less often). Budgets: a uniform revisit
every 1 to 100 days; longest intervals: the crawl's 30 days (recrawl.max_interval) and 1,000.
--search then draws webs of 2 to 4 classes of pages (rates anywhere in 0.001-100 a day, shares
at random, any budget) and reports the best freshness any of them allows with the age halved.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from bench_freshness import DAY, web
from numpy.typing import NDArray

Floats = NDArray[np.float64]

HOUR_IN_DAYS = 1 / 24
WEIGHTS = (0.0, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10, 30, 100, 1000)


@dataclass(frozen=True)
class Bound:
    """A web under one budget: uniform's figures and the best any schedule reaches."""

    web: str
    revisit_days: float
    longest_days: float
    uniform_freshness: float
    uniform_age_days: float
    best_freshness_ratio: float  # the most freshness any schedule buys, x uniform
    age_ratio_at_best_freshness: float
    best_age_ratio: float  # the least age any schedule reaches, x uniform
    best_freshness_ratio_at_half_age: float | None  # None: no schedule halves the age
    bar_reachable: bool  # freshness >= 1.5x and age <= 0.5x at once


def freshness(rates: Floats, intervals: Floats) -> Floats:
    x = rates * intervals
    return np.asarray(-np.expm1(-x) / x)


def age(rates: Floats, intervals: Floats) -> Floats:
    x = rates * intervals
    return np.asarray(intervals / 2 - 1 / rates + -np.expm1(-x) / (rates**2 * intervals))


def frontier(
    rates: Floats, shares: Floats, revisit: float, longest: float
) -> tuple[float, float, list[tuple[float, float]]]:
    """Uniform's freshness and age, and the (freshness, age) ratios of the weight sweep."""
    grid = np.geomspace(HOUR_IN_DAYS, max(longest, revisit), 2_000)
    fresh = freshness(rates[:, None], grid[None, :])
    old = age(rates[:, None], grid[None, :])
    uniform_fresh = float((shares * freshness(rates, np.full_like(rates, revisit))).sum())
    uniform_age = float((shares * age(rates, np.full_like(rates, revisit))).sum())
    budget = 1 / revisit  # visits a day per page, on average
    rows = np.arange(len(rates))
    points = []
    for weight in WEIGHTS:
        cost = -fresh + weight * old / uniform_age
        low, high = 1e-9, 1e9
        for _ in range(50):  # the price of a visit a day, bisected in log
            price = math.sqrt(low * high)
            chosen = np.argmin(cost + price / grid[None, :], axis=1)
            if float((shares / grid[chosen]).sum()) > budget:
                low = price
            else:
                high = price
        chosen = np.argmin(cost + high / grid[None, :], axis=1)
        got_fresh = float((shares * fresh[rows, chosen]).sum())
        got_age = float((shares * old[rows, chosen]).sum())
        points.append((got_fresh / uniform_fresh, got_age / uniform_age))
    return uniform_fresh, uniform_age, points


def bound(web: str, rates: Floats, shares: Floats, revisit: float, longest: float) -> Bound:
    uniform_fresh, uniform_age, points = frontier(rates, shares, revisit, longest)
    best = max(points, key=lambda point: point[0])
    halved = [fresh for fresh, old in points if old <= 0.5]
    return Bound(
        web=web,
        revisit_days=revisit,
        longest_days=longest,
        uniform_freshness=round(uniform_fresh, 4),
        uniform_age_days=round(uniform_age, 3),
        best_freshness_ratio=round(best[0], 3),
        age_ratio_at_best_freshness=round(best[1], 3),
        best_age_ratio=round(min(old for _, old in points), 3),
        best_freshness_ratio_at_half_age=round(max(halved), 3) if halved else None,
        bar_reachable=any(fresh >= 1.5 and old <= 0.5 for fresh, old in points),
    )


def webs(pages: int, seed: int) -> dict[str, Floats]:
    """Change rates a day: bench_freshness.py's own webs, and Cho and Garcia-Molina's."""
    spread = {
        f"{shape} {fastest / 1e4:g}-{fastest:g}": np.array(web(pages, fastest, shape, seed)) * DAY
        for shape in ("log-uniform", "skewed")
        for fastest in (10.0, 100.0)
    }
    # Mean days between changes in each of the study's classes, log-uniform within a class.
    draw = np.random.default_rng(seed)
    lowest = np.array([1 / 6, 1, 7, 30, 120])
    highest = np.array([1, 7, 30, 120, 1_200])
    kind = draw.choice(5, pages, p=[0.23, 0.15, 0.16, 0.16, 0.30])
    days = np.exp(draw.uniform(np.log(lowest[kind]), np.log(highest[kind])))
    spread["Cho and Garcia-Molina 2000"] = 1 / days
    return spread


def search(draws: int, seed: int) -> tuple[float, dict[str, object]]:
    """The best freshness ratio with the age halved, over webs of a few classes drawn at random."""
    draw = np.random.default_rng(seed)
    best: tuple[float, dict[str, object]] = (0.0, {})
    for _ in range(draws):
        classes = int(draw.integers(2, 5))
        rates = 10 ** draw.uniform(-3, 2, classes)
        shares = draw.dirichlet(np.ones(classes))
        revisit = float(10 ** draw.uniform(-1, 2))
        longest = float(draw.choice([30.0, 1_000.0]))
        found = bound("drawn", rates, shares, revisit, longest).best_freshness_ratio_at_half_age
        if found is not None and found > best[0]:
            best = (
                found,
                {
                    "rates_a_day": [round(float(r), 4) for r in rates],
                    "shares": [round(float(s), 3) for s in shares],
                    "revisit_days": round(revisit, 2),
                    "longest_days": longest,
                },
            )
    return best


def table(bounds: Sequence[Bound]) -> str:
    lines = [
        "| web | revisit (d) | longest (d) | uniform freshness | uniform age (d) "
        "| best freshness x | its age x | least age x | freshness x at age 0.5x | bar |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in bounds:
        halved = row.best_freshness_ratio_at_half_age
        lines.append(
            f"| {row.web} | {row.revisit_days:g} | {row.longest_days:g} "
            f"| {row.uniform_freshness:.3f} | {row.uniform_age_days:.2f} "
            f"| {row.best_freshness_ratio:.2f} | {row.age_ratio_at_best_freshness:.2f} "
            f"| {row.best_age_ratio:.2f} | {'none' if halved is None else f'{halved:.2f}'} "
            f"| {'reachable' if row.bar_reachable else 'no'} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1_500, help="pages drawn per web")
    parser.add_argument("--search", type=int, default=3_000, help="webs of a few classes drawn")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="JSON instead of a table")
    args = parser.parse_args()
    bounds = []
    for name, rates in webs(args.pages, args.seed).items():
        shares = np.full_like(rates, 1 / len(rates))
        for revisit in (1.0, 3.0, 10.0, 30.0, 100.0):
            for longest in (30.0, 1_000.0):
                if longest >= revisit:
                    bounds.append(bound(name, rates, shares, revisit, longest))
                    print(table(bounds[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    best, where = search(args.search, args.seed) if args.search else (0.0, {})
    if args.json:
        print(json.dumps({"bounds": [asdict(b) for b in bounds], "search": [best, where]}))
    else:
        print(table(bounds))
        if where:
            print(
                f"\nOver {args.search} webs drawn at random, the most freshness any schedule "
                f"buys while halving the age: {best:.2f}x uniform, at {where}"
            )
        elif args.search:
            print(f"\nOf {args.search} webs drawn at random, no schedule halves the age of any")
    return 0


if __name__ == "__main__":
    sys.exit(main())
