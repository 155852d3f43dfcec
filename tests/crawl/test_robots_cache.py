"""The robots.txt cache: one fetch per origin shared by every caller, the outcome policy, TTL and
the last good copy. Driven by a handler function in place of the network, and a clock the test
moves by assignment."""

from __future__ import annotations

import asyncio

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from crawler.config import RobotsConfig
from crawler.crawl.robots_cache import RobotsCache
from crawler.http.answer import FetchFailure, Response

ORIGIN = "http://a.test"
Answer = tuple[int, str, dict[str, str]] | FetchFailure


class FakeWeb:
    """Answers per URL, in order (the last repeats); counts requests; a clock set by hand."""

    def __init__(self, answers: dict[str, list[Answer]]) -> None:
        self.answers = answers
        self.requests: list[str] = []
        self.now = 1_000.0
        self.delay = 0.0

    async def get(self, url: str, max_bytes: int) -> Response | FetchFailure:
        self.requests.append(url)
        if self.delay:
            await asyncio.sleep(self.delay)
        queue = self.answers[url]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, FetchFailure):
            return answer
        status, body, headers = answer
        return Response(
            url=url,
            status=status,
            headers=CIMultiDictProxy(CIMultiDict(headers)),
            content_type="text/plain",
            charset=None,
            body=body.encode()[:max_bytes],
        )

    def cache(self, **config: object) -> RobotsCache:
        settings = RobotsConfig(cache_ttl=100.0, retry_initial=10.0, retry_max=40.0)
        for key, value in config.items():
            settings = RobotsConfig(**{**_fields(settings), key: value})
        return RobotsCache(settings, self.get, clock=lambda: self.now)


def _fields(config: RobotsConfig) -> dict[str, object]:
    return {name: getattr(config, name) for name in config.__dataclass_fields__}


def ok(body: str) -> Answer:
    return (200, body, {})


async def test_concurrent_callers_share_one_fetch() -> None:
    web = FakeWeb({ORIGIN + "/robots.txt": [ok("User-agent: *\nDisallow: /x\n")]})
    web.delay = 0.01
    cache = web.cache()
    entries = await asyncio.gather(*(cache.get(ORIGIN) for _ in range(20)))
    assert web.requests == [ORIGIN + "/robots.txt"]
    assert all(entry is entries[0] for entry in entries)
    assert not entries[0].robots.can_fetch(ORIGIN + "/x", "PoliteBot")


async def test_a_fresh_copy_is_reused_and_an_expired_one_fetched_again() -> None:
    web = FakeWeb({ORIGIN + "/robots.txt": [ok("User-agent: *\nDisallow: /a\n"), ok("")]})
    cache = web.cache()
    first = await cache.get(ORIGIN)
    web.now += 99
    assert await cache.get(ORIGIN) is first
    assert cache.cached(ORIGIN, web.now) is first
    web.now += 2
    assert cache.cached(ORIGIN, web.now) is None
    second = await cache.get(ORIGIN)
    assert len(web.requests) == 2 and second.robots.can_fetch(ORIGIN + "/a", "PoliteBot")


async def test_unreachable_disallows_all_and_retries_with_doubling_backoff() -> None:
    failure = FetchFailure(ORIGIN + "/robots.txt", "timeout", "read timed out")
    web = FakeWeb({ORIGIN + "/robots.txt": [(503, "", {}), failure, (500, "", {}), ok("")]})
    cache = web.cache()
    waits, reasons = [], []
    for _ in range(3):
        entry = await cache.get(ORIGIN)
        assert entry.unreachable and entry.blocks
        assert not entry.robots.can_fetch(ORIGIN + "/", "PoliteBot")
        waits.append(entry.expires_at - web.now)
        reasons.append(entry.reason)
        web.now = entry.expires_at
    assert waits == [10.0, 20.0, 40.0]
    assert reasons == [
        "status 503: unreachable",
        "unreachable: timeout: read timed out",
        "status 500: unreachable",
    ]
    entry = await cache.get(ORIGIN)
    assert not entry.unreachable and entry.robots.can_fetch(ORIGIN + "/", "PoliteBot")


async def test_the_last_good_copy_stands_while_the_origin_is_unreachable() -> None:
    web = FakeWeb({ORIGIN + "/robots.txt": [ok("User-agent: *\nDisallow: /a\n"), (503, "", {})]})
    cache = web.cache()
    good = await cache.get(ORIGIN)
    web.now += 101
    entry = await cache.get(ORIGIN)
    assert entry.unreachable and entry.stale and not entry.blocks
    assert entry.robots is good.robots
    assert entry.expires_at == web.now + 10.0
    assert "using the copy fetched earlier" in entry.reason


@pytest.mark.parametrize(
    ("status", "auth_disallows", "allowed"),
    [(404, False, True), (401, False, True), (403, True, False), (418, True, True)],
)
async def test_4xx_is_unavailable_unless_auth_disallows(
    status: int, auth_disallows: bool, allowed: bool
) -> None:
    web = FakeWeb({ORIGIN + "/robots.txt": [(status, "User-agent: *\nDisallow: /\n", {})]})
    entry = await web.cache(auth_disallows=auth_disallows).get(ORIGIN)
    assert entry.robots.can_fetch(ORIGIN + "/page", "PoliteBot") is allowed
    assert not entry.unreachable


async def test_redirects_are_followed_and_the_rules_kept_for_the_origin_asked() -> None:
    web = FakeWeb(
        {
            ORIGIN + "/robots.txt": [(301, "", {"Location": "http://b.test/r"})],
            "http://b.test/r": [(302, "", {"Location": "/real.txt"})],
            "http://b.test/real.txt": [ok("User-agent: *\nDisallow: /b\n")],
        }
    )
    cache = web.cache()
    entry = await cache.get(ORIGIN)
    assert entry.origin == ORIGIN
    assert entry.hops == (ORIGIN + "/robots.txt", "http://b.test/r", "http://b.test/real.txt")
    assert not entry.robots.can_fetch(ORIGIN + "/b", "PoliteBot")
    assert cache.cached("http://b.test", web.now) is None


async def test_more_than_five_redirects_or_a_bad_location_means_unavailable() -> None:
    answers: dict[str, list[Answer]] = {
        f"{ORIGIN}/r{n}": [(302, "", {"Location": f"/r{n + 1}"})] for n in range(10)
    }
    answers[ORIGIN + "/robots.txt"] = [(302, "", {"Location": "/r0"})]
    web = FakeWeb(answers)
    entry = await web.cache().get(ORIGIN)
    assert len(web.requests) == 6 and entry.robots.can_fetch(ORIGIN + "/x", "PoliteBot")
    assert "more than 5 redirects" in entry.reason
    web = FakeWeb({ORIGIN + "/robots.txt": [(302, "", {"Location": "mailto:x@y.org"})]})
    entry = await web.cache().get(ORIGIN)
    assert entry.robots.can_fetch(ORIGIN + "/x", "PoliteBot") and "Location" in entry.reason


async def test_legacy_options_reach_the_parser() -> None:
    body = "User-agent: *\nDisallow: /tmp /spool\n"
    web = FakeWeb({ORIGIN + "/robots.txt": [ok(body)]})
    entry = await web.cache(split_values=True).get(ORIGIN)
    assert not entry.robots.can_fetch(ORIGIN + "/spool/x", "PoliteBot")


TDMREP = ORIGIN + "/.well-known/tdmrep.json"


def tdmrep_cache(web: FakeWeb) -> RobotsCache:
    settings = RobotsConfig(cache_ttl=100.0, retry_initial=10.0, retry_max=40.0)
    return RobotsCache(settings, web.get, clock=lambda: web.now, tdmrep_token="PoliteBot")


@pytest.mark.parametrize(
    ("answers", "reason", "requests"),
    [
        ([ok('[{"location": "/", "tdm-reservation": 1}]')], "status 200", 1),
        ([(404, "", {})], "status 404: no file", 1),
        ([(503, "", {})], "status 503: no reservation from the file", 1),
        ([FetchFailure(TDMREP, "timeout", "read timed out")], "unreachable (timeout): no", 1),
        (
            [(301, "", {"Location": "/tdm.json"})],
            "status 200",  # followed within the origin, to the file
            2,
        ),
        (
            [(302, "", {"Location": "https://elsewhere.test/tdmrep.json"})],
            "status 302: redirects to another origin, not followed",
            1,
        ),
    ],
)
async def test_tdmrep_json_follows_robots_txt_and_every_outcome_is_an_entry_that_lets_pages_in(
    answers: list[Answer], reason: str, requests: int
) -> None:
    web = FakeWeb(
        {
            ORIGIN + "/robots.txt": [ok("User-agent: *\nAllow: /\n")],
            TDMREP: answers,
            ORIGIN + "/tdm.json": [ok("[]")],
        }
    )
    entry = await tdmrep_cache(web).get(ORIGIN)
    assert web.requests[0] == ORIGIN + "/robots.txt" and len(web.requests) == 1 + requests
    assert not entry.unreachable and entry.error is None
    assert entry.tdmrep is not None and entry.tdmrep.reason.startswith(reason)


async def test_tdmrep_json_is_not_asked_where_robots_txt_disallows_it_or_lets_nothing_in() -> None:
    web = FakeWeb({ORIGIN + "/robots.txt": [ok("User-agent: *\nDisallow: /.well-known/\n")]})
    entry = await tdmrep_cache(web).get(ORIGIN)
    assert web.requests == [ORIGIN + "/robots.txt"]
    assert entry.tdmrep is not None and entry.tdmrep.reason == "not asked: robots.txt disallows it"
    web = FakeWeb({ORIGIN + "/robots.txt": [(503, "", {})]})
    entry = await tdmrep_cache(web).get(ORIGIN)
    assert web.requests == [ORIGIN + "/robots.txt"] and entry.tdmrep is None
