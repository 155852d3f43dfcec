"""`crawl report` on a crawl of a small loopback web and its recrawl: the file's figures against
the crawl's summary.json and against the servers' own logs; then the same file in a real
browser (headless Chromium, where the machine has one), read back from the DOM after its script
ran."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from selectolax.lexbor import LexborHTMLParser
from support.commands import crawl_beside_servers, crawl_command
from support.loopback import LoopbackWeb

from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_OK

pytestmark = pytest.mark.loopback

A, B = "127.0.1.61", "127.0.1.62"
OPTIONS = (
    "-s",
    "politeness.min_delay=0.05",
    "-s",
    "politeness.max_crawl_delay=1",
    "-s",
    "state.commit_interval=0.1",
)


@dataclass(frozen=True)
class Crawled:
    data: Path
    report: Path
    printed: str
    summary: dict[str, Any]
    starts: dict[str, int]
    """Requests each host's server saw, over both runs."""
    origins: dict[str, str]


def refuse_once(request: web.Request) -> web.Response:
    return web.Response(status=429, text="slow down", headers={"Retry-After": "1"})


async def crawl_twice(data: Path) -> tuple[dict[str, int], dict[str, str]]:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("User-agent: *\nCrawl-delay: 0.1\nDisallow: /private\n")
        a.page("/", "/one", "/two", "/private", "/missing", b.url("/"))
        a.page("/one", title="one")
        a.page("/two", title="two, before")
        b.robots("User-agent: *\n")
        b.page("/", "/x", "/y")
        b.sequence("/x", refuse_once, lambda request: web.Response(text="<p>x</p>"))
        b.page("/y")
        args = (a.url("/"), b.url("/"), "--data", str(data), *OPTIONS)
        status, _, err = await crawl_beside_servers(*args)
        assert status == EXIT_OK, err
        a.page("/two", title="two, after")
        status, _, err = await crawl_beside_servers(*args, "--recrawl", "-s", "recrawl.after=0s")
        assert status == EXIT_OK, err
        starts = {net[ip].origin: len(net.paths(ip)) for ip in (A, B)}
        return starts, {ip: net[ip].origin for ip in (A, B)}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Crawled:
    data = tmp_path_factory.mktemp("report") / "data"
    starts, origins = asyncio.run(crawl_twice(data))
    report = data.parent / "crawl report.html"
    status, out, err = crawl_command("report", "--data", str(data), "-o", str(report))
    assert status == EXIT_OK, err
    summary = json.loads((data / "summary.json").read_text("utf-8"))
    return Crawled(data, report, out, summary, starts, origins)


def page_of(path: Path) -> LexborHTMLParser:
    return LexborHTMLParser(path.read_text("utf-8"))


def figure(page: LexborHTMLParser, name: str) -> str:
    node = page.css_first(f'[data-figure="{name}"]')
    assert node is not None, name
    return node.text(deep=True)


def bars(page: LexborHTMLParser, chart: str) -> dict[str, int]:
    return {
        str(g.attributes["data-label"]): int(str(g.attributes["data-count"]))
        for g in page.css(f'svg[data-chart="{chart}"] g[data-label]')
    }


def column(page: LexborHTMLParser, table: str, heading: str) -> dict[str, str]:
    """The cells of `heading` in `table`, by the row's first cell."""
    headings = [th.text() for th in page.css(f'table[data-table="{table}"] th')]
    index = headings.index(heading)
    rows = page.css(f'table[data-table="{table}"] tbody tr')
    return {row.css("td")[0].text(): row.css("td")[index].text() for row in rows}


def test_the_report_is_written_where_asked_and_its_path_printed(crawled: Crawled) -> None:
    assert crawled.printed.startswith(f"crawl report: wrote {crawled.report.resolve()} (")
    text = crawled.report.read_text("utf-8")
    # Self-contained: nothing to fetch from elsewhere.
    assert "<script>" in text and "<style>" in text
    for reference in (" src=", " href=", "@import", "url("):
        assert reference not in text


def test_the_reports_figures_are_the_crawls(crawled: Crawled) -> None:
    page, summary = page_of(crawled.report), crawled.summary
    figures = summary["figures"]
    assert figure(page, "pages").startswith(f"{figures['pages']:,}")
    assert figure(page, "requests").startswith(f"{figures['requests']:,}")
    assert figure(page, "hosts").startswith(str(len(summary["hosts"])))
    assert bars(page, "statuses") == {code: n for code, n in summary["statuses"].items()}
    assert bars(page, "skips") == summary["skips"]
    assert bars(page, "changes") == summary["changes"]
    assert summary["changes"]["changed"] == 1  # /two's title changed between the runs
    in_pass = figures["pages"] - summary["recrawl"]["pages_before"]
    assert f"UTC; {in_pass:,} pages in it." in figure(page, "recrawl-pass")
    requests = column(page, "hosts", "requests")
    assert {origin: int(n) for origin, n in requests.items()} == {
        host["origin"]: host["requests"] for host in summary["hosts"]
    }
    assert column(page, "refused", "refusals") == {crawled.origins[B]: "1"}


def test_the_gaps_are_those_the_servers_saw_and_none_is_under_its_interval(
    crawled: Crawled,
) -> None:
    page = page_of(crawled.report)
    gaps = sum(count - 1 for count in crawled.starts.values())
    assert figure(page, "gaps-under").startswith(f"0 of {gaps} gaps")
    charts = page.css('svg[data-chart="gaps"]')
    assert len(charts) == 2
    captions = [node.text() for node in page.css("figure figcaption")]
    for origin, count in crawled.starts.items():
        chart = charts[next(i for i, c in enumerate(captions) if c.startswith(origin))]
        assert len(chart.css("circle.gap")) == count - 1
    # Crawl-delay 0.1 s on A: its shortest gap, in the table, is at least that.
    shortest = column(page, "hosts", "shortest gap")[crawled.origins[A]]
    assert shortest.endswith(" s") and float(shortest[:-2]) >= 0.1 - 0.001


def test_a_missing_or_wrong_data_directory_is_named_with_exit_status_2(tmp_path: Path) -> None:
    status, _, err = crawl_command("report", "--data", str(tmp_path / "none"))
    assert status == EXIT_BAD_INPUT and f"{tmp_path / 'none'} does not exist" in err
    file = tmp_path / "file"
    file.write_text("x")
    status, _, err = crawl_command("report", "--data", str(file))
    assert status == EXIT_BAD_INPUT and f"{file} is a file, not a data directory" in err
    (tmp_path / "summary.json").write_text("{")
    status, _, err = crawl_command("report", "--data", str(tmp_path))
    assert status == EXIT_BAD_INPUT and f"{tmp_path / 'summary.json'} is damaged" in err


# --- in a real browser ---------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CLICK_HOST_HEADING = (
    "<script>document.querySelector('table[data-table=hosts] th').click();</script></body>"
)


def browser_dom(path: Path, profile: Path) -> LexborHTMLParser:
    """The DOM headless Chromium holds once the page at `path` has loaded and its scripts ran."""
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",  # as root, Chromium refuses to start with its sandbox
            "--disable-gpu",
            f"--user-data-dir={profile}",
            "--dump-dom",
            path.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return LexborHTMLParser(done.stdout)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on this machine (apt: chromium)")
def test_a_browser_shows_the_charts_and_figures_and_sorts_a_table(
    crawled: Crawled, tmp_path: Path
) -> None:
    dom = browser_dom(crawled.report, tmp_path / "profile")
    root = dom.css_first("html")
    assert root is not None and root.attributes.get("data-sortable") == "ready"  # the script ran
    shown = {str(svg.attributes["data-chart"]) for svg in dom.css("svg.chart")}
    assert {"pages", "spread", "gaps", "statuses", "errors", "skips", "changes"} <= shown
    assert figure(dom, "pages").startswith(f"{crawled.summary['figures']['pages']:,}")
    assert bars(dom, "statuses") == crawled.summary["statuses"]
    # A click on the hosts table's first heading sorts its rows by host, Z to A.
    clicked = tmp_path / "clicked.html"
    clicked.write_text(
        crawled.report.read_text("utf-8").replace("</body>", CLICK_HOST_HEADING), "utf-8"
    )
    dom = browser_dom(clicked, tmp_path / "profile")
    first = dom.css_first('table[data-table="hosts"] th')
    assert first is not None and first.attributes.get("aria-sort") == "descending"
    hosts = list(column(dom, "hosts", "host"))
    assert hosts == sorted(crawled.origins.values(), reverse=True)
