"""The hostile web's report: one crawl over every case and control host, as `main_run` runs it,
then one Markdown table row per case: what is expected, what the crawl did (read from the
servers' logs, the records and the memory samples), and whether every check of
`test_hostile.check_case` held.

    .venv/bin/python tests/hostile/table.py > hostile-table.md
"""

from __future__ import annotations

import itertools
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hostile.cases import HEARTBEAT_DELAY, Case
from hostile.test_hostile import (
    RSS_BOUND,
    Run,
    check_case,
    check_control,
    main_crawl,
)


def observed(run: Run, case: Case, heartbeat_beats: list[float]) -> str:
    """What the crawl did with the case, in a few words."""
    url = case.host.url(case.subject or case.seed)
    hits = case.host.hits
    path = case.subject or case.seed
    parts: list[str] = []
    page, skip = run.page(url), run.skip(url)
    if page is not None:
        said = f"status {page['status']}" if page["status"] is not None else "no answer"
        if page["error"]:
            said += f", error: {page['error'][:90]}"
        if page["truncated"]:
            said += ", truncated"
        if page["status"] and not page["error"]:
            said += f", {len(page['links'])} links"
        parts.append(said)
    elif skip is not None:
        detail = f" ({skip['detail'][:70]})" if skip.get("detail") else ""
        parts.append(f"skip: {skip['reason']}{detail}")
    elif case.expect != "bounded":
        parts.append("recorded nowhere")
    asked = sum(hit.path == path for hit in hits)
    parts.append(f"{asked} request(s) for {path[:30]}, {len(hits)} to the host")
    if case.expect == "bounded":
        trap = [line.strip() for line in run.out.splitlines() if case.host.origin in line]
        parts.append(f"summary: {trap[0][:90]}" if trap else "not in the summary")
    if case.deadline is not None:
        held_path = case.deadline_path or case.seed
        held = [(hit.closed_at or run.ended) - hit.at for hit in hits if hit.path == held_path]
        parts.append(f"{held_path} held {max(held, default=0):.1f} s at most")
    if case.loop_watch:
        answered = [hit for hit in hits if hit.path != "/robots.txt"]
        if answered:
            start = answered[0].at
            end = (answered[0].closed_at or run.ended) + 5.0
            gaps = [
                later - earlier
                for earlier, later in itertools.pairwise(heartbeat_beats)
                if later > start and earlier < end
            ]
            parts.append(f"heartbeat gap {max(gaps, default=0):.2f} s (interval {HEARTBEAT_DELAY})")
    if case.memory_watch and hits:
        start = min(hit.at for hit in hits)
        end = max(hit.closed_at or run.ended for hit in hits) + 1.0
        during = [rss for at, rss in run.rss if start <= at <= end]
        parts.append(f"RSS {max(during, default=0) / 2**20:.0f} MiB")
    return "; ".join(parts)


def verdict(check: Callable[..., None], *args: object) -> str:
    try:
        check(*args)
    except AssertionError as error:
        return "FAILS: " + " ".join(str(error).split())[:160]
    return "holds"


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main() -> int:
    with tempfile.TemporaryDirectory() as directory:
        main_run = main_crawl(Path(directory) / "data")
    run, cases, controls = main_run.run, list(main_run.cases.values()), main_run.controls
    heartbeat = next(control for control in controls if control.name == "heartbeat")
    beats = sorted(hit.at for hit in heartbeat.host.hits)
    print(
        f"One crawl of {len(cases)} hostile hosts and {len(controls)} control hosts: exit status "
        f"{run.status}, {run.wall:.1f} s, peak RSS {run.peak_rss / 2**20:.0f} MiB "
        f"(bound {RSS_BOUND / 2**20:.0f} MiB), "
        f"{'a traceback' if 'Traceback' in run.out + run.err else 'no traceback'}.\n"
    )
    print("| case | class | expected | observed | checks |")
    print("|---|---|---|---|---|")
    failed = 0
    for case in cases:
        result = verdict(check_case, main_run, case)
        failed += result != "holds"
        row = (case.name, case.group, case.expected, observed(run, case, beats), result)
        print("| " + " | ".join(cell(text) for text in row) + " |")
    for control in controls:
        result = verdict(check_control, run, control)
        failed += result != "holds"
        expected = f"every page fetched, no gap under {control.delay} s"
        got = f"{len(control.host.hits)} requests"
        print(f"| {control.name} | control | {expected} | {got} | {result} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
