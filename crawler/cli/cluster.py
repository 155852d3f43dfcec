"""What a shared crawl's server holds, for the commands that are not workers:
- `crawl status --state URL`: what the crawl is doing, and each host's lastmod trust (its
  recrawls'). Reads only: it joins nothing, and takes one second (two readings, for the pages
  per second).
- `crawl reset --state URL`: the shared crawl's --fresh. It deletes the crawl's keys (those under
  state.key_prefix), after asking; it refuses while a worker is alive, since that worker would go
  on with a crawl half gone."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict

from crawler.cli.exits import EXIT_OK
from crawler.cli.status_trust import lastmod_trust_lines, trust_document
from crawler.cli.text import fit_for
from crawler.config import Config
from crawler.crawl.freshness import lastmod_policy
from crawler.errors import ConfigError, SharedStateError
from crawler.freshness import LastmodTrust
from crawler.monitor import served_at
from crawler.runtime import run
from crawler.state.shared.fresh import trust_of
from crawler.state.shared.library import ClusterStatus, SharedCrawl
from crawler.state.shared.resp import ReplyError, RespConnection

__all__ = ["SAMPLE_SECONDS", "cluster_reset_command", "cluster_status_command", "cluster_text"]

SAMPLE_SECONDS = 1.0


async def read_serving(connection: RespConnection, prefix: str) -> dict[str, str]:
    """The live workers that serve their status (--serve): worker id -> URL, by id."""
    try:
        workers = await connection.execute("HGETALL", f"{prefix}workers")
        pairs = list(zip(workers[::2], workers[1::2], strict=True))
        beats = await connection.pipeline(
            [("EXISTS", f"{prefix}hb:{wid.decode()}") for wid, _ in pairs]
        )
    except ReplyError as error:
        raise SharedStateError(f"state server {connection.address}: {error}") from None
    serving = {}
    for (wid, info), beat in zip(pairs, beats, strict=True):
        url = served_at(info.decode(errors="replace"))
        if beat == 1 and url is not None:
            serving[wid.decode(errors="replace")] = url
    return dict(sorted(serving.items()))


async def read_cluster(
    config: Config,
) -> tuple[ClusterStatus, ClusterStatus, dict[str, str], dict[str, LastmodTrust]]:
    """Two readings of the crawl's status, SAMPLE_SECONDS apart, where its live workers
    serve their status, and each host's lastmod trust (its recrawls')."""
    connection = await RespConnection.open(config.state.url)
    try:
        crawl = SharedCrawl(connection, config.state.key_prefix, "status")
        try:
            first = await crawl.status()
        except SharedStateError as error:
            if "not found" in str(error).lower():
                raise SharedStateError(
                    f"no shared crawl on {connection.address}: the crawl's functions are not "
                    "loaded (no worker has joined it yet)"
                ) from None
            raise
        try:
            started = await connection.execute("HGET", f"{config.state.key_prefix}run", "format")
        except ReplyError as error:
            raise SharedStateError(f"state server {connection.address}: {error}") from None
        if started is None:
            raise SharedStateError(
                f"no crawl with the key prefix {config.state.key_prefix!r} on "
                f"{connection.address} (state.key_prefix names it)"
            )
        await asyncio.sleep(SAMPLE_SECONDS)
        last = await crawl.status()
        serving = await read_serving(connection, config.state.key_prefix)
        try:
            found = await connection.execute("HGETALL", f"{config.state.key_prefix}trust")
        except ReplyError as error:
            raise SharedStateError(f"state server {connection.address}: {error}") from None
        trusts = {
            origin.decode(): trust_of(text.decode())
            for origin, text in sorted(zip(found[::2], found[1::2], strict=True))
        }
        return first, last, serving, trusts
    finally:
        connection.close()


def cluster_text(
    url: str,
    prefix: str,
    first: ClusterStatus,
    last: ClusterStatus,
    serving: dict[str, str] | None = None,
) -> str:
    """What `crawl status --state` prints; `serving`: worker id -> where it serves its status."""
    elapsed = max(1e-6, (last.now_us - first.now_us) / 1e6)
    rate = (last.pages_started - first.pages_started) / elapsed
    if last.next_due_us is None:
        next_start = "no host scheduled"
    else:
        wait = (last.next_due_us - last.now_us) / 1e6
        next_start = "a host is due now" if wait <= 0 else f"next start in {wait:.1f} s"
    dead = last.workers - last.live_workers
    return "\n".join(
        [
            f"shared crawl at {url} (keys {prefix}*)",
            f"  URLs: {last.pending:,} queued, {last.leased:,} leased to workers",
            f"  hosts: {last.scheduled:,} scheduled, {last.due:,} due now, {last.held:,} held "
            f"by workers; {next_start}",
            f"  workers: {last.live_workers} alive"
            + (f", {dead} gone quiet (their work goes back once reaped)" if dead else ""),
            f"  pages started: {last.pages_started:,}, {rate:,.1f}/s over the last second",
            *(
                [f"  live status (--serve) of {len(serving)} workers:"]
                + [f"    {worker}  {page}" for worker, page in serving.items()]
                if serving
                else []
            ),
        ]
    )


def cluster_status_command(config: Config, *, as_json: bool) -> int:
    first, last, serving, trusts = run(read_cluster(config))
    if as_json:
        elapsed = max(1e-6, (last.now_us - first.now_us) / 1e6)
        document = {
            **asdict(last),
            "pages_per_s": (last.pages_started - first.pages_started) / elapsed,
            "serving": serving,
            "lastmod_trust": trust_document(trusts),
        }
        print(json.dumps(document, indent=2))
        return EXIT_OK
    text = cluster_text(str(config.state.url), config.state.key_prefix, first, last, serving)
    trust = lastmod_trust_lines(trusts, lastmod_policy(config.recrawl))
    text = "\n".join([text, *(f"  {line}" for line in trust)])
    print(fit_for(sys.stdout, text))
    return EXIT_OK


async def _reset(config: Config, *, confirm: bool) -> int:
    prefix = config.state.key_prefix
    connection = await RespConnection.open(config.state.url)
    try:
        # Read without the crawl's functions: a server may hold keys and no functions.
        workers = await connection.execute("HKEYS", f"{prefix}workers")
        beats = await connection.pipeline(
            [("EXISTS", f"{prefix}hb:{worker.decode()}") for worker in workers]
        )
        alive = sum(beat == 1 for beat in beats)
        if alive:
            raise SharedStateError(
                f"the crawl under {prefix!r} on {connection.address} has {alive} live "
                f"worker{'s' if alive != 1 else ''}: stop {'them' if alive != 1 else 'it'} first "
                "(a worker goes on with whatever the crawl still holds)"
            )
        keys: list[bytes] = []
        cursor = b"0"
        while True:
            cursor, found = await connection.execute(
                "SCAN", cursor, "MATCH", _pattern(prefix), "COUNT", 1000
            )
            keys += found
            if cursor == b"0":
                break
        if not keys:
            print(f"crawl reset: nothing under {prefix!r} on {connection.address}", file=sys.stderr)
            return EXIT_OK
        what = f"{len(keys):,} keys of the crawl under {prefix!r} on {connection.address}"
        if confirm and not _ask(f"crawl reset: delete {what}? [y/N] "):
            print("crawl reset: nothing deleted", file=sys.stderr)
            return EXIT_OK
        for first in range(0, len(keys), 1000):
            await connection.execute("UNLINK", *keys[first : first + 1000])
        print(f"crawl reset: deleted {what}", file=sys.stderr)
        return EXIT_OK
    finally:
        connection.close()


def _pattern(prefix: str) -> str:
    """A SCAN pattern for the keys beginning with `prefix`, its glob characters escaped."""
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in prefix) + "*"


def _ask(question: str) -> bool:
    if sys.stdin is None or not sys.stdin.isatty():
        raise ConfigError(
            "crawl reset: standard input is not a terminal to ask on: give --yes to delete "
            "without asking"
        )
    print(question, end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def cluster_reset_command(config: Config, *, yes: bool) -> int:
    return run(_reset(config, confirm=not yes))
