"""crawler.politeness: when may the next request to a host start (SPEC section 6).

The core takes `now` as an argument, so every test moves time by passing numbers: nothing sleeps
and no clock is read.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.config import PolitenessConfig
from crawler.politeness import (
    HostRules,
    HostSchedule,
    HostTiming,
    MemoryHostTimingStore,
    Politeness,
    parse_retry_after,
)
from crawler.robots.rates import DAY_SECONDS, RequestRate, TimeWindow
from crawler.robots.txt import RobotsTxt

HOUR = 3600
# An epoch time at midnight UTC (2024-01-01): `MIDNIGHT + 7 * HOUR` is 07:00 UTC that day.
MIDNIGHT = 1_704_067_200
ORIGIN = "http://a.test"


def politeness(**config: float | int | str) -> Politeness:
    return Politeness(PolitenessConfig(**config))  # type: ignore[arg-type]


def window(start_hour: float, end_hour: float) -> TimeWindow:
    return TimeWindow(int(start_hour * HOUR), int(end_hour * HOUR))


def timing(rules: HostRules | None = None, **state: float | int) -> HostTiming:
    return HostTiming(ORIGIN, rules or HostRules(), **state)  # type: ignore[arg-type]


# --- interval ------------------------------------------------------------------------------------

NIGHT_RATE = RequestRate(1, 60.0, window(22, 4))
MORNING_RATE = RequestRate(1, 20.0, window(6, 9))

INTERVAL_CASES = [
    # (id, config, rules, hour of day UTC, interval)
    ("min-delay-only", {"min_delay": 1.5}, HostRules(), 12, 1.5),
    ("zero-min-delay", {"min_delay": 0}, HostRules(), 12, 0.0),
    ("crawl-delay-over-min", {"min_delay": 1}, HostRules(crawl_delay=4), 12, 4.0),
    ("crawl-delay-under-min", {"min_delay": 2}, HostRules(crawl_delay=0.5), 12, 2.0),
    ("crawl-delay-fraction", {"min_delay": 0}, HostRules(crawl_delay=0.25), 12, 0.25),
    (
        "crawl-delay-capped",
        {"min_delay": 1, "max_crawl_delay": 10},
        HostRules(crawl_delay=120),
        12,
        10.0,
    ),
    (
        "crawl-delay-at-cap",
        {"min_delay": 1, "max_crawl_delay": 10},
        HostRules(crawl_delay=10),
        12,
        10.0,
    ),
    ("rate-t-over-n", {"min_delay": 1}, HostRules(request_rates=(RequestRate(10, 60.0),)), 12, 6.0),
    (
        "rate-under-min-delay",
        {"min_delay": 2},
        HostRules(request_rates=(RequestRate(10, 1.0),)),
        12,
        2.0,
    ),
    (
        "rate-beats-crawl-delay",
        {"min_delay": 1},
        HostRules(crawl_delay=3, request_rates=(RequestRate(1, 5.0),)),
        12,
        5.0,
    ),
    (
        "crawl-delay-beats-rate",
        {"min_delay": 1},
        HostRules(crawl_delay=8, request_rates=(RequestRate(1, 5.0),)),
        12,
        8.0,
    ),
    (
        "rate-not-capped-by-max-crawl-delay",
        {"min_delay": 1, "max_crawl_delay": 10},
        HostRules(request_rates=(RequestRate(1, 60.0),)),
        12,
        60.0,
    ),
    ("window-rate-inside", {"min_delay": 1}, HostRules(request_rates=(MORNING_RATE,)), 7, 20.0),
    ("window-rate-outside", {"min_delay": 1}, HostRules(request_rates=(MORNING_RATE,)), 12, 1.0),
    ("window-rate-at-start", {"min_delay": 1}, HostRules(request_rates=(MORNING_RATE,)), 6, 20.0),
    ("window-rate-at-end", {"min_delay": 1}, HostRules(request_rates=(MORNING_RATE,)), 9, 1.0),
    ("wrapping-rate-late", {"min_delay": 1}, HostRules(request_rates=(NIGHT_RATE,)), 23, 60.0),
    ("wrapping-rate-early", {"min_delay": 1}, HostRules(request_rates=(NIGHT_RATE,)), 3, 60.0),
    ("wrapping-rate-noon", {"min_delay": 1}, HostRules(request_rates=(NIGHT_RATE,)), 12, 1.0),
    (
        "slowest-rate-in-force-wins",
        {"min_delay": 1},
        HostRules(request_rates=(RequestRate(1, 5.0), MORNING_RATE, NIGHT_RATE)),
        7,
        20.0,
    ),
    (
        "unwindowed-rate-when-windowed-is-out",
        {"min_delay": 1},
        HostRules(request_rates=(RequestRate(1, 5.0), MORNING_RATE, NIGHT_RATE)),
        12,
        5.0,
    ),
]


@pytest.mark.parametrize(
    ("config", "rules", "hour", "expected"),
    [case[1:] for case in INTERVAL_CASES],
    ids=[case[0] for case in INTERVAL_CASES],
)
def test_interval_is_the_largest_of_min_delay_crawl_delay_and_rate(
    config: dict[str, float], rules: HostRules, hour: float, expected: float
) -> None:
    # Two days later at the same hour: the window is read as a UTC second of the day.
    now = MIDNIGHT + 2 * DAY_SECONDS + hour * HOUR
    assert politeness(**config).interval(rules, now) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("crawl_delay", "over"),
    [(None, False), (5.0, False), (30.0, False), (30.5, True), (3600.0, True)],
)
def test_crawl_delay_over_cap(crawl_delay: float | None, over: bool) -> None:
    rules = HostRules(crawl_delay=crawl_delay)
    assert politeness(max_crawl_delay=30).crawl_delay_over_cap(rules) is over


# --- ready_at ------------------------------------------------------------------------------------

NOON = MIDNIGHT + 12 * HOUR

READY_AT_CASES = [
    # (id, rules, next_start, backoff_until, now, ready_at)
    ("fresh-host-now", HostRules(), 0.0, 0.0, NOON, NOON),
    ("next-start-ahead", HostRules(), NOON + 5, 0.0, NOON, NOON + 5),
    ("next-start-passed", HostRules(), NOON - 5, 0.0, NOON, NOON),
    ("backoff-ahead", HostRules(), NOON + 5, NOON + 60, NOON, NOON + 60),
    ("backoff-behind-next-start", HostRules(), NOON + 60, NOON + 5, NOON, NOON + 60),
    ("backoff-passed", HostRules(), 0.0, NOON - 1, NOON, NOON),
    (
        "inside-window",
        HostRules(visit_windows=(window(10, 14),)),
        0.0,
        0.0,
        NOON,
        NOON,
    ),
    (
        "before-window-opens-today",
        HostRules(visit_windows=(window(14, 16),)),
        0.0,
        0.0,
        NOON,
        MIDNIGHT + 14 * HOUR,
    ),
    (
        "after-window-opens-tomorrow",
        HostRules(visit_windows=(window(6, 8),)),
        0.0,
        0.0,
        NOON,
        MIDNIGHT + DAY_SECONDS + 6 * HOUR,
    ),
    (
        "window-end-is-closed",
        HostRules(visit_windows=(window(6, 12),)),
        0.0,
        0.0,
        NOON,
        MIDNIGHT + DAY_SECONDS + 6 * HOUR,
    ),
    (
        "window-start-is-open",
        HostRules(visit_windows=(window(12, 13),)),
        0.0,
        0.0,
        NOON,
        NOON,
    ),
    (
        "wrapping-window-open-before-midnight",
        HostRules(visit_windows=(window(22, 4),)),
        0.0,
        0.0,
        MIDNIGHT + 23 * HOUR,
        MIDNIGHT + 23 * HOUR,
    ),
    (
        "wrapping-window-open-after-midnight",
        HostRules(visit_windows=(window(22, 4),)),
        0.0,
        0.0,
        MIDNIGHT + 3 * HOUR,
        MIDNIGHT + 3 * HOUR,
    ),
    (
        "wrapping-window-closed-at-noon",
        HostRules(visit_windows=(window(22, 4),)),
        0.0,
        0.0,
        NOON,
        MIDNIGHT + 22 * HOUR,
    ),
    (
        "nearest-of-several-windows",
        HostRules(visit_windows=(window(20, 21), window(15, 16), window(1, 2))),
        0.0,
        0.0,
        NOON,
        MIDNIGHT + 15 * HOUR,
    ),
    (
        "next-start-lands-after-window-closes",
        HostRules(visit_windows=(window(10, 12.5),)),
        NOON + HOUR,
        0.0,
        NOON,
        MIDNIGHT + DAY_SECONDS + 10 * HOUR,
    ),
    (
        "backoff-lands-inside-window",
        HostRules(visit_windows=(window(13, 14),)),
        0.0,
        MIDNIGHT + 13.5 * HOUR,
        NOON,
        MIDNIGHT + 13.5 * HOUR,
    ),
]


@pytest.mark.parametrize(
    ("rules", "next_start", "backoff_until", "now", "expected"),
    [case[1:] for case in READY_AT_CASES],
    ids=[case[0] for case in READY_AT_CASES],
)
def test_ready_at_respects_interval_backoff_and_visit_windows(
    rules: HostRules, next_start: float, backoff_until: float, now: float, expected: float
) -> None:
    host = timing(rules, next_start=next_start, backoff_until=backoff_until)
    assert politeness().ready_at(host, now) == pytest.approx(expected)


def test_ready_at_ignores_requests_in_flight() -> None:
    host = timing(in_flight=5)
    assert politeness().ready_at(host, NOON) == NOON
    assert not politeness().may_start(host)


# --- on_start / on_answer / may_start ------------------------------------------------------------


def test_on_start_reserves_the_interval_and_counts_the_request() -> None:
    polite = politeness(min_delay=2)
    host = timing(HostRules(crawl_delay=5))
    polite.on_start(host, NOON)
    assert host.next_start == NOON + 5
    assert host.in_flight == 1
    assert host.requests == 1
    assert host.last_start == NOON
    assert host.shortest_gap is None
    assert polite.ready_at(host, NOON) == NOON + 5


def test_on_start_records_the_shortest_gap_between_starts() -> None:
    polite = politeness(min_delay=0, per_host_concurrency=4)
    host = timing()
    for start in (NOON, NOON + 3, NOON + 4.5, NOON + 10):
        polite.on_start(host, start)
    assert host.requests == 4
    assert host.shortest_gap == pytest.approx(1.5)
    assert host.last_start == NOON + 10


def test_on_start_never_moves_next_start_back() -> None:
    polite = politeness(min_delay=1)
    host = timing(next_start=NOON + 100)
    polite.on_start(host, NOON)
    assert host.next_start == NOON + 100


@pytest.mark.parametrize(
    ("concurrency", "answer_at", "next_start"),
    [
        # One request at a time: the host gets the full interval after it answered.
        (1, NOON + 3, NOON + 3 + 2),
        (1, NOON + 0.5, NOON + 2),
        # Several at a time: the interval counts from starts only.
        (2, NOON + 3, NOON + 2),
        (4, NOON + 3, NOON + 2),
    ],
)
def test_on_answer_counts_the_interval_from_the_answer_only_with_one_in_flight(
    concurrency: int, answer_at: float, next_start: float
) -> None:
    polite = politeness(min_delay=2, per_host_concurrency=concurrency)
    host = timing()
    polite.on_start(host, NOON)
    polite.on_answer(host, answer_at)
    assert host.in_flight == 0
    assert host.next_start == pytest.approx(next_start)


def test_on_answer_never_drops_in_flight_below_zero() -> None:
    host = timing()
    politeness().on_answer(host, NOON)
    assert host.in_flight == 0


@pytest.mark.parametrize(
    ("concurrency", "in_flight", "may"),
    [
        (1, 0, True),
        (1, 1, False),
        (3, 2, True),
        (3, 3, False),
        (3, 4, False),
    ],
)
def test_may_start_compares_in_flight_with_per_host_concurrency(
    concurrency: int, in_flight: int, may: bool
) -> None:
    host = timing(in_flight=in_flight)
    assert politeness(per_host_concurrency=concurrency).may_start(host) is may


def test_may_start_follows_on_start_and_on_answer() -> None:
    polite = politeness(per_host_concurrency=2)
    host = timing()
    polite.on_start(host, NOON)
    assert polite.may_start(host)
    polite.on_start(host, NOON + 1)
    assert not polite.may_start(host)
    polite.on_answer(host, NOON + 2)
    assert polite.may_start(host)


# --- failures and backoff ------------------------------------------------------------------------


def test_on_failure_doubles_the_backoff_per_consecutive_failure_up_to_the_cap() -> None:
    polite = politeness(backoff_initial=10, backoff_max=70)
    host = timing()
    waits = [polite.on_failure(host, NOON) - NOON for _ in range(6)]
    assert waits == [10, 20, 40, 70, 70, 70]
    assert host.failure_streak == 6


def test_on_failure_returns_and_sets_backoff_until() -> None:
    polite = politeness(backoff_initial=10)
    host = timing()
    until = polite.on_failure(host, NOON)
    assert until == host.backoff_until == NOON + 10
    assert polite.ready_at(host, NOON) == NOON + 10


@pytest.mark.parametrize("retry_after", [0.0, 5.0, 25.0, 3600.0])
def test_on_failure_honours_retry_after_up_to_backoff_max(retry_after: float) -> None:
    polite = politeness(backoff_initial=10, backoff_max=3600)
    host = timing()
    assert polite.on_failure(host, NOON, retry_after) == NOON + retry_after
    assert host.failure_streak == 1


@pytest.mark.parametrize(
    ("header", "until"),
    [
        # Absurdly long, in seconds or as a date: deferred by backoff_max, no more, no overflow.
        ("1000000000000", NOON + 3600),
        ("9" * 400, NOON + 3600),
        ("Fri, 31 Dec 9999 23:59:59 GMT", NOON + 3600),
        # Past (1970), negative, garbage: no wait from the header; the computed backoff holds.
        ("Thu, 01 Jan 1970 00:00:00 GMT", NOON),
        ("-5", NOON + 10),
        ("1e12", NOON + 10),
        ("soon", NOON + 10),
        ("\x00\xff", NOON + 10),
    ],
)
def test_a_hostile_retry_after_is_bounded_by_backoff_max(header: str, until: float) -> None:
    polite = politeness(backoff_initial=10, backoff_max=3600)
    host = timing()
    assert polite.on_failure(host, NOON, parse_retry_after(header, NOON)) == until


def test_on_failure_with_negative_retry_after_falls_back_to_the_computed_backoff() -> None:
    polite = politeness(backoff_initial=10)
    host = timing()
    assert polite.on_failure(host, NOON, -5.0) == NOON + 10


@pytest.mark.parametrize(
    ("retry_after", "until"),
    [
        # A short Retry-After does not cut short a longer backoff already set.
        (1.0, NOON + 100),
        (None, NOON + 100),
        # A longer one extends it.
        (300.0, NOON + 300),
    ],
)
def test_on_failure_never_shortens_an_existing_backoff(
    retry_after: float | None, until: float
) -> None:
    polite = politeness(backoff_initial=10)
    host = timing(backoff_until=NOON + 100)
    assert polite.on_failure(host, NOON, retry_after) == until
    assert host.backoff_until == until


def test_on_success_resets_the_streak_so_backoff_starts_over() -> None:
    polite = politeness(backoff_initial=10, backoff_max=1000)
    host = timing()
    polite.on_failure(host, NOON)
    polite.on_failure(host, NOON)
    polite.on_success(host, NOON, NOON)
    assert host.failure_streak == 0
    later = NOON + 1000
    assert polite.on_failure(host, later) == later + 10


def test_backoff_with_a_huge_streak_stays_at_the_cap() -> None:
    polite = politeness(backoff_initial=10, backoff_max=3600)
    host = timing(failure_streak=10_000)
    assert polite.on_failure(host, NOON) == NOON + 3600


# --- rules_changed -------------------------------------------------------------------------------


def test_rules_changed_applies_the_new_interval_from_the_last_start() -> None:
    polite = politeness(min_delay=1, per_host_concurrency=2)
    host = timing()
    polite.on_start(host, NOON)
    assert host.next_start == NOON + 1
    polite.rules_changed(host, HostRules(crawl_delay=10))
    assert host.rules == HostRules(crawl_delay=10)
    assert host.next_start == NOON + 10


def test_rules_changed_never_shortens_a_reserved_interval() -> None:
    polite = politeness(min_delay=1)
    host = timing(HostRules(crawl_delay=10))
    polite.on_start(host, NOON)
    polite.rules_changed(host, HostRules(crawl_delay=2))
    assert host.next_start == NOON + 10


def test_rules_changed_before_any_request_only_stores_the_rules() -> None:
    host = timing()
    politeness().rules_changed(host, HostRules(crawl_delay=10))
    assert host.next_start == 0.0
    assert host.rules.crawl_delay == 10


@pytest.mark.parametrize(
    ("concurrency", "ready"),
    [
        # One in flight: the full new interval after the host answered (robots.txt's answer).
        (1, NOON + 3 + 5),
        # Several: from the last start only.
        (2, NOON + 5),
    ],
)
def test_rules_learnt_from_an_answer_count_from_that_answer_only_with_one_in_flight(
    concurrency: int, ready: float
) -> None:
    # The crawl's order for robots.txt: start, answer (slot released), then the new rules.
    polite = politeness(min_delay=1, per_host_concurrency=concurrency)
    host = timing()
    polite.on_start(host, NOON)
    polite.on_answer(host, NOON + 3)
    assert host.last_answer == NOON + 3
    polite.rules_changed(host, HostRules(crawl_delay=5))
    assert polite.ready_at(host, NOON + 3) == ready


# --- HostRules from robots.txt -------------------------------------------------------------------

ROBOTS = """\
User-agent: PoliteBot
Disallow: /private
Crawl-delay: 2.5
Request-rate: 1/5
Request-rate: 10/1m 0600-0845
Visit-time: 2200-0400
Visit-time: 06:00 - 08:45

User-agent: *
Disallow: /
Crawl-delay: 9
"""


def test_host_rules_from_robots_for_our_token() -> None:
    rules = HostRules.from_robots(RobotsTxt.parse(ROBOTS), "PoliteBot")
    assert rules == HostRules(
        crawl_delay=2.5,
        request_rates=(RequestRate(1, 5.0), RequestRate(10, 60.0, window(6, 8.75))),
        visit_windows=(window(22, 4), window(6, 8.75)),
    )


def test_host_rules_from_robots_for_another_token_come_from_the_star_group() -> None:
    assert HostRules.from_robots(RobotsTxt.parse(ROBOTS), "OtherBot") == HostRules(crawl_delay=9)


def test_host_rules_from_empty_robots_ask_nothing() -> None:
    assert HostRules.from_robots(RobotsTxt.parse(""), "PoliteBot") == HostRules()


def test_interval_from_parsed_robots_depends_on_the_hour() -> None:
    rules = HostRules.from_robots(RobotsTxt.parse(ROBOTS), "PoliteBot")
    polite = politeness(min_delay=1)
    assert polite.interval(rules, MIDNIGHT + 7 * HOUR) == 6.0  # 10/1m beats Crawl-delay 2.5
    assert polite.interval(rules, NOON) == 5.0  # 1/5 all day


# --- parse_retry_after ---------------------------------------------------------------------------

# 2015-10-21 07:28:00 UTC, the date RFC 9110 uses in its examples.
RFC_DATE = 1_445_412_480.0

RETRY_AFTER_CASES = [
    # (id, header value, now, seconds to wait)
    ("delta", "120", RFC_DATE, 120.0),
    ("delta-zero", "0", RFC_DATE, 0.0),
    ("delta-whitespace", "  30 ", RFC_DATE, 30.0),
    ("date-future", "Wed, 21 Oct 2015 07:28:00 GMT", RFC_DATE - 90, 90.0),
    ("date-now", "Wed, 21 Oct 2015 07:28:00 GMT", RFC_DATE, 0.0),
    ("date-past", "Wed, 21 Oct 2015 07:28:00 GMT", RFC_DATE + 3600, 0.0),
    ("date-rfc850", "Wednesday, 21-Oct-15 07:28:00 GMT", RFC_DATE - 60, 60.0),
    ("date-numeric-zone", "Wed, 21 Oct 2015 09:28:00 +0200", RFC_DATE - 10, 10.0),
    # RFC 9110 section 5.6.7: recipients accept all three forms; asctime has no zone, it is GMT.
    ("date-asctime", "Wed Oct 21 07:28:00 2015", RFC_DATE - 60, 60.0),
    ("none", None, RFC_DATE, None),
    ("empty", "", RFC_DATE, None),
    ("garbage", "soon", RFC_DATE, None),
    ("negative", "-5", RFC_DATE, None),
    ("fraction", "1.5", RFC_DATE, None),
    ("date-without-zone", "Wed, 21 Oct 2015 07:28", RFC_DATE, None),
    ("year-out-of-range", "Mon, 01 Jan 10000 00:00:00 GMT", RFC_DATE, None),
]


@pytest.mark.parametrize(
    ("value", "now", "expected"),
    [case[1:] for case in RETRY_AFTER_CASES],
    ids=[case[0] for case in RETRY_AFTER_CASES],
)
def test_parse_retry_after(value: str | None, now: float, expected: float | None) -> None:
    result = parse_retry_after(value, now)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected)


@pytest.mark.parametrize("value", ["\N{SUPERSCRIPT TWO}", "1\N{SUPERSCRIPT THREE}", "\u0663"])
def test_parse_retry_after_reads_only_ascii_digits(value: str) -> None:
    # str.isdigit() accepts these, float() refuses the first two: never raise, say nothing.
    assert parse_retry_after(value, RFC_DATE) is None


@pytest.mark.parametrize("digits", [20, 400])
def test_parse_retry_after_of_absurd_length_is_long_but_finite(digits: int) -> None:
    # 400 digits overflow float() to inf; 20 make a date no report can print.
    result = parse_retry_after("9" * digits, RFC_DATE)
    assert result is not None
    assert DAY_SECONDS <= result < 1e9


# --- HostSchedule --------------------------------------------------------------------------------


def test_schedule_hands_out_due_hosts_earliest_first() -> None:
    schedule = HostSchedule()
    schedule.put("http://c.test", 30.0)
    schedule.put("http://a.test", 10.0)
    schedule.put("http://b.test", 20.0)
    assert schedule.next_due() == 10.0
    assert schedule.pop_due(25.0) == "http://a.test"
    assert schedule.pop_due(25.0) == "http://b.test"
    assert schedule.pop_due(25.0) is None
    assert schedule.next_due() == 30.0
    assert "http://c.test" in schedule
    assert len(schedule) == 1


def test_schedule_pop_due_returns_only_hosts_due_at_now() -> None:
    schedule = HostSchedule()
    schedule.put(ORIGIN, 10.0)
    assert schedule.pop_due(9.999) is None
    assert ORIGIN in schedule
    assert schedule.pop_due(10.0) == ORIGIN
    assert ORIGIN not in schedule
    assert schedule.pop_due(1e12) is None


def test_schedule_put_replaces_a_hosts_time_and_the_old_entry_is_ignored() -> None:
    schedule = HostSchedule()
    schedule.put(ORIGIN, 10.0)
    schedule.put(ORIGIN, 50.0)
    assert len(schedule) == 1
    assert schedule.pop_due(20.0) is None
    assert schedule.next_due() == 50.0
    assert schedule.pop_due(50.0) == ORIGIN
    assert schedule.pop_due(50.0) is None
    assert schedule.next_due() is None


def test_schedule_put_can_move_a_host_earlier() -> None:
    schedule = HostSchedule()
    schedule.put(ORIGIN, 50.0)
    schedule.put(ORIGIN, 10.0)
    assert schedule.pop_due(10.0) == ORIGIN
    assert schedule.pop_due(50.0) is None


def test_schedule_put_back_to_an_earlier_time_hands_the_host_out_once() -> None:
    schedule = HostSchedule()
    schedule.put(ORIGIN, 10.0)
    schedule.put(ORIGIN, 20.0)
    schedule.put(ORIGIN, 10.0)
    assert schedule.pop_due(100.0) == ORIGIN
    assert schedule.pop_due(100.0) is None
    assert len(schedule) == 0


def test_schedule_discard_forgets_the_host() -> None:
    schedule = HostSchedule()
    schedule.put(ORIGIN, 10.0)
    schedule.put("http://b.test", 20.0)
    schedule.discard(ORIGIN)
    schedule.discard("http://never.test")
    assert ORIGIN not in schedule
    assert schedule.next_due() == 20.0
    assert schedule.pop_due(100.0) == "http://b.test"
    assert schedule.pop_due(100.0) is None


def test_schedule_host_discarded_then_put_again_comes_back() -> None:
    schedule = HostSchedule()
    schedule.put(ORIGIN, 10.0)
    schedule.discard(ORIGIN)
    schedule.put(ORIGIN, 10.0)
    assert schedule.pop_due(10.0) == ORIGIN


def test_schedule_next_due_skips_stale_entries() -> None:
    schedule = HostSchedule()
    schedule.put("http://a.test", 1.0)
    schedule.put("http://b.test", 2.0)
    schedule.put("http://a.test", 5.0)
    schedule.discard("http://b.test")
    assert schedule.next_due() == 5.0


def test_schedule_empty() -> None:
    schedule = HostSchedule()
    assert schedule.next_due() is None
    assert schedule.pop_due(1e12) is None
    assert schedule.waiting() == []
    assert len(schedule) == 0


def test_schedule_waiting_lists_every_host_earliest_first() -> None:
    schedule = HostSchedule()
    schedule.put("http://c.test", 30.0)
    schedule.put("http://a.test", 10.0)
    schedule.put("http://b.test", 99.0)
    schedule.put("http://b.test", 20.0)
    assert schedule.waiting() == [
        ("http://a.test", 10.0),
        ("http://b.test", 20.0),
        ("http://c.test", 30.0),
    ]


def test_schedule_repr_shows_size_and_next_wake_up() -> None:
    schedule = HostSchedule()
    schedule.put(ORIGIN, 10.0)
    assert repr(schedule) == "HostSchedule(1 hosts, next at 10.0)"


# --- timing store --------------------------------------------------------------------------------


def test_memory_timing_store_keeps_one_timing_per_origin() -> None:
    store = MemoryHostTimingStore()
    assert store.get(ORIGIN) is None
    first = timing()
    store.put(first)
    store.put(HostTiming("http://b.test"))
    assert store.get(ORIGIN) is first
    assert len(store) == 2
    assert {t.origin for t in store} == {ORIGIN, "http://b.test"}


def test_host_timing_repr_shows_live_state() -> None:
    host = timing(next_start=12.5, in_flight=1, requests=3)
    text = repr(host)
    assert ORIGIN in text
    assert "next_start=12.500" in text
    assert "in_flight=1" in text
    assert "requests=3" in text


# --- scenario: a host driven by hand -------------------------------------------------------------


@pytest.mark.parametrize("answer_time", [0.0, 0.3, 2.5])
def test_scenario_crawl_delay_and_visit_time_over_a_hundred_requests(answer_time: float) -> None:
    """A host asking Crawl-delay 1 and a 60 s Visit-time window around midnight, driven the way
    the crawl drives it: wait until ready_at, start, answer after `answer_time` seconds."""
    visit = TimeWindow(DAY_SECONDS - 30, 30)  # 23:59:30 - 00:00:30 UTC, wraps midnight
    polite = politeness(min_delay=0.5, max_crawl_delay=30)
    host = timing(HostRules(crawl_delay=1.0, visit_windows=(visit,)))
    now = MIDNIGHT + 12 * HOUR
    starts: list[float] = []
    intervals: list[float] = []
    for _ in range(100):
        assert polite.may_start(host)
        now = polite.ready_at(host, now)
        polite.on_start(host, now)
        starts.append(now)
        intervals.append(polite.interval(host.rules, now))
        now += answer_time
        polite.on_answer(host, now)
    for previous, start, interval in zip(starts, starts[1:], intervals, strict=False):
        assert start - previous >= interval - 1e-9
    assert all(visit.contains(start % DAY_SECONDS) for start in starts)
    assert host.requests == 100
    assert host.shortest_gap is not None
    assert host.shortest_gap >= 1.0 - 1e-9
    # Each window holds 60 s: several windows, on several days, were needed.
    assert starts[-1] - starts[0] > DAY_SECONDS


def test_scenario_backoff_then_recovery() -> None:
    """429s back the host off in doubling steps; the first success resets the streak and the
    interval takes over again."""
    polite = politeness(min_delay=1, backoff_initial=10, backoff_max=100)
    host = timing()
    now = NOON
    starts = []
    for outcome in ["429", "429", "429", "ok", "ok", "429"]:
        now = polite.ready_at(host, now)
        polite.on_start(host, now)
        starts.append(now)
        now += 0.1
        polite.on_answer(host, now)
        if outcome == "ok":
            polite.on_success(host, now - 0.1, now)
        else:
            polite.on_failure(host, now)
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(starts)]
    assert gaps == [10.1, 20.1, 40.1, 1.1, 1.1]
    assert host.backoff_until == pytest.approx(now + 10)


WINDOWS = st.tuples(st.integers(0, 1439), st.integers(0, 1439)).filter(lambda t: t[0] != t[1])
RATES = st.builds(
    RequestRate,
    st.integers(1, 10),
    st.floats(1, 600),
    st.one_of(st.none(), WINDOWS.map(lambda t: TimeWindow(t[0] * 60, t[1] * 60))),
)


@given(
    min_delay=st.floats(0, 5),
    crawl_delay=st.one_of(st.none(), st.floats(0, 100)),
    windows=st.lists(WINDOWS.map(lambda t: TimeWindow(t[0] * 60, t[1] * 60)), max_size=3),
    rates=st.lists(RATES, max_size=3),
    answer_times=st.lists(st.floats(0, 10), min_size=1, max_size=30),
    start=st.floats(0, 3 * DAY_SECONDS),
)
def test_driven_host_keeps_intervals_and_windows_whatever_the_rules(
    min_delay: float,
    crawl_delay: float | None,
    windows: list[TimeWindow],
    rates: list[RequestRate],
    answer_times: list[float],
    start: float,
) -> None:
    polite = politeness(min_delay=min_delay, max_crawl_delay=30)
    host = timing(HostRules(crawl_delay, tuple(rates), tuple(windows)))
    now = MIDNIGHT + start
    previous: tuple[float, float] | None = None
    for answer_time in answer_times:
        now = polite.ready_at(host, now)
        if windows:
            assert any(window.contains(now % DAY_SECONDS) for window in windows)
        if previous is not None:
            last_start, interval = previous
            assert now - last_start >= interval - 1e-6
        polite.on_start(host, now)
        previous = (now, polite.interval(host.rules, now))
        now += answer_time
        polite.on_answer(host, now)
        # One in flight: the host also gets the full interval after its answer.
        assert polite.ready_at(host, now) - now >= polite.interval(host.rules, now) - 1e-6


# --- a new run meets a host's timing ----------------------------------------------------------


def test_after_a_clean_end_the_timing_stands_as_left() -> None:
    left = timing(HostRules(crawl_delay=5), next_start=1003.0, last_start=1000.0, in_flight=1)
    politeness(min_delay=1).resumed(left, 2000.0, clean=True, rules_known=True)
    assert (left.next_start, left.in_flight) == (1003.0, 0)


def test_after_a_kill_the_first_start_waits_an_interval_from_the_new_run() -> None:
    left = timing(HostRules(crawl_delay=5), next_start=1005.0, last_start=1000.0, in_flight=1)
    politeness(min_delay=1).resumed(left, 1001.0, clean=False, rules_known=True)
    assert (left.next_start, left.in_flight) == (1006.0, 0)
    later = timing(HostRules(crawl_delay=5), next_start=900.0, last_start=895.0)
    politeness(min_delay=1).resumed(later, 5000.0, clean=False, rules_known=True)
    assert later.next_start == 5005.0


def test_after_a_kill_with_the_robots_answer_lost_the_longest_interval_holds() -> None:
    left = timing(last_start=1000.0, next_start=1001.0)
    politeness(min_delay=1, max_crawl_delay=30).resumed(
        left, 1002.0, clean=False, rules_known=False
    )
    assert left.next_start == 1032.0


def test_a_host_never_asked_needs_no_wait_after_a_kill() -> None:
    fresh = timing()
    politeness(min_delay=1).resumed(fresh, 1000.0, clean=False, rules_known=False)
    assert fresh.next_start == 0.0
