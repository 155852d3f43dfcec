#!/usr/bin/env python3
"""The README's picture of page requisites (docs/requisites.png): one page of a real documentation
tree, crawled with `--warc --page-requisites` and with `--warc` alone, each WARC replayed by pywb
and shot by headless Chromium, side by side.

    python scripts/replay_screenshot.py [--tree /usr/share/doc/python3/html] [--page index.html]
        [-o docs/requisites.png]

The tree is served as it is by `python -m http.server` on 127.0.1.1; each crawl is the `crawl`
command (`--max-pages 1`: the one page, and with --page-requisites what it needs); pywb and
Chromium are driven as tests/output/test_replay.py drives them (tests/support/replay.py). Needs
pywb on PATH (in a venv of its own: tests/output/test_replay.py says why) and Chromium
(`apt-get install chromium`); exits 1 without them.
"""

from __future__ import annotations

import argparse
import html
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.replay import CHROMIUM, WAYBACK, Wayback, screenshot  # noqa: E402

ADDRESS = "127.0.1.1"
SHOT = (820, 620)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((ADDRESS, 0))
        return int(probe.getsockname()[1])


def crawl(seed: Path | str, data: Path, *extra: str) -> None:
    command = [sys.executable, "-m", "crawler", str(seed), "--data", str(data), "--fresh"]
    command += ["--warc", "--max-pages", "1", "--delay", "0", *extra]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"crawl failed: {done.stderr[-2000:]}")
    print(done.stdout.strip())


def side_by_side(left: Path, right: Path, out: Path, profile: Path) -> None:
    """The two shots in one picture, each with its caption, shot in turn by Chromium."""
    page = out.with_suffix(".html")
    cells = "".join(
        f'<figure><img src="{shot.as_uri()}" width="{SHOT[0]}" height="{SHOT[1]}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        for shot, caption in (
            (left, "crawl SITE --warc --page-requisites, replayed by pywb"),
            (right, "crawl SITE --warc, replayed by pywb"),
        )
    )
    page.write_text(
        "<!doctype html><html><body style='margin:0;background:#ddd;font:15px sans-serif'>"
        "<div style='display:flex;gap:12px;padding:12px'>"
        + cells.replace("<figure>", "<figure style='margin:0'>")
        + "</div></body></html>",
        "utf-8",
    )
    size = (2 * SHOT[0] + 36, SHOT[1] + 56)
    screenshot(page.as_uri(), out, profile, size)
    page.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path("/usr/share/doc/python3/html"))
    parser.add_argument("--page", default="index.html")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "requisites.png")
    args = parser.parse_args()
    if CHROMIUM is None or WAYBACK is None:
        print("needs chromium (apt) and pywb (pip)", file=sys.stderr)
        return 1
    if not (args.tree / args.page).is_file():
        print(f"no {args.tree / args.page} (apt-get install python3-doc)", file=sys.stderr)
        return 1
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", ADDRESS],
        cwd=args.tree,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with tempfile.TemporaryDirectory(prefix="replay-shot-") as temporary:
        work = Path(temporary)
        try:
            seed = f"http://{ADDRESS}:{port}/{args.page}"
            for _ in range(100):
                try:
                    socket.create_connection((ADDRESS, port), 0.2).close()
                    break
                except OSError:
                    time.sleep(0.1)
            crawl(seed, work / "with", "--page-requisites")
            crawl(seed, work / "without")
        finally:
            server.terminate()
            server.wait()
        collections = {"with": work / "with" / "warc", "without": work / "without" / "warc"}
        with Wayback(work / "pywb", collections) as wayback:
            for name in collections:
                screenshot(wayback.url(name, seed), work / f"{name}.png", work / "profile", SHOT)
        side_by_side(work / "with.png", work / "without.png", args.output, work / "profile")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
