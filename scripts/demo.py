#!/usr/bin/env python3
"""The main job on a fresh machine with no internet: crawl a small local web with `crawl`.

    python scripts/demo.py [--hosts 5] [--pages 8] [--data crawl-data] [-- extra crawl options]

Generates a web of `--hosts` sites on 127.0.1.x (each with a robots.txt that sets Crawl-delay 0.5
and disallows /private/), serves it (benchmarks/support/testweb.py), runs `crawl SEEDS --data DIR
--fresh` on it with the default, polite configuration (--fresh: the web is made anew for each demo,
so the crawl starts over instead of resuming the last demo's), and stops the server. The crawl's
progress and summary are what `crawl` prints; its pages are in the full-text index DIR/index.sqlite,
which the demo then searches (`crawl search lighthouse --data DIR --limit 3`). `crawl export --data
DIR` writes them all as JSON lines.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

# The local web the demo crawls is the benchmarks' (benchmarks/support/testweb.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from support.testweb import generate

TESTWEB = Path(__file__).resolve().parents[1] / "benchmarks" / "support" / "testweb.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=5)
    parser.add_argument("--pages", type=int, default=8)
    parser.add_argument("--port", type=int, default=8788)
    parser.add_argument("--data", type=Path, default=Path("crawl-data"))
    parser.add_argument("crawl_options", nargs="*", help="passed to crawl, after --")
    args = parser.parse_args()
    crawl = Path(sys.executable).parent / "crawl"
    with tempfile.TemporaryDirectory(prefix="crawl-demo-") as work:
        root = Path(work) / "web"
        generate(root, hosts=args.hosts, pages_per_host=args.pages, crawl_delay=0.5, port=args.port)
        server = subprocess.Popen(
            [
                sys.executable,
                str(TESTWEB),
                "serve",
                str(root),
                "--log",
                str(Path(work) / "requests.jsonl"),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            if server.stdout.readline().strip() != "ready":
                print("demo: the local web did not start", file=sys.stderr)
                return 1
            print(
                f"demo: serving {args.hosts} hosts on 127.0.1.x:{args.port}; crawling them\n",
                flush=True,
            )
            command = [
                str(crawl),
                str(root / "seeds.txt"),
                "--data",
                str(args.data),
                "--fresh",
                *args.crawl_options,
            ]
            status = subprocess.call(command)
            if status != 0:
                return status
            search = [str(crawl), "search", "lighthouse", "--data", str(args.data), "--limit", "3"]
            print(f"\ndemo: {' '.join(search[1:])}\n", flush=True)
            return subprocess.call(search)
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
