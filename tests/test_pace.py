"""crawler.pace and the pace rules of crawler.politeness: a host's answers set its interval, beside
its robots.txt. Pure: times are given, servers are simulated by their own rules."""

from __future__ import annotations

import dataclasses
import itertools
import statistics

import pytest

from crawler.config import PolitenessConfig
from crawler.pace import JITTER, HostPace, PaceRules, jitter
from crawler.politeness import HostRules, HostTiming, Politeness

RULES = PaceRules()
ORIGIN = "http://a.test"


def politeness(**changes: object) -> Politeness:
    config = PolitenessConfig(min_delay=0.1, backoff_max=60.0)
    return Politeness(dataclasses.replace(config, **changes))  # type: ignore[arg-type]


# --- the response interval ----------------------------------------------------------------------


def test_a_host_that_answers_fast_keeps_min_delay() -> None:
    timing = HostTiming(ORIGIN)
    rules = politeness()
    rules.on_response(timing, 10.0, 10.01, 10.02)
    assert rules.why(timing, 11.0) == (0.1, "min_delay")


def test_a_host_that_answers_slowly_gets_room_in_proportion() -> None:
    timing = HostTiming(ORIGIN)
    rules = politeness()
    rules.on_response(timing, 10.0, 11.0, 11.1)  # the first byte after 1 s
    assert rules.why(timing, 11.2) == (0.1, "min_delay")  # one answer alone is no pace
    rules.on_response(timing, 15.0, 16.0, 16.1)
    assert rules.why(timing, 17.0) == (pytest.approx(4.0), "response time")
    assert timing.pace.whole_time == pytest.approx(1.1)


def test_the_answer_time_is_a_median_one_stall_does_not_move() -> None:
    pace = HostPace()
    pace.answered(0.0, None, 3.0)  # the first wave, in an accept queue
    pace.answered(5.0, None, 5.1)
    assert pace.answer_time == pytest.approx(0.1)  # the lower median of two
    for start in range(6, 9):
        pace.answered(float(start), None, start + 0.1)
    pace.answered(10.0, None, 12.0)  # our own event loop held for 2 s
    assert pace.answer_time == pytest.approx(0.1)
    for start in range(20, 23):  # the server slows down: every answer shows it
        pace.answered(float(start), None, start + 1.0)
    assert pace.answer_time == pytest.approx(1.0)
    assert len(pace.answer_times) == 5
    for start in range(30, 35):
        pace.answered(float(start), None, start + 100.0)
    assert pace.response_interval(RULES) == RULES.max_response_delay


def test_robots_txt_asking_more_wins_and_says_so() -> None:
    timing = HostTiming(ORIGIN, HostRules(crawl_delay=5.0))
    rules = politeness()
    rules.on_response(timing, 0.0, None, 0.5)
    assert rules.why(timing, 1.0) == (5.0, "robots.txt Crawl-delay")


def test_a_response_factor_of_zero_turns_it_off() -> None:
    timing = HostTiming(ORIGIN)
    rules = politeness(response_factor=0.0)
    rules.on_response(timing, 0.0, None, 3.0)
    assert rules.why(timing, 4.0) == (0.1, "min_delay")


# --- refusals -----------------------------------------------------------------------------------


def test_a_refusal_multiplies_the_interval_and_waits_it_with_jitter() -> None:
    timing = HostTiming(ORIGIN)
    rules = politeness()
    rules.on_success(timing, 0.0, 0.01)
    until = rules.on_refusal(timing, 0.5, 0.51, None)
    assert timing.pace.refused_gap == pytest.approx(0.5)
    assert timing.pace.learned == pytest.approx(1.5)  # 3 x the gap refused
    assert 0.51 + 1.5 <= until <= 0.51 + 1.5 * (1 + JITTER)
    assert rules.why(timing, 1.0) == (pytest.approx(1.5), "learned rate")
    assert ORIGIN in rules.throttled


def test_a_short_retry_after_teaches_the_gap_it_allows_and_a_long_one_only_when() -> None:
    timing = HostTiming(ORIGIN)
    rules = politeness()
    rules.on_success(timing, 0.0, 0.01)
    rules.on_refusal(timing, 0.3, 0.31, 2.0)
    assert timing.pace.floor == pytest.approx(2.3) and timing.pace.learned == pytest.approx(2.3)
    for second in range(3, 30, 3):
        rules.on_success(timing, float(second), second + 0.01)
    assert timing.pace.learned == pytest.approx(2.3)
    other = HostTiming(ORIGIN)
    rules.on_success(other, 0.0, 0.01)
    rules.on_refusal(other, 0.3, 0.31, 3600.0)
    assert other.pace.floor == pytest.approx(1.25 * 0.3)


def test_retry_after_is_a_floor() -> None:
    timing = HostTiming(ORIGIN)
    rules = politeness()
    until = rules.on_refusal(timing, 0.0, 0.0, 20.0)
    assert 20.0 <= until <= 20.0 * (1 + JITTER)
    # Capped at backoff_max, as a Retry-After always was.
    assert rules.on_refusal(HostTiming(ORIGIN), 0.0, 0.0, 1e9) <= 60.0 * (1 + JITTER)


def test_successes_bring_the_interval_down_gradually_not_below_the_refused_rate() -> None:
    pace = HostPace(learned=8.0, refused_gap=2.0, floor=2.5, last_refusal=0.0)
    seen = []
    for second in range(1, 40):
        pace.accepted(float(second), float(second), RULES)
        seen.append(pace.learned)
    assert seen[0] == pytest.approx(5.25)  # half the way down to the floor, not all at once
    assert seen == sorted(seen, reverse=True)
    assert seen[-1] == pytest.approx(2.5)  # 1.25 x the refused gap


def test_the_refused_gap_is_forgiven_after_quiet() -> None:
    pace = HostPace(learned=2.5, refused_gap=2.0, floor=2.5, last_refusal=0.0)
    pace.accepted(100.0, 100.0, RULES)
    assert (pace.refused_gap, pace.learned) == (2.0, 2.5)
    pace.accepted(RULES.forgive_after, RULES.forgive_after, RULES)
    assert pace.refused_gap == pace.floor == 0.0
    for second in range(40):
        pace.accepted(RULES.forgive_after + second, RULES.forgive_after + second, RULES)
    assert pace.learned == 0.0


def test_jitter_differs_between_hosts_and_is_the_same_everywhere() -> None:
    values = {jitter(f"http://h{n}.test", 1) for n in range(50)}
    assert len(values) == 50 and all(0 <= value <= JITTER for value in values)
    assert jitter("http://h1.test", 1) == jitter("http://h1.test", 1)


# --- the rules against simulated servers ---------------------------------------------------------


def simulate_limiter(period: float, pages: int, retry_after: bool) -> tuple[int, int, float]:
    """A server that accepts one request per `period` (from the last accepted one) and refuses
    any sooner, crawled at the pace the rules give (one request in flight, answers in 10 ms):
    (accepted, refused, seconds from the first accepted to the last)."""
    rules = politeness()
    timing = HostTiming(ORIGIN)
    now, last_accepted, accepted, refused, first = 0.0, -1e9, 0, 0, None
    while accepted < pages:
        now = rules.ready_at(timing, now)
        rules.on_start(timing, now)
        end = now + 0.01
        rules.on_response(timing, now, end, end)
        # In the crawl's order (crawler.crawl.answers): an accepted answer is taken in before
        # the interval runs from it; a refusal after.
        if now - last_accepted >= period:
            last_accepted, accepted = now, accepted + 1
            first = now if first is None else first
            rules.on_success(timing, now, end)
            rules.on_answer(timing, end)
        else:
            rules.on_answer(timing, end)
            refused += 1
            wait = last_accepted + period - now
            rules.on_refusal(timing, now, end, float(round(wait + 0.5)) if retry_after else None)
        now = end
    assert first is not None
    return accepted, refused, last_accepted - first


@pytest.mark.parametrize("retry_after", [False, True])
def test_the_crawl_settles_near_the_rate_a_limiter_allows(retry_after: bool) -> None:
    accepted, refused, span = simulate_limiter(2.0, 31, retry_after)
    assert refused / (accepted + refused) <= 0.10
    assert (accepted - 1) * 2.0 / span >= 0.7  # of the pace it allows


def test_a_one_worker_server_that_slows_under_load_is_never_pushed_into_it() -> None:
    """Answers take 0.2 s, 1 s while the worker was busy over half of the last 5 s."""
    rules = politeness()
    timing = HostTiming(ORIGIN)
    busy: list[tuple[float, float]] = []
    now = 0.0
    slowed = 0
    while now < 120.0:
        now = rules.ready_at(timing, now)
        rules.on_start(timing, now)
        recent = sum(min(end, now) - max(start, now - 5.0) for start, end in busy if end > now - 5)
        service = 1.0 if recent > 2.5 else 0.2
        slowed += service == 1.0
        end = now + service
        busy.append((now, end))
        rules.on_response(timing, now, end, end)
        rules.on_success(timing, now, end)
        rules.on_answer(timing, end)
        now = end
    share = sum(end - start for start, end in busy) / now
    assert share <= 0.25 and slowed == 0
    gaps = [b[0] - a[1] for a, b in itertools.pairwise(busy)]
    assert statistics.median(gaps) == pytest.approx(0.8, rel=0.05)
