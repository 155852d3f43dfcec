#!/usr/bin/env python3
"""Our crawler beside `wget --recursive -e robots=on` on real HTML nobody here wrote (issue 16).

    python benchmarks/compare_wget.py [--package-root PATH ...] [--robots FILE] [--keep DIR]
        [--port 8799] [--list 25] [--timeout 900]

The web: HTML documentation trees from Debian documentation packages, served as they are by a
private nginx on loopback. By default four trees, each mounted under a path of its own:

    /python3/     /usr/share/doc/python3/html      python3-doc (Sphinx, ~530 pages)
    /postgresql/  /usr/share/doc/postgresql-doc-15/html   postgresql-doc-15 (DocBook, ~1,170)
    /vim/         /usr/share/doc/vim/html          vim-doc (vim's help as 1990s HTML, ~160:
                  upper-case tags, Latin-1, hrefs like `http://..`, `g:gnat.html`, `ftp://`)
    /cppunit/     /usr/share/doc/libcppunit-doc/html   libcppunit-doc (Doxygen, ~425: include
                  graphs as <map><area href>, menus written by JavaScript, empty hrefs)

(`apt-get install python3-doc postgresql-doc-15 vim-doc libcppunit-doc`; the script says so
when they are missing. `--package-root PATH`, repeatable, serves other trees instead, each at
`/NAME/`, NAME being the directory's name, or its parent's when it is called `html`.) The web's
root holds a symbolic link to each tree and a robots.txt written here (printed in the report):
`User-agent: *`, `Crawl-delay: 0`, whole directories and prefixes disallowed, and three rules
RFC 9309 and wget read differently on purpose: an `Allow` for one page inside a disallowed
directory (RFC 9309: the longest match wins; wget: the first matching line does), a `*` wildcard
and a `$` end anchor (RFC 9309: patterns; wget: literal characters). `--robots FILE` serves
another. For trees other than the default ones the rules are made up: their two smallest
subdirectories holding HTML.

nginx (one worker, in the foreground under this script, its config, pid and logs in the work
directory, stopped in a `finally`) listens twice on the same port with the same root:

    127.0.3.1:PORT   crawled by ours,  logged to nginx/ours.access.log
    127.0.3.2:PORT   crawled by wget,  logged to nginx/wget.access.log

Two addresses, not two ports: our crawl takes a seed's host on any port into scope. Each log line
has the time, the status, the bytes, the request line as the client sent it, the answer's
Content-Type and the User-Agent.

The crawlers, one after the other, each from its process start to its exit (wall time):

    ours  crawl SEEDS -c WORK/ours.yaml --data WORK/ours-data
          (politeness.min_delay 0, so Crawl-delay 0 is not raised to the default 1 s;
          one request at a time per host, as wget; output.format jsonl, which also writes
          skips.jsonl: every URL met and not fetched, with the reason)
    wget  wget --recursive --level=inf --no-parent -e robots=on --reject '*.png,*.css,...'
          --no-verbose --directory-prefix WORK/wget-files SEED...

`--reject` is our `scope.skip_extensions` list (images, archives, media, fonts, documents,
programs, CSS and JS) as `*.EXT` patterns: without it wget would also fetch every image, style
sheet and script the pages embed (recursive wget follows `<img src>`, `<link href>` and `<script
src>`), and its time would not be comparable; `.html` files are exempt from -R in wget, since it
must parse them. Both read the same robots.txt; wget ignores Crawl-delay, which is 0 here.
`--no-parent` keeps wget under each seed's directory; ours has no such rule (its scope is the
seeds' hosts), so a root-relative link out of a tree is a difference the report names as such.

What is counted, from each server's own log: an HTML URL is a distinct request target (path and
query as sent) answered 200 with a `text/html` Content-Type (the `.html` files and the directories,
whose index.html nginx serves); robots.txt requests, other 200 answers (non-HTML, by extension)
and other statuses are counted apart, and a URL requested twice is a duplicate.

How to read the report: the table gives each crawler's figures; `HTML URLs` the counts, the
overlap and the URLs only one fetched, and how many pages both reached though no `<a href>`
links them (`area[href]`: image maps; `frame[src]`, ...). Then five sections of URLs, each split
into classes by what the other crawler did with them, each class with a count, an example URL,
a page that links to it (one the other crawler fetched, when there is one) and that link's HTML:
- only wget fetched (HTML, 200) and only wget asked (other answers): the reason in our
  skips.jsonl when ours met the URL (`disallowed by robots.txt` with the rule, ...); else
  `pages ours fetched link to it, by KIND`: ours read those pages and did not take that kind of
  link, a link ours misses and ours to fix unless the kind is one ours ignores on purpose
  (`<link>`); `linked only from pages ours did not fetch`: it follows from another difference;
  `no link to it on the served pages`;
- only ours fetched (HTML, 200) and only ours asked (other answers): what wget's robots.txt
  reading says (the first matching line decides, `*` and `$` are plain characters, the query is
  not looked at, as wget's src/res.c does), `--no-parent`, or the links to it as above;
- the same file spelled two ways (percent-encoding, `index.html` against `/`) in both lists;
- HTML files of the trees neither fetched: disallowed for both, or linked from nowhere a crawler
  that does not run JavaScript can see.
Differences wget makes by reading robots.txt the pre-RFC 9309 way are expected; a page wget
reached through a link ours does not follow is ours to look at.

Exit status: 0 when both crawls ran and were compared (whatever they found), 1 when it could not
(no nginx, wget or tree, the port in use), 2 for bad arguments, 130 or 143 when interrupted
(nginx, the crawler running and the temporary files go with it).
"""

from __future__ import annotations

import argparse
import contextlib
import html
import json
import os
import posixpath
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from support.machine import machine
from support.processes import END_STEPS, end_group, run_tool, tail
from support.speedweb import port_free

from crawler.config import SKIP_EXTENSIONS

REPO = Path(__file__).resolve().parent.parent
OURS_IP = "127.0.3.1"
WGET_IP = "127.0.3.2"
DEFAULT_PORT = 8799
NGINX = "/usr/sbin/nginx"
MIME_TYPES = Path("/etc/nginx/mime.types")
WGET_SERVER_ERROR = 8
"""wget's exit status when a server answered an error (a 404 is enough)."""


@dataclass(frozen=True)
class Package:
    name: str
    """Where the tree is served: /NAME/."""
    root: Path
    debian: str = ""
    """The Debian package that installs it, for the message when it is missing."""


DEFAULT_PACKAGES = (
    Package("python3", Path("/usr/share/doc/python3/html"), "python3-doc"),
    Package("postgresql", Path("/usr/share/doc/postgresql-doc-15/html"), "postgresql-doc-15"),
    Package("vim", Path("/usr/share/doc/vim/html"), "vim-doc"),
    Package("cppunit", Path("/usr/share/doc/libcppunit-doc/html"), "libcppunit-doc"),
)
# Rules for the default trees. The order matters to wget (the first matching line decides), not
# to RFC 9309 (the longest match decides, Allow on a tie).
DEFAULT_RULES = {
    "python3": (
        "Disallow: /python3/whatsnew/",
        "Allow: /python3/whatsnew/3.11.html",
        "Disallow: /python3/distutils/",
        "Disallow: /python3/_sources/",
        "Disallow: /python3/genindex-*.html",
    ),
    "postgresql": ("Disallow: /postgresql/release-",),
    "vim": ("Disallow: /vim/version", "Disallow: /vim/todo.html$"),
    "cppunit": ("Disallow: /cppunit/search/",),
}
ROBOTS_HEAD = """\
# robots.txt of benchmarks/compare_wget.py: the same file for both crawlers
User-agent: *
Crawl-delay: 0
"""
LOG_FORMAT = (
    '$msec $server_addr $status $body_bytes_sent "$request" "$sent_http_content_type" '
    '"$http_user_agent"'
)
LOG_LINE = re.compile(r'^(\S+) (\S+) (\d+) (\d+) "(.*)" "(.*)" "(.*)"$')
TAG = re.compile(r"<([A-Za-z][A-Za-z0-9]*)\b((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>", re.DOTALL)
URL_ATTRIBUTE = re.compile(
    r"(?:^|\s)(href|src)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+))", re.IGNORECASE
)
REL = re.compile(r"(?:^|\s)rel\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+))", re.IGNORECASE)


class CompareError(Exception):
    """The comparison cannot run: a tool, a tree or the port is missing."""


# ---------------------------------------------------------------------------------------------
# The web


def mount_name(root: Path) -> str:
    name = root.name if root.name != "html" else root.parent.name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name) or "docs"


def packages_of(roots: Sequence[Path] | None) -> list[Package]:
    if not roots:
        missing = [p for p in DEFAULT_PACKAGES if not (p.root / "index.html").is_file()]
        if missing:
            names = " ".join(p.debian for p in missing)
            raise CompareError(
                f"{', '.join(str(p.root) for p in missing)} missing: apt-get install -y {names}"
                " (or give --package-root PATH)"
            )
        return list(DEFAULT_PACKAGES)
    packages: list[Package] = []
    for root in roots:
        if not root.is_dir():
            raise CompareError(f"--package-root {root}: not a directory")
        name, taken = mount_name(root), {p.name for p in packages}
        suffix = 2
        while name in taken or name == "robots.txt":
            name, suffix = f"{mount_name(root)}-{suffix}", suffix + 1
        packages.append(Package(name, root))
    return packages


def html_files(root: Path) -> Iterator[Path]:
    for directory, _, names in os.walk(root, followlinks=True):
        for name in sorted(names):
            if name.endswith((".html", ".htm")):
                yield Path(directory) / name


def made_up_rules(package: Package) -> tuple[str, ...]:
    """For a tree without rules of its own: its two smallest subdirectories that hold HTML."""
    counts = []
    for child in sorted(package.root.iterdir()):
        if child.is_dir() and not child.name.startswith((".", "_")):
            count = sum(1 for _ in html_files(child))
            if count:
                counts.append((count, child.name))
    return tuple(f"Disallow: /{package.name}/{name}/" for _, name in sorted(counts)[:2])


def robots_text(packages: Sequence[Package]) -> str:
    lines = [ROBOTS_HEAD.rstrip("\n")]
    for package in packages:
        lines.extend(DEFAULT_RULES.get(package.name) or made_up_rules(package))
    return "\n".join(lines) + "\n"


def build_root(web: Path, packages: Sequence[Package], robots: str) -> None:
    web.mkdir(parents=True)
    for package in packages:
        (web / package.name).symlink_to(package.root.resolve(), target_is_directory=True)
    (web / "robots.txt").write_text(robots)


# ---------------------------------------------------------------------------------------------
# nginx


def nginx_config(prefix: Path, web: Path, port: int) -> str:
    types = (
        f"include {MIME_TYPES};"
        if MIME_TYPES.is_file()
        else "types { text/html html htm; text/plain txt; text/css css; }"
    )
    temp = "\n".join(
        f"    {kind}_temp_path {prefix / 'temp' / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    servers = "\n".join(
        f"    server {{ listen {ip}:{port}; root {web}; "
        f"access_log {prefix / f'{who}.access.log'} compare; }}"
        for who, ip in (("ours", OURS_IP), ("wget", WGET_IP))
    )
    # Run as root, nginx would hand its workers to nobody, who may not read the work directory
    # (mkdtemp's are 0700): they stay ours instead, and no directory's mode is changed.
    user = "user root;\n" if os.geteuid() == 0 else ""
    return f"""\
# A private nginx for benchmarks/compare_wget.py: one tree, two addresses, a log each.
{user}daemon off;
master_process on;
worker_processes 1;
pid {prefix / "nginx.pid"};
error_log {prefix / "error.log"} warn;
events {{ worker_connections 1024; }}
http {{
    {types}
    default_type application/octet-stream;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 75s;
    keepalive_requests 100000;
    server_tokens off;
    index index.html;
    log_format compare '{LOG_FORMAT}';
{temp}
{servers}
}}
"""


def binary(name: str, fallback: str = "", package: str = "") -> str:
    found = shutil.which(name) or (fallback if fallback and Path(fallback).exists() else None)
    if found is None:
        raise CompareError(f"{name} is not installed: apt-get install -y {package or name}")
    return found


def version_line(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return ((done.stdout or done.stderr).strip().splitlines() or ["unknown"])[0]


@contextlib.contextmanager
def nginx_serving(prefix: Path, web: Path, port: int) -> Iterator[None]:
    """nginx in the foreground, in a session of its own, for the `with` block; never left
    running: SIGQUIT (its logs are written), then SIGTERM, then SIGKILL, to its process group."""
    nginx = binary("nginx", NGINX, "nginx-light")
    for ip in (OURS_IP, WGET_IP):
        if not port_free(ip, port):
            raise CompareError(f"port {port} is in use on {ip}: choose --port")
    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (prefix / "temp" / kind).mkdir(parents=True, exist_ok=True)
    config = prefix / "nginx.conf"
    config.write_text(nginx_config(prefix, web, port))
    command = [nginx, "-p", str(prefix), "-c", str(config), "-e", "stderr"]
    test = subprocess.run([*command, "-t"], capture_output=True, text=True, check=False)
    if test.returncode:
        raise CompareError(f"nginx refuses its config: {test.stderr.strip()}")
    with (prefix / "stderr.log").open("wb") as errors:
        process = subprocess.Popen(command, stdout=errors, stderr=errors, start_new_session=True)
    try:
        deadline = time.monotonic() + 10.0
        pending = [OURS_IP, WGET_IP]
        while pending and time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(OSError), socket.create_connection((pending[0], port), 0.5):
                pending.pop(0)
                continue
            time.sleep(0.05)
        if pending:
            message = (prefix / "stderr.log").read_text(errors="replace").strip()
            raise CompareError(f"nginx did not start: {message[-400:] or 'no output'}")
        yield
    finally:
        end_group(process, ((signal.SIGQUIT, 10.0), *END_STEPS))


# ---------------------------------------------------------------------------------------------
# The crawlers


def seeds(ip: str, port: int, packages: Sequence[Package]) -> list[str]:
    return [f"http://{ip}:{port}/{p.name}/" for p in packages]


OURS_CONFIG = """\
# benchmarks/compare_wget.py: as fast as the robots.txt lets it (Crawl-delay: 0), one request at
# a time per host as wget, JSONL output so skips.jsonl says why each URL met was not fetched.
politeness:
  min_delay: 0
  per_host_concurrency: 1
output:
  format: jsonl
  progress_interval: 5
"""


def ours_command(crawl: str, work: Path, port: int, packages: Sequence[Package]) -> list[str]:
    (work / "ours-seeds.txt").write_text("\n".join(seeds(OURS_IP, port, packages)) + "\n")
    (work / "ours.yaml").write_text(OURS_CONFIG)
    return [
        crawl,
        str(work / "ours-seeds.txt"),
        "-c",
        str(work / "ours.yaml"),
        "--data",
        str(work / "ours-data"),
    ]


def wget_command(wget: str, work: Path, port: int, packages: Sequence[Package]) -> list[str]:
    reject = ",".join(f"*.{extension}" for extension in SKIP_EXTENSIONS)
    return [
        wget,
        "--recursive",
        "--level=inf",
        "--no-parent",
        "-e",
        "robots=on",
        f"--reject={reject}",
        "--no-verbose",
        f"--directory-prefix={work / 'wget-files'}",
        *seeds(WGET_IP, port, packages),
    ]


def shown(command: Sequence[str]) -> str:
    parts = []
    for part in command:
        if part.startswith("--reject="):
            shown_list = ",".join(f"*.{e}" for e in SKIP_EXTENSIONS[:3])
            part = f"--reject='{shown_list},...' ({len(SKIP_EXTENSIONS)} extensions)"
        parts.append(part)
    return " ".join(parts)


# ---------------------------------------------------------------------------------------------
# The server's logs


@dataclass(frozen=True, slots=True)
class Hit:
    t: float
    status: int
    size: int
    method: str
    target: str
    content_type: str
    agent: str


def read_log(path: Path) -> list[Hit]:
    hits = []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            match = LOG_LINE.match(line.rstrip("\n"))
            if match is None:
                continue
            t, _, status, size, request, content_type, agent = match.groups()
            method, _, rest = request.partition(" ")
            target = rest.rpartition(" ")[0] if " HTTP/" in rest else rest
            hits.append(Hit(float(t), int(status), int(size), method, target, content_type, agent))
    return hits


def extension(target: str) -> str:
    name = posixpath.basename(urlsplit(target).path)
    return name.rpartition(".")[2].lower() if "." in name else "(none)"


@dataclass
class Tally:
    """What one crawler asked the server for."""

    hits: list[Hit]
    html: dict[str, int] = field(default_factory=dict)
    """HTML request targets answered 200, with how many times each was asked."""
    robots: int = 0
    other_ok: Counter[str] = field(default_factory=Counter)
    """Targets answered 200 that are not HTML, with counts."""
    statuses: Counter[int] = field(default_factory=Counter)
    not_ok: dict[str, int] = field(default_factory=dict)
    """Targets answered with another status: their last status."""
    span: float = 0.0

    @classmethod
    def of(cls, hits: list[Hit]) -> Tally:
        tally = cls(hits)
        html_count: Counter[str] = Counter()
        for hit in hits:
            tally.statuses[hit.status] += 1
            if urlsplit(hit.target).path == "/robots.txt":
                tally.robots += 1
            elif hit.status != 200:
                tally.not_ok[hit.target] = hit.status
            elif hit.content_type.startswith("text/html"):
                html_count[hit.target] += 1
            else:
                tally.other_ok[hit.target] += 1
        tally.html = dict(html_count)
        if hits:
            tally.span = hits[-1].t - hits[0].t
        return tally

    @property
    def duplicates(self) -> int:
        return sum(1 for count in self.html.values() if count > 1)


def key(target: str) -> str:
    """A request target as a comparison key: percent-decoded, dot segments resolved, no fragment.
    Two targets with one key name the same file."""
    parts = urlsplit(target)
    path = posixpath.normpath(unquote(parts.path)) + ("/" if parts.path.endswith("/") else "")
    path = path.replace("//", "/")
    return path + ("?" + unquote(parts.query) if parts.query else "")


def file_key(target: str) -> str:
    """`key`, with a directory named by its index.html: `/a/` and `/a/index.html` are one file."""
    k = key(target)
    path, mark, query = k.partition("?")
    if path.endswith("/"):
        path += "index.html"
    return path + mark + query


# ---------------------------------------------------------------------------------------------
# Explaining a difference


def target_of(url: str) -> str:
    """The request target (path and query) of an absolute URL."""
    parts = urlsplit(url)
    return (parts.path or "/") + ("?" + parts.query if parts.query else "")


def our_records(data: Path) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """From our JSONL output: {key: (reason, detail)} of the URLs skipped, and the keys of the
    URLs fetched (a redirect chain's every hop)."""
    skips: dict[str, tuple[str, str]] = {}
    fetched: set[str] = set()
    with contextlib.suppress(OSError), (data / "skips.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                skip = json.loads(line)
                skips.setdefault(key(target_of(skip["url"])), (skip["reason"], skip["detail"]))
    with contextlib.suppress(OSError), (data / "pages.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                page = json.loads(line)
                for url in (page["url"], page["final_url"], *page["redirects"]):
                    fetched.add(key(target_of(url)))
    return skips, fetched


def wget_robots_rules(text: str) -> list[tuple[bool, str]]:
    """(allow, path) of the `User-agent: *` group, in file order, as wget's res.c keeps them."""
    rules: list[tuple[bool, str]] = []
    ours = False
    for raw in text.splitlines():
        line = raw.partition("#")[0].strip()
        name, _, value = line.partition(":")
        name, value = name.strip().lower(), value.strip()
        if name == "user-agent":
            ours = value == "*" or "wget" in value.lower()
        elif ours and name in ("allow", "disallow"):
            if value:
                rules.append((name == "allow", value))
            else:
                rules.append((True, "/"))
    return rules


def wget_robots(rules: list[tuple[bool, str]], target: str) -> tuple[bool, str]:
    """wget's reading (src/res.c): the path without its query, compared literally (`*` and `$`
    are characters) and percent-decoded, against each rule's prefix; the first match decides."""
    path = unquote(urlsplit(target).path)
    for allow, prefix in rules:
        if path.startswith(unquote(prefix)):
            return allow, f"{'Allow' if allow else 'Disallow'}: {prefix}"
    return True, ""


@dataclass
class Referrer:
    page: str
    snippet: str
    kind: str


def link_kind(tag: str, attribute: str, attributes: str) -> str:
    kind = f"{tag.lower()}[{attribute.lower()}]"
    rel = REL.search(attributes)
    if tag.lower() == "link" and rel is not None:
        kind += " rel=" + " ".join((rel.group(1) or rel.group(2) or rel.group(3) or "").split())
    return kind


def find_referrers(
    web: Path, packages: Sequence[Package], wanted: set[str]
) -> dict[str, list[Referrer]]:
    """For each key in `wanted`, the links to it on the served pages: each page's first link of
    each kind (`a[href]`, `link[href] rel=next`, ...), the page in `file_key` form. Read with a
    regular expression over the files as they are; links to other hosts do not count."""
    found_links: dict[str, dict[tuple[str, str], Referrer]] = defaultdict(dict)
    for package in packages:
        for file in html_files(web / package.name):
            page = "/" + file.relative_to(web).as_posix()
            text = file.read_text(encoding="utf-8", errors="replace")
            for tag in TAG.finditer(text):
                for found in URL_ATTRIBUTE.finditer(tag.group(2)):
                    value = next(v for v in found.groups()[1:] if v is not None)
                    value = html.unescape(value).strip()
                    if not value or value.startswith(("#", "mailto:", "javascript:")):
                        continue
                    try:
                        parts = urlsplit(urljoin(page, value))
                    except ValueError:  # `http://[user@]host/path`: no URL
                        continue
                    if parts.scheme or parts.netloc:
                        continue
                    k = key(target_of(parts.geturl()))
                    if k not in wanted:
                        continue
                    kind = link_kind(tag.group(1), found.group(1), tag.group(2))
                    if (page, kind) not in found_links[k]:
                        snippet = " ".join(tag.group(0).split())[:240]
                        found_links[k][page, kind] = Referrer(page, snippet, kind)
    return {k: list(found_links.get(k, {}).values()) for k in wanted}


def scripts_naming(
    web: Path, packages: Sequence[Package], targets: Sequence[str]
) -> dict[str, str]:
    """For targets no page links to: the JavaScript files of their tree that name their file
    in quotes (a menu a script writes), by name."""
    names: dict[str, str] = {}
    for package in packages:
        here = [t for t in targets if t.startswith(f"/{package.name}/")]
        if not here:
            continue
        scripts = [
            (path.name, path.read_text(encoding="utf-8", errors="replace"))
            for path in sorted((web / package.name).rglob("*.js"))
            if path.is_file()
        ]
        for target in here:
            file = posixpath.basename(urlsplit(target).path)
            found = [n for n, text in scripts if f'"{file}' in text or f"'{file}" in text]
            if found:
                names[target] = ", ".join(found)
    return names


def linked_from(
    referrers: list[Referrer], fetched: set[str], who: str, scripts: str | None = None
) -> str:
    """How `who` could have met a link to a URL it did not fetch: from the pages it fetched
    (`fetched`, in `file_key` form) that link it, or from none."""
    if not referrers:
        if scripts:
            return f"no link to it on the served pages, only in JavaScript ({scripts})"
        return "no link to it on the served pages"
    met = [r for r in referrers if r.page in fetched]
    if not met:
        kinds = ", ".join(sorted({r.kind for r in referrers}))
        return f"linked only from pages {who} did not fetch ({kinds})"
    kinds = ", ".join(sorted({r.kind for r in met}))
    return f"pages {who} fetched link to it, by {kinds}"


def example_referrer(referrers: list[Referrer], fetched: set[str]) -> Referrer | None:
    """A link to show: one on a page the crawler in question fetched, when there is one."""
    return next((r for r in referrers if r.page in fetched), referrers[0] if referrers else None)


def no_parent_of(target: str, packages: Sequence[Package]) -> str | None:
    """The start directory wget's --no-parent keeps `target` out of, or None when it is under
    one (each seed is a tree's /NAME/)."""
    path = urlsplit(target).path
    if any(path.startswith(f"/{package.name}/") for package in packages):
        return None
    return ", ".join(f"/{package.name}/" for package in packages)


def classify(
    only: Sequence[str],
    classes_of: dict[str, str],
) -> dict[str, list[str]]:
    classes: dict[str, list[str]] = defaultdict(list)
    for target in only:
        classes[classes_of[target]].append(target)
    return dict(sorted(classes.items(), key=lambda item: -len(item[1])))


# ---------------------------------------------------------------------------------------------
# The run


def commit_of() -> str:
    done = subprocess.run(
        ["git", "-C", str(REPO), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "unknown"


def compare(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    packages = packages_of(args.package_root)
    crawl = str(REPO / ".venv" / "bin" / "crawl")
    if not Path(crawl).exists():
        crawl = binary("crawl")
    wget = binary("wget")
    try:
        robots = args.robots.read_text() if args.robots is not None else robots_text(packages)
    except OSError as error:
        raise CompareError(f"--robots {args.robots}: {error.strerror}") from error
    web = work / "web"
    build_root(web, packages, robots)
    prefix = work / "nginx"
    prefix.mkdir()
    commands = {
        "ours": ours_command(crawl, work, args.port, packages),
        "wget": wget_command(wget, work, args.port, packages),
    }
    (work / "commands.sh").write_text(
        "".join(f"{' '.join(shlex.quote(part) for part in c)}\n" for c in commands.values())
    )
    runs: dict[str, tuple[int | None, float]] = {}
    with nginx_serving(prefix, web, args.port):
        for name, command in commands.items():
            print(f"compare_wget: {name}: {shown(command)}", file=sys.stderr, flush=True)
            runs[name] = run_tool(command, work, name, args.timeout)
            status, wall = runs[name]
            print(f"compare_wget: {name}: exit {status}, {wall:.1f} s", file=sys.stderr)
    tallies = {name: Tally.of(read_log(prefix / f"{name}.access.log")) for name in commands}
    return {
        "packages": packages,
        "robots": robots,
        "commands": commands,
        "runs": runs,
        "tallies": tallies,
        "web": web,
        "work": work,
        "versions": {
            "nginx": version_line([binary("nginx", NGINX), "-v"]),
            "wget": version_line([wget, "--version"]),
            "crawler": version_line([crawl, "--version"]),
            "commit": commit_of(),
        },
    }


def explain(result: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """The report's lines."""
    packages: list[Package] = result["packages"]
    tallies: dict[str, Tally] = result["tallies"]
    runs: dict[str, tuple[int | None, float]] = result["runs"]
    ours, wget = tallies["ours"], tallies["wget"]
    out: list[str] = []
    info = machine()
    versions = result["versions"]
    out.append(
        f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}; "
        f"{versions['nginx']}; {versions['wget']}"
    )
    out.append(f"crawler: {versions['crawler']} (commit {versions['commit']})")
    for package in packages:
        count = sum(1 for _ in html_files(package.root))
        out.append(f"web: /{package.name}/ = {package.root} ({count} HTML files)")
    out.append("robots.txt:")
    out.extend("    " + line for line in result["robots"].splitlines())
    for name, command in result["commands"].items():
        out.append(f"{name}: {shown(command)}")
    out.append("")

    rows: list[tuple[str, Callable[[str], str]]] = [
        ("exit status", lambda n: str(runs[n][0])),
        ("wall s (process start to exit)", lambda n: f"{runs[n][1]:.2f}"),
        ("span s (first to last request)", lambda n: f"{tallies[n].span:.2f}"),
        ("requests", lambda n: str(len(tallies[n].hits))),
        ("robots.txt requests", lambda n: str(tallies[n].robots)),
        ("HTML URLs answered 200", lambda n: str(len(tallies[n].html))),
        ("  of them asked more than once", lambda n: str(tallies[n].duplicates)),
        ("non-HTML URLs answered 200", lambda n: str(len(tallies[n].other_ok))),
        ("URLs answered another status", lambda n: str(len(tallies[n].not_ok))),
    ]
    out.append(f"{'':34}{'ours':>10}{'wget':>10}")
    out.append("-" * 54)
    out.extend(f"{label:34}{value('ours'):>10}{value('wget'):>10}" for label, value in rows)
    for name in ("ours", "wget"):
        tally = tallies[name]
        statuses = ", ".join(f"{s}: {c}" for s, c in sorted(tally.statuses.items()))
        kinds = Counter(extension(t) for t in tally.other_ok)
        out.append(f"{name}: requests by status {statuses}")
        if kinds:
            listed = ", ".join(f".{e} {c}" for e, c in kinds.most_common())
            out.append(f"{name}: non-HTML 200s by extension: {listed}")
        for target, status in sorted(tally.not_ok.items())[: args.list]:
            out.append(f"{name}:   {status} {target}")
    out.append("")

    both = ours.html.keys() & wget.html.keys()
    only_wget = sorted(wget.html.keys() - ours.html.keys())
    only_ours = sorted(ours.html.keys() - wget.html.keys())
    out.append(
        f"HTML URLs: ours {len(ours.html)}, wget {len(wget.html)}, both {len(both)}, "
        f"only wget {len(only_wget)}, only ours {len(only_ours)}"
    )
    # Spelled two ways: the same file in both lists.
    wget_files = {file_key(t): t for t in only_wget}
    ours_files = {file_key(t): t for t in only_ours}
    same_file = wget_files.keys() & ours_files.keys()

    # Everything else each asked for: non-HTML answers and other statuses, robots.txt aside.
    status_of = {t: 200 for t in (*ours.other_ok, *wget.other_ok)}
    status_of.update(ours.not_ok)
    status_of.update(wget.not_ok)
    ours_other = ours.other_ok.keys() | ours.not_ok.keys()
    wget_other = wget.other_ok.keys() | wget.not_ok.keys()
    other_only_wget = sorted(wget_other - ours_other)
    other_only_ours = sorted(ours_other - wget_other)
    # HTML files of the trees that neither crawler fetched, in any spelling.
    reached = {file_key(t) for t in (*ours.html, *wget.html)}
    neither = [
        target
        for package in packages
        for file in html_files(package.root)
        if file_key(target := f"/{package.name}/{file.relative_to(package.root).as_posix()}")
        not in reached
    ]

    skips, fetched = our_records(result["work"] / "ours-data")
    ours_pages = {file_key(t) for t in ours.html}
    wget_pages = {file_key(t) for t in wget.html}
    rules = wget_robots_rules(result["robots"])
    every = (*only_wget, *only_ours, *other_only_wget, *other_only_ours, *neither, *both)
    referrers = find_referrers(result["web"], packages, {key(t) for t in every})
    in_scripts = scripts_naming(
        result["web"], packages, [t for t in every if not referrers[key(t)]]
    )
    # Pages both reached though no <a href> links them: the other kinds of link at work.
    not_by_anchor: Counter[str] = Counter()
    for target in both:
        link_kinds = {r.kind for r in referrers[key(target)]}
        if link_kinds and "a[href]" not in link_kinds:
            not_by_anchor[", ".join(sorted(link_kinds))] += 1
    if not_by_anchor:
        listed = "; ".join(f"{kinds}: {n}" for kinds, n in not_by_anchor.most_common())
        out.append(f"HTML URLs both fetched that no <a href> links to, by link kind: {listed}")

    def our_side(target: str) -> str:
        if file_key(target) in same_file:
            return f"the same file, ours asked {ours_files[file_key(target)]}"
        k = key(target)
        if k in skips:
            reason, detail = skips[k]
            return f"ours skipped it: {reason}" + (f" ({detail})" if detail else "")
        if k in fetched:
            return "ours fetched it, not as a 200 HTML answer"
        return "ours did not fetch it: " + linked_from(
            referrers[k], ours_pages, "ours", in_scripts.get(target)
        )

    def wget_reading(target: str) -> str:
        allowed, rule = wget_robots(rules, target)
        if not allowed:
            return f"wget's robots.txt reading disallows it ({rule}: first match, no wildcards)"
        return ""

    def wget_side(target: str) -> str:
        if file_key(target) in same_file:
            return f"the same file, wget asked {wget_files[file_key(target)]}"
        if wget_reading(target):
            return wget_reading(target)
        if (parent := no_parent_of(target, packages)) is not None:
            return f"wget's --no-parent: outside the start directory {parent}"
        return "wget did not fetch it: " + linked_from(
            referrers[key(target)], wget_pages, "wget", in_scripts.get(target)
        )

    def both_sides(target: str) -> str:
        return f"{our_side(target)}; wget: {wget_reading(target) or 'not fetched'}"

    both_pages = ours_pages | wget_pages
    for title, only, side, pages, who in (
        ("only wget fetched, HTML answered 200", only_wget, our_side, ours_pages, "ours"),
        ("only ours fetched, HTML answered 200", only_ours, wget_side, wget_pages, "wget"),
        ("only wget asked, other answers", other_only_wget, our_side, ours_pages, "ours"),
        ("only ours asked, other answers", other_only_ours, wget_side, wget_pages, "wget"),
        ("HTML files of the trees neither fetched", neither, both_sides, both_pages, "either"),
    ):
        out.append("")
        out.append(f"== {title}: {len(only)} URLs ==")
        # A class is the reason without its particulars (the rule line of a skip stays).
        classes = classify(only, {t: re.sub(r"asked \S+", "asked ...", side(t)) for t in only})
        for label, members in classes.items():
            out.append(f"[{len(members)}] {label}")
            example = members[0]
            links = referrers[key(example)]
            referrer = example_referrer(links, pages)
            answered = f" (answered {status_of[example]})" if example in status_of else ""
            out.append(f"    e.g. {example}{answered}")
            if referrer is not None:
                linking = len({r.page for r in links})
                seen_by = len({r.page for r in links if r.page in pages})
                out.append(
                    f"    linked from {referrer.page} (of {linking} pages linking it, "
                    f"{seen_by} of them fetched by {who}):"
                )
                out.append(f"        {referrer.snippet}")
            out.extend(f"      {target}" for target in members[1 : args.list])
            if len(members) > args.list:
                out.append(f"      ... and {len(members) - args.list} more")

    out.append("")
    summary = [
        line
        for line in tail(result["work"] / "ours.out", 40).splitlines()
        if line.startswith(("crawl finished", "skips:", "URLs:", "errors:"))
    ]
    out.extend(f"ours' summary: {line}" for line in summary)
    for name, (exit_status, _) in runs.items():
        if name == "wget" and exit_status == WGET_SERVER_ERROR:
            out.append(f"wget exited {exit_status}: some answer was an HTTP error (see above)")
        elif exit_status != 0:
            out.append(f"{name} exited {exit_status}; its stderr ends:")
            out.append(tail(result["work"] / f"{name}.err", 4))
    return out


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Crawl real HTML documentation with ours and with wget; compare the logs.",
    )
    parser.add_argument(
        "--package-root",
        type=Path,
        action="append",
        metavar="PATH",
        help="an HTML tree to serve at /NAME/ (repeatable; default: python3-doc and "
        "postgresql-doc-15's trees)",
    )
    parser.add_argument("--robots", type=Path, help="serve this robots.txt instead")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="work in DIR and keep it")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--list", type=int, default=25, help="URLs listed per class")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per crawler")
    args = parser.parse_args(argv)
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: not empty")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    stopped_by = [signal.SIGINT]

    def on_sigterm(number: int, frame: object) -> None:
        stopped_by[0] = signal.SIGTERM
        raise KeyboardInterrupt

    # SIGTERM unwinds like Ctrl-C: the crawler running and nginx are stopped in their finally.
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            result = compare(args, args.keep.resolve())
            lines = explain(result, args)
        else:
            with tempfile.TemporaryDirectory(prefix="compare-wget-") as temporary:
                result = compare(args, Path(temporary))
                lines = explain(result, args)
    except CompareError as error:
        print(f"compare_wget: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("compare_wget: interrupted; nginx and the crawler stopped", file=sys.stderr)
        return 128 + stopped_by[0]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
