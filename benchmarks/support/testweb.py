#!/usr/bin/env python3
"""A local multi-host test web: a generator of static sites and one server for all of them.

    python benchmarks/support/testweb.py generate ROOT --hosts 20 --pages 17 --crawl-delay 0.5 \
        --port 8787
    python benchmarks/support/testweb.py serve ROOT --log requests.jsonl

Each host is a loopback address of its own (127.0.1.1, 127.0.1.2, ...), all on one port, so a
crawler sees distinct origins and keeps one politeness slot per host. `generate` writes:

    ROOT/<ip>/robots.txt          `User-agent: *` with Crawl-delay, Disallow: /private/,
                                  Allow: /private/public.html, then `extra_robots`
    ROOT/<ip>/index.html          the entry page, served at `/`
    ROOT/<ip>/p/<n>.html          pages 1..pages-2; page n links to n+1, the last to
                                  /private/public.html, so every page is reachable from `/`
    ROOT/<ip>/private/*.html      public.html (allowed, and counted as a page) and a.html, b.html,
                                  c.html (disallowed; pages link to them, so a crawler that ignores
                                  robots.txt fetches them)
    ROOT/seeds.txt                one `http://IP:PORT/` per line
    ROOT/web.json                 port, crawl_delay, and per host its allowed and disallowed paths

A page holds about `page_bytes` of HTML: a title, paragraphs of words, and about
`links_per_page` links, mostly same-host links written in several forms (`3.html`, `./3.html#s2`,
`../p/3.html`, `/p/3.html`, absolute), some absolute links to other hosts' pages, and duplicates
that normalise to a URL already on the page.

`serve` pre-loads every file and listens on each host's IP at web.json's port (one process, one
event loop, one aiohttp low-level server per IP). Every request is logged as one JSON line,
`{"t": time.monotonic() at the handler's start, "host": "IP:PORT", "path": raw path,
"status": ..., "ua": ...}`, flushed every 0.25 s and on SIGTERM/SIGINT. CLOCK_MONOTONIC is
system-wide on Linux, so other processes can compare their own monotonic stamps with the log's.
It prints `ready` once every site listens.

`read_log`, `read_web`, `politeness_figures` and `completeness` are for benchmarks
(benchmarks/bench_politeness.py).
"""

from __future__ import annotations

import argparse
import asyncio
import html
import ipaddress
import itertools
import json
import posixpath
import random
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

ROBOTS_PATH = "/robots.txt"
PRIVATE_PREFIX = "/private/"
ALLOWED_PRIVATE = "/private/public.html"
DISALLOWED_PAGES = ("/private/a.html", "/private/b.html", "/private/c.html")
DEFAULT_EXTRA_ROBOTS = """\
# A group that is not ours: a crawler must not read it as applying to every agent.
User-agent: BadBot
Disallow: /
"""
FLUSH_EVERY_S = 0.25

WORDS_TEXT = (
    "harbour lantern quiet river stone window garden morning letter market bridge winter summer "
    "orchard meadow engine signal record archive station library street corner evening mountain "
    "valley forest island coast village harvest journey compass anchor lighthouse ferry cargo "
    "timber copper silver paper ink press printer reader writer editor chapter volume index "
    "catalogue museum gallery portrait painter canvas colour shadow light north south east west "
    "old new small large early late bright dark warm cold green blue grey golden narrow wide "
    "the a of and to in on with for from by at under over between through across along beyond "
    "is was were has had will would could should may might must can often seldom always never "
    "keeps holds carries brings finds builds opens closes follows leads reads writes counts "
    "measures travels returns remembers notes describes shows"
)
WORDS = tuple(WORDS_TEXT.split())


# ---------------------------------------------------------------------------------------------
# Generator


@dataclass(frozen=True)
class HostPlan:
    ip: str
    origin: str
    allowed: tuple[str, ...]  # URL paths a polite, complete crawl fetches ("/" first)
    disallowed: tuple[str, ...]  # URL paths that exist, are linked, and robots.txt forbids


def host_ips(first_ip: str, hosts: int) -> list[str]:
    first = ipaddress.IPv4Address(first_ip)
    ips = [first + i for i in range(hosts)]
    loopback = ipaddress.IPv4Network("127.0.0.0/8")
    outside = [str(ip) for ip in ips if ip not in loopback]
    if outside:
        raise ValueError(f"only loopback hosts may be served; {outside[0]} is not in 127.0.0.0/8")
    return [str(ip) for ip in ips]


def page_paths(pages_per_host: int) -> tuple[str, ...]:
    """The allowed pages of one host: `/`, /p/1.html .. /p/<pages-2>.html, the public private."""
    if pages_per_host < 2:
        raise ValueError("pages_per_host must be at least 2 (the entry page and the public one)")
    numbered = tuple(f"/p/{n}.html" for n in range(1, pages_per_host - 1))
    return ("/", *numbered, ALLOWED_PRIVATE)


def url_directory(path: str) -> str:
    return path if path.endswith("/") else posixpath.dirname(path) + "/"


def href(target: str, page: str, form: str, origin: str, fragment: str = "") -> str:
    """Write a link from `page` to `target` (both URL paths) in one of several equivalent forms."""
    suffix = f"#{fragment}" if fragment else ""
    if form == "absolute":
        return f"{origin}{target}{suffix}"
    if form == "root":
        return f"{target}{suffix}"
    base = url_directory(page)
    relative = posixpath.relpath(target, base.rstrip("/") or "/")
    if target.endswith("/") and relative != ".":
        relative += "/"
    if relative == ".":
        relative = "./"
    if form == "dot" and not relative.startswith(("../", "./")):
        relative = f"./{relative}"
    return f"{relative}{suffix}"


def robots_txt(crawl_delay: float | None, extra_robots: str) -> str:
    lines = ["# robots.txt of the local test web (benchmarks/support/testweb.py)", "User-agent: *"]
    if crawl_delay is not None:
        lines.append(f"Crawl-delay: {crawl_delay:g}")
    lines += [f"Disallow: {PRIVATE_PREFIX}", f"Allow: {ALLOWED_PRIVATE}", ""]
    text = "\n".join(lines) + "\n"
    if extra_robots:
        text += extra_robots if extra_robots.endswith("\n") else extra_robots + "\n"
    return text


def links_for(
    path: str,
    host: HostPlan,
    others: Sequence[HostPlan],
    links_per_page: int,
    rng: random.Random,
) -> list[tuple[str, str]]:
    """(href, anchor text) pairs for one page: home, next, private, cross-host, duplicates, rest."""
    pages = host.allowed
    here = pages.index(path) if path in pages else -1
    links: list[tuple[str, str]] = [(href("/", path, rng.choice(("root", "relative")), ""), "home")]
    if 0 <= here < len(pages) - 1:
        nxt = pages[here + 1]
        links.append((href(nxt, path, "relative", host.origin), "next page"))
        # The same URL again, written so only normalisation shows it is not new.
        form = rng.choice(("dot", "absolute", "root"))
        links.append((href(nxt, path, form, host.origin, f"s{rng.randint(1, 9)}"), "continue"))
    if here % 2 == 0:
        secret = DISALLOWED_PAGES[(here // 2) % len(DISALLOWED_PAGES)]
        links.append((href(secret, path, rng.choice(("root", "relative")), ""), "staff only"))
    if here == 0:
        links.append((href(ALLOWED_PRIVATE, path, "relative", ""), "public notes"))
    for other in rng.sample(list(others), min(2, len(others))):
        target = rng.choice(other.allowed)
        links.append((href(target, path, "absolute", other.origin), f"elsewhere {other.ip}"))
    while len(links) < links_per_page:
        target = rng.choice(pages)
        form = rng.choice(("relative", "dot", "root", "absolute", "relative"))
        fragment = f"s{rng.randint(1, 9)}" if rng.random() < 0.3 else ""
        links.append((href(target, path, form, host.origin, fragment), rng.choice(WORDS)))
    return links


def sentence(rng: random.Random) -> list[str]:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 18))]
    words[0] = words[0].capitalize()
    words[-1] += "."
    return words


def page_html(
    path: str,
    host: HostPlan,
    links: Sequence[tuple[str, str]],
    page_bytes: int,
    rng: random.Random,
) -> str:
    title = f"{host.ip} {path}: {rng.choice(WORDS)} {rng.choice(WORDS)}"
    head = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"</head>\n<body>\n<header><h1>{html.escape(title)}</h1></header>\n<main>\n"
    )
    tail = f"</main>\n<footer><p>Generated page of {host.ip}.</p></footer>\n</body>\n</html>\n"
    anchors = [f'<a href="{html.escape(url)}">{html.escape(text)}</a>' for url, text in links]
    budget = page_bytes - len(head) - len(tail) - sum(len(a) + 1 for a in anchors)
    paragraphs: list[list[str]] = []
    size = 0
    while size < budget or len(paragraphs) < 2:
        words = [w for _ in range(rng.randint(3, 6)) for w in sentence(rng)]
        paragraphs.append(words)
        size += sum(len(w) + 1 for w in words) + 8
    for anchor in anchors:
        words = rng.choice(paragraphs)
        words.insert(rng.randint(0, len(words)), anchor)
    body = "".join(
        f'<p id="s{i + 1}">{" ".join(words)}</p>\n' for i, words in enumerate(paragraphs)
    )
    return head + body + tail


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def file_for(url_path: str) -> str:
    return url_path.lstrip("/") + "index.html" if url_path.endswith("/") else url_path.lstrip("/")


def generate(
    root: Path,
    *,
    hosts: int,
    pages_per_host: int,
    crawl_delay: float | None,
    links_per_page: int = 13,
    page_bytes: int = 12_000,
    first_ip: str = "127.0.1.1",
    port: int,
    seed: int = 0,
    extra_robots: str = DEFAULT_EXTRA_ROBOTS,
) -> dict[str, Any]:
    """Write the web under `root` and return what web.json holds."""
    allowed = page_paths(pages_per_host)
    plans = [
        HostPlan(ip, f"http://{ip}:{port}", allowed, DISALLOWED_PAGES)
        for ip in host_ips(first_ip, hosts)
    ]
    root.mkdir(parents=True, exist_ok=True)
    robots = robots_txt(crawl_delay, extra_robots)
    for index, host in enumerate(plans):
        rng = random.Random(f"{seed}/{index}")
        others = plans[:index] + plans[index + 1 :]
        site = root / host.ip
        write(site / "robots.txt", robots)
        for path in (*host.allowed, *host.disallowed):
            links = links_for(path, host, others, links_per_page, rng)
            write(site / file_for(path), page_html(path, host, links, page_bytes, rng))
    web: dict[str, Any] = {
        "port": port,
        "crawl_delay": crawl_delay,
        "pages_per_host": pages_per_host,
        "disallow_prefix": PRIVATE_PREFIX,
        "allowed_private": ALLOWED_PRIVATE,
        "hosts": [
            {
                "ip": h.ip,
                "host": f"{h.ip}:{port}",
                "origin": h.origin,
                "allowed": list(h.allowed),
                "disallowed": list(h.disallowed),
            }
            for h in plans
        ],
    }
    (root / "seeds.txt").write_text("".join(f"{h.origin}/\n" for h in plans), encoding="utf-8")
    (root / "web.json").write_text(json.dumps(web, indent=1) + "\n", encoding="utf-8")
    return web


def read_web(root: Path) -> dict[str, Any]:
    web: dict[str, Any] = json.loads((root / "web.json").read_text(encoding="utf-8"))
    return web


# ---------------------------------------------------------------------------------------------
# Server

CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".txt": "text/plain; charset=utf-8"}
LogRecord = tuple[float, str, str, int, str]


def load_site(site: Path) -> dict[str, tuple[bytes, str]]:
    """URL path -> (body, Content-Type) for every file of one host; `dir/` serves dir/index.html."""
    files: dict[str, tuple[bytes, str]] = {}
    for file in site.rglob("*"):
        if not file.is_file():
            continue
        url_path = "/" + file.relative_to(site).as_posix()
        entry = (file.read_bytes(), CONTENT_TYPES.get(file.suffix, "application/octet-stream"))
        files[url_path] = entry
        if file.name == "index.html":
            files[url_path.removesuffix("index.html")] = entry
    return files


def make_handler(
    label: str, files: dict[str, tuple[bytes, str]], records: list[LogRecord]
) -> Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]:
    not_found = b"404 not found\n"

    async def handle(request: web.BaseRequest) -> web.Response:
        t = time.monotonic()
        found = files.get(request.path)
        if request.method not in ("GET", "HEAD"):
            status, body, content_type = 405, b"", "text/plain; charset=utf-8"
        elif found is None:
            status, body, content_type = 404, not_found, "text/plain; charset=utf-8"
        else:
            status, (body, content_type) = 200, found
        records.append((t, label, request.raw_path, status, request.headers.get("User-Agent", "")))
        return web.Response(status=status, body=body, headers={"Content-Type": content_type})

    return handle


class RequestLog:
    """Buffered JSON-lines request log; `flush` writes what the handlers appended since."""

    def __init__(self, path: Path) -> None:
        self.records: list[LogRecord] = []
        self._file = path.open("a", encoding="utf-8")

    def flush(self) -> None:
        records = self.records[:]
        del self.records[:]  # in place: the handlers hold this list
        if records:
            self._file.write(
                "".join(
                    json.dumps({"t": t, "host": host, "path": path, "status": status, "ua": ua})
                    + "\n"
                    for t, host, path, status, ua in records
                )
            )
        self._file.flush()

    def close(self) -> None:
        self.flush()
        self._file.close()

    async def flush_forever(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_EVERY_S)
            self.flush()


async def serve(root: Path, log_path: Path) -> None:
    spec = read_web(root)
    port = int(spec["port"])
    log = RequestLog(log_path)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    runners: list[web.ServerRunner] = []
    try:
        for host in spec["hosts"]:
            ip = host["ip"]
            host_ips(ip, 1)  # refuses anything outside 127.0.0.0/8
            handler = make_handler(f"{ip}:{port}", load_site(root / ip), log.records)
            runner = web.ServerRunner(
                web.Server(handler, access_log=None), handle_signals=False, shutdown_timeout=1.0
            )
            await runner.setup()
            runners.append(runner)
            await web.TCPSite(runner, ip, port, backlog=1024).start()
        print("ready", flush=True)
        flusher = asyncio.create_task(log.flush_forever())
        await stop.wait()
        flusher.cancel()
    finally:
        log.flush()  # before the slow part: the log is complete once SIGTERM is handled
        await asyncio.gather(*(runner.cleanup() for runner in runners), return_exceptions=True)
        log.close()


# ---------------------------------------------------------------------------------------------
# Figures


def read_log(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def is_disallowed(path: str, allowed_private: str = ALLOWED_PRIVATE) -> bool:
    bare = path.split("?", 1)[0]
    return bare.startswith(PRIVATE_PREFIX) and bare != allowed_private


def politeness_figures(
    log_entries: Iterable[dict[str, Any]], delay: float, *, allowed_private: str = ALLOWED_PRIVATE
) -> dict[str, Any]:
    """Server-side timing and hygiene of one crawl; see benchmarks/bench_politeness.py for terms.

    A gap is the time between the starts of two consecutive requests to one host, robots.txt
    included; a gap strictly below `delay` counts (no tolerance). The ideal span is what a crawler
    that keeps each host busy exactly once per `delay`, all hosts in parallel, would need:
    max over hosts of (requests to the host - 1) * delay; efficiency = ideal span / achieved span.
    """
    entries = sorted(log_entries, key=lambda e: e["t"])
    starts: dict[str, list[float]] = defaultdict(list)
    fetches: dict[tuple[str, str], int] = defaultdict(int)
    for entry in entries:
        starts[entry["host"]].append(entry["t"])
        fetches[entry["host"], entry["path"]] += 1
    first = entries[0]["t"] if entries else 0.0
    last = entries[-1]["t"] if entries else 0.0
    hosts: dict[str, dict[str, Any]] = {}
    for host, times in sorted(starts.items()):
        gaps = [b - a for a, b in itertools.pairwise(times)]
        hosts[host] = {
            "requests": len(times),
            "starts": [round(t - first, 4) for t in times],
            "gaps": [round(g, 4) for g in gaps],
            "min_gap": min(gaps) if gaps else None,
            "gaps_below_delay": sum(g < delay for g in gaps),
        }
    span = last - first
    ideal = max(((h["requests"] - 1) * delay for h in hosts.values()), default=0.0)
    pages = [e for e in entries if e["status"] == 200 and e["path"].split("?", 1)[0] != ROBOTS_PATH]
    distinct_pages = {(e["host"], e["path"]) for e in pages}
    min_gaps = [h["min_gap"] for h in hosts.values() if h["min_gap"] is not None]
    below = {host: h["gaps_below_delay"] for host, h in hosts.items() if h["gaps_below_delay"]}
    return {
        "delay": delay,
        "requests": len(entries),
        "first": first,
        "last": last,
        "span": span,
        "ideal_span": ideal,
        "efficiency": ideal / span if span > 0 else None,
        "min_gap": min(min_gaps, default=None),
        "gaps_below_delay": sum(below.values()),
        "hosts_below_delay": sorted(below),
        "pages_fetched": len(distinct_pages),
        "page_fetches": len(pages),
        "duplicates": sum(n - 1 for n in fetches.values()),
        "duplicate_urls": sorted(f"{h}{p}" for (h, p), n in fetches.items() if n > 1),
        "disallowed": sum(is_disallowed(e["path"], allowed_private) for e in entries),
        "pages_per_s": len(distinct_pages) / span if span > 0 else None,
        "not_ok": sum(e["status"] != 200 for e in entries),
        "user_agents": sorted({e.get("ua", "") for e in entries}),
        "hosts": hosts,
    }


def completeness(log_entries: Iterable[dict[str, Any]], web: dict[str, Any]) -> dict[str, Any]:
    """Which of web.json's allowed pages were fetched (status 200), and which were not."""
    fetched = {(e["host"], e["path"]) for e in log_entries if e["status"] == 200}
    expected = [(h["host"], path) for h in web["hosts"] for path in h["allowed"]]
    missing = [f"{host}{path}" for host, path in expected if (host, path) not in fetched]
    return {"expected_pages": len(expected), "missing": len(missing), "missing_urls": missing}


# ---------------------------------------------------------------------------------------------
# Command line


def run_loop(main: Coroutine[Any, Any, None]) -> None:
    """The server runs on uvloop where it is installed, as the crawl does: a test server slow to
    start its handlers would add its own delay to the gaps and spans its log shows."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
    else:
        uvloop.run(main)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write a web under ROOT")
    gen.add_argument("root", type=Path)
    gen.add_argument("--hosts", type=int, default=20)
    gen.add_argument("--pages", type=int, default=17, help="allowed pages per host, `/` included")
    gen.add_argument("--crawl-delay", type=float, default=None)
    gen.add_argument("--links", type=int, default=13, help="links per page")
    gen.add_argument("--page-bytes", type=int, default=12_000)
    gen.add_argument("--first-ip", default="127.0.1.1")
    gen.add_argument("--port", type=int, default=8787)
    gen.add_argument("--seed", type=int, default=0)
    srv = sub.add_parser("serve", help="serve ROOT's hosts, logging every request")
    srv.add_argument("root", type=Path)
    srv.add_argument("--log", type=Path, required=True, help="JSON-lines request log (appended)")
    args = parser.parse_args(argv)
    if args.command == "generate":
        web = generate(
            args.root,
            hosts=args.hosts,
            pages_per_host=args.pages,
            crawl_delay=args.crawl_delay,
            links_per_page=args.links,
            page_bytes=args.page_bytes,
            first_ip=args.first_ip,
            port=args.port,
            seed=args.seed,
        )
        pages = sum(len(h["allowed"]) for h in web["hosts"])
        print(f"{args.root}: {len(web['hosts'])} hosts, {pages} allowed pages, port {args.port}")
        return 0
    try:
        run_loop(serve(args.root, args.log))
    except OSError as error:
        print(f"testweb: cannot serve: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
