#!/usr/bin/env python3
"""What a recrawl of an unchanged site costs the site, and the user, beside the first crawl.

    python benchmarks/bench_recrawl.py [--hosts 20] [--pages 500] [--port 8797] [--json]

The web is bench_speed.py's (benchmarks/support/speedweb.py): --hosts sites of --pages allowed
pages each (10,000 with the defaults), static files served by nginx, which sends ETag and
Last-Modified with every file and answers a matching If-None-Match or If-Modified-Since with 304
and no body, as most servers of static pages do. Then, into one data directory:

    first     crawl SEEDS --data DIR -s politeness.min_delay=0 -s concurrency=64
                  -s politeness.per_host_concurrency=4
    recrawl   the same, with --recrawl -s recrawl.after=0 (every page is due again at once)

nginx is started afresh for each, so that each run's access log is its own (nginx writes it
whole when it stops). Per run: requests (robots.txt included), their statuses, the body bytes
nginx sent ($body_bytes_sent), and the wall time from the process's start to its exit (the
user's wait). The recrawl's pages must all come back unchanged: the summary's figures say so.
Exits 1 when the web cannot be served or a run fails.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from support.machine import compile_bytecode, machine
from support.processes import run_tool_measured, tail
from support.speedweb import Nginx, WebError, generate, read_access_log

CRAWL = Path(sys.executable).parent / "crawl"


def crawl_command(seeds: Path, data: Path, *extra: str) -> list[str]:
    return [
        str(CRAWL),
        str(seeds),
        "--data",
        str(data),
        "-s",
        "politeness.min_delay=0",
        "-s",
        "concurrency=64",
        "-s",
        "politeness.per_host_concurrency=4",
        *extra,
    ]


def one_run(
    name: str, command: list[str], work: Path, root: Path, web: dict[str, Any]
) -> dict[str, Any]:
    prefix = work / f"nginx-{name}"
    with Nginx(prefix, root, web):
        status, wall, peak = run_tool_measured(command, work, name, 900.0)
    if status != 0:
        raise RuntimeError(f"{name} exited {status}: {tail(work / f'{name}.err')}")
    hits = read_access_log(prefix / "access.log")
    statuses = Counter(hit.status for hit in hits)
    summary = json.loads((Path(command[command.index("--data") + 1]) / "summary.json").read_text())
    return {
        "run": name,
        "wall_s": round(wall, 2),
        "peak_mib": round(peak, 1),
        "requests": len(hits),
        "statuses": {str(code): count for code, count in sorted(statuses.items())},
        "body_bytes": sum(hit.size for hit in hits),
        "changes": summary.get("changes", {}),
        "pages": summary["figures"]["pages"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--pages", type=int, default=500, help="allowed pages per host")
    parser.add_argument("--port", type=int, default=8797)
    parser.add_argument("--work", type=Path, help="keep the web and logs here (default: a temp)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    compile_bytecode()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-recrawl-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        root = work / "web"
        web = generate(root, hosts=args.hosts, pages=args.pages, port=args.port)
        seeds, data = root / "seeds.txt", work / "data"
        try:
            first = one_run("first", crawl_command(seeds, data), work, root, web)
            again = crawl_command(seeds, data, "--recrawl", "-s", "recrawl.after=0")
            recrawl = one_run("recrawl", again, work, root, web)
        except (WebError, RuntimeError) as error:
            print(f"bench_recrawl: {error}", file=sys.stderr)
            return 1
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    result = {
        "machine": machine(),
        "web": {"hosts": args.hosts, "pages_per_host": args.pages},
        "runs": [first, recrawl],
        "recrawl_over_first": {
            "body_bytes": recrawl["body_bytes"] / max(1, first["body_bytes"]),
            "wall": recrawl["wall_s"] / max(1e-9, first["wall_s"]),
        },
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"machine: {result['machine']}")
    print(f"web: {args.hosts} hosts x {args.pages} pages, nginx (ETag, Last-Modified, 304)\n")
    print(f"{'run':<9}{'wall s':>8}{'requests':>10}{'body bytes':>14}{'peak MiB':>10}  statuses")
    for run in result["runs"]:
        print(
            f"{run['run']:<9}{run['wall_s']:>8.2f}{run['requests']:>10}{run['body_bytes']:>14,}"
            f"{run['peak_mib']:>10.1f}  {run['statuses']}"
        )
    print(f"\nrecrawl: {recrawl['changes']}")
    ratio = result["recrawl_over_first"]
    print(f"recrawl / first: body bytes {ratio['body_bytes']:.4f}, wall time {ratio['wall']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
