"""The speed web of benchmarks/bench_speed.py: static sites of generated pages, served by nginx.

    from speedweb import generate, Nginx, read_access_log

`generate(root, hosts=20, pages=250, port=...)` writes, for each host 127.0.1.1, 127.0.1.2, ...:

    ROOT/<ip>/robots.txt            Disallow and Allow rules (below), no Crawl-delay
    ROOT/<ip>/index.html            `/`, the seed
    ROOT/<ip>/p/<n>.html            the articles, n = 1 .. pages - OPEN_PAGES - 1
    ROOT/<ip>/private/open/<n>.html allowed by `Allow: /private/open/` inside `Disallow: /private/`
    ROOT/<ip>/private/*.html, search.html   disallowed pages that exist and are linked, so a
                                    crawler that ignores robots.txt fetches them
    ROOT/seeds.txt                  one `http://IP:PORT/` per line
    ROOT/web.json                   per host its allowed and disallowed URL paths

Pages are benchmarks/support/pagegen.py's article pages (about 12.5 KB, about 16 links: nav,
paragraphs, footer; exclusion sections, rel=nofollow links, some META noindex) with their links
rewritten to this web: each same-site link now points to a random allowed page of the same host
(written relative, root-relative or absolute, sometimes with a fragment), about one in ten to a
disallowed URL; links to other sites and mailto:/javascript: stay. Pages whose META robots says
nofollow are left out, `<base>` is dropped and the canonical link names the page itself. Each
allowed page also gets one plain link to the next allowed page at the top of its <main>, outside any
exclusion section, so a crawl that obeys every page signal still reaches all of them from `/`.
`verify` proves it before anything is timed: it reads every page with our page step and our
robots.txt engine, and with a bare selectolax parse, and walks each host from `/`.

`Nginx` runs a private nginx (its own prefix, config, pid and logs in a directory of ours; no
daemon) with one `server` per host on IP:PORT, and an access log of one line per request:
`$msec $server_addr $status $body_bytes_sent "$request_uri" "$http_user_agent" $connection`
($msec: the epoch time, to the millisecond, the response was finished; $connection: the
connection's serial number).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

from support.pagegen import ARTICLE, META_STRICT, OTHER_HOSTS, GenPage, generate_pages
from support.testweb import host_ips, href

ROBOTS_TXT = """\
# robots.txt of the speed web (benchmarks/bench_speed.py)
User-agent: BadBot
Disallow: /

User-agent: *
Disallow: /private/
Allow: /private/open/
Disallow: /search
Disallow: /*?print=
"""
OPEN_PAGES = 10
DISALLOWED = (
    "/private/a.html",
    "/private/b.html",
    "/private/c.html",
    "/private/notes/d.html",
    "/search.html?q=harbour",
    "/search.html?q=lantern",
    "/p/7.html?print=1",
)
DISALLOWED_SHARE = 0.1
FORMS = ("relative", "dot", "root", "absolute", "relative")
ANCHOR = re.compile(r'(<a\b[^>]*?\bhref=")([^"]*)(")')
BASE = re.compile(r'<base href="[^"]*">\n?')
CANONICAL = re.compile(r'<link rel="canonical" href="[^"]*">')
MAIN = '<main id="content">'
NGINX = "/usr/sbin/nginx"
LOG_FORMAT = (
    '$msec $server_addr $status $body_bytes_sent "$request_uri" "$http_user_agent" $connection'
)
LOG_LINE = re.compile(r'^(\S+) (\S+) (\d+) (\d+) "([^"]*)" "([^"]*)" (\d+)$')


class WebError(Exception):
    """The speed web cannot be built, verified or served."""


# ---------------------------------------------------------------------------------------------
# The web


def allowed_paths(pages: int) -> list[str]:
    """One host's allowed URL paths in spine order: `/`, the articles, the open private pages."""
    articles = pages - OPEN_PAGES - 1
    if articles < 8:  # DISALLOWED names /p/7.html
        raise WebError(f"--pages must be at least {OPEN_PAGES + 9}")
    return [
        "/",
        *(f"/p/{n}.html" for n in range(1, articles + 1)),
        *(f"/private/open/{n}.html" for n in range(1, OPEN_PAGES + 1)),
    ]


def file_of(url_path: str) -> str | None:
    """The file a URL path is served from; None for a URL that shares another's file."""
    bare = url_path.split("?", 1)[0]
    if bare != url_path and bare != "/search.html":
        return None  # /p/7.html?print=1 is /p/7.html
    return "index.html" if bare == "/" else bare.lstrip("/")


def follows(page: GenPage) -> bool:
    """False for a page whose META robots tells every robot not to follow its links."""
    return not any(
        tag.encode() in page.body and not follow and 'name="crawler"' not in tag.lower()
        for tag, _, follow in META_STRICT
    )


def rewrite(
    page: GenPage,
    path: str,
    origin: str,
    allowed: list[str],
    spine: str | None,
    rng: random.Random,
) -> str:
    """The generated page, its links pointing into this web (see the module's docstring)."""
    text = page.body.decode("utf-8")
    original_host = urlsplit(page.url).netloc

    def link(target: str) -> str:
        fragment = f"s{rng.randint(1, 9)}" if rng.random() < 0.3 else ""
        if "?" in target:
            fragment = ""
        return href(target, path, rng.choice(FORMS), origin, fragment)

    def anchor(match: re.Match[str]) -> str:
        value = match.group(2)
        if value.startswith(("mailto:", "javascript:", "tel:", "#")):
            return match.group(0)
        host = urlsplit(value).netloc
        if host and host != original_host and host in OTHER_HOSTS:
            return match.group(0)  # another site: out of everyone's scope
        choices = DISALLOWED if rng.random() < DISALLOWED_SHARE else allowed
        return match.group(1) + link(rng.choice(choices)) + match.group(3)

    text = ANCHOR.sub(anchor, text)
    text = BASE.sub("", text)
    text = CANONICAL.sub(f'<link rel="canonical" href="{origin}{path}">', text, count=1)
    if text.count(MAIN) != 1:
        raise WebError(f"generated page {page.url} has no single {MAIN}")
    if spine is not None:
        pager = f'{MAIN}\n<p class="pager"><a href="{link(spine)}">Next page</a></p>'
        text = text.replace(MAIN, pager)
    return text


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def generate(root: Path, *, hosts: int, pages: int, port: int, seed: int = 0) -> dict[str, Any]:
    """Write the web under `root`; returns what web.json holds."""
    allowed = allowed_paths(pages)
    files = sorted({name for path in DISALLOWED if (name := file_of(path)) is not None})
    wanted = hosts * (len(allowed) + len(files))
    pool = [p for p in generate_pages(int(wanted * 1.1) + 50, seed, ARTICLE) if follows(p)]
    if len(pool) < wanted:
        raise WebError(f"the generator gave {len(pool)} usable pages, {wanted} wanted")
    bodies = iter(pool)
    spec_hosts = []
    for index, ip in enumerate(host_ips("127.0.1.1", hosts)):
        rng = random.Random(f"speed/{seed}/{index}")
        origin = f"http://{ip}:{port}"
        site = root / ip
        write(site / "robots.txt", ROBOTS_TXT)
        spine = [*allowed[1:], None]
        for path, after in zip(allowed, spine, strict=True):
            write(site / file_of(path), rewrite(next(bodies), path, origin, allowed, after, rng))
        for name in files:
            body = rewrite(next(bodies), "/" + name, origin, allowed, None, rng)
            write(site / name, body)
        spec_hosts.append(
            {"ip": ip, "origin": origin, "allowed": allowed, "disallowed": list(DISALLOWED)}
        )
    web = {"port": port, "pages_per_host": len(allowed), "hosts": spec_hosts}
    (root / "seeds.txt").write_text("".join(f"{h['origin']}/\n" for h in spec_hosts))
    (root / "web.json").write_text(json.dumps(web, indent=1) + "\n")
    return web


# ---------------------------------------------------------------------------------------------
# Proof that the web is what the benchmark says


def walk_host(site: Path, origin: str, links_of: Callable[[bytes, str], Iterable[str]]) -> set[str]:
    """URL paths reached from `/` on one host, following `links_of(body, url)` within it."""
    start = f"{origin}/"
    seen = {start}
    todo = deque([start])
    while todo:
        url = todo.popleft()
        path = url[len(origin) :]
        name = file_of(path) or path.split("?", 1)[0].lstrip("/")
        file = site / name
        if not file.is_file():
            continue
        for link in links_of(file.read_bytes(), url):
            if link.startswith(origin + "/") and link not in seen:
                seen.add(link)
                todo.append(link)
    return {url[len(origin) :] for url in seen}


def verify(root: Path, web: dict[str, Any]) -> dict[str, Any]:
    """Walk every host as our crawler would (page rules, robots.txt) and as a bare loop would
    (every <a href>); raise WebError unless they reach exactly the allowed pages, and the allowed
    pages plus the disallowed URLs. Returns links per page as each reads them."""
    from selectolax.lexbor import LexborHTMLParser

    from crawler import load_config
    from crawler.page.read import PageRules, read_page
    from crawler.robots.txt import RobotsTxt

    token = load_config(None, []).product_token
    rules = PageRules(token)
    ours_links = bare_links = pages = 0

    for host in web["hosts"]:
        site = root / host["ip"]
        robots = RobotsTxt.parse((site / "robots.txt").read_bytes())
        origin = host["origin"]

        def ours(body: bytes, url: str, robots: RobotsTxt = robots) -> list[str]:
            nonlocal ours_links, pages
            page = read_page(body, url, charset="utf-8", rules=rules)
            pages += 1
            ours_links += len(page.links)
            links = page.links if page.follow else ()
            return [link for link in links if robots.can_fetch(link, token)]

        def bare(body: bytes, url: str) -> list[str]:
            nonlocal bare_links
            tree = LexborHTMLParser(body)
            hrefs = [a.attributes.get("href") or "" for a in tree.css("a[href]")]
            links = [urldefrag(urljoin(url, h)).url for h in hrefs]
            bare_links += len(links)
            return links

        allowed = set(host["allowed"])
        reached = walk_host(site, origin, ours)
        if reached != allowed:
            extra, missing = sorted(reached - allowed)[:3], sorted(allowed - reached)[:3]
            raise WebError(f"{origin}: our page step reaches {extra} and misses {missing}")
        everything = allowed | set(host["disallowed"])
        reached = walk_host(site, origin, bare)
        if reached != everything:
            extra, missing = sorted(reached - everything)[:3], sorted(everything - reached)[:3]
            raise WebError(f"{origin}: a bare walk reaches {extra} and misses {missing}")
        if any(robots.can_fetch(origin + path, token) for path in host["disallowed"]):
            raise WebError(f"{origin}: a disallowed URL is allowed by robots.txt")
    sizes = [f.stat().st_size for f in root.glob("*/**/*.html")]
    bare_pages = sum(len(h["allowed"]) + len(h["disallowed"]) for h in web["hosts"])
    return {
        "mean_page_bytes": sum(sizes) / len(sizes),
        "links_per_page": bare_links / bare_pages,
        "followed_links_per_page": ours_links / pages,
    }


# ---------------------------------------------------------------------------------------------
# nginx


def nginx_config(prefix: Path, root: Path, web: dict[str, Any], workers: int) -> str:
    # Connections need a file each: as many as the process may have (a bare loop opens ~1,200).
    files = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    files = 65536 if files == resource.RLIM_INFINITY else min(files, 65536)
    servers = "\n".join(
        f"    server {{ listen {h['ip']}:{web['port']} backlog=4096; root {root / h['ip']}; }}"
        for h in web["hosts"]
    )
    temp = "\n".join(
        f"    {kind}_temp_path {prefix / 'temp' / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""\
# A private nginx for benchmarks/bench_speed.py: static files, one server per host.
daemon off;
master_process on;
worker_processes {workers};
worker_rlimit_nofile {files};
pid {prefix / "nginx.pid"};
error_log {prefix / "error.log"} warn;
events {{
    worker_connections {files // 2};
}}
http {{
    types {{ text/html html; text/plain txt; }}
    default_type application/octet-stream;
    charset utf-8;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 75s;
    keepalive_requests 1000000;
    server_tokens off;
    index index.html;
    log_format bench '{LOG_FORMAT}';
    access_log {prefix / "access.log"} bench buffer=256k flush=1s;
{temp}
{servers}
}}
"""


def nginx_binary() -> str:
    found = shutil.which("nginx") or (NGINX if Path(NGINX).exists() else None)
    if found is None:
        raise WebError(
            "nginx is not installed: apt-get install -y nginx (Debian's nginx serves the web)"
        )
    return found


def nginx_version(binary: str) -> str:
    done = subprocess.run([binary, "-v"], capture_output=True, text=True, check=False)
    return (done.stderr or done.stdout).strip().split("/")[-1] or "unknown"


def port_free(ip: str, port: int) -> bool:
    with socket.socket() as probe:
        # As nginx binds: connections of an earlier run in TIME_WAIT do not hold the port.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((ip, port))
        except OSError:
            return False
    return True


@dataclass
class Nginx:
    """A private nginx serving `web` from `root`; its files in `prefix`. A context manager."""

    prefix: Path
    root: Path
    web: dict[str, Any]
    workers: int = 1
    process: subprocess.Popen[bytes] | None = None

    @property
    def access_log(self) -> Path:
        return self.prefix / "access.log"

    def __enter__(self) -> Nginx:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        binary = nginx_binary()
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.prefix / "temp" / kind).mkdir(parents=True, exist_ok=True)
        busy = [h["ip"] for h in self.web["hosts"] if not port_free(h["ip"], self.web["port"])]
        if busy:
            raise WebError(f"port {self.web['port']} is in use on {busy[0]}: choose --port")
        # Workers run as nobody when we are root: the web must be readable by everyone.
        for directory in (self.prefix, self.root):
            directory.chmod(directory.stat().st_mode | 0o755)
        for directory in self.root.parents:
            if directory.stat().st_mode & 0o005 == 0o005:
                break
            directory.chmod(directory.stat().st_mode | 0o755)
        config = self.prefix / "nginx.conf"
        config.write_text(nginx_config(self.prefix, self.root, self.web, self.workers))
        command = [binary, "-p", str(self.prefix), "-c", str(config), "-e", "stderr"]
        test = subprocess.run([*command, "-t"], capture_output=True, text=True, check=False)
        if test.returncode:
            raise WebError(f"nginx refuses its config: {test.stderr.strip()}")
        errors = (self.prefix / "stderr.log").open("wb")
        self.process = subprocess.Popen(
            command, stdout=errors, stderr=errors, start_new_session=True
        )
        errors.close()
        self._wait_ready()

    def _wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        pending = [(h["ip"], self.web["port"]) for h in self.web["hosts"]]
        while pending and time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                break
            with contextlib.suppress(OSError), socket.create_connection(pending[0], 0.5):
                pending.pop(0)
                continue
            time.sleep(0.05)
        if pending:
            message = (self.prefix / "stderr.log").read_text(errors="replace").strip()
            self.stop()
            raise WebError(f"nginx did not start: {message[-400:] or 'no output'}")

    def stop(self) -> None:
        """Gracefully (SIGQUIT: the access log's buffer is written), then harder."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        for sig, wait in ((signal.SIGQUIT, 10.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            try:
                process.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue


@dataclass(frozen=True, slots=True)
class Hit:
    t: float
    ip: str
    status: int
    size: int
    path: str
    agent: str
    connection: int  # nginx's serial number of the connection


def read_access_log(path: Path) -> list[Hit]:
    hits = []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            match = LOG_LINE.match(line.rstrip("\n"))
            if match is None:
                continue
            t, ip, status, size, uri, agent, connection = match.groups()
            hits.append(Hit(float(t), ip, int(status), int(size), uri, agent, int(connection)))
    return hits
