"""How often a page is asked for again: its change rate estimated from what its fetches found, and
revisit intervals chosen per host to keep the most pages fresh for a budget of requests. Pure: no
I/O, no clock.

The rate (Cho and Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003): a
revisit only tells whether the page changed since the visit before, not how many times, so
X changes seen in n visits I apart do not give X / (n I). Their bias-reduced estimator

    r = -log((n - X + 0.5) / (n + 0.5)) / I

counts a visit that found a change as the chance that at least one happened. Our visits are not
evenly spaced (the schedule moves as the estimate does): I is the mean interval, which is what
their estimator for irregular intervals reduces to when the intervals are close. A page never
seen changing would get rate 0; a prior (from its sitemap's changefreq, else recrawl.after)
enters as PRIOR_VISITS pseudo-visits that found a change as often as the prior rate would.

The schedule (Cho and Garcia-Molina, "Effective page refresh policies for web crawlers", ACM
TODS 28(4), 2003): a page changing at rate r revisited every I seconds is fresh, on average,
F = (1 - e^(-rI)) / (rI) of the time. Over a host's pages, with revisit frequencies f = 1/I
summing to the budget B, sum w F is greatest where every page's marginal freshness per request
is the same multiplier m: w (1 - (1 + x) e^(-x)) / r = m, with x = r / f. Pages that change
too fast for the budget to keep up with are given LESS attention (at the multiplier's
threshold, none): a visit to them buys little freshness. Frequencies are bounded by the
shortest and the longest revisit interval; the multiplier is found by bisection.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "CHANGEFREQ_SECONDS",
    "DAY",
    "PRIOR_VISITS",
    "ChangeHistory",
    "HostSchedule",
    "RevisitBounds",
    "estimate_rate",
    "expected_freshness",
    "host_schedule",
    "prior_rate",
    "revisit_interval",
    "weight_of",
]

DAY = 86_400.0
PRIOR_VISITS = 1.0
"""How many visits the prior counts as: one, so that a few real visits outweigh it."""
CHANGEFREQ_SECONDS = {
    "always": 3_600.0,  # no crawl keeps up with "always": hourly is the most it asks for
    "hourly": 3_600.0,
    "daily": DAY,
    "weekly": 7 * DAY,
    "monthly": 30 * DAY,
    "yearly": 365 * DAY,
    "never": 3 * 365 * DAY,  # archived, the protocol says; checked now and then all the same
}
"""A sitemap's changefreq as a mean interval between changes, seconds."""
_BISECTIONS = 60
_RATE_BUCKETS_PER_E = 200
"""Rates closer than 0.5% are solved for together: a host of a million pages is as quick to
schedule as one of a few thousand distinct rates."""


@dataclass(frozen=True, slots=True)
class ChangeHistory:
    """What a page's revisits found: sufficient statistics for its change rate."""

    visits: int = 0
    """Revisits that got an answer to compare (changed or unchanged)."""
    changes: int = 0
    """Of those, how many found the page changed since the fetch before."""
    observed: float = 0.0
    """Seconds between each of those revisits and the fetch before it, summed."""
    observed_changed: float = 0.0
    """The part of `observed` in the intervals that found a change."""

    def after_visit(self, interval: float, changed: bool) -> ChangeHistory:
        """The history once a revisit `interval` seconds after the last fetch found the page
        `changed` or not."""
        interval = max(0.0, interval)
        return ChangeHistory(
            self.visits + 1,
            self.changes + int(changed),
            self.observed + interval,
            self.observed_changed + (interval if changed else 0.0),
        )


@dataclass(frozen=True, slots=True)
class RevisitBounds:
    """The shortest and the longest revisit interval, and the one for a page with no history."""

    shortest: float
    longest: float
    default: float

    def clamp(self, interval: float) -> float:
        return min(self.longest, max(self.shortest, interval))


def prior_rate(changefreq: str | None, default_interval: float) -> float:
    """Changes per second expected of a page before any revisit: its sitemap's `changefreq`,
    else one per `default_interval` (recrawl.after)."""
    seconds = CHANGEFREQ_SECONDS.get((changefreq or "").strip().lower())
    if seconds is None:
        seconds = default_interval
    return 1.0 / max(seconds, 1.0)


def weight_of(priority: float | None) -> float:
    """A page's weight in the host's freshness: its sitemap `priority` (0.0-1.0, 0.5 when not
    given) relative to the default, so an unweighted host's pages all weigh 1. Never 0: a
    priority-0 page is still kept, at a tenth of the weight."""
    if priority is None or not math.isfinite(priority):
        return 1.0
    return max(0.1, min(1.0, priority)) / 0.5


def estimate_rate(history: ChangeHistory, prior: float) -> float:
    """Changes per second of a page with `history`, the prior rate `prior` weighing as
    PRIOR_VISITS visits of the mean interval (module docstring).

    Irregular intervals: the likelihood of changes seen in intervals t_i and none in t_j is
    greatest where sum t_i / (e^(r t_i) - 1) = sum t_j; with every changed interval taken at
    their mean c = C / X (C their sum), r = log(1 + C / U) / c, U the unchanged intervals' sum.
    Half the mean interval added to U is Cho and Garcia-Molina's bias reduction: with regular
    intervals I this is their -log((n - X + 0.5) / (n + 0.5)) / I exactly."""
    if history.visits == 0 or history.observed <= 0:
        return prior
    mean = history.observed / history.visits
    prior_changed = -math.expm1(-prior * mean)
    changes = history.changes + PRIOR_VISITS * prior_changed
    changed_time = history.observed_changed + PRIOR_VISITS * prior_changed * mean
    unchanged_time = history.observed - history.observed_changed
    unchanged_time += PRIOR_VISITS * (1 - prior_changed) * mean
    per_change = changed_time / changes
    return math.log1p(changed_time / (max(unchanged_time, 0.0) + 0.5 * mean)) / per_change


def expected_freshness(rate: float, interval: float) -> float:
    """The share of the time a page changing at `rate` (per second), revisited every
    `interval` seconds, is as stored: (1 - e^(-rI)) / (rI)."""
    x = rate * interval
    if x < 1e-9:
        return 1.0 - x / 2
    return -math.expm1(-x) / x


def _gain(x: float) -> float:
    """1 - (1 + x) e^(-x): a page's marginal freshness per request, times its rate, at x =
    rate / frequency. Rises from 0 to 1."""
    if x < 1e-3:
        return x * x * (0.5 - x / 3 + x * x / 8)
    return -math.expm1(-x) - x * math.exp(-x)


def _gain_inverse(y: float) -> float:
    """The x with _gain(x) = y, 0 < y < 1: Newton's steps kept inside a bracket."""
    low, high = 0.0, 1.0
    while _gain(high) < y:
        low, high = high, high * 2
        if high > 1e4:
            return high
    x = math.sqrt(2 * y) if y < 0.3 else (low + high) / 2
    x = min(max(x, low), high)
    for _ in range(50):
        error = _gain(x) - y
        if abs(error) <= 1e-12 * y:
            return x
        if error > 0:
            high = x
        else:
            low = x
        slope = x * math.exp(-x)
        step = x - error / slope if slope > 0 else (low + high) / 2
        x = step if low < step < high else (low + high) / 2
    return x


def _frequency(rate: float, weight: float, multiplier: float, bounds: RevisitBounds) -> float:
    """Revisits per second of a page at `multiplier`, within the bounds."""
    fastest, slowest = 1.0 / max(bounds.shortest, 1e-9), 1.0 / bounds.longest
    if multiplier <= 0:
        return fastest
    target = multiplier * rate / weight
    if rate <= 0 or target >= 1:
        return slowest  # too fast to keep up with (or never changes): only the bound's visits
    return min(fastest, max(slowest, rate / _gain_inverse(target)))


@dataclass(frozen=True, slots=True)
class HostSchedule:
    """A host's revisit plan: the multiplier its budget settles at, and the bounds."""

    multiplier: float
    """0: the budget buys every page's shortest interval."""
    bounds: RevisitBounds
    budget_per_day: float
    """The requests a day the schedule spends (the budget, or less where the bounds rule)."""

    def interval(self, rate: float, weight: float = 1.0) -> float:
        """Seconds between revisits of a page changing `rate` times a second."""
        return revisit_interval(rate, weight, self.multiplier, self.bounds)


def revisit_interval(rate: float, weight: float, multiplier: float, bounds: RevisitBounds) -> float:
    """Seconds between revisits of one page, at a host's `multiplier`."""
    return bounds.clamp(1.0 / _frequency(rate, weight, multiplier, bounds))


def host_schedule(
    pages: Iterable[tuple[float, float]], budget_per_day: float, bounds: RevisitBounds
) -> HostSchedule:
    """The schedule that keeps a host's `pages` ((rate per second, weight) each) freshest on
    average for `budget_per_day` revisits a day, within `bounds`. When even the longest
    interval for every page spends more, the bounds win (and the budget is overspent); when the
    shortest for every page spends less, every page gets the shortest."""
    buckets: Counter[tuple[float, float]] = Counter()
    for rate, weight in pages:
        key = round(math.log(rate) * _RATE_BUCKETS_PER_E) if rate > 0 else -(10**9)
        buckets[(math.exp(key / _RATE_BUCKETS_PER_E) if rate > 0 else 0.0, weight)] += 1
    budget = budget_per_day / DAY

    def spent(multiplier: float) -> float:
        return sum(
            count * _frequency(rate, weight, multiplier, bounds)
            for (rate, weight), count in buckets.items()
        )

    if spent(0.0) <= budget:
        return HostSchedule(0.0, bounds, spent(0.0) * DAY)
    # Every page at the multiplier's threshold (the highest weight / rate, made a little higher
    # for the rates rounded into buckets) gets the slowest visits; bisect in log space below it.
    ceiling = 1.01 * max((weight / rate for (rate, weight) in buckets if rate > 0), default=1.0)
    low, high = math.log(ceiling) - 80.0, math.log(ceiling)
    if spent(math.exp(high)) > budget:
        return HostSchedule(math.exp(high), bounds, spent(math.exp(high)) * DAY)

    def excess(log_multiplier: float) -> float:
        return math.log(spent(math.exp(log_multiplier)) / budget)

    # Regula falsi (the Illinois variant) on the log of what is spent: a dozen solves where
    # bisection takes sixty. `low` always overspends, `high` never does.
    at_low, at_high = excess(low), excess(high)
    side = 0
    for _ in range(_BISECTIONS):
        if high - low < 1e-9 or at_low - at_high < 1e-9:
            break
        middle = high - at_high * (high - low) / (at_high - at_low)
        if not low < middle < high:
            middle = (low + high) / 2
        at_middle = excess(middle)
        if abs(at_middle) < 1e-6:
            high = middle
            break
        if at_middle > 0:
            low, at_low = middle, at_middle
            if side == -1:
                at_high /= 2
            side = -1
        else:
            high, at_high = middle, at_middle
            if side == 1:
                at_low /= 2
            side = 1
    multiplier = math.exp(high)
    return HostSchedule(multiplier, bounds, spent(multiplier) * DAY)
