"""End to end over loopback: a host's pace follows what its server says by its answers
(crawler.pace), judged from the servers' own logs (tests/support/sites.py). Times are scaled down
from the benchmark's (benchmarks/bench_pacing.py); what is asserted is behaviour: how much of a
worker the crawl took, whether it pushed it into its slowed state, how many requests were
refused, what was fetched, when the next request came after a Retry-After."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from support.commands import start_crawl
from support.crawling import by_url, make_config, run
from support.loopback import EPSILON, LoopbackWeb
from support.sites import OneWorkerSite, RateLimitedSite, site_paths

pytestmark = pytest.mark.loopback

A, B = "127.0.1.1", "127.0.1.2"
MIN_DELAY = 0.05
"""As users set it when they want speed (the benchmark's 0.1 s, scaled)."""


def serve(net: LoopbackWeb, ip: str, site: OneWorkerSite | RateLimitedSite) -> None:
    for path in ("/robots.txt", *site_paths(site.pages)):
        net[ip].routes[path] = site.handle


def pacing(**politeness: object) -> dict[str, object]:
    return {"min_delay": MIN_DELAY, "backoff_max": 60.0, **politeness}


# --- response time ------------------------------------------------------------------------------


async def test_a_server_that_slows_under_load_is_never_pushed_into_it() -> None:
    """One worker, 50 ms a page, 250 ms while busy over half of the last second: the crawl waits 4
    times its answer time after each answer, and so takes at most a fifth of the worker."""
    shares = {}
    for factor in (4.0, 0.0):
        site = OneWorkerSite(pages=12, service=0.05, slowed=0.25, window=1.0, threshold=0.5)
        async with LoopbackWeb(A) as net:
            serve(net, A, site)
            config = make_config(politeness=pacing(min_delay=0.01, response_factor=factor))
            records, crawler = await run(config, [net[A].url("/")])
        assert {record.status for record in records} == {200} and len(records) == 12
        shares[factor] = (site.worker_share(), site.requests_slowed)
        if factor:
            (report,) = crawler.host_reports()
            assert report.reason == "response time" and report.answer_time is not None
    share, slowed = shares[4.0]
    assert share <= 0.25 and slowed == 0, shares
    # Without it, the same crawl keeps the worker busy and slows it down.
    assert shares[0.0][1] > 0, shares


# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 503])
async def test_a_limiter_without_retry_after_is_learned_and_left_alone(status: int) -> None:
    """A server that accepts one request per 0.3 s and refuses sooner ones, without saying when:
    a few refusals at the start, then none; every page fetched; the refusals are throttled, not
    failures. A fast host beside it keeps min_delay."""
    site = RateLimitedSite(pages=14, period=0.3, status=status)
    async with LoopbackWeb(A, B) as net:
        serve(net, A, site)
        net[B].robots("")
        for index, path in enumerate(site_paths(14)):
            net[B].page(path, *site_paths(14)[index + 1 : index + 2])
        config = make_config(politeness=pacing())
        records, crawler = await run(config, [net[A].url("/"), net[B].url("/")])
    found = by_url(records)
    assert all(found[net[A].url(path)].status == 200 for path in site_paths(14))
    assert len(site.accepted) == 15  # robots.txt and 14 pages, each once
    assert 1 <= len(site.refused) <= 4, site.refused
    # Settled, not oscillating: refusals while it learned, then one at most, as the learned
    # interval comes down to its floor a quarter above the gap refused.
    assert sum(at > site.accepted[2] for at in site.refused) <= 1, (site.accepted, site.refused)
    assert crawler.stats.throttled == len(site.refused) and crawler.stats.retries == 0
    reports = {report.origin: report for report in crawler.host_reports()}
    limited, fast = reports[net[A].origin], reports[net[B].origin]
    assert limited.reason == "learned rate" and limited.refusals == len(site.refused)
    # Near the gap it allows, counted from the answer (so a little longer start to start).
    assert 0.25 <= limited.interval <= 0.6
    assert fast.reason == "min_delay" and fast.refusals == 0
    assert min(net.gaps(B)) >= MIN_DELAY - EPSILON


async def test_a_retry_after_is_waited_and_teaches_the_rate() -> None:
    site = RateLimitedSite(pages=6, period=1.0, retry_after=True)
    async with LoopbackWeb(A) as net:
        serve(net, A, site)
        records, crawler = await run(make_config(politeness=pacing()), [net[A].url("/")])
    assert {record.status for record in records} == {200} and len(records) == 6
    assert 1 <= len(site.refused) <= 2, site.refused
    requests = sorted(site.accepted + site.refused)
    for refused in site.refused:
        following = requests[requests.index(refused) + 1]
        # Retry-After: 1 (whole seconds): not a moment sooner.
        assert following - refused >= 1.0 - EPSILON
    assert crawler.stats.throttled == len(site.refused)


# --- slow servers -------------------------------------------------------------------------------


async def test_slow_servers_beyond_concurrency_cost_the_other_hosts_no_slot() -> None:
    """Six hosts that answer after 3 s, with concurrency 2: after fetch.slow_after they no longer
    hold a slot, so the seventh host's pages all come while they still wait."""
    slow_hosts = [f"127.0.1.{n}" for n in range(10, 16)]

    async def late(request: object) -> object:
        from aiohttp import web

        await asyncio.sleep(3.0)
        return web.Response(text="<title>late</title>", content_type="text/html")

    async with LoopbackWeb(A, *slow_hosts) as net:
        net[A].robots("")
        for index, path in enumerate(site_paths(8)):
            net[A].page(path, *site_paths(8)[index + 1 : index + 2])
        for ip in slow_hosts:
            net[ip].robots("")
            net[ip].routes["/"] = late  # type: ignore[assignment]
        config = make_config(
            concurrency=2,
            politeness=pacing(),
            fetch={"slow_after": 0.2, "total_timeout": 10.0, "read_timeout": 10.0},
        )
        seeds = [net[ip].url("/") for ip in slow_hosts] + [net[A].url("/")]
        records, _crawler = await run(config, seeds)
    assert len(records) == 6 + 8
    last_fast = max(net.times(A))
    first_slow_answer = min(min(t for t in net.times(ip) if t) for ip in slow_hosts) + 3.0
    assert last_fast < first_slow_answer


# --- the pace is state --------------------------------------------------------------------------


async def test_a_kill_in_the_middle_of_a_back_off_does_not_shorten_it(tmp_path: Path) -> None:
    """Retry-After: 3 after a refusal; the crawl is killed at once and started again: the
    resumed crawl's next request to the host still waits for the Retry-After (committed before
    any later request could start)."""
    site = RateLimitedSite(pages=3, period=3.0, retry_after=True)
    async with LoopbackWeb(A) as net:
        serve(net, A, site)
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(net[A].url("/") + "\n")
        data = tmp_path / "data"
        args = [str(seeds), "--data", str(data), "-s", f"politeness.min_delay={MIN_DELAY}"]
        args += ["-s", "politeness.backoff_max=60", "-s", "state.commit_interval=0.1"]
        process = await start_crawl(*args)
        while not site.refused and process.returncode is None:
            await asyncio.sleep(0.002)
        # The refusal's answer reaches the crawl a moment after the server logs it.
        await asyncio.sleep(0.3)
        process.send_signal(signal.SIGKILL)
        await process.wait()
        assert len(site.refused) == 1
        refused = site.refused[0]
        process = await start_crawl(*args)
        _, err = await asyncio.wait_for(process.communicate(), timeout=60)
        assert process.returncode == 0, err.decode()
    after = [at for at in sorted(site.accepted + site.refused) if at > refused]
    assert after and after[0] - refused >= 3.0 - EPSILON
    # The learned interval came down towards the gap refused (plus the Retry-After, less its
    # rounding): one more refusal at most.
    assert len(site.refused) <= 2
    assert len(site.accepted) == 1 + 3  # robots.txt and the three pages
