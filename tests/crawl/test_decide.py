"""crawler.crawl.decide: what a URL found, an answer, a failure and a redirect lead to, as tables.
No server, no event loop: values in, a decision out."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from crawler.config import LimitsConfig
from crawler.crawl.decide import (
    AskAgain,
    Failed,
    GiveUp,
    Hop,
    Read,
    Redirect,
    Stop,
    after_failure,
    after_refusal,
    change_of,
    conditional_headers,
    found_by,
    gives_up,
    judge,
    long_url_name,
    out_of_bounds,
    redirect_hop,
    robots_skip,
)
from crawler.crawl.scope import Scope
from crawler.frontier import Earlier, QueuedUrl
from crawler.http.answer import FetchFailure, Response
from crawler.output.records import PageRecord, Skip
from crawler.robots.entry import RobotsEntry
from crawler.robots.txt import RobotsTxt

NOW = 1_700_000_000.0
SITE = "https://example.org"


def http_date(epoch: float) -> str:
    return format_datetime(datetime.fromtimestamp(epoch, UTC), usegmt=True)


def answer(status: int, **headers: str) -> Response:
    return Response(
        url=f"{SITE}/page",
        status=status,
        headers=CIMultiDictProxy(CIMultiDict(headers)),
        content_type="text/html",
        charset=None,
        body=b"",
    )


# --- judge: what an answer to a page request leads to ---------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (answer(200), Read()),
        (answer(404), Read()),
        (answer(410), Read()),
        (answer(501), Read()),
        (answer(204), Read()),
        (answer(301, Location="/moved"), Redirect("/moved")),
        (answer(308, Location="https://other.example/"), Redirect("https://other.example/")),
        (answer(302), Read()),  # a redirect without Location is the page's answer
        (answer(302, Location=""), Read()),
        (answer(304, Location="/x"), Redirect("/x")),
        (answer(408), Failed("status 408", 408, None)),
        (answer(500), Failed("status 500", 500, None)),
        (answer(502), Failed("status 502", 502, None)),
        (answer(504), Failed("status 504", 504, None)),
        (answer(503), Failed("status 503", 503, None)),
        (answer(503, **{"Retry-After": "120"}), Failed("status 503", 503, 120.0)),
        (answer(429, **{"Retry-After": "7"}), Failed("status 429", 429, 7.0)),
        (answer(429, **{"Retry-After": "soon"}), Failed("status 429", 429, None)),
        # Retry-After counts only where the status asks us to come back later.
        (answer(500, **{"Retry-After": "120"}), Failed("status 500", 500, None)),
        (
            answer(
                429,
                **{
                    "Retry-After": format_datetime(
                        datetime.fromtimestamp(NOW + 60, UTC), usegmt=True
                    )
                },
            ),
            Failed("status 429", 429, 60.0),
        ),
        (
            FetchFailure(f"{SITE}/page", "timeout", "no data for 30 s"),
            Failed("timeout: no data for 30 s", None, None),
        ),
        (
            FetchFailure(f"{SITE}/page", "dns", "cannot resolve example.org"),
            Failed("dns: cannot resolve example.org", None, None),
        ),
        # The proxy's 407: no page, and no retry mends the config.
        (
            answer(407),
            Failed(
                "status 407: the proxy asks for credentials (fetch.proxy_username, "
                "fetch.proxy_password_env)",
                407,
                None,
                final=True,
            ),
        ),
        # A kept-alive connection closed as the request came: asked again, without a backoff.
        (
            FetchFailure(f"{SITE}/page", "closed", "closed without an answer"),
            Failed("closed: closed without an answer", None, 0.0),
        ),
    ],
)
def test_judge(given: Response | FetchFailure, expected: Failed | Redirect | Read) -> None:
    assert judge(given, NOW) == expected


# --- after_failure: ask again, or give up -------------------------------------------------------


@pytest.mark.parametrize(
    ("attempts", "max_retries", "expected"),
    [
        (0, 3, AskAgain(QueuedUrl(f"{SITE}/a", 2, attempts=1))),
        (2, 3, AskAgain(QueuedUrl(f"{SITE}/a", 2, attempts=3))),
        (3, 3, GiveUp("status 502 (4 tries)")),
        (0, 0, GiveUp("status 502 (1 tries)")),
    ],
)
def test_after_failure(attempts: int, max_retries: int, expected: AskAgain | GiveUp) -> None:
    item = QueuedUrl(f"{SITE}/a", 2, attempts=attempts)
    assert after_failure(item, Failed("status 502", 502), max_retries) == expected


@pytest.mark.parametrize(
    ("status", "streak", "expected"),
    [
        (429, 1, "again"),
        (503, 10, "again"),
        (429, 11, None),  # past politeness.max_refusals: a failure like any
        (502, 1, None),  # no refusal
        (None, 1, None),  # no answer
    ],
)
def test_after_refusal(status: int | None, streak: int, expected: str | None) -> None:
    item = QueuedUrl(f"{SITE}/a", 2, attempts=1)
    fate = after_refusal(item, Failed(f"status {status}", status), streak, 10)
    # Asked again as it was: its retries unspent.
    assert fate == (AskAgain(item) if expected else None)


def test_a_refused_url_given_up_says_it_was_throttled() -> None:
    item = QueuedUrl(f"{SITE}/a", 2, attempts=3)
    assert after_failure(item, Failed("status 429", 429), 3) == GiveUp(
        "status 429, throttled (4 tries)"
    )


# --- redirect_hop: where a redirect goes ---------------------------------------------------------

SCOPE = Scope.for_seeds((f"{SITE}/",), deny=(r"/private/",))
START = QueuedUrl(f"{SITE}/start", 1)
FROM_START = f"redirect from {SITE}/start"
HOP_LIMITS: dict[str, Any] = {"max_redirects": 5, "limits": LimitsConfig()}
HOPPED = QueuedUrl(f"{SITE}/b", 1, (f"{SITE}/start", f"{SITE}/a"), redirect_status=302)


@pytest.mark.parametrize(
    ("item", "location", "seen", "max_redirects", "expected"),
    [
        (START, "/next", (), 5, Hop(QueuedUrl(f"{SITE}/next", 1, (f"{SITE}/start",), 0, 301))),
        # The chain grows hop by hop; the depth is the source's.
        (
            HOPPED,
            "c?x=1#frag",
            (),
            5,
            Hop(QueuedUrl(f"{SITE}/c?x=1", 1, (f"{SITE}/start", f"{SITE}/a", f"{SITE}/b"), 0, 301)),
        ),
        (HOPPED, "/c", (), 2, Stop("more than fetch.max_redirects (2) redirects")),
        (START, "/next", (), 0, Stop("more than fetch.max_redirects (0) redirects")),
        (
            START,
            "https://elsewhere.example/",
            (),
            5,
            Stop(
                "redirect to https://elsewhere.example/ not followed: out of scope: host",
                Skip(
                    "https://elsewhere.example/",
                    "out of scope: host",
                    f"redirect from {SITE}/start",
                ),
            ),
        ),
        (
            START,
            "/private/x",
            (),
            5,
            Stop(
                f"redirect to {SITE}/private/x not followed: out of scope: deny pattern",
                Skip(
                    f"{SITE}/private/x", "out of scope: deny pattern", f"redirect from {SITE}/start"
                ),
            ),
        ),
        # Met before (a link, another redirect): its skip, if any, was counted then.
        (
            START,
            "https://elsewhere.example/",
            ("https://elsewhere.example/",),
            5,
            Stop("redirect to https://elsewhere.example/ not followed: out of scope: host"),
        ),
        (START, "/old", (f"{SITE}/old",), 5, Stop(f"redirect to {SITE}/old, a URL already seen")),
        (START, "http://[::1", (), 5, Stop("redirect to an unusable URL (invalid IPv6 address)")),
    ],
)
def test_redirect_hop(
    item: QueuedUrl, location: str, seen: tuple[str, ...], max_redirects: int, expected: Hop | Stop
) -> None:
    fate = redirect_hop(
        item,
        301,
        location,
        scope=SCOPE,
        seen=set(seen),
        max_redirects=max_redirects,
        limits=LimitsConfig(),
    )
    if isinstance(expected, Stop) and expected.error.startswith("redirect to an unusable URL"):
        assert isinstance(fate, Stop) and fate.error.startswith("redirect to an unusable URL")
        assert fate.skip is None
        return
    assert fate == expected


@pytest.mark.parametrize(
    ("scope", "location", "from_seed", "expected"),
    [
        # A seed's chain takes a host out of scope along: it joins the seeds' hosts.
        (SCOPE, "https://www.example.org/", True, "moved"),
        (SCOPE, "https://www.example.org/", False, "out of scope: host"),
        # Patterns still hold for the new host, as for a seed's.
        (SCOPE, "https://www.example.org/private/", True, "out of scope: deny pattern"),
        # Without seed hosts in scope (scope.seed_hosts false) a seed's host gains nothing.
        (
            Scope.for_seeds((f"{SITE}/",), seed_hosts=False, allow_domains=("example.org",)),
            "https://other.example/",
            True,
            "out of scope: host",
        ),
    ],
)
def test_a_seeds_redirect_takes_its_host_into_scope(
    scope: Scope, location: str, from_seed: bool, expected: str
) -> None:
    fate = redirect_hop(
        START, 301, location, scope=scope, seen=set(), **HOP_LIMITS, from_seed=from_seed
    )
    if expected == "moved":
        assert isinstance(fate, Hop) and fate.seed_moved
        assert fate.item == QueuedUrl(location, 1, (f"{SITE}/start",), 0, 301)
    else:
        assert isinstance(fate, Stop) and fate.skip is not None
        assert fate.skip.reason == expected


def test_a_hop_keeps_the_status_that_led_to_it() -> None:
    fate = redirect_hop(START, 307, "/t", scope=SCOPE, seen=set(), **HOP_LIMITS)
    assert isinstance(fate, Hop) and fate.item.redirect_status == 307


# --- out_of_bounds and robots_skip: admitting a URL found ---------------------------------------


@pytest.mark.parametrize(
    ("url", "depth", "max_depth", "expected"),
    [
        (f"{SITE}/a", 0, None, None),
        (f"{SITE}/a", 3, 3, None),
        (f"{SITE}/a", 4, 3, "over limits.max_depth"),
        ("https://other.example/a", 0, None, "out of scope: host"),
        # Scope is asked first: a URL out of scope is never counted as too deep.
        ("https://other.example/a", 9, 3, "out of scope: host"),
        (f"{SITE}/private/a", 0, None, "out of scope: deny pattern"),
        ("http://example.org:8080/a", 0, None, None),  # the seeds' hosts, any scheme and port
        (f"{SITE}/photo.JPG", 0, None, "not HTML by its extension"),
        (f"{SITE}/files/a.tar.gz?v=2", 0, None, "not HTML by its extension"),
        (f"{SITE}/page.html", 0, None, None),
        (f"{SITE}/jpg/", 0, None, None),
        ("https://other.example/photo.jpg", 0, None, "out of scope: host"),
    ],
)
def test_out_of_bounds(url: str, depth: int, max_depth: int | None, expected: str | None) -> None:
    scope = Scope.for_seeds((f"{SITE}/",), deny=(r"/private/",), skip_extensions=("jpg", ".TAR.GZ"))
    limits = LimitsConfig(max_depth=max_depth)
    assert out_of_bounds(url, depth, scope=scope, limits=limits) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"{SITE}/a/a/", None),
        (f"{SITE}/a/a/a/", "over limits.max_path_repeats"),
        (f"{SITE}/x/y/x/y/", None),
        (f"{SITE}/x/y/x/y/x/y", "over limits.max_path_repeats"),
        (f"{SITE}/p/a/b/c/a/b/c/a/b/c/", "over limits.max_path_repeats"),
        (f"{SITE}/2024/01/01/post?x=/a/a/a/a", None),  # the query is no path
        (f"{SITE}/" + "/".join(f"s{n}" for n in range(30)), None),
        (f"{SITE}/" + "/".join(f"s{n}" for n in range(31)), "over limits.max_path_segments"),
        # Scope is asked first.
        ("https://other.example/a/a/a/", "out of scope: host"),
    ],
)
def test_out_of_bounds_finds_the_shapes_of_traps(url: str, expected: str | None) -> None:
    scope = Scope.for_seeds((f"{SITE}/",))
    assert out_of_bounds(url, 0, scope=scope, limits=LimitsConfig()) == expected


def test_a_redirect_to_a_url_too_long_stops_with_a_skip_under_a_short_name() -> None:
    target = f"{SITE}/" + "x" * 3000
    fate = redirect_hop(START, 302, target, scope=SCOPE, seen=set(), **HOP_LIMITS)
    assert isinstance(fate, Stop) and fate.skip is not None
    assert fate.skip.reason == "over limits.max_url_length"
    assert fate.skip.url == long_url_name(target) and len(fate.skip.url) < 300
    assert fate.skip.detail == f"{len(target)} characters; limits.max_url_length is 2083"
    again = redirect_hop(START, 302, target, scope=SCOPE, seen={fate.skip.url}, **HOP_LIMITS)
    assert isinstance(again, Stop) and again.skip is None  # met before: no second skip


def entry(robots: RobotsTxt, *, unreachable: bool = False, stale: bool = False) -> RobotsEntry:
    return RobotsEntry(SITE, robots, NOW, NOW + 60, "status 200", unreachable, 0, stale)


RULES = RobotsTxt.parse("User-agent: *\nDisallow: /private\nAllow: /private/open\n")


@pytest.mark.parametrize(
    ("known", "url", "expected"),
    [
        (None, f"{SITE}/private/x", None),  # not known yet: checked again before the fetch
        (entry(RULES), f"{SITE}/public", None),
        (entry(RULES), f"{SITE}/private/open/1", None),
        (
            entry(RULES),
            f"{SITE}/private/x",
            Skip(f"{SITE}/private/x", "disallowed by robots.txt", "line 2: 'Disallow: /private'"),
        ),
        # Unreachable, no earlier copy: nothing decided yet.
        (entry(RobotsTxt.disallow_all("unreachable"), unreachable=True), f"{SITE}/a", None),
        # Unreachable, the earlier copy stands.
        (
            entry(RULES, unreachable=True, stale=True),
            f"{SITE}/private/x",
            Skip(f"{SITE}/private/x", "disallowed by robots.txt", "line 2: 'Disallow: /private'"),
        ),
    ],
)
def test_robots_skip(known: RobotsEntry | None, url: str, expected: Skip | None) -> None:
    skip = robots_skip(known, url, "PoliteBot")
    if expected is None:
        assert skip is None
        return
    assert skip is not None
    assert (skip.url, skip.reason) == (expected.url, expected.reason)
    assert skip.detail == RULES.explain(url, "PoliteBot").message


# --- gives_up: when an origin whose robots.txt cannot be had is given up ----------------------


def unreachable(error: str, failures: int, retry_at: float) -> RobotsEntry:
    robots = RobotsTxt.disallow_all("unreachable")
    entry = RobotsEntry(SITE, robots, NOW, NOW + retry_at, "unreachable", True, failures)
    return replace(entry, error=error)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        # A name that does not resolve, a certificate that fails: the second try is the last.
        (unreachable("dns", 1, 60), False),
        (unreachable("dns", 2, 180), True),
        (unreachable("tls", 2, 180), True),
        # Anything a wait may mend: until the next try would come past the bound.
        (unreachable("connection", 5, 800), False),
        (unreachable("connection", 6, 901), True),
        (unreachable("timeout", 9, 899), False),
        (unreachable("status 503", 2, 1000), True),
    ],
)
def test_gives_up(entry: RobotsEntry, expected: bool) -> None:
    assert gives_up(entry, NOW, 900.0) is expected


def test_a_blocked_address_is_given_up_at_once_and_its_host_too() -> None:
    blocked = FetchFailure(f"{SITE}/page", "blocked", "127.0.0.1: loopback address")
    failed = judge(blocked, NOW)
    assert isinstance(failed, Failed) and failed.final
    fate = after_failure(START, failed, max_retries=3)
    assert isinstance(fate, GiveUp) and fate.error.endswith("(1 tries)")
    entry = RobotsEntry(SITE, RobotsTxt.disallow_all("x"), NOW, NOW + 1, "x", True, 1, False)
    assert gives_up(replace(entry, error="blocked"), NOW, 3600.0)


# --- recrawls ------------------------------------------------------------------------------------

BEFORE = Earlier(NOW - 86_400, 200, '"v1"', "Tue, 03 Nov 2026 10:00:00 GMT", "d1")


@pytest.mark.parametrize(
    ("earlier", "status", "digest", "change"),
    [
        (None, 200, "d1", "new"),
        (None, None, None, "new"),  # a first fetch that failed: new all the same
        (BEFORE, 304, None, "unchanged"),
        (BEFORE, 200, "d1", "unchanged"),  # served again as it was, validators or not
        (BEFORE, 200, "d2", "changed"),
        (BEFORE, 301, None, "changed"),  # it redirects now
        (BEFORE, 404, None, "gone"),
        (BEFORE, 410, None, "gone"),
        (replace(BEFORE, status=404, digest=None), 410, None, "unchanged"),  # gone already
        (replace(BEFORE, status=404, digest=None), 200, "d3", "changed"),  # back
        (BEFORE, None, None, "failed"),  # no answer: what was there stays
    ],
)
def test_what_a_fetch_found_against_the_last(
    earlier: Earlier | None, status: int | None, digest: str | None, change: str
) -> None:
    assert change_of(earlier, status, digest) == change


def test_a_recrawl_sends_the_validators_the_last_answer_gave() -> None:
    assert conditional_headers(None) == ()
    assert conditional_headers(BEFORE) == (
        ("If-None-Match", '"v1"'),
        ("If-Modified-Since", "Tue, 03 Nov 2026 10:00:00 GMT"),
    )
    assert conditional_headers(replace(BEFORE, etag=None)) == (
        ("If-Modified-Since", "Tue, 03 Nov 2026 10:00:00 GMT"),
    )


def page_record(**fields: Any) -> PageRecord:
    base: dict[str, Any] = {
        "url": f"{SITE}/a",
        "final_url": f"{SITE}/a",
        "status": 200,
        "fetched_at": NOW,
        "depth": 1,
    }
    return PageRecord(**{**base, **fields})


def test_what_a_recrawl_keeps_of_a_fetch() -> None:
    fresh = page_record(etag='"v2"', last_modified="Wed", digest="d2", change="changed")
    assert found_by(fresh, BEFORE) == Earlier(NOW, 200, '"v2"', "Wed", "d2")
    # A 304 has no body: the digest and status of the last full answer stay; validators freshen.
    not_modified = page_record(status=304, etag='"v1b"', change="unchanged")
    assert found_by(not_modified, BEFORE) == Earlier(
        NOW, 200, '"v1b"', BEFORE.last_modified, BEFORE.digest
    )
    # No answer: what the last fetch found stays whole, its time too (so it stays due).
    assert found_by(page_record(status=None, change="failed"), BEFORE) == BEFORE
    # A redirect chain's last hop's validators are not for its first URL.
    hop = page_record(redirects=(f"{SITE}/old",), etag='"x"', digest="d9", change="new")
    assert found_by(hop, None) == Earlier(NOW, 200, None, None, "d9")
