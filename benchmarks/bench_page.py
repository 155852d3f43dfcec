#!/usr/bin/env python3
"""The page step alone, on one core: pages/s of ours, of Scrapy's way, and of a bare selectolax
loop, on the same generated pages in the same process.

    python benchmarks/bench_page.py [--pages 3000] [--rounds 5] [--seed 0] [--shape article,dense]
        [--only parse,bare,scrapy,ours,extract] [--json] [--no-tune-allocator] [--profile]

The pages come from benchmarks/support/pagegen.py: ~12 KB pages with the robots signals of real
pages in realistic shares (in-page exclusion sections, META robots, X-Robots-Tag headers,
rel="nofollow" links), in two shapes, each measured on its own:

    article  ~13 links a page, long paragraphs, little inline markup: the issue's reference
             pages (~12 KB, ~13 links). The bars are judged on these.
    dense    ~35 links a page and twice the elements: a busy WordPress theme.

A contender turns a page's bytes into its text and its links:

    parse   LexborHTMLParser(body); the raw href of every a[href]; tree.body.text(separator=" ").
            The floor: a parse with link and text extraction, the links left unresolved. The
            issue's reference figure for this floor is ~15,000 pages/s on its pages; `parse` on
            these pages says how heavy they are next to those.
    bare    parse, with every href resolved by urljoin(url, href): the least a crawler does.
    scrapy  HtmlResponse(url, body, encoding); LinkExtractor().extract_links(response) (one
            extractor, its defaults); " ".join(response.xpath("//body//text()").getall())
    extract ours with `extract:`'s four fields (EXTRACT: title, heading, date, the "more" links),
            read on the tree ours parsed; only when --only names it (ours,extract: the cost)
    ours    crawler.page.read.read_page(body, url, charset="utf-8", x_robots_tag=the page's headers,
            rules=PageRules(token="crawler")): META, X-Robots-Tag, sections, text, links; with
            the page walk crawler.page.compiled chose (compiled unless CRAWLER_PAGE_WALK=python),
            which the report names
    ours+req  ours with PageRules(requisites=True): the page's requisites read too
              (fetch.page_requisites, crawler.page.requisites); only when --only names it

bare and scrapy ignore the robots signals (that is their gap); ours honours them. Before any
timing, a sanity check reads every page with ours and compares it with what the generator put in
(noindex pages without text, words inside noindex sections absent from the text, links only
inside nofollow sections absent from the links, ...); it prints the mismatches and makes the
script exit 1, so the benchmark doubles as a smoke test of the page step.

Method: all pages are generated first (not timed); then --rounds rounds, each running every
contender over all pages, interleaved (parse, bare, scrapy, ours, parse, ...) so load on the
machine hits them alike; gc.collect() before each contender's round; time.perf_counter(); the best
round per contender counts. `crawler.runtime.tune_allocator()` is applied once at start for the
whole process (so for every contender) unless --no-tune-allocator. --profile runs ours once more
under cProfile and prints the top 25 functions by cumulative time.

The bar for ours, on the article pages: >= 8,000 pages/s and >= 5x Scrapy. The script exits 0
whether or not the bar holds; 1 when the sanity check finds a mismatch.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urljoin

from support.machine import machine
from support.pagegen import SHAPES, GenPage, generate_pages, page_stats

CONTENDERS = ("parse", "bare", "scrapy", "ours", "ours+req", "extract")
DEFAULT_CONTENDERS = CONTENDERS[:4]
"""ours+req (ours with fetch.page_requisites' reading) and extract (ours with EXTRACT's fields)
only when --only names them."""
EXTRACT = {
    "title": "title::text",
    "heading": "h1.entry-title::text",
    "published": ".byline time::attr(datetime)",
    "more": {"css": "a.more-link::attr(href)", "all": True},
}
"""The fields `extract` reads (config's `extract:`), as a user of these pages would ask."""
BAR_PAGES_PER_S = 8000.0
BAR_VS_SCRAPY = 5.0
BAR_SHAPE = "article"
TOKEN = "crawler"
SHOWN_MISMATCHES = 8
SNIPPET_CHARS = 1200

# A contender reads every page once; it returns (links, text characters) summed over the pages,
# so that each one does its whole work and the table can show what each of them found.
Contender = Callable[[Sequence[GenPage]], tuple[int, int]]


def run_parse(pages: Sequence[GenPage]) -> tuple[int, int]:
    from selectolax.lexbor import LexborHTMLParser

    links = chars = 0
    for page in pages:
        tree = LexborHTMLParser(page.body)
        hrefs = [node.attributes.get("href") for node in tree.css("a[href]")]
        body = tree.body
        text = body.text(separator=" ") if body is not None else ""
        links += len(hrefs)
        chars += len(text)
    return links, chars


def run_bare(pages: Sequence[GenPage]) -> tuple[int, int]:
    from selectolax.lexbor import LexborHTMLParser

    links = chars = 0
    for page in pages:
        tree = LexborHTMLParser(page.body)
        hrefs = [
            urljoin(page.url, node.attributes.get("href") or "") for node in tree.css("a[href]")
        ]
        body = tree.body
        text = body.text(separator=" ") if body is not None else ""
        links += len(hrefs)
        chars += len(text)
    return links, chars


def make_scrapy() -> Contender:
    from scrapy.http import HtmlResponse
    from scrapy.linkextractors import LinkExtractor

    extractor = LinkExtractor()

    def run_scrapy(pages: Sequence[GenPage]) -> tuple[int, int]:
        links = chars = 0
        for page in pages:
            response = HtmlResponse(url=page.url, body=page.body, encoding="utf-8")
            found = extractor.extract_links(response)
            text = " ".join(response.xpath("//body//text()").getall())
            links += len(found)
            chars += len(text)
        return links, chars

    return run_scrapy


def make_ours(requisites: bool = False, extract: bool = False) -> Contender:
    from crawler.config.users import read_extract
    from crawler.page.read import PageRules, read_page

    fields = read_extract("extract", EXTRACT) if extract else ()
    rules = PageRules(token=TOKEN, requisites=requisites, fields=fields)

    def run_ours(pages: Sequence[GenPage]) -> tuple[int, int]:
        links = chars = 0
        for page in pages:
            result = read_page(
                page.body, page.url, charset="utf-8", x_robots_tag=page.headers, rules=rules
            )
            links += len(result.links)
            chars += len(result.text)
        return links, chars

    return run_ours


@dataclass
class Result:
    name: str
    rounds_s: list[float] = field(default_factory=list)
    links: int = 0
    chars: int = 0

    @property
    def best_s(self) -> float:
        return min(self.rounds_s)

    def pages_per_s(self, pages: int) -> float:
        return pages / self.best_s


# ---------------------------------------------------------------------------------------------
# The sanity check


@dataclass(frozen=True, slots=True)
class Mismatch:
    page: int
    url: str
    kind: str
    detail: str
    snippet: str


def check_page(number: int, gen: GenPage, page: Any, follow_rel: bool) -> list[Mismatch]:
    """What ours made of one page against what the generator put in it."""
    found: list[Mismatch] = []

    def miss(kind: str, detail: str, snippet: str) -> None:
        found.append(Mismatch(number, gen.url, kind, detail, snippet[:SNIPPET_CHARS]))

    signals = gen.signals or "no META robots, no X-Robots-Tag"
    if page.index != gen.index:
        miss("index", f"index is {page.index}, expected {gen.index}", signals)
    if page.follow != gen.follow:
        miss("follow", f"follow is {page.follow}, expected {gen.follow}", signals)
    text: str = page.text
    if not gen.index and text:
        miss("noindex page has text", f"{len(text)} characters of text", signals)
    nosnippet: str = getattr(page, "nosnippet_text", "")
    links = set(page.links)
    listed = set(getattr(page, "nofollow_links", ()))
    has_listed = hasattr(page, "nofollow_links")
    for expect in gen.expects:
        kind, value, snippet = expect.kind, expect.value, expect.snippet
        if kind in ("hidden", "non-text") and value in text:
            miss(f"{kind} word in text", value, snippet)
        elif gen.index and kind == "visible" and value not in text:
            miss("visible word not in text", value, snippet)
        elif gen.index and kind == "snippet" and value not in text and value not in nosnippet:
            miss("snippet word in neither text nor nosnippet_text", value, snippet)
        elif kind == "nofollow-link":
            if value in links:
                miss("nofollow-section link in links", value, snippet)
            elif has_listed and value not in listed:
                miss("nofollow-section link not in nofollow_links", value, snippet)
        elif kind == "rel-nofollow" and not follow_rel:
            if value in links:
                miss("rel=nofollow link in links", value, snippet)
            elif has_listed and value not in listed:
                miss("rel=nofollow link not in nofollow_links", value, snippet)
        elif gen.follow and kind == "followed-link" and value not in links:
            miss("followed link not in links", value, snippet)
    return found


def sanity_check(pages: Sequence[GenPage]) -> tuple[list[Mismatch], int]:
    """Ours over every page, each compared with its generator's record; (mismatches, checks)."""
    from crawler.page.read import PageRules, read_page

    rules = PageRules(token=TOKEN)
    follow_rel = bool(getattr(rules, "follow_rel_nofollow", False))
    mismatches: list[Mismatch] = []
    checks = 0
    for number, gen in enumerate(pages):
        checks += 3 + len(gen.expects)
        try:
            page = read_page(
                gen.body, gen.url, charset="utf-8", x_robots_tag=gen.headers, rules=rules
            )
        except Exception as error:  # the check reports a raising page step, it does not stop
            mismatches.append(
                Mismatch(number, gen.url, "raised", repr(error), gen.body.decode()[:SNIPPET_CHARS])
            )
            continue
        mismatches.extend(check_page(number, gen, page, follow_rel))
    return mismatches, checks


# ---------------------------------------------------------------------------------------------
# Measuring


def bench(pages: Sequence[GenPage], only: Sequence[str], rounds: int) -> dict[str, Result]:
    makers: dict[str, Callable[[], Contender]] = {
        "parse": lambda: run_parse,
        "bare": lambda: run_bare,
        "scrapy": make_scrapy,
        "ours": make_ours,
        "ours+req": lambda: make_ours(requisites=True),
        "extract": lambda: make_ours(extract=True),
    }
    contenders = {name: makers[name]() for name in only}
    results = {name: Result(name) for name in only}
    for _ in range(rounds):
        for name, contender in contenders.items():
            gc.collect()
            start = time.perf_counter()
            links, chars = contender(pages)
            elapsed = time.perf_counter() - start
            result = results[name]
            result.rounds_s.append(elapsed)
            result.links, result.chars = links, chars
    return results


def profile_ours(pages: Sequence[GenPage], top: int = 25) -> str:
    contender = make_ours()
    profiler = cProfile.Profile()
    gc.collect()
    profiler.enable()
    contender(pages)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


# ---------------------------------------------------------------------------------------------
# Reporting


def summary(results: dict[str, Result], pages: int) -> dict[str, Any]:
    rate = {name: r.pages_per_s(pages) for name, r in results.items()}
    ours, scrapy, bare = rate.get("ours"), rate.get("scrapy"), rate.get("bare")
    floor = rate.get("parse")
    return {
        "ours_vs_parse": ours / floor if ours and floor else None,
        "ours_vs_scrapy": ours / scrapy if ours and scrapy else None,
        "ours_vs_bare": ours / bare if ours and bare else None,
        "bar_pages_per_s": None if ours is None else ours >= BAR_PAGES_PER_S,
        "bar_vs_scrapy": ours / scrapy >= BAR_VS_SCRAPY if ours and scrapy else None,
    }


def stats_lines(stats: dict[str, float]) -> list[str]:
    return [
        f"pages: {stats['pages']:.0f}, mean {stats['mean_bytes'] / 1024:.1f} KB "
        f"({stats['min_bytes'] / 1024:.1f}-{stats['max_bytes'] / 1024:.1f}), "
        f"mean {stats['mean_links']:.1f} links, "
        f"{100 * stats['rel_nofollow_share']:.0f}% of links rel=nofollow/ugc/sponsored",
        f"robots signals: {100 * stats['with_sections']:.1f}% of pages with exclusion sections "
        f"({stats['mean_sections_when_any']:.1f} per such page), "
        f"{100 * stats['with_meta']:.1f}% with a restrictive META robots, "
        f"{100 * stats['with_headers']:.1f}% with X-Robots-Tag; "
        f"expected noindex {100 * stats['noindex']:.1f}%, nofollow {100 * stats['nofollow']:.1f}%",
    ]


def mismatch_lines(mismatches: Sequence[Mismatch], checks: int) -> list[str]:
    lines = [f"sanity check: {checks} checks, {len(mismatches)} mismatches"]
    if not mismatches:
        return lines
    by_kind = Counter(m.kind for m in mismatches)
    lines += [f"    {count:>6}  {kind}" for kind, count in by_kind.most_common()]
    shown: set[str] = set()
    for m in mismatches:
        if m.kind in shown or len(shown) >= SHOWN_MISMATCHES:
            continue
        shown.add(m.kind)
        lines += ["", f"  page {m.page} {m.url}", f"  {m.kind}: {m.detail}", "  in:"]
        lines += [f"    | {line}" for line in m.snippet.splitlines()]
    return lines


def table(results: dict[str, Result], pages: int, rounds: int) -> list[str]:
    header = (
        f"{'contender':<10} {'pages/s':>9} {'us/page':>9} {'best s':>8} {'median s':>9} "
        f"{'links/page':>11} {'text chars/page':>16}"
    )
    lines = [header, "-" * len(header)]
    for r in results.values():
        median = sorted(r.rounds_s)[len(r.rounds_s) // 2]
        lines.append(
            f"{r.name:<10} {r.pages_per_s(pages):>9,.0f} {1e6 * r.best_s / pages:>9.1f} "
            f"{r.best_s:>8.3f} {median:>9.3f} {r.links / pages:>11.1f} {r.chars / pages:>16,.0f}"
        )
    lines.append(f"(best of {rounds} rounds over {pages} pages; median for the spread)")
    return lines


def verdict_lines(results: dict[str, Result], pages: int, bars: bool) -> list[str]:
    """The ratios, and with `bars` whether ours holds the bars."""
    result = summary(results, pages)
    lines = []
    if result["ours_vs_scrapy"] is not None:
        lines.append(f"ours / scrapy: {result['ours_vs_scrapy']:.2f}x")
    if result["ours_vs_bare"] is not None:
        lines.append(f"ours / bare:   {result['ours_vs_bare']:.2f}x")
    if result["ours_vs_parse"] is not None:
        lines.append(f"ours / parse:  {result['ours_vs_parse']:.2f}x")
    if not bars:
        return [*lines, f"(the bars are judged on the {BAR_SHAPE} pages)"]
    if result["bar_pages_per_s"] is not None:
        rate = results["ours"].pages_per_s(pages)
        verdict = "PASS" if result["bar_pages_per_s"] else "FAIL"
        lines.append(f"{verdict}: ours >= {BAR_PAGES_PER_S:,.0f} pages/s ({rate:,.0f})")
    if result["bar_vs_scrapy"] is not None:
        verdict = "PASS" if result["bar_vs_scrapy"] else "FAIL"
        lines.append(
            f"{verdict}: ours >= {BAR_VS_SCRAPY:g}x scrapy ({result['ours_vs_scrapy']:.2f}x)"
        )
    return lines


# ---------------------------------------------------------------------------------------------
# Command line


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=3000, help="generated pages")
    parser.add_argument("--rounds", type=int, default=5, help="runs per contender; best counts")
    parser.add_argument("--seed", type=int, default=0, help="the page generator's random seed")
    parser.add_argument(
        "--shape", default="article,dense", help="comma-separated page shapes: article,dense"
    )
    parser.add_argument(
        "--only",
        default=",".join(DEFAULT_CONTENDERS),
        help="comma-separated: parse,bare,scrapy,ours, and ours+req (page requisites read too) or "
        "extract (ours with EXTRACT's fields)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--no-tune-allocator",
        dest="tune_allocator",
        action="store_false",
        help="leave glibc's malloc defaults (crawler.runtime.tune_allocator not called)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="also run ours under cProfile, print the top 25"
    )
    args = parser.parse_args(argv)
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(args.only) - set(CONTENDERS))
    if unknown or not args.only:
        parser.error(f"--only takes {','.join(CONTENDERS)}, not {','.join(unknown) or 'nothing'}")
    args.only = [name for name in CONTENDERS if name in args.only]
    args.shape = [name.strip() for name in args.shape.split(",") if name.strip()]
    if not args.shape or set(args.shape) - set(SHAPES):
        parser.error(f"--shape takes {','.join(SHAPES)}, not {','.join(args.shape) or 'nothing'}")
    if args.pages < 1 or args.rounds < 1:
        parser.error("--pages and --rounds must be at least 1")
    return args


def measure_shape(args: argparse.Namespace, shape: str) -> tuple[list[str], dict[str, Any], int]:
    """(report lines, JSON figures, mismatches) for one page shape."""
    started = time.perf_counter()
    pages = generate_pages(args.pages, args.seed, SHAPES[shape])
    generation_s = time.perf_counter() - started
    stats = page_stats(pages)

    mismatches: list[Mismatch] = []
    checks, check_s = 0, 0.0
    if "ours" in args.only:
        started = time.perf_counter()
        mismatches, checks = sanity_check(pages)
        check_s = time.perf_counter() - started
    raised = any(m.kind == "raised" for m in mismatches)

    lines = [
        f"== {shape} pages ==",
        *stats_lines(stats),
        f"generation {generation_s:.2f} s, sanity check {check_s:.2f} s (not timed below)",
        *(mismatch_lines(mismatches, checks) if "ours" in args.only else ["sanity check: skipped"]),
        "",
    ]
    results: dict[str, Result] = {}
    if raised:
        lines.append("ours raised on some pages: no timing")
    else:
        results = bench(pages, args.only, args.rounds)
        lines += [*table(results, len(pages), args.rounds), ""]
        lines += verdict_lines(results, len(pages), bars=shape == BAR_SHAPE)
    if args.profile and "ours" in args.only and not raised:
        lines += ["", f"ours under cProfile on {shape} pages, top 25 by cumulative time:"]
        lines.append(profile_ours(pages))
    figures = {
        "generation_s": generation_s,
        "check_s": check_s,
        "pages": stats,
        "sanity": {
            "checks": checks,
            "mismatches": len(mismatches),
            "by_kind": dict(Counter(m.kind for m in mismatches)),
            "first": [asdict(m) for m in mismatches[:SHOWN_MISMATCHES]],
        },
        "results": {
            name: {
                "pages_per_s": r.pages_per_s(len(pages)),
                "us_per_page": 1e6 * r.best_s / len(pages),
                "best_s": r.best_s,
                "rounds_s": r.rounds_s,
                "links_per_page": r.links / len(pages),
                "text_chars_per_page": r.chars / len(pages),
            }
            for name, r in results.items()
        },
        "summary": summary(results, len(pages)) if results else None,
    }
    return lines, figures, len(mismatches)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tuned: bool | None = None
    if args.tune_allocator:
        from crawler.runtime import tune_allocator

        tuned = tune_allocator()
    allocator = {
        True: "tuned, crawler.runtime.tune_allocator() for the whole process",
        False: "defaults, crawler.runtime.tune_allocator() does not apply here (not glibc)",
        None: "defaults (--no-tune-allocator)",
    }
    from crawler.page.compiled import WALK

    info = machine("selectolax", "scrapy", "lxml")
    report: dict[str, Any] = {
        "machine": info,
        "allocator_tuned": tuned,
        "page_walk": WALK,
        "rounds": args.rounds,
        "shapes": {},
    }
    lines = [
        f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
        f"selectolax {info['selectolax']}, Scrapy {info['scrapy']}, lxml {info['lxml']}",
        f"allocator: {allocator[tuned]}",
        f"ours' page walk: {WALK}",
        "",
    ]
    mismatches = 0
    for shape in args.shape:
        shape_lines, figures, shape_mismatches = measure_shape(args, shape)
        lines += [*shape_lines, ""]
        report["shapes"][shape] = figures
        mismatches += shape_mismatches
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print("\n".join(lines).rstrip())
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
