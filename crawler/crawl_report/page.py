"""The whole report page: one HTML text with its styles, charts and the one small script (table
sorting) inline, and nothing fetched from elsewhere; pure."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from crawler.crawl_report.figures import ReportFigures
from crawler.crawl_report.sections import (
    answers_section,
    changes_section,
    hosts_section,
    politeness_section,
    time_section,
)
from crawler.crawl_report.svg import duration_text

__all__ = ["report_html"]

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;margin:0;
background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:20px 28px 60px;background:#fff}
h1{margin:0 0 4px;font-size:26px}h2{margin:34px 0 10px;padding-top:12px;
border-top:1px solid #ddd;font-size:20px}h3{font-size:16px;margin:20px 0 6px}
.muted,.note{color:#666}.note{font-size:13px;margin:4px 0 10px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;
margin:16px 0}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 12px;background:#fafbfc}
.card b{display:block;font-size:22px;font-variant-numeric:tabular-nums}
.card span{font-size:12px;color:#555}
.verdict{padding:8px 12px;border-radius:6px;font-weight:600}
.verdict.ok{background:#e8f5ec;color:#1e6b3d}.verdict.bad{background:#fdecea;color:#9b2a1d}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(500px,1fr));gap:8px 24px}
figure{margin:6px 0}figcaption{font-weight:600;font-size:14px;margin-bottom:2px;
overflow-wrap:anywhere}
table{border-collapse:collapse;width:auto;min-width:60%;font-size:13px;font-variant-numeric:tabular-nums}
th,td{padding:4px 8px;border-bottom:1px solid #e6e6e6;text-align:left;vertical-align:top}
td{overflow-wrap:break-word}.wide{overflow-x:auto}
th{background:#f0f2f5;cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
.num{text-align:right}td.num{white-space:nowrap}td:first-child{min-width:14em}
code{background:#f0f2f5;padding:0 3px;border-radius:3px}
"""

SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var down = th.getAttribute("aria-sort") !== "descending";
      table.querySelectorAll("th").forEach(function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column], y = b.cells[column], c;
        if (x.hasAttribute("data-sort")) {
          c = parseFloat(x.getAttribute("data-sort")) - parseFloat(y.getAttribute("data-sort"));
        } else { c = x.textContent.localeCompare(y.textContent); }
        return down ? -c : c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
document.documentElement.setAttribute("data-sortable", "ready");
"""


def _card(name: str, value: str, label: str) -> str:
    return (
        f'<div class="card" data-figure="{escape(name)}"><b>{escape(value)}</b>'
        f"<span>{escape(label)}</span></div>"
    )


def _megabytes(count: int) -> str:
    return f"{count / 1e6:,.1f} MB" if count < 1e9 else f"{count / 1e9:,.2f} GB"


def _cards(document: Mapping[str, Any], figures: ReportFigures) -> str:
    numbers = document.get("figures") or {}
    crawl = document.get("crawl") or {}
    errors = sum(int(count) for count in (document.get("errors") or {}).values())
    return (
        '<div class="cards">'
        + "".join(
            [
                _card("pages", f"{int(numbers.get('pages', 0)):,}", "pages"),
                _card("requests", f"{int(numbers.get('requests', 0)):,}", "requests"),
                _card("hosts", f"{len(figures.hosts):,}", "hosts"),
                _card("elapsed", duration_text(float(crawl.get("elapsed_s") or 0.0)), "crawling"),
                _card(
                    "pages-per-second",
                    f"{float(numbers.get('pages_per_second', 0.0)):.2f}",
                    "pages per second",
                ),
                _card("bytes", _megabytes(int(numbers.get("bytes", 0))), "downloaded"),
                _card("errors", f"{errors:,}", "failed requests"),
                _card("skipped", f"{int(numbers.get('skipped', 0)):,}", "URLs not fetched"),
                _card("queued", f"{int(numbers.get('queued', 0)):,}", "URLs left queued"),
            ]
        )
        + "</div>"
    )


OUTCOMES = {
    "finished": "finished: nothing left to fetch",
    "stopped": "stopped before the end (it resumes where it was)",
    "page limit": "stopped at limits.max_pages",
    "deferred": "stopped: the hosts left wait longer than politeness.max_wait",
    "running": "running now: as of its last refresh, a few seconds ago",
    "killed": "ended without a last word (killed?): as of its last refresh",
}


def report_html(figures: ReportFigures, *, source: str, made_at: str, running: bool = False) -> str:
    """The page for `figures`; `source` names the files read, `made_at` when (UTC); `running`:
    the process that wrote a "running" summary is alive (else it was killed)."""
    document = figures.document
    crawl = document.get("crawl") or {}
    run = document.get("run") or {}
    outcome = str(document.get("outcome"))
    if outcome == "running" and not running:
        outcome = "killed"
    started = str(crawl.get("started_at") or "an unknown time").replace("T", " ")[:19]
    ended = str(run.get("ended_at") or run.get("updated_at") or "").replace("T", " ")[:19]
    runs = int(crawl.get("runs") or 1)
    title = f"Crawl report: {document.get('data_dir') or source}"
    header = (
        f"<h1>Crawl report</h1>"
        f'<p class="muted"><code>{escape(str(document.get("data_dir") or source))}</code> · '
        f'<span data-figure="outcome">{escape(OUTCOMES.get(outcome, outcome))}</span> · began '
        f"{escape(started)} UTC"
        + (f", last run ended {escape(ended)} UTC" if ended else "")
        + f" · {runs} run{'s' if runs != 1 else ''}"
        + f" · crawler {escape(str(document.get('crawler_version') or '?'))}</p>"
    )
    body = "".join(
        [
            header,
            _cards(document, figures),
            time_section(figures),
            politeness_section(figures),
            answers_section(document),
            hosts_section(figures),
            changes_section(document),
            f'<p class="note" style="margin-top:40px">Made {escape(made_at)} by '
            f"<code>crawl report</code> from {escape(source)}. Times are UTC; gaps and "
            "intervals are between the starts of two requests to one host.</p>",
        ]
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
        f"<body><main>{body}</main><script>{SCRIPT}</script></body></html>\n"
    )
