"""`crawl status`: what the last run of a crawl did, or what a crawl in progress is doing.

It reads DIR/summary.json (crawler.cli.summary_file), which `crawl` refreshes every few seconds
while it runs; without one (a crawl run from Python, or one whose file was lost) it reads
DIR/state.sqlite instead, read-only. It never takes the directory's lock: it reads beside a
running crawl, as `crawl search` does. A run is in progress when its summary says "running" and
the process that wrote it is alive; "running" from a process that is gone is a run that was
killed.

`status_text` and `document_from_state_values` decide what is said; the rest reads files.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.cli.cluster import cluster_status_command
from crawler.cli.exits import EXIT_OK
from crawler.cli.report import summary
from crawler.cli.resuming import how_it_ended
from crawler.cli.status_trust import lastmod_trust_lines, lastmod_trusts, trust_document
from crawler.cli.summary_document import (
    SUMMARY_FORMAT,
    deferred_part,
    epoch_of,
    report_from_document,
    stats_parts,
)
from crawler.cli.summary_file import SUMMARY_NAME, read_summary
from crawler.cli.text import fit_for
from crawler.config import load_config
from crawler.crawl.freshness import lastmod_policy
from crawler.errors import StateError
from crawler.state import LOCK_NAME, STATE_NAME
from crawler.state.codec import deferred_from_json, stats_from_json
from crawler.state.db import SCHEMA_VERSION
from crawler.stats import CrawlStats, DeferredHost, Outcome

__all__ = ["Status", "find_status", "process_alive", "status_command", "status_text"]


@dataclass(frozen=True, slots=True)
class Status:
    """What `crawl status` found in a data directory."""

    document: dict[str, Any]
    """A summary.json document (from the state: with `"source": "state.sqlite"`)."""
    source: Path
    running: bool
    """The run it describes is going on now."""


# --- what is said: pure --------------------------------------------------------------------------


def _moment(epoch: float | None) -> str:
    if epoch is None:
        return "an unknown time"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))
    except (OverflowError, OSError, ValueError):
        return "an unknown time"


def _span(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _headline(status: Status, data_dir: Path, now: float) -> str:
    document = status.document
    run = document.get("run") or {}
    number = run.get("number")
    which = f"run {number}" if number else "the last run"
    process = document.get("process")
    started = epoch_of(run.get("started_at"))
    updated = epoch_of(run.get("updated_at"))
    if document.get("source") == STATE_NAME:
        kept = (
            f"no {SUMMARY_NAME} in {data_dir} (a crawl run from Python writes none): from "
            f"{STATE_NAME}, which keeps the figures but not the hosts"
        )
        if status.running:
            return f"{kept}; a crawl is running (process {process})"
        ended = "ended cleanly" if document.get("clean") else "did not end cleanly (killed?)"
        return f"{kept}; {which} {ended}"
    if status.running:
        ago = f"; as of {_span(max(now - updated, 0.0))} ago" if updated is not None else ""
        return (
            f"a crawl is running in {data_dir}: {which}, process {process}, started "
            f"{_moment(started)}{ago}"
        )
    if document.get("outcome") == "running":
        return (
            f"{which} in {data_dir} did not end cleanly (killed?): process {process} is gone; "
            f"its last figures, as of {_moment(updated)}"
        )
    ended_at = epoch_of(run.get("ended_at")) or updated
    took = f" ({_span(ended_at - started)})" if started is not None and ended_at else ""
    until = _moment(ended_at)
    if started is not None and ended_at and until[:10] == _moment(started)[:10]:
        until = until[11:]  # the same day: the time says it
    run_ended = run.get("ended")
    if isinstance(run_ended, dict):
        how = f"; it {how_it_ended(run_ended, clean=True)}"
    else:  # a summary of before run.ended: what stopped it, if anything
        how = f", stopped by {document['stopped_by']}" if document.get("stopped_by") else ""
    return f"the last run in {data_dir}: {which}, {_moment(started)} to {until}{took}{how}"


def status_text(status: Status, data_dir: Path, now: float) -> str:
    """What `crawl status` prints: a headline, then the summary as the crawl printed it (or
    would print it now), then what running the crawl again would do."""
    report = report_from_document(status.document)
    lines = [
        _headline(status, data_dir, now),
        summary(
            report.stats,
            report.hosts,
            report.deferred,
            max_wait=report.max_wait,
            outputs=report.outputs,
            problems=report.problems,
            ran_on=report.ran_on,
            seed_moves=report.seed_moves,
            given_up=report.given_up,
            traps=report.traps,
            archive=report.archive,
            run=report.run,
            recrawl=report.recrawl,
        ),
    ]
    # What running the crawl again would do: nothing to say while it runs.
    if not status.running and status.document.get("outcome") == "running":
        lines.append("resume: the same command goes on from here (--fresh starts over)")
    elif not status.running:
        lines.extend(f"resume: {line}" for line in report.resume)
    return "\n".join(lines)


def _outcome(stats: CrawlStats, deferred: tuple[DeferredHost, ...], running: bool) -> Outcome:
    """The state does not keep how a run ended: the nearest word for what it shows."""
    if running:
        return "running"
    if deferred:
        return "deferred"
    return "stopped" if stats.queued else "finished"


def document_from_state_values(
    values: Mapping[str, str],
    pending_urls: int,
    pending_hosts: int,
    *,
    process: int | None,
    running: bool,
    max_wait: float,
) -> dict[str, Any]:
    """A summary document from what DIR/state.sqlite keeps: its `run` table (`values`) and the
    size of its queue. `max_wait`: politeness.max_wait as configured now (the state does not
    keep the crawl's). ValueError, KeyError or TypeError when the values are not a state's."""
    saved = values.get("stats")
    stats = stats_from_json(saved) if saved is not None else CrawlStats()
    stats.queued = pending_urls
    deferred = deferred_from_json(values.get("deferred", "[]"))
    stats.runs = int(values.get("runs", "0"))
    stats.outcome = _outcome(stats, deferred, running)
    clean = values.get("clean", "1") == "1"
    return {
        "format": SUMMARY_FORMAT,
        "source": STATE_NAME,
        "process": process,
        "clean": clean,
        "outcome": stats.outcome,
        "stopped_by": None,
        "run": {"number": stats.runs or None},
        **stats_parts(stats),
        "pending": {"urls": pending_urls, "hosts": pending_hosts},
        "max_wait_s": max_wait,
        "deferred": deferred_part(deferred),
        "seed_moves": [
            {"seed": seed, "target": target}
            for seed, target in json.loads(values.get("seed_moves", "[]"))
        ],
    }


# --- reading the data directory ------------------------------------------------------------------


def process_alive(process: object) -> bool:
    """Whether process `process` exists (signal 0 checks without sending anything)."""
    if not isinstance(process, int) or isinstance(process, bool) or process <= 0:
        return False
    try:
        os.kill(process, 0)
    except PermissionError:  # another user's: alive
        return True
    except (ProcessLookupError, OSError, OverflowError):
        return False
    return True


def _lock_holder(data_dir: Path) -> int | None:
    """The process id DIR/lock names: the crawl holding it, or the last one that did."""
    try:
        text = (data_dir / LOCK_NAME).read_bytes()[:32].decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _state_document(data_dir: Path, max_wait: float) -> dict[str, Any]:
    path = data_dir / STATE_NAME
    wal = path.with_name(path.name + "-wal")
    # Without a WAL to read, immutable: a read-only connection would still create the -wal and
    # -shm files, and leave them behind (as crawler.state.db.check_state_file does).
    options = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    broken = f"crawl state {path} cannot be read"
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?{options}", uri=True)
    except sqlite3.Error as error:
        raise StateError(f"{broken}: {error}") from error
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise StateError(
                f"crawl state {path} has schema version {version}; this crawler reads version "
                f"{SCHEMA_VERSION}"
            )
        values = dict(connection.execute("SELECT key, value FROM run").fetchall())
        urls, hosts = connection.execute(
            "SELECT count(*), count(DISTINCT origin_id) FROM queue"
        ).fetchone()
    except sqlite3.Error as error:
        raise StateError(f"{broken}: {error}") from error
    finally:
        connection.close()
    holder = _lock_holder(data_dir)
    running = values.get("clean", "1") != "1" and process_alive(holder)
    try:
        return document_from_state_values(
            values, int(urls), int(hosts), process=holder, running=running, max_wait=max_wait
        )
    except (ValueError, KeyError, TypeError) as error:
        raise StateError(f"{broken}: its run record is damaged ({error})") from error


def find_status(data_dir: Path, max_wait: float) -> Status:
    """What the data directory says of its crawl; StateError when it holds none or it cannot be
    read. `max_wait`: politeness.max_wait, for a crawl known only by its state."""
    summary_path = data_dir / SUMMARY_NAME
    state_path = data_dir / STATE_NAME
    if summary_path.is_file():
        try:
            document = read_summary(summary_path)
            report_from_document(document)  # its shape, checked before anything is printed
        except (StateError, ValueError, KeyError, TypeError, AttributeError) as error:
            problem = (
                str(error)
                if isinstance(error, StateError)
                else f"{summary_path} is damaged ({error}); the next crawl rewrites it"
            )
            if not state_path.is_file():
                raise StateError(problem) from error
            print(f"crawl status: {problem}; reading {state_path} instead", file=sys.stderr)
        else:
            running = document.get("outcome") == "running" and process_alive(
                document.get("process")
            )
            return Status(document, summary_path, running)
    if state_path.is_file():
        document = _state_document(data_dir, max_wait)
        return Status(document, state_path, document["outcome"] == "running")
    where = f"{data_dir} does not exist" if not data_dir.exists() else f"nothing in {data_dir}"
    raise StateError(
        f"no crawl to report: {where} (neither {SUMMARY_NAME} nor {STATE_NAME}); "
        f"`crawl SEEDS --data {data_dir}` starts one"
    )


def status_command(args: argparse.Namespace) -> int:
    """`crawl status [--data DIR] [--json]`: the exit status (2, through StateError, when the
    directory holds no crawl)."""
    overrides = list(args.overrides)
    if args.state is not None:
        overrides += ["state.backend=redis", f"state.url={args.state}"]
    config = load_config(args.config, overrides)  # even with --data: a bad -c is reported
    if config.state.backend == "redis":
        return cluster_status_command(config, as_json=args.json)
    data_dir = Path(args.data) if args.data is not None else Path(config.output.data_dir)
    status = find_status(data_dir, config.politeness.max_wait)
    trusts = lastmod_trusts(data_dir)
    if args.json:
        document = {**status.document, "running": status.running}
        if trusts:  # recrawled with lastmods heard: each host's standing
            document["lastmod_trust"] = trust_document(trusts)
        print(json.dumps(document, indent=2))
        return EXIT_OK
    try:
        text = status_text(status, data_dir, time.time())
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise StateError(f"{status.source} is damaged ({error})") from error
    lines = lastmod_trust_lines(trusts, lastmod_policy(config.recrawl))
    print(fit_for(sys.stdout, "\n".join([text, *lines])))
    return EXIT_OK
