"""What `crawl` says above its live line when hosts fail: each named once at its first failure, with
what failed and how long the crawl keeps trying; past the first few, counted (pure)."""

from __future__ import annotations

import calendar

from crawler.cli.notices import COUNT_EVERY, NAMED, FailureNotices, unreachable_notice
from crawler.stats import UnreachableHost

NOW = float(calendar.timegm((2026, 11, 27, 20, 0, 0)))
REFUSED = "unreachable: connection: cannot connect to 127.0.1.9:8: [Errno 111] Connection refused"


def failing(origin: str, reason: str = REFUSED, *, give_up_after: float = 300.0) -> UnreachableHost:
    return UnreachableHost(origin, reason, NOW, NOW + 60, NOW + give_up_after, 1)


def test_a_refused_host_is_named_with_what_failed_and_until_when_it_is_tried() -> None:
    notice = unreachable_notice(failing("http://127.0.1.9:8"), NOW)
    assert notice == (
        "crawl: http://127.0.1.9:8/robots.txt: connection: cannot connect to 127.0.1.9:8: "
        "[Errno 111] Connection refused. Its URLs wait: the crawl tries again in 60 s, and gives "
        "the host up by 20:05:00 UTC if it still fails (robots.give_up_after 5 min)"
    )


def test_a_failure_no_wait_mends_is_tried_once_more() -> None:
    host = UnreachableHost(
        "https://gone.test", "unreachable: dns: no address", NOW, NOW + 60, NOW + 60, 1
    )
    assert unreachable_notice(host, NOW + 15).endswith(
        "Its URLs wait: the crawl tries once more in 45 s, and gives the host up if it still fails"
    )


def test_each_host_is_told_of_once() -> None:
    notices = FailureNotices()
    hosts = {"http://a.test": failing("http://a.test")}
    assert len(notices.lines(hosts, NOW)) == 1
    assert notices.lines(hosts, NOW + 1) == []
    hosts["http://b.test"] = failing("http://b.test", "status 503")
    [line] = notices.lines(hosts, NOW + 2)
    assert line.startswith("crawl: http://b.test/robots.txt: status 503.")


def test_a_thousand_dead_hosts_make_a_few_lines_that_count_the_rest() -> None:
    notices = FailureNotices()
    hosts = {f"http://h{n}.test": failing(f"http://h{n}.test") for n in range(700)}
    hosts.update(
        {
            f"http://t{n}.test": failing(f"http://t{n}.test", "unreachable: timeout")
            for n in range(300)
        }
    )
    lines = notices.lines(hosts, NOW)
    assert len(lines) == NAMED + 1
    assert lines[-1].startswith(
        f"crawl: {1000 - NAMED} more hosts whose robots.txt cannot be had (connection "
        f"{700 - NAMED}, timeout 300)"
    )
    # More fail: counted again only once COUNT_EVERY has passed, and then only the new ones.
    hosts.update({f"http://n{n}.test": failing(f"http://n{n}.test") for n in range(50)})
    assert notices.lines(hosts, NOW + COUNT_EVERY / 2) == []
    [count] = notices.lines(hosts, NOW + COUNT_EVERY)
    assert count.startswith("crawl: 50 more hosts whose robots.txt cannot be had (connection 50)")
    assert notices.lines(hosts, NOW + 10 * COUNT_EVERY) == []
