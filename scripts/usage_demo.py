#!/usr/bin/env python3
"""Each usage signal from each of its sources, honoured by `crawl` for each purpose, on loopback.

    python scripts/usage_demo.py [--data DIR]

Serves two sites on 127.0.1.1 and 127.0.1.2 (aiohttp, in this process): the first says what its
pages may be used for in every way there is (robots.txt Content-Usage lines with paths,
Content-Usage and Content-Signal headers, noai in META robots, noimageai in X-Robots-Tag, a
/.well-known/tdmrep.json, tdm-reservation headers and META, and a header that lifts the file's
reservation); the second has Cloudflare's managed robots.txt line, `Content-signal:
search=yes,ai-train=no`. It crawls them once with `crawl --purpose ai-train -s usage.tdmrep=always`
into DIR, then exports the index for each purpose (`crawl export --purpose P`), and prints a
table: each page, where its signal comes from, and whether each purpose may use its text (a dash)
or is refused it (each page's `index_reason` in the export names the signal and its source).
Exit status 0 when every page came out as the README's table says.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from aiohttp import web

A, B = "127.0.1.1", "127.0.1.2"
PURPOSES = ("search", "ai-input", "ai-train")
ROBOTS_A = (
    "User-agent: *\nAllow: /\n"
    "Content-Usage: /usage/ train-ai=n\n"
    "Content-Usage: /usage/search-no/ search=n\n"
)
TDMREP_A = json.dumps(
    [
        {"location": "/tdm-file/", "tdm-reservation": 1},
        {"location": "/tdm-lifted/", "tdm-reservation": 1},
    ]
)
ROBOTS_B = "User-agent: *\nContent-signal: search=yes,ai-train=no\nAllow: /\n"
# Path on A: (what says it, META, headers, the purposes refused)
PAGES = {
    "/plain": ("nothing", "", {}, ()),
    "/usage/a": ("robots.txt Content-Usage: /usage/ train-ai=n", "", {}, ("ai-train",)),
    "/usage/search-no/b": (
        "robots.txt Content-Usage: /usage/search-no/ search=n",
        "",
        {},
        ("search",),
    ),
    "/header-usage": (
        "Content-Usage: ai-use=n header",
        "",
        {"Content-Usage": "ai-use=n"},
        ("ai-input",),
    ),
    "/header-signal": (
        "Content-Signal: ai-train=no header",
        "",
        {"Content-Signal": "ai-train=no"},
        ("ai-train",),
    ),
    "/meta-noai": (
        "<meta name=robots content=noai>",
        '<meta name="robots" content="noai">',
        {},
        ("ai-input", "ai-train"),
    ),
    "/xrt-noimageai": (
        "X-Robots-Tag: noimageai",
        "",
        {"X-Robots-Tag": "noimageai"},
        ("ai-input", "ai-train"),
    ),
    "/tdm-file/x": ("tdmrep.json rule 1", "", {}, ("ai-input", "ai-train")),
    "/tdm-header": (
        "tdm-reservation: 1 header",
        "",
        {"tdm-reservation": "1"},
        ("ai-input", "ai-train"),
    ),
    "/tdm-meta": (
        "<meta name=tdm-reservation content=1>",
        '<meta name="tdm-reservation" content="1">',
        {},
        ("ai-input", "ai-train"),
    ),
    "/tdm-lifted/x": (
        "tdmrep.json rule 2, lifted by tdm-reservation: 0",
        "",
        {"tdm-reservation": "0"},
        (),
    ),
}


def site_a() -> web.Application:
    routes = web.RouteTableDef()

    @routes.get("/{path:.*}")
    async def answer(request: web.Request) -> web.Response:
        path = request.path
        if path == "/robots.txt":
            return web.Response(text=ROBOTS_A)
        if path == "/.well-known/tdmrep.json":
            return web.Response(text=TDMREP_A, content_type="application/json")
        if path == "/":
            links = "".join(f'<a href="{page}">{page}</a> ' for page in PAGES)
            return web.Response(text=f"<html><body>{links}</body></html>", content_type="text/html")
        if path in PAGES:
            _, meta, headers, _ = PAGES[path]
            html = f"<html><head>{meta}</head><body><p>the page {path}</p></body></html>"
            return web.Response(text=html, content_type="text/html", headers=headers)
        return web.Response(status=404)

    app = web.Application()
    app.add_routes(routes)
    return app


def site_b() -> web.Application:
    async def answer(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(text=ROBOTS_B)
        if request.path == "/":
            return web.Response(
                text='<html><body><a href="/b1">b1</a></body></html>', content_type="text/html"
            )
        if request.path == "/b1":
            return web.Response(text="<html><body>b1</body></html>", content_type="text/html")
        return web.Response(status=404)

    app = web.Application()
    app.router.add_get("/{path:.*}", answer)
    return app


def crawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "crawler", *args], capture_output=True, text=True, check=False
    )


async def main(data: Path) -> int:
    runners = []
    origins = []
    for ip, app in ((A, site_a()), (B, site_b())):
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, ip, 0)
        await site.start()
        port = runner.addresses[0][1]
        runners.append(runner)
        origins.append(f"http://{ip}:{port}")
    try:
        args = [f"{origin}/" for origin in origins]
        args += [
            "--data",
            str(data),
            "--fresh",
            "--purpose",
            "ai-train",
            "-s",
            "usage.tdmrep=always",
        ]
        print("$ crawl", " ".join(args))
        done = await asyncio.to_thread(crawl, *args)
    finally:
        for runner in runners:
            await runner.cleanup()
    print(done.stdout, end="")
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        return 1
    decided: dict[str, dict[str, str]] = {}
    for purpose in PURPOSES:
        exported = crawl("export", "--data", str(data), "--purpose", purpose)
        for line in exported.stdout.splitlines():
            page = json.loads(line)
            where = page["url"].split("/", 3)[3]
            name = f"/{where}" if page["url"].startswith(origins[0]) else f"B /{where}"
            decided.setdefault(name, {})[purpose] = "-" if page["index"] else "refused"
    expected = {path: refused for path, (_, _, _, refused) in PAGES.items()}
    expected |= {"B /": ("ai-train",), "B /b1": ("ai-train",), "/": ()}
    said = {path: what for path, (what, _, _, _) in PAGES.items()}
    said |= {"B /": "robots.txt Content-signal (Cloudflare)", "B /b1": "the same", "/": "nothing"}
    print(f"\n{'page':<20} {'its signal':<52} " + " ".join(f"{p:<9}" for p in PURPOSES))
    wrong = 0
    for name in sorted(decided):
        row = decided[name]
        refused = tuple(p for p in PURPOSES if row.get(p) != "-")
        wrong += refused != expected.get(name)
        print(
            f"{name:<20} {said.get(name, ''):<52} "
            + " ".join(f"{row.get(p, '?'):<9}" for p in PURPOSES)
        )
    print(f"\n{'every page as the README says' if not wrong else f'{wrong} pages NOT as expected'}")
    return 0 if not wrong else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="the data directory (default: a temporary one)")
    options = parser.parse_args()
    if options.data is not None:
        sys.exit(asyncio.run(main(options.data)))
    with tempfile.TemporaryDirectory() as temporary:
        sys.exit(asyncio.run(main(Path(temporary) / "data")))
