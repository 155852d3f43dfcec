"""The freshness core: change rates estimated from revisits, the schedule a host's budget buys,
and lastmod trust earned and lost. No servers, no clock: `now` is a number."""

from __future__ import annotations

import math
import random

import pytest

from crawler.freshness.rates import (
    DAY,
    ChangeHistory,
    RevisitBounds,
    estimate_rate,
    expected_freshness,
    host_schedule,
    prior_rate,
    weight_of,
)
from crawler.freshness.trust import (
    DISTRUSTED,
    TRUSTED,
    UNTRUSTED,
    LastmodPolicy,
    LastmodTrust,
    lastmod_brings_forward,
    lastmod_evidence,
    lastmod_spares,
    trust_after,
)

HOUR = 3_600.0
BOUNDS = RevisitBounds(shortest=HOUR, longest=30 * DAY, default=DAY)


def visits(rate: float, interval: float, count: int, seed: int = 1) -> ChangeHistory:
    """What `count` revisits `interval` apart find of a page changing as a Poisson process."""
    draw = random.Random(seed)
    history = ChangeHistory()
    for _ in range(count):
        changed = draw.random() < -math.expm1(-rate * interval)
        history = history.after_visit(interval, changed)
    return history


@pytest.mark.parametrize("rate_per_day", [0.05, 0.3, 1.0, 3.0])
def test_the_estimate_converges_on_the_true_rate(rate_per_day: float) -> None:
    rate = rate_per_day / DAY
    history = visits(rate, DAY, 4_000, seed=int(rate_per_day * 100))
    assert estimate_rate(history, prior_rate(None, DAY)) == pytest.approx(rate, rel=0.12)


def test_the_bias_reduced_estimator_beats_counting_changes() -> None:
    # A page changing 3 times a day, visited daily: counting changes found (X / n I) can never
    # say more than one a day; the estimator does.
    rate = 3 / DAY
    history = visits(rate, DAY, 2_000)
    naive = history.changes / history.observed
    estimate = estimate_rate(history, 1 / DAY)
    assert naive < 1.01 / DAY
    assert abs(estimate - rate) < abs(naive - rate)


def test_a_page_never_seen_changing_keeps_a_falling_rate_above_zero() -> None:
    prior = prior_rate("daily", 7 * DAY)
    assert prior == pytest.approx(1 / DAY)
    assert estimate_rate(ChangeHistory(), prior) == prior
    rates = [estimate_rate(ChangeHistory(n, 0, n * DAY), prior) for n in (1, 5, 50)]
    assert rates == sorted(rates, reverse=True)
    assert 0 < rates[-1] < prior / 20


def test_irregular_intervals_are_weighed_by_what_they_found() -> None:
    # Changes found only in long intervals, none in short ones: a slow page, whatever the
    # mean interval says.
    rate = 0.2 / DAY
    draw = random.Random(5)
    history = ChangeHistory()
    for step in range(3_000):
        interval = (0.1 if step % 2 else 10) * DAY
        history = history.after_visit(interval, draw.random() < -math.expm1(-rate * interval))
    assert estimate_rate(history, 1 / DAY) == pytest.approx(rate, rel=0.15)


def test_a_page_changed_at_every_visit_gets_a_finite_rate() -> None:
    rate = estimate_rate(ChangeHistory(10, 10, 10 * DAY, 10 * DAY), 1 / DAY)
    assert math.isfinite(rate) and rate > 2 / DAY


def test_priors_and_weights_from_a_sitemap() -> None:
    assert prior_rate("HOURLY ", DAY) == pytest.approx(1 / HOUR)
    assert prior_rate("yearly", DAY) < prior_rate("monthly", DAY) < prior_rate("weekly", DAY)
    assert prior_rate("sometimes", 2 * DAY) == pytest.approx(1 / (2 * DAY))
    assert prior_rate(None, 0.0) == 1.0  # recrawl.after 0: every page due
    assert weight_of(None) == 1.0 and weight_of(0.5) == 1.0
    assert weight_of(1.0) == 2.0 and weight_of(0.0) == pytest.approx(0.2)
    assert weight_of(float("nan")) == 1.0


def test_expected_freshness() -> None:
    assert expected_freshness(0.0, DAY) == 1.0
    assert expected_freshness(1 / DAY, DAY) == pytest.approx(1 - math.exp(-1))
    assert expected_freshness(100 / DAY, DAY) == pytest.approx(0.01, rel=1e-3)


def test_the_schedule_spends_the_budget_and_no_more() -> None:
    draw = random.Random(7)
    rates = [10 ** draw.uniform(-3, 1) / DAY for _ in range(2_000)]
    schedule = host_schedule(((rate, 1.0) for rate in rates), 500.0, BOUNDS)
    spent = sum(DAY / schedule.interval(rate) for rate in rates)
    assert spent == pytest.approx(500.0, rel=0.01)
    assert schedule.budget_per_day == pytest.approx(spent, rel=0.01)


def test_pages_too_fast_for_the_budget_get_less_attention_not_more() -> None:
    # One request a day for three pages: the optimum gives the page changing 50 times a day
    # the longest interval, and spends on those it can keep fresh.
    rates = [0.1 / DAY, 1 / DAY, 50 / DAY]
    schedule = host_schedule(((rate, 1.0) for rate in rates), 1.0, BOUNDS)
    slow, middle, fast = (schedule.interval(rate) for rate in rates)
    assert fast == BOUNDS.longest
    assert middle < slow < fast
    uniform = sum(expected_freshness(rate, 3 * DAY) for rate in rates)
    ours = sum(expected_freshness(rate, schedule.interval(rate)) for rate in rates)
    assert ours > uniform


def test_the_bounds_rule_where_the_budget_cannot() -> None:
    rates = [1 / DAY] * 10
    plenty = host_schedule(((rate, 1.0) for rate in rates), 1e6, BOUNDS)
    assert plenty.multiplier == 0.0
    assert all(plenty.interval(rate) == HOUR for rate in rates)
    starved = host_schedule(((rate, 1.0) for rate in rates), 0.01, BOUNDS)
    assert all(starved.interval(rate) == BOUNDS.longest for rate in rates)
    assert starved.budget_per_day == pytest.approx(10 / 30)  # overspent: the bound wins


def test_a_weightier_page_is_visited_more_often() -> None:
    pages = [(1 / DAY, 1.0), (1 / DAY, 2.0)]
    schedule = host_schedule(pages, 2.0, BOUNDS)
    assert schedule.interval(1 / DAY, 2.0) < schedule.interval(1 / DAY, 1.0)


def test_the_schedule_beats_uniform_on_spread_rates() -> None:
    draw = random.Random(3)
    rates = [10 ** draw.uniform(-3, 1) / DAY for _ in range(1_000)]
    budget = 200.0
    schedule = host_schedule(((rate, 1.0) for rate in rates), budget, BOUNDS)
    uniform = DAY * len(rates) / budget
    freshness_uniform = sum(expected_freshness(rate, uniform) for rate in rates)
    freshness_ours = sum(expected_freshness(rate, schedule.interval(rate)) for rate in rates)
    assert freshness_ours > 1.05 * freshness_uniform


POLICY = LastmodPolicy(confirmations=3, sample_share=0.25)
NOW = 1_800_000_000.0


def test_lastmod_evidence() -> None:
    assert lastmod_evidence(None, NOW, False) is None
    assert lastmod_evidence(NOW + 1, NOW, True) is None  # it said changed
    assert lastmod_evidence(NOW - 1, NOW, False) is True
    assert lastmod_evidence(NOW, NOW, True) is False
    assert lastmod_evidence(NOW - 1, NOW, None) is None  # gone, failed: nothing compared


def test_trust_is_earned_lost_and_earned_again() -> None:
    trust = LastmodTrust()
    assert trust.level == UNTRUSTED
    for step in range(2):
        trust = trust_after(trust, True, f"http://a/{step}", NOW + step, POLICY)
        assert trust.level == UNTRUSTED and trust.right == step + 1
    trust = trust_after(trust, True, "http://a/2", NOW + 2, POLICY)
    assert (trust.level, trust.since) == (TRUSTED, NOW + 2)
    assert "proved right 3 times" in trust.reason
    trust = trust_after(trust, True, "http://a/3", NOW + 3, POLICY)
    assert (trust.level, trust.since, trust.right) == (TRUSTED, NOW + 2, 4)

    trust = trust_after(trust, False, "http://a/page", NOW + 4, POLICY)
    assert (trust.level, trust.right, trust.since) == (DISTRUSTED, 0, NOW + 4)
    assert "http://a/page had changed" in trust.reason
    assert "right no time since, 3 more to be trusted" in trust.describe(POLICY)
    for step in range(2):
        trust = trust_after(trust, True, "http://a/x", NOW + 5 + step, POLICY)
        assert trust.level == DISTRUSTED
    assert "http://a/page" in trust.reason  # what proved it wrong is kept
    trust = trust_after(trust, True, "http://a/x", NOW + 9, POLICY)
    assert trust.level == TRUSTED and "right again" in trust.reason


def test_an_untrusted_host_proved_wrong_starts_counting_over() -> None:
    trust = trust_after(LastmodTrust(), True, "http://a/1", NOW, POLICY)
    trust = trust_after(trust, False, "http://a/2", NOW, POLICY)
    assert (trust.level, trust.right) == (DISTRUSTED, 0)


def test_what_a_claim_spares() -> None:
    trusted = LastmodTrust(TRUSTED, 5, NOW, "proved")
    assert lastmod_spares(trusted, POLICY, draw=0.5)
    assert not lastmod_spares(trusted, POLICY, draw=0.1)  # the sample checked anyway
    assert not lastmod_spares(LastmodTrust(), POLICY, draw=0.9)
    assert not lastmod_spares(LastmodTrust(DISTRUSTED), POLICY, draw=0.9)
    assert lastmod_spares(LastmodTrust(), LastmodPolicy(mode="always"), draw=0.0)
    assert not lastmod_spares(trusted, LastmodPolicy(mode="never"), draw=0.9)
    shares = [lastmod_spares(trusted, POLICY, draw=i / 1000) for i in range(1000)]
    assert shares.count(False) == 250


def test_what_a_claim_of_change_brings_forward() -> None:
    trusted = LastmodTrust(TRUSTED, 5, NOW, "proved")
    assert lastmod_brings_forward(trusted, POLICY)
    assert not lastmod_brings_forward(LastmodTrust(), POLICY)
    assert not lastmod_brings_forward(LastmodTrust(DISTRUSTED), POLICY)
    assert lastmod_brings_forward(LastmodTrust(), LastmodPolicy(mode="always"))
    assert not lastmod_brings_forward(trusted, LastmodPolicy(mode="never"))
