#!/usr/bin/env python3
"""How fresh a revisit schedule keeps a simulated web, for the same number of requests.

    python benchmarks/bench_freshness.py [--pages 10000] [--hosts 100] [--days 120]
        [--warmup 30] [--revisit 3] [--spread log-uniform|skewed] [--fastest 10] [--seed 1]
        [--sweep 0.3,1,3,10,30,100] [--longest 60] [--give-up] [--json]

--sweep: the same web under several budgets, one for each revisit interval listed (days), each
simulated for 40 such intervals (at least --days), the first 10 (at least --warmup) not
measured, the schedules solved again every tenth of an interval (at least daily): a table of
the three schedules' freshness and age at each budget, and ours beside the oracle.

A web of --pages pages on --hosts hosts, each page changing as a Poisson process at its own rate,
spread over four orders of magnitude (0.001 to 10 changes a day): log-uniform, or skewed (most
pages change rarely, a few often, as measured studies report: Cho and Garcia-Molina 2000,
Fetterly et al. 2003). Every host may be asked for pages / --revisit requests a day (what a
uniform revisit every --revisit days spends), paced by a token bucket. Three schedules, over
--days simulated days (no sleeps: a simulated clock):

    uniform   every page every --revisit days (recrawl.after, before issue 42)
    ours      the crawl's own code (crawler.freshness.rates): each page's rate estimated
              from what its revisits found (changed or not), the host's budget spread by the
              optimal allocation, re-solved every simulated day; a page with no history waits
              recrawl.after (--revisit days); bounds of 1 hour and --longest days (60, or
              --revisit where longer)
    oracle    the same allocation, knowing the true rates
    give-up   (--give-up; tried, not the crawl's) ours, but a page seen changed at every one of
              two or more revisits is rated by the median of its rate's posterior, flat in the
              log of the rate from the estimate's order up to a change an hour: most such pages
              are then left at the longest interval, as the oracle leaves them

Freshness: the share of pages whose stored copy is current, averaged over time; age: how long a
stored copy has been out of date (0 while current), averaged over pages and time. Both measured
after --warmup days, exactly (between two fetches a page is fresh until its first change, which
the memoryless Poisson process draws at each fetch).
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crawler.freshness.rates import (
    DAY,
    ChangeHistory,
    HostSchedule,
    RevisitBounds,
    estimate_rate,
    host_schedule,
    prior_rate,
)

HOUR = 3_600.0


@dataclass(slots=True)
class Page:
    rate: float
    host: int
    key: int
    fetched_at: float = 0.0
    changes_at: float = 0.0
    """The first change after the last fetch."""
    history: ChangeHistory = field(default_factory=ChangeHistory)
    interval: float = 0.0
    stamp: int = 0
    """Bumped when the page is rescheduled: older heap entries are stale."""


@dataclass(slots=True)
class Measure:
    start: float
    end: float
    fresh: float = 0.0
    age: float = 0.0
    requests: int = 0

    def interval(self, begin: float, change: float, end: float) -> None:
        """A page fetched at `begin`, first changed at `change`, fetched again at `end`."""
        low, high = max(begin, self.start), min(end, self.end)
        if high <= low:
            return
        self.fresh += max(0.0, min(change, high) - low)
        stale_from = max(change, low)
        if stale_from < high:
            # Age at time t is t - change: integrated over [stale_from, high].
            self.age += ((high - change) ** 2 - (stale_from - change) ** 2) / 2


@dataclass(slots=True)
class Bucket:
    """A host's requests: `per_second` a second, at most a day's worth saved up."""

    per_second: float
    tokens: float
    at: float = 0.0

    def take(self, now: float) -> float:
        """0 when a request may start at `now` (and it is taken), else the seconds to wait."""
        self.tokens = min(self.per_second * DAY, self.tokens + (now - self.at) * self.per_second)
        self.at = now
        if self.tokens >= 1 - 1e-9:  # what a wait of (1 - tokens) seconds gave, rounded
            self.tokens -= 1
            return 0.0
        return max(1.0, (1 - self.tokens) / self.per_second)


def web(pages: int, fastest: float, spread: str, seed: int) -> list[float]:
    """Change rates per second, from `fastest` a day down four orders of magnitude."""
    draw = random.Random(seed)
    top = math.log10(fastest)
    if spread == "log-uniform":
        exponents = [top - 4 * draw.random() for _ in range(pages)]
    else:  # skewed: the density falls with the rate, most pages near the slowest
        exponents = [top - 4 * math.sqrt(draw.random()) for _ in range(pages)]
    return [10**exponent / DAY for exponent in exponents]


def given_up_rate(history: ChangeHistory, prior: float) -> float:
    """The `give-up` schedule's rate: a page changed at every revisit is rated by its
    posterior's median (see the module doc), any other as the crawl rates it."""
    if history.visits < 2 or history.changes < history.visits or history.observed <= 0:
        return estimate_rate(history, prior)
    mean = history.observed / history.visits
    low, high = math.log(min(prior, 0.1 / mean)), math.log(1 / HOUR)
    if high <= low:
        return estimate_rate(history, prior)
    steps = [low + (high - low) * (step + 0.5) / 96 for step in range(96)]
    likelihoods = [(-math.expm1(-math.exp(u) * mean)) ** history.visits for u in steps]
    half, seen = sum(likelihoods) / 2, 0.0
    for u, likelihood in zip(steps, likelihoods, strict=True):
        seen += likelihood
        if seen >= half:
            return max(math.exp(u), estimate_rate(history, prior))
    return estimate_rate(history, prior)


def simulate(
    rates: list[float], hosts: int, args: argparse.Namespace, policy: str
) -> dict[str, float]:
    draw = random.Random(args.seed + 1)
    default = args.revisit * DAY
    bounds = RevisitBounds(HOUR, max(args.longest * DAY, default), default)
    pages = [Page(rate, index % hosts, index) for index, rate in enumerate(rates)]
    by_host: list[list[Page]] = [[] for _ in range(hosts)]
    for page in pages:
        by_host[page.host].append(page)
    budget = [len(group) / args.revisit for group in by_host]
    buckets = [Bucket(daily / DAY, daily) for daily in budget]
    prior = prior_rate(None, default)
    learns = policy in ("ours", "give-up")
    estimate = given_up_rate if policy == "give-up" else estimate_rate

    plans: list[HostSchedule | None] = [None] * hosts

    def schedule(host: int) -> None:
        group = by_host[host]
        if policy == "uniform":
            for page in group:
                page.interval = default
            return
        known = policy == "oracle"
        rated = [(page, page.rate if known else estimate(page.history, prior)) for page in group]
        plan = host_schedule(((rate, 1.0) for _, rate in rated), budget[host], bounds)
        plans[host] = plan
        for page, rate in rated:
            page.interval = plan.interval(rate) if (known or page.history.visits) else default

    measure = Measure(args.warmup * DAY, args.days * DAY)
    queue: list[tuple[float, int, int]] = []
    for page in pages:
        # A first crawl over the day before the simulation starts.
        page.fetched_at = -draw.random() * DAY
        page.changes_at = page.fetched_at + draw.expovariate(page.rate)
    for host, group in enumerate(by_host):
        schedule(host)
        for index, page in enumerate(group):
            due = page.fetched_at + page.interval
            if policy == "uniform":  # spread evenly over the interval, as a uniform revisit is
                due = (index + draw.random()) / len(group) * page.interval
            heapq.heappush(queue, (due, page.key, page.stamp))
    solve_every = max(DAY, args.revisit * DAY / 10)
    next_solve = solve_every
    end = args.days * DAY
    while queue and queue[0][0] < end:
        if learns and queue[0][0] >= next_solve:
            # Every simulated day (a tenth of a revisit, if longer) each host's schedule is
            # solved again from the estimates.
            for host, group in enumerate(by_host):
                schedule(host)
                for page in group:
                    page.stamp += 1
                    heapq.heappush(queue, (page.fetched_at + page.interval, page.key, page.stamp))
            next_solve += solve_every
            continue
        due, key, stamp = heapq.heappop(queue)
        page = pages[key]
        if stamp != page.stamp:
            continue
        due = max(due, page.fetched_at)
        wait = buckets[page.host].take(due)
        if wait > 0:
            heapq.heappush(queue, (due + wait, key, page.stamp))
            continue
        changed = page.changes_at < due
        measure.interval(page.fetched_at, page.changes_at, due)
        if due >= measure.start:
            measure.requests += 1
        page.history = page.history.after_visit(due - page.fetched_at, changed)
        page.fetched_at = due
        page.changes_at = due + draw.expovariate(page.rate)
        plan = plans[page.host]
        if learns and plan is not None:
            # Between the daily solves, a page's own estimate moves its next visit.
            page.interval = plan.interval(estimate(page.history, prior))
        page.stamp += 1
        heapq.heappush(queue, (due + page.interval, key, page.stamp))
    for page in pages:
        measure.interval(page.fetched_at, page.changes_at, end)
    span = (measure.end - measure.start) * len(pages)
    return {
        "freshness": measure.fresh / span,
        "age_days": measure.age / span / DAY,
        "requests": measure.requests,
    }


def sweep(rates: list[float], args: argparse.Namespace) -> int:
    """The three schedules under each budget of --sweep: where a schedule by rates gains."""
    revisits = [float(value) for value in args.sweep.split(",")]
    rows: dict[float, dict[str, dict[str, float]]] = {}
    for revisit in revisits:
        scaled = argparse.Namespace(**vars(args))
        scaled.revisit = revisit
        scaled.days = max(args.days, 40 * revisit)
        scaled.warmup = max(args.warmup, 10 * revisit)
        rows[revisit] = {
            policy: simulate(rates, args.hosts, scaled, policy)
            for policy in ("uniform", "ours", "oracle")
        }
    if args.json:
        print(json.dumps({str(revisit): row for revisit, row in rows.items()}, indent=2))
        return 0
    print(
        f"{args.pages} pages on {args.hosts} hosts, {args.spread} rates "
        f"{args.fastest / 1e4:g}-{args.fastest:g} a day; each budget simulated for 40 revisit "
        "intervals, the first 10 not measured"
    )
    print(
        f"{'revisit (d)':>11} {'freshness: uniform':>18} {'ours':>6} {'oracle':>6} "
        f"{'age (d): uniform':>16} {'ours':>7} {'oracle':>7} {'ours/uniform':>12} "
        f"{'oracle/uniform':>14} {'ours/oracle':>11}"
    )
    for revisit, row in rows.items():
        uniform, ours, oracle = (row[name] for name in ("uniform", "ours", "oracle"))
        print(
            f"{revisit:11g} {uniform['freshness']:18.3f} {ours['freshness']:6.3f} "
            f"{oracle['freshness']:6.3f} {uniform['age_days']:16.2f} {ours['age_days']:7.2f} "
            f"{oracle['age_days']:7.2f} {ours['freshness'] / uniform['freshness']:12.2f} "
            f"{oracle['freshness'] / uniform['freshness']:14.2f} "
            f"{ours['freshness'] / oracle['freshness']:11.2f}"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--days", type=float, default=120.0)
    parser.add_argument("--warmup", type=float, default=30.0)
    parser.add_argument("--revisit", type=float, default=3.0)
    parser.add_argument("--spread", choices=("log-uniform", "skewed"), default="log-uniform")
    parser.add_argument("--fastest", type=float, default=10.0, help="changes a day, at most")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sweep", help="revisit intervals, days, comma-separated")
    parser.add_argument("--give-up", action="store_true", help="add the give-up schedule")
    parser.add_argument(
        "--longest", type=float, default=60.0, help="the longest revisit interval, days"
    )
    args = parser.parse_args()
    rates = web(args.pages, args.fastest, args.spread, args.seed)
    if args.sweep:
        return sweep(rates, args)
    results: dict[str, dict[str, float]] = {}
    for policy in ("uniform", "ours", "oracle", *(("give-up",) if args.give_up else ())):
        began = time.perf_counter()
        results[policy] = simulate(rates, args.hosts, args, policy)
        results[policy]["seconds"] = time.perf_counter() - began
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    uniform = results["uniform"]
    print(
        f"{args.pages} pages on {args.hosts} hosts, {args.spread} rates "
        f"{args.fastest / 1e4:g}-{args.fastest:g} a day, "
        f"{args.days:g} days ({args.warmup:g} warm-up), budget: each page every "
        f"{args.revisit:g} days"
    )
    print(
        f"{'schedule':10} {'freshness':>9} {'x uniform':>9} {'age (d)':>8} {'/ uniform':>9} "
        f"{'requests':>9}"
    )
    for policy, figures in results.items():
        print(
            f"{policy:10} {figures['freshness']:9.3f} "
            f"{figures['freshness'] / uniform['freshness']:9.2f} {figures['age_days']:8.2f} "
            f"{figures['age_days'] / uniform['age_days']:9.2f} {figures['requests']:9.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
