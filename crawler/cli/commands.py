"""The commands that read rather than crawl: `crawl robots` (explain a robots.txt file), `crawl
search` and `crawl export` (the index a crawl wrote)."""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from crawler.cli.exits import EXIT_OK
from crawler.cli.options import data_directory
from crawler.cli.text import counted
from crawler.config import load_config, parse_duration
from crawler.errors import ConfigError, DiskFullError, OutputError, no_room
from crawler.output.export import export_changes, export_pages, export_skips
from crawler.output.index_read import find_index
from crawler.output.searching import not_yet_searchable, search_shards
from crawler.robots.lines import MAX_BODY_BYTES
from crawler.robots.txt import RobotsTxt, UsageLine
from crawler.usage.purposes import PURPOSE_MEANINGS, PURPOSES
from crawler.usage.signals import refusal, refusing
from crawler.usage.vocab import read_signal

__all__ = ["export_command", "robots_command", "search_command"]


def _robots_overrides(args: argparse.Namespace) -> list[str]:
    """The shortcut flags, as the -s overrides they stand for (after the explicit ones)."""
    overrides = list(args.overrides)
    if args.agent is not None:
        overrides.append(f"robots.token={args.agent}")
    if args.agent_match is not None:
        overrides.append(f"robots.agent_match={args.agent_match}")
    if args.precedence is not None:
        overrides.append(f"robots.precedence={args.precedence}")
    if args.case_insensitive_paths:
        overrides.append("robots.case_insensitive_paths=true")
    if args.split_values:
        overrides.append("robots.split_values=true")
    if args.purpose is not None:
        overrides.append(f"usage.purpose={args.purpose}")
    return overrides


_WEB_ADDRESS = re.compile(r"https?://", re.IGNORECASE)


def robots_command(args: argparse.Namespace) -> int:
    from crawler.crawl.decide.usage import line_signals  # the crawl's decisions: robots' alone

    if _WEB_ADDRESS.match(args.file):
        # Explaining is offline by design: the file a crawl would fetch, read as it is here.
        raise ConfigError(
            f"{args.file} is a URL: crawl robots reads a robots.txt file on this machine and "
            f"fetches nothing. To get that one: curl -L -o robots.txt {shlex.quote(args.file)} "
            "then: crawl robots robots.txt URL..."
        )
    config = load_config(args.config, _robots_overrides(args))
    agent = config.product_token
    path = Path(args.file)
    try:
        with path.open("rb") as file:
            # A crawl reads the first MAX_BODY_BYTES of a robots.txt: so does the explanation.
            body = file.read(MAX_BODY_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"cannot read robots.txt file {path}: {error.strerror}") from error
    if len(body) > MAX_BODY_BYTES:
        print(
            f"crawl: {path} is longer than {MAX_BODY_BYTES // 1024} KiB; only that much is "
            "read, as a crawl reads a robots.txt (RFC 9309 section 2.5)",
            file=sys.stderr,
        )
    robots = RobotsTxt.parse(body, **asdict(config.robots.options()))
    for url in args.urls:
        verdict = robots.explain(url, agent)
        lines = robots.usage_lines(url, agent)
        signals = line_signals(lines)
        if args.json:
            print(
                json.dumps(
                    {
                        "url": url,
                        "allowed": verdict.allowed,
                        "reason": verdict.reason,
                        "line": verdict.line,
                        "text": verdict.text,
                        "message": verdict.message,
                        "usage": [line._asdict() for line in lines],
                        "refused": {purpose: refusal(signals, purpose) for purpose in PURPOSES},
                    }
                )
            )
            continue
        print(f"{'allowed   ' if verdict.allowed else 'disallowed'}  {url}\n    {verdict.message}")
        if lines:
            for line in lines:
                print(f"    usage: line {line.line} {_usage_text(line)}")
            verdicts = [
                f"{purpose} {'refused' if refusing(signals, purpose) else 'allowed'}"
                for purpose in PURPOSES
            ]
            print(f"    by these lines: {', '.join(verdicts)}")
    if not args.json:
        _print_usage_lines(robots.all_usage_lines(agent), agent, config.usage.purpose)
        delay = robots.crawl_delay(agent)
        rates = ", ".join(str(rate) for rate in robots.request_rates(agent)) or "none"
        windows = ", ".join(str(window) for window in robots.visit_time(agent)) or "any time"
        print(
            f"{agent}: Crawl-delay {delay if delay is not None else 'none'}; "
            f"Request-rate {rates}; Visit-time {windows}"
        )
    return EXIT_OK


def _usage_text(line: UsageLine) -> str:
    return f"{line.key}: {' '.join(part for part in (line.path, line.value) if part)}"


def _print_usage_lines(lines: Sequence[UsageLine], agent: str, purpose: str) -> None:
    """Every usage line of the agent's groups: what it says, and what it cannot say."""
    if not lines:
        return
    print(f"{agent}: usage lines (purpose {purpose}: {PURPOSE_MEANINGS[purpose]}):")  # type: ignore[index]
    for line in lines:
        reading = read_signal(line.key, line.value)
        refuses = ", ".join(reading.refuses())
        said = f"refuses {refuses}" if refuses else "refuses nothing"
        if line.problem is None and purpose in reading.refuses():
            said += f", the purpose asked ({purpose}), where the line applies"
        print(f"    line {line.line} {_usage_text(line)}: {said}")
        for problem in (line.problem, *reading.problems):
            if problem is not None:
                print(f"        {problem}")


def _shards(args: argparse.Namespace) -> list[Path]:
    """The data directories of --data (several: a shared crawl's workers'), or the default."""
    config = load_config(args.config, args.overrides)  # even with --data: a bad -c is reported
    return [data_directory(where, config) for where in args.data or [None]]


def warc_index_command(args: argparse.Namespace) -> int:
    """`crawl warc-index`: the CDXJ lines of every data directory's WARC files, sorted in each."""
    from crawler.output.warc_index import cdx_lines  # the WARC reader: this command's alone

    shards = _shards(args)
    lines = [line for shard in shards for line in cdx_lines(shard)]  # all read before writing
    if len(shards) > 1:
        lines.sort()
    text = "".join(f"{line}\n" for line in lines)
    if args.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        args.output.write_text(text, encoding="utf-8")
    print(f"crawl warc-index: {counted(len(lines), 'record')}", file=sys.stderr)
    return EXIT_OK


def search_command(args: argparse.Namespace) -> int:
    query = " ".join(args.query)
    shards = _shards(args)
    hits = search_shards(shards, query, limit=args.limit, fts=args.fts, purpose=args.purpose)
    for rank, hit in enumerate(hits, 1):
        if args.json:
            print(
                json.dumps(
                    {"url": hit.url, "title": hit.title, "snippet": hit.snippet, "score": hit.score}
                )
            )
            continue
        print(f"{rank:>2}. {hit.title or '(no title)'}\n    {hit.url}")
        snippet = " ".join(hit.snippet.split())  # page text keeps its line breaks
        if snippet:
            print(f"    {snippet}")
    if not hits and not args.json:
        print(f"no results for {query!r}")
    waiting = sum(not_yet_searchable(shard) for shard in shards)
    if waiting:
        print(
            f"crawl search: {counted(waiting, 'page')} stored but not yet searchable: the crawl "
            "writing the index makes them so as it goes, and a crawl resumed in this directory "
            "first of all (one stopped by a kill left them)",
            file=sys.stderr,
        )
    return EXIT_OK


def moment(text: str, now: float) -> float:
    """`--changed-since`'s DATE as epoch seconds: an ISO 8601 date or time (UTC unless it says
    otherwise), or a duration back from `now` (12h, 7d). ConfigError saying what is expected."""
    back = parse_duration(text)
    if back is not None:
        return now - back
    try:
        when = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(
            f"crawl export: --changed-since {text!r} is not a date (expected 2026-11-24 or "
            "2026-11-24T08:00Z, or a time back from now: 12h, 7d)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


def export_command(args: argparse.Namespace) -> int:
    shards = _shards(args)
    where = "stdout" if args.output is None else str(args.output)
    if args.reason is not None and not args.skips:
        raise ConfigError("crawl export: --reason goes with --skips")
    if args.purpose is not None and (args.skips or args.changed_since is not None):
        raise ConfigError(
            "crawl export: --purpose decides whose text is exported; --skips and "
            "--changed-since export no text"
        )
    if args.skips and args.format == "markdown":
        raise ConfigError("crawl export: --skips writes jsonl or csv; markdown is of pages")
    since = None
    if args.changed_since is not None:
        if args.skips or args.format != "jsonl":
            raise ConfigError("crawl export: --changed-since writes JSON lines of pages only")
        since = moment(args.changed_since, time.time())

    def write(out: TextIO) -> int:
        # Shard after shard (a shared crawl's workers), one CSV header: a page two workers
        # stored (fetched again after a kill) comes once from each, its fetched_at its own.
        count = 0
        for number, shard in enumerate(shards):
            if args.skips:
                count += export_skips(
                    shard, out, reason=args.reason, format=args.format, header=number == 0
                )
            elif since is not None:
                count += export_changes(shard, out, since)
            else:
                count += export_pages(
                    shard, out, format=args.format, header=number == 0, purpose=args.purpose
                )
        return count

    try:
        # UTF-8 whatever the locale says; lines end as written (\n for JSON lines, \r\n for CSV
        # as RFC 4180 has it), not as the platform would translate them.
        if args.output is None:
            if isinstance(sys.stdout, io.TextIOWrapper):
                sys.stdout.reconfigure(encoding="utf-8", newline="")
            count = write(sys.stdout)
            sys.stdout.flush()
        else:
            for shard in shards:  # before creating FILE, so a missing index leaves no empty file
                find_index(shard)
            target = Path(args.output)
            if target.exists() and not target.is_file():  # a device, a pipe: written as it is
                with open(target, "w", encoding="utf-8", newline="") as out:
                    count = write(out)
            else:
                # Written beside FILE and renamed: a failed export (a full disk) leaves FILE as
                # it was, and no partial file.
                temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
                try:
                    with open(temporary, "w", encoding="utf-8", newline="") as out:
                        count = write(out)
                    os.replace(temporary, target)
                finally:
                    temporary.unlink(missing_ok=True)
    except BrokenPipeError:
        raise
    except OSError as error:  # opening FILE, or a write: a full disk, a quota
        reason = no_room(error)
        if reason is not None:
            raise DiskFullError(where, reason) from error
        raise OutputError(f"cannot write {where}: {error.strerror}") from error
    what = counted(count, "skipped URL") if args.skips else counted(count, "page")
    if since is not None:
        what += f" changed since {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(since))}"
    print(f"exported {what} to {where}", file=sys.stderr)
    return EXIT_OK
