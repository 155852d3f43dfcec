#!/usr/bin/env python3
"""Ranking on real documentation: does `crawl search NAME` put the page that defines an API name
first? (issue 19)

    python benchmarks/bench_ranking.py [--root /usr/share/doc/python3/html] [--port 8797]
        [--baseline CRAWL] [--keep DIR] [--json]

The web: Python's HTML documentation as Debian's python3-doc package ships it (Sphinx, about 530
pages; `apt-get install python3-doc`), served as it is by a private nginx on loopback
(benchmarks/compare_wget.py's), at http://127.0.3.1:PORT/python3/, with a robots.txt that allows
everything. Each crawler crawls it into an index of its own (`crawl SEED --data DIR -s
politeness.min_delay=0`), then `crawl search --data DIR --json NAME` is asked for each of the API
names below: module names, functions, methods and classes, each with the page that defines it.
A name counts when that page is the first result.

`--baseline CRAWL` runs another build's `crawl` (another checkout's venv) the same way, so the
report gives before and after side by side. Exit status: 0 when ours ranks the defining page first
for at least `--bar` names (20, issue 19's bar), 1 when it does not or could not run (no nginx, no
documentation, a crawl that failed), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compare_wget import OURS_IP, CompareError, nginx_serving

DEFINED_IN = {
    # module names: the module's page
    "itertools": "library/itertools.html",
    "functools": "library/functools.html",
    "heapq": "library/heapq.html",
    "bisect": "library/bisect.html",
    "collections": "library/collections.html",
    "sqlite3": "library/sqlite3.html",
    "argparse": "library/argparse.html",
    "pathlib": "library/pathlib.html",
    "shutil": "library/shutil.html",
    "tempfile": "library/tempfile.html",
    "subprocess": "library/subprocess.html",
    "json": "library/json.html",
    "csv": "library/csv.html",
    "zipfile": "library/zipfile.html",
    "hashlib": "library/hashlib.html",
    "secrets": "library/secrets.html",
    "statistics": "library/statistics.html",
    "decimal": "library/decimal.html",
    "datetime": "library/datetime.html",
    "textwrap": "library/textwrap.html",
    "difflib": "library/difflib.html",
    "pickle": "library/pickle.html",
    "enum": "library/enum.html",
    "weakref": "library/weakref.html",
    "dataclasses": "library/dataclasses.html",
    # functions, methods and classes: the page that documents them
    "os.path.join": "library/os.path.html",
    "json.dumps": "library/json.html",
    "re.sub": "library/re.html",
    "subprocess.run": "library/subprocess.html",
    "functools.lru_cache": "library/functools.html",
    "collections.OrderedDict": "library/collections.html",
    "itertools.groupby": "library/itertools.html",
    "asyncio.gather": "library/asyncio-task.html",
    "shutil.rmtree": "library/shutil.html",
    "heapq.heappush": "library/heapq.html",
    "bisect.insort": "library/bisect.html",
    "textwrap.dedent": "library/textwrap.html",
    "tempfile.mkdtemp": "library/tempfile.html",
    "str.join": "library/stdtypes.html",
    "contextlib.contextmanager": "library/contextlib.html",
}
ROBOTS = "User-agent: *\nAllow: /\n"


def crawl_and_rank(crawl: str, work: Path, name: str, seed: str) -> dict[str, Any]:
    data = work / f"{name}-data"
    command = [crawl, seed, "--data", str(data), "-s", "politeness.min_delay=0"]
    command += ["-s", "politeness.per_host_concurrency=4", "-s", "concurrency=8"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CompareError(f"{name}: crawl exited {done.returncode}: {done.stderr[-400:]}")
    results = {}
    for api, page in DEFINED_IN.items():
        search = [crawl, "search", "--data", str(data), "--json", "--limit", "3", api]
        found = subprocess.run(search, capture_output=True, text=True, check=False)
        hits = [json.loads(line) for line in found.stdout.splitlines() if line.strip()]
        first = hits[0]["url"].split("/python3/", 1)[-1] if hits else None
        results[api] = {"first": first, "expected": page, "ok": first == page}
    return results


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path("/usr/share/doc/python3/html"))
    parser.add_argument("--port", type=int, default=8797)
    parser.add_argument("--baseline", metavar="CRAWL", help="another build's crawl executable")
    parser.add_argument("--keep", type=Path, help="keep the indexes and logs here")
    parser.add_argument("--bar", type=int, default=20, help="names ours must rank first (20)")
    parser.add_argument("--json", action="store_true")
    return parser.parse_args(argv)


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    if not (args.root / "library" / "itertools.html").is_file():
        raise CompareError(f"no Python documentation in {args.root}: apt-get install python3-doc")
    web = work / "web"
    web.mkdir(parents=True)
    (web / "python3").symlink_to(args.root.resolve(), target_is_directory=True)
    (web / "robots.txt").write_text(ROBOTS)
    seed = f"http://{OURS_IP}:{args.port}/python3/index.html"
    crawlers = {"ours": str(Path(sys.executable).parent / "crawl")}
    if args.baseline:
        crawlers["baseline"] = args.baseline
    nginx = work / "nginx"
    nginx.mkdir()
    with nginx_serving(nginx, web, args.port):
        return {name: crawl_and_rank(crawl, work, name, seed) for name, crawl in crawlers.items()}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            result = run(args, args.keep.resolve())
        else:
            with tempfile.TemporaryDirectory(prefix="bench-ranking-") as temporary:
                result = run(args, Path(temporary))
    except CompareError as error:
        print(f"bench_ranking: {error}", file=sys.stderr)
        return 1
    ours_first = sum(row["ok"] for row in result["ours"].values())
    if args.json:
        print(json.dumps(result, indent=1))
        return 0 if ours_first >= args.bar else 1
    names = list(result)
    print(f"{'API name':<28} " + " ".join(f"{name:<28}" for name in names) + "  defined in")
    for api, page in DEFINED_IN.items():
        cells = []
        for name in names:
            row = result[name][api]
            cells.append(f"{'first' if row['ok'] else row['first'] or 'nothing'!s:<28}")
        print(f"{api:<28} " + " ".join(cells) + f"  {page}")
    print()
    for name in names:
        ranked_first = sum(row["ok"] for row in result[name].values())
        print(f"{name}: the defining page first for {ranked_first} of {len(DEFINED_IN)} names")
    verdict = "PASS" if ours_first >= args.bar else "FAIL"
    print(f"bar: the defining page first for at least {args.bar} names: {verdict}")
    return 0 if ours_first >= args.bar else 1


if __name__ == "__main__":
    sys.exit(main())
