#!/usr/bin/env python3
"""Page requisites (issue 40): the same pages of a real documentation tree archived by ours without
and with `--page-requisites`, and by `wget --page-requisites --warc-file -e robots=on`.

    python benchmarks/bench_requisites.py [--tree /usr/share/doc/python3/html] [--pages 200]
        [--port 8796] [--work DIR] [--json]

The web: one Debian documentation tree (python3-doc by default: Sphinx pages with their
stylesheets, scripts, icons and the images under _images/), served as it is at /NAME/ by a private
nginx on loopback (benchmarks/compare_wget.py's, started afresh for each run, so that each run's
access log is its own), with a robots.txt that sets `Crawl-delay: 0` and disallows
/NAME/_images/: the requisites there are for robots.txt to refuse. The pages: the first `--pages`
HTML files of the tree (sorted paths), given to each tool as its URLs, none followed further:

    ours        crawl URLS --depth 0 --warc -s politeness.min_delay=0
    ours+req    the same with --page-requisites
    wget        wget --page-requisites -e robots=on --warc-file=WORK/wget -i URLS (no --recursive:
                -p alone takes each page's requisites, one level, as ours does)

Per run, from nginx's log: requests (robots.txt included), requests for what is not one of the
pages (the requisites, robots.txt aside), statuses, body bytes sent; the WARC bytes written;
and the wall time from the process's start to its exit. Ours also says what its summary counts.
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

from compare_wget import (
    OURS_IP,
    WGET_IP,
    CompareError,
    Package,
    build_root,
    html_files,
    nginx_serving,
    read_log,
)
from support.machine import compile_bytecode
from support.processes import run_tool_measured, tail

CRAWL = Path(sys.executable).parent / "crawl"


def page_urls(ip: str, port: int, package: Package, count: int) -> list[str]:
    paths = sorted(path.relative_to(package.root) for path in html_files(package.root))
    return [f"http://{ip}:{port}/{package.name}/{path.as_posix()}" for path in paths[:count]]


def one_run(
    name: str, command: list[str], work: Path, web: Path, port: int, pages: set[str]
) -> dict[str, Any]:
    prefix = work / f"nginx-{name}"
    with nginx_serving(prefix, web, port):
        status, wall, peak = run_tool_measured(command, work, name, 1800.0)
    if status not in (0, 8):  # wget: 8 when a server answered an error (a 404)
        raise RuntimeError(f"{name} exited {status}: {tail(work / f'{name}.err')}")
    who = "wget" if name == "wget" else "ours"
    hits = read_log(prefix / f"{who}.access.log")
    requisites = [h for h in hits if h.target not in pages and h.target != "/robots.txt"]
    archives = [*(work / f"{name}-data" / "warc").glob("*.warc.gz"), *work.glob(f"{name}.warc.gz")]
    warc_bytes = sum(path.stat().st_size for path in archives)
    return {
        "run": name,
        "wall_s": round(wall, 2),
        "peak_mib": round(peak, 1),
        "requests": len(hits),
        "requisite_requests": len(requisites),
        "requisites_200": sum(1 for h in requisites if h.status == 200),
        "statuses": {str(code): n for code, n in sorted(Counter(h.status for h in hits).items())},
        "body_bytes": sum(h.size for h in hits),
        "warc_bytes": warc_bytes,
        "robots_fetches": sum(1 for h in hits if h.target == "/robots.txt"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=Path("/usr/share/doc/python3/html"))
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--port", type=int, default=8796)
    parser.add_argument("--work", type=Path, help="keep the logs and archives here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    compile_bytecode()
    wget = shutil.which("wget")
    if wget is None or not (args.tree / "index.html").is_file():
        print("bench_requisites: needs wget and the tree (apt: wget python3-doc)", file=sys.stderr)
        return 1
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-requisites-"))
    work.mkdir(parents=True, exist_ok=True)
    package = Package(
        args.tree.parent.name if args.tree.name == "html" else args.tree.name, args.tree
    )
    robots = f"User-agent: *\nCrawl-delay: 0\nDisallow: /{package.name}/_images/\n"
    web = work / "web"
    if not web.exists():
        build_root(web, [package], robots)
    ours_urls = page_urls(OURS_IP, args.port, package, args.pages)
    wget_urls = page_urls(WGET_IP, args.port, package, args.pages)
    pages = {url.split(str(args.port), 1)[1] for url in ours_urls}
    (work / "ours-urls.txt").write_text("\n".join(ours_urls) + "\n")
    (work / "wget-urls.txt").write_text("\n".join(wget_urls) + "\n")
    ours = [str(CRAWL), str(work / "ours-urls.txt"), "--depth", "0", "--warc", "--fresh"]
    ours += ["-s", "politeness.min_delay=0"]
    runs = {
        "ours": [*ours, "--data", str(work / "ours-data")],
        "ours+req": [*ours, "--page-requisites", "--data", str(work / "ours+req-data")],
        "wget": [
            wget,
            "--page-requisites",
            "-e",
            "robots=on",
            f"--warc-file={work / 'wget'}",
            "--no-verbose",
            f"--directory-prefix={work / 'wget-files'}",
            "-i",
            str(work / "wget-urls.txt"),
        ],
    }
    results = []
    try:
        for name, command in runs.items():
            result = one_run(name, command, work, web, args.port, pages)
            data = work / f"{name}-data" / "summary.json"
            if data.is_file():
                summary = json.loads(data.read_text())
                result["pages"] = summary["figures"]["pages"]
                result["requisites"] = summary.get("requisites", {})
            results.append(result)
    except (CompareError, RuntimeError) as error:
        print(f"bench_requisites: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"tree": str(args.tree), "pages": args.pages, "runs": results}))
        return 0
    print(f"web: {args.tree} at /{package.name}/, {args.pages} pages given, robots.txt:")
    print("  " + robots.strip().replace("\n", "\n  "))
    print(
        f"\n{'run':<10}{'wall s':>8}{'requests':>10}{'requisites':>12}{'body MB':>9}"
        f"{'WARC MB':>9}  statuses"
    )
    for run in results:
        print(
            f"{run['run']:<10}{run['wall_s']:>8.2f}{run['requests']:>10}"
            f"{run['requisites_200']:>12}{run['body_bytes'] / 1e6:>9.2f}"
            f"{run['warc_bytes'] / 1e6:>9.2f}  {run['statuses']}"
        )
    for run in results:
        if run.get("requisites"):
            print(f"{run['run']}: its summary counts requisites {run['requisites']}")
    print(f"\nlogs and archives in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
