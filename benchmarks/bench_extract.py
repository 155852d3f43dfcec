#!/usr/bin/env python3
"""Main content extraction: quality and speed of ours beside trafilatura and Resiliparse, on the
same real pages with hand-made truth, in one process, one core.

    python benchmarks/bench_extract.py --data DIR [--rounds 3] [--only ours,trafilatura,...]
        [--json]

DIR is one of two sets of real pages with hand-made truth, nobody's here, or a tree of HTML pages
without truth, for speed alone (Debian's documentation: `--data /usr/share/doc/python3/html`,
its first `--limit` pages in path order):

- Zyte's article extraction benchmark (MIT), the set to measure on:

      git clone https://github.com/scrapinghub/article-extraction-benchmark DIR

  181 news and blog pages from as many sites, `html/<id>.html.gz`, and `ground-truth.json`, each
  page's article body as a person marked it (`articleBody`). The score is that benchmark's own
  (`evaluate.py`): each page's text and its truth cut into 4-word shingles; true positives, false
  positives and false negatives counted per page and normalised by the page's total, so a long
  page weighs no more than a short one; precision and recall the means over the pages (of those
  with anything predicted, and with anything true), F1 from the two means.
- trafilatura's evaluation set (Apache-2.0; the pages are the web's), the set to tune on:

      git clone https://github.com/adbar/trafilatura && DIR=trafilatura/tests

  990 pages in many languages (`cache/`, `eval/`), and `evaldata.json`: for each, up to six
  snippets its main content holds (`with`) and up to six it must not (`without`). The score is
  that set's own (`eval_common.py`): a `with` snippet found in the text (whitespace folded) is a
  true positive, one missed a false negative; a `without` snippet found is a false positive;
  counted over all pages, precision and recall of the totals.

The contenders, each given the page's bytes and URL:

    ours, main text    crawler.page.read.read_page(...).main_text: the page step's main content
                       (crawler.page.main_content), as the crawl reads it (compiled where built)
    ours, text         read_page(...).text: all the visible text (no script, style, nav or
                       noscript; noindex sections out), what the index held before issue 38
    trafilatura        trafilatura.extract(html, url=url): its default, plain text
    trafilatura prec.  the same with favor_precision=True
    resiliparse        resiliparse.extract.html2text.extract_plain_text(HTMLTree.parse_from_bytes
                       (body, encoding), main_content=True)
    ours, no main      the page step without its main content reading: the difference
                       between this and `ours, main text` is what the main content costs

Speed is pages/s of each contender's whole work from the page's bytes (parsing included; for
ours, the whole page step: links, META, text and main content), decompression and file reads
before, untimed; the median of --rounds rounds, in this one process: one core. trafilatura and
Resiliparse come with the bench extras (`pip install -e '.[bench]'`).

Exit status: 0 when the benchmark ran, 1 when DIR is no such checkout or a contender is not
installed, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.machine import machine

Extract = Callable[[bytes, str], str]


def ours(field: str, main: bool = True) -> Callable[[], Extract]:
    """read_page's `field`; without `main`, the page step as it was before it read the main
    content: the same build with that one step left out, so that the difference between the
    two is what the main content costs."""

    def contender() -> Extract:
        import crawler.page.read as read
        from crawler.page.compiled_main import MainContent
        from crawler.urls import InvalidUrlError, normalize_url

        original = _ORIGINAL.setdefault("main_content", read._main_content)

        def no_main_content(*_: object) -> MainContent:
            return MainContent("", "", None, "")

        step = original if main else no_main_content

        def extract(body: bytes, url: str) -> str:
            read._main_content = step
            # read_page takes the normal URL the crawl fetched: a set's URL may lack its path's
            # slash, and trafilatura's set names some pages by a key that is no URL.
            try:
                url = normalize_url(url)
            except InvalidUrlError:
                url = "https://page.invalid/"
            text: str = getattr(read.read_page(body, url), field)
            return text

        return extract

    return contender


_ORIGINAL: dict[str, Any] = {}


def trafilatura_text(**options: Any) -> Extract:
    import trafilatura

    def extract(body: bytes, url: str) -> str:
        return trafilatura.extract(body, url=url, **options) or ""

    return extract


def resiliparse_text() -> Extract:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import detect_encoding
    from resiliparse.parse.html import HTMLTree

    def extract(body: bytes, url: str) -> str:
        tree = HTMLTree.parse_from_bytes(body, detect_encoding(body))
        return str(extract_plain_text(tree, main_content=True))

    return extract


CONTENDERS: dict[str, Callable[[], Extract]] = {
    "ours, main text": ours("main_text"),
    "ours, text": ours("text"),
    "ours, no main": ours("text", main=False),
    "trafilatura": trafilatura_text,
    "trafilatura prec.": lambda: trafilatura_text(favor_precision=True),
    "resiliparse": resiliparse_text,
}
SHORT = {
    "ours": "ours, main text",
    "nomain": "ours, no main",
    "text": "ours, text",
    "trafilatura": "trafilatura",
    "precision": "trafilatura prec.",
}


# --- the score: the benchmark's evaluate.py ------------------------------------------------------

_TOKEN = re.compile(r"\w+", re.UNICODE | re.MULTILINE | re.IGNORECASE | re.DOTALL)


def _shingles(text: str, n: int = 4) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text or "")
    return Counter(
        tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens[i : i + n]
    )


def tp_fp_fn(true: str, predicted: str) -> tuple[float, float, float]:
    truth, guess = _shingles(true), _shingles(predicted)
    tp = fp = fn = 0.0
    for key in truth.keys() | guess.keys():
        t, p = truth.get(key, 0), guess.get(key, 0)
        tp += min(t, p)
        fp += max(0, p - t)
        fn += max(0, t - p)
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == fp == 0 else tp / (tp + fp)


def _recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == fn == 0 else tp / (tp + fn)


def score(counts: list[tuple[float, float, float]]) -> dict[str, float]:
    precision = statistics.mean(_precision(*c) for c in counts if c[0] + c[1] > 0)
    recall = statistics.mean(_recall(*c) for c in counts if c[0] + c[2] > 0)
    return {
        "f1": 2 * precision * recall / (precision + recall),
        "precision": precision,
        "recall": recall,
    }


# --- the run -------------------------------------------------------------------------------------


def load_snippets(directory: Path) -> list[tuple[str, bytes, str, dict[str, list[str]]]]:
    """(file, body, url, {"with": [...], "without": [...]}) of every page of trafilatura's set."""
    data = json.loads((directory / "evaldata.json").read_text(encoding="utf-8"))
    pages = []
    for url, item in sorted(data.items()):
        for where in ("cache", "eval"):
            path = directory / where / item["file"]
            if path.is_file():
                pages.append((item["file"], path.read_bytes(), url, item))
                break
    return pages


def _folded(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def snippet_score(
    pages: list[tuple[str, bytes, str, dict[str, list[str]]]], outputs: list[str]
) -> dict[str, float]:
    tp = fp = fn = 0
    for (_, _, _, item), output in zip(pages, outputs, strict=True):
        text = _folded(output)
        found = sum(_folded(snippet) in text for snippet in item["with"])
        tp, fn = tp + found, fn + len(item["with"]) - found
        fp += sum(_folded(snippet) in text for snippet in item["without"])
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"f1": f1, "precision": precision, "recall": recall}


def load(directory: Path) -> list[tuple[str, bytes, str, str]]:
    """(id, body, url, true text) of every page of Zyte's set."""
    truth = json.loads((directory / "ground-truth.json").read_text(encoding="utf-8"))
    return [
        (
            key,
            gzip.decompress((directory / "html" / f"{key}.html.gz").read_bytes()),
            item["url"],
            item.get("articleBody", ""),
        )
        for key, item in sorted(truth.items())
    ]


def measure(
    extract: Extract, pages: list[tuple[str, bytes, str, str]], rounds: int
) -> dict[str, Any]:
    outputs = [extract(body, url) for _, body, url, _ in pages]  # also warms up
    seconds = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _, body, url, _ in pages:
            extract(body, url)
        seconds.append(time.perf_counter() - start)
    if pages and pages[0][3] is None:
        quality = {"f1": float("nan"), "precision": float("nan"), "recall": float("nan")}
    elif pages and isinstance(pages[0][3], dict):
        quality = snippet_score(pages, outputs)
    else:
        counts = [tp_fp_fn(true, out) for (_, _, _, true), out in zip(pages, outputs, strict=True)]
        quality = score(counts)
    return {
        **quality,
        "pages_per_second": len(pages) / statistics.median(seconds),
        "rounds_pages_per_second": [len(pages) / s for s in seconds],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, metavar="DIR")
    parser.add_argument(
        "--limit", type=int, default=600, help="of a tree of HTML pages, the first N (600)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--only",
        help="comma-separated: ours, text, ours, no main, trafilatura, precision, resiliparse",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    names = list(CONTENDERS)
    if args.only:
        names = [SHORT.get(name.strip(), name.strip()) for name in args.only.split(",")]
        unknown = [name for name in names if name not in CONTENDERS]
        if unknown:
            parser.error(f"unknown contender {', '.join(unknown)}")
    pages: list[Any]
    if (args.data / "ground-truth.json").is_file():
        pages, what = load(args.data), "Zyte's article extraction benchmark"
    elif (args.data / "evaldata.json").is_file():
        pages, what = load_snippets(args.data), "trafilatura's evaluation set"
    elif files := sorted(args.data.rglob("*.html"))[: args.limit]:
        # A tree of pages without truth (Debian's documentation): speed alone.
        pages = [
            (str(path), path.read_bytes(), f"https://docs.test/{path.name}", None) for path in files
        ]
        what = "HTML pages, no truth: speed alone"
    else:
        print(
            f"bench_extract: {args.data} holds neither ground-truth.json, evaldata.json nor "
            "HTML pages (see --help)",
            file=sys.stderr,
        )
        return 1
    results: dict[str, Any] = {}
    for name in names:
        try:
            extract = CONTENDERS[name]()
        except ImportError as error:
            print(f"bench_extract: {name} is not installed ({error})", file=sys.stderr)
            return 1
        print(f"{name} ...", file=sys.stderr)
        results[name] = measure(extract, pages, args.rounds)
    facts = machine("trafilatura", "resiliparse", "selectolax")
    if args.json:
        print(json.dumps({"machine": facts, "pages": len(pages), "results": results}, indent=2))
        return 0
    print(", ".join(f"{key} {value}" for key, value in facts.items()))
    print(f"{len(pages)} pages of {args.data} ({what}); one core\n")
    print(f"{'contender':<20} {'F1':>6} {'prec.':>6} {'recall':>6} {'pages/s':>9}  by round")
    for name, result in results.items():
        rounds = " ".join(f"{rate:,.0f}" for rate in result["rounds_pages_per_second"])
        print(
            f"{name:<20} {result['f1']:6.3f} {result['precision']:6.3f} {result['recall']:6.3f} "
            f"{result['pages_per_second']:9,.0f}  {rounds}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
