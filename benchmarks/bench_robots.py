#!/usr/bin/env python3
"""robots.txt engines side by side on real files: speed, and agreement with Google's matcher.

    python benchmarks/bench_robots.py [--corpus DIR] [--urls-per-file 8] [--repeat 3]

The corpus is the ~4,200 real robots.txt files that Protego's source distribution ships under
tests/test_data; without --corpus the script fetches that sdist once with
`pip download --no-binary :all: protego` into benchmarks/.cache/.

A case is (robots.txt file, product token, URL). Per file the URLs are its own Allow/Disallow
patterns turned into paths (wildcards filled in, anchors dropped), plus a few common paths, for two
tokens: Googlebot (many files name it) and PoliteBot (no file does, so the `*` group decides).
Each engine parses each file once and answers all of that file's cases; cases/s is the number of
cases over parse time plus match time. Engines run interleaved, best of --repeat runs each, so load
on the machine hits them alike. "Google" is fast-robotstxt, the binding of Google's reference
parser (it parses the file again on every question, as its API demands), and the reference that
agreement is measured against.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.robotparser
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from crawler.robots.txt import RobotsTxt

AGENTS = ("Googlebot", "PoliteBot")
COMMON_PATHS = ("/", "/index.html", "/search?q=robots", "/about/team/", "/wp-admin/admin-ajax.php")
FILLERS = ("x", "page", "a/b", "item.php", "?id=7", "2024/01")
RULE_LINE = re.compile(rb"^[ \t]*(?:dis)?allow[ \t]*:[ \t]*([^\s#]+)", re.IGNORECASE | re.MULTILINE)
CACHE = Path(__file__).resolve().parent / ".cache"


class Case(NamedTuple):
    # A tuple of strings: the garbage collector stops tracking it, so ~90,000 cases held for the
    # whole run do not slow every engine's collections.
    agent: str
    url: str


@dataclass
class Result:
    name: str
    parse_s: float
    match_s: float
    answers: list[bool]

    def cases_per_s(self, cases: int) -> float:
        return cases / (self.parse_s + self.match_s)


def fetch_corpus() -> Path:
    target = CACHE / "protego-test-data"
    if target.is_dir() and any(target.iterdir()):
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as download:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                "protego",
                "-d",
                download,
            ],
            check=True,
        )
        (sdist,) = Path(download).glob("protego-*.tar.gz")
        with tarfile.open(sdist) as archive:
            members = [
                m for m in archive.getmembers() if "/tests/test_data/" in m.name and m.isfile()
            ]
            target.mkdir(parents=True, exist_ok=True)
            for member in members:
                extracted = archive.extractfile(member)
                if extracted is not None:
                    (target / Path(member.name).name).write_bytes(extracted.read())
    return target


def urls_for(body: bytes, name: str, per_file: int) -> list[str]:
    rng = random.Random(name)
    patterns = sorted({m.group(1).decode("utf-8", "replace") for m in RULE_LINE.finditer(body)})
    chosen = rng.sample(patterns, min(per_file, len(patterns)))
    paths = list(COMMON_PATHS)
    for pattern in chosen:
        path = pattern.rstrip("$")
        while "*" in path:
            path = path.replace("*", rng.choice(FILLERS), 1)
        if not path.startswith("/"):
            path = "/" + path
        path += rng.choice(("", "", "index.html", "?ref=1"))
        # A crawler queues links, and a link with an empty query ("/search?") is rare; the oracle's
        # URL parser also drops such a "?", a divergence the tests name (empty-query).
        paths.append(path + "q=1" if path.endswith("?") else path)
    return ["https://example.com" + path for path in paths]


def load(corpus: Path, per_file: int) -> list[tuple[bytes, list[Case]]]:
    files = []
    for path in sorted(p for p in corpus.iterdir() if p.is_file()):
        body = path.read_bytes()
        urls = urls_for(body, path.name, per_file)
        files.append((body, [Case(agent, url) for agent in AGENTS for url in urls]))
    return files


def run_ours(files: list[tuple[bytes, list[Case]]]) -> Result:
    start = time.perf_counter()
    parsed = [RobotsTxt.parse(body) for body, _ in files]
    parsed_at = time.perf_counter()
    answers = [
        robots.can_fetch(c.url, c.agent)
        for robots, (_, cases) in zip(parsed, files, strict=True)
        for c in cases
    ]
    return Result("crawler (ours)", parsed_at - start, time.perf_counter() - parsed_at, answers)


def run_protego(files: list[tuple[bytes, list[Case]]], texts: list[str]) -> Result:
    from protego import Protego

    start = time.perf_counter()
    parsed = [Protego.parse(text) for text in texts]
    parsed_at = time.perf_counter()
    answers = [
        robots.can_fetch(c.url, c.agent)
        for robots, (_, cases) in zip(parsed, files, strict=True)
        for c in cases
    ]
    return Result("Protego", parsed_at - start, time.perf_counter() - parsed_at, answers)


def run_urllib(files: list[tuple[bytes, list[Case]]], texts: list[str]) -> Result:
    start = time.perf_counter()
    parsed = []
    for text in texts:
        parser = urllib.robotparser.RobotFileParser()
        parser.parse(text.splitlines())
        parsed.append(parser)
    parsed_at = time.perf_counter()
    answers = [
        robots.can_fetch(c.agent, c.url)
        for robots, (_, cases) in zip(parsed, files, strict=True)
        for c in cases
    ]
    return Result("urllib.robotparser", parsed_at - start, time.perf_counter() - parsed_at, answers)


def run_google(files: list[tuple[bytes, list[Case]]]) -> Result:
    import ctypes

    from robotstxt import RobotsMatcher
    from robotstxt.robots import _lib

    matcher = RobotsMatcher()
    allowed = _lib.robots_allowed_by_robots
    pointer = ctypes.c_void_p(matcher._ptr)
    start = time.perf_counter()
    answers = []
    for body, cases in files:
        for case in cases:
            url, agent = case.url.encode(), case.agent.encode()
            answers.append(
                bool(allowed(pointer, body, len(body), agent, len(agent), url, len(url)))
            )
    return Result("Google (fast-robotstxt)", 0.0, time.perf_counter() - start, answers)


RESERVED_ESCAPE = re.compile(
    rb"%(?!(?:3[0-9]|4[1-9A-Fa-f]|5[0-9Aa]|6[1-9A-Fa-f]|7[0-9Aa]|2[DdEe]|5[Ff]|7[Ee]))[0-9A-Fa-f]{2}"
)


def named_disagreements(
    files: list[tuple[bytes, list[Case]]], ours: list[bool], google: list[bool]
) -> dict[str, int]:
    """Count our disagreements with Google by the divergence that explains them (the tests name
    them); "unexplained" would be a bug."""
    counts: dict[str, int] = {}
    answers = iter(zip(ours, google, strict=True))
    for body, cases in files:
        for case in cases:
            mine, theirs = next(answers)
            if mine == theirs:
                continue
            url = case.url.partition("#")[0]
            if url.endswith("/robots.txt"):
                name = "robots.txt-itself"
            elif RESERVED_ESCAPE.search(body) or RESERVED_ESCAPE.search(url.encode()):
                name = "reserved-escape"
            elif url.endswith("?"):
                name = "empty-query"
            elif "\\" in url:
                name = "backslash"
            else:
                name = "unexplained"
            counts[name] = counts.get(name, 0) + 1
    return counts


def best(runs: Sequence[Result]) -> Result:
    return min(runs, key=lambda r: r.parse_s + r.match_s)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = ", ".join(
        f"{name} {importlib.metadata.version(name)}" for name in ("protego", "fast-robotstxt")
    )
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}; {versions}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="directory of robots.txt files")
    parser.add_argument("--urls-per-file", type=int, default=8, help="rule-derived URLs per file")
    parser.add_argument("--repeat", type=int, default=5, help="runs per engine; the best counts")
    args = parser.parse_args(argv)

    corpus = args.corpus or fetch_corpus()
    files = load(corpus, args.urls_per_file)
    texts = [body.decode("utf-8", "replace") for body, _ in files]
    total = sum(len(cases) for _, cases in files)

    engines: dict[str, Callable[[], Result]] = {
        "ours": lambda: run_ours(files),
        "protego": lambda: run_protego(files, texts),
        "urllib": lambda: run_urllib(files, texts),
        "google": lambda: run_google(files),
    }
    # Only each engine's best run is kept: results held from earlier runs would be more objects
    # for every later run's garbage collections to walk.
    results: dict[str, Result] = {}
    for _ in range(args.repeat):
        for key, engine in engines.items():
            run = engine()
            results[key] = best([run, results[key]]) if key in results else run
            del run
    reference = results["google"].answers

    print(f"machine: {machine()}")
    print(f"corpus: {len(files)} files from {corpus}, {total} cases ({len(AGENTS)} agents)\n")
    header = (
        f"{'engine':<24} {'parse files/s':>14} {'match checks/s':>15} {'cases/s':>10} "
        f"{'agrees with Google':>20}"
    )
    print(header)
    print("-" * len(header))
    for result in results.values():
        agree = sum(a == b for a, b in zip(result.answers, reference, strict=True))
        parse_rate = f"{len(files) / result.parse_s:,.0f}" if result.parse_s else "-"
        print(
            f"{result.name:<24} {parse_rate:>14} {total / result.match_s:>15,.0f} "
            f"{result.cases_per_s(total):>10,.0f} "
            f"{100 * agree / total:>9.2f}% ({total - agree:>5} off)"
        )
    named = named_disagreements(files, results["ours"].answers, reference)
    print(
        "\nours vs Google, disagreements by the named case of tests/test_robots_properties.py: "
        + (", ".join(f"{name} {count}" for name, count in sorted(named.items())) or "none")
    )
    ratio = results["ours"].cases_per_s(total) / results["protego"].cases_per_s(total)
    print(f"\nours / Protego, cases per second: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
