#!/usr/bin/env python3
"""How long the page step holds the event loop on hostile pages (issue 17): `read_page` on each
body below, with the walk the crawl would choose (CRAWLER_PAGE_WALK=python for the Python one),
and where crawler.page.bounds cut it.

    python benchmarks/bench_hostile_pages.py

Before the prescan, 100,000 nested elements took 52 s and 100,000 attributes 66 s, and
16,000 `<p><font>` rebuilds ran out of memory. Before NULs were dropped, 5 MB of them in an
attribute value took 10.6 s and 1.1 GB; before an end tag's attributes counted, 5 MB of `</p a>`
took 0.6 s and 238 MB. Pages over crawler.crawl.answers.OFF_LOOP_BYTES are read on a worker
thread, so these figures are the loop's hold for shorter pages only.
"""

from __future__ import annotations

import time

from crawler.page.compiled import WALK
from crawler.page.read import read_page

N = 100_000
MB5 = 5 * 2**20
"""fetch.max_body_bytes: no body the crawl reads is longer."""


def bodies() -> dict[str, bytes]:
    return {
        "100k nested <div>": b"<div>" * N,
        "100k <ul><li>": b"<ul><li>" * N,
        "100k attributes": b"<div " + b" ".join(b"a%d=1" % i for i in range(N)) + b">",
        "100k links": b"".join(b'<a href="/p%d">x</a>' % i for i in range(N)),
        "5 MB line": b"<p>" + b"x" * MB5,
        "5 MB of <p>": b"<p>" * (MB5 // 3),
        "5 MB of comments": b"<!---->" * (MB5 // 7),
        "sloppy tables, 5 MB": b"<table><tr><td>a<td>b<tr><td>c</table>" * 130_000,
        "100k distinct robots metas": b"".join(
            b'<meta name=robots content="noindex %d">' % i for i in range(N)
        ),
        "<p><font id=N>x</p> x16k": b"".join(b"<p><font id=%d>x</p>" % i for i in range(16_000)),
        "<span><div></span> x100k": b"<span><div></span>" * N,
        "5 MB of NULs in an href": b'<a href="' + b"\0" * (MB5 - 20) + b'">x</a>',
        "5 MB of </p a>": b"</p a>" * (MB5 // 6),
        "5 MB of <br a a>": b"<br a a>" * (MB5 // 8),
        "5 MB of <": b"<" * MB5,
    }


def main() -> None:
    print(f"page walk: {WALK}")
    for name, body in bodies().items():
        started = time.perf_counter()
        page = read_page(body, "http://a.test/")
        took = time.perf_counter() - started
        print(f"{name:28s} {took:7.3f} s  {len(page.links):6d} links  cut: {page.cut}")


if __name__ == "__main__":
    main()
