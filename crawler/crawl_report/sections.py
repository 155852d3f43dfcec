"""The report's sections as HTML text, from `ReportFigures`: pure. Tables are bounded (the first
TOP_HOSTS rows of their order, and how many more there are); numbers carry their units."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

from crawler.crawl_report.figures import (
    GAP_CHARTS,
    OVERVIEW_HOSTS,
    TOP_HOSTS,
    HostRow,
    ReportFigures,
    sample_evenly,
)
from crawler.crawl_report.svg import (
    BarItem,
    LineSeries,
    bar_chart,
    gap_chart,
    line_chart,
    rate_chart,
    seconds_text,
    spread_chart,
)

__all__ = [
    "answers_section",
    "changes_section",
    "hosts_section",
    "politeness_section",
    "time_section",
]

SLOW_HOSTS = 20
NONE = "\u2013"
"""What a cell without a figure shows: an en dash."""
STATUS_COLORS = {"2": "#2e8b57", "3": "#1f6fb2", "4": "#e08a00", "5": "#c0392b"}

Cell = tuple[str, str | float | None]
"""A table cell: its text, and the value it sorts by (None: the text)."""


def _seconds(value: float | None) -> Cell:
    return (NONE, -1.0) if value is None else (seconds_text(value), value)


def table(name: str, headings: Sequence[str], rows: Sequence[Sequence[Cell]], *, total: int) -> str:
    """A sortable table (a click on a heading sorts by it) of `rows`, saying how many of
    `total` it shows."""
    # A column of figures is right-aligned, its heading too.
    numeric = [bool(rows) and rows[0][i][1] is not None for i in range(len(headings))]
    head = "".join(
        f'<th scope="col"{" class=num" if numeric[i] else ""}>{escape(h)}</th>'
        for i, h in enumerate(headings)
    )
    body = []
    for row in rows:
        cells = []
        for text, value in row:
            key = "" if value is None else f' class=num data-sort="{value}"'
            cells.append(f"<td{key}>{escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="note">The first {len(rows):,} of {total:,}.</p>' if total > len(rows) else ""
    return (
        f'<div class="wide"><table class="sortable" data-table="{escape(name)}"><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>{note}"
    )


def time_section(figures: ReportFigures) -> str:
    pages, requests = figures.pages, figures.requests
    if pages is None and requests is None:
        return (
            "<h2>Pages over time</h2><p class=note>The crawl's state holds no fetch times "
            "(a crawl kept in memory, or from before the state kept them).</p>"
        )
    began = min(series.began for series in (pages, requests) if series is not None)
    lines = []
    for series, label, color, dash in (
        (pages, "pages", "#1f6fb2", ""),
        (requests, "requests", "#555", "6 4"),
    ):
        if series is not None:
            offset = series.began - began
            points = [(offset, 0.0)] + [
                (offset + edge, float(total))
                for edge, total in zip(series.edges[1:], series.cumulative, strict=True)
            ]
            lines.append(LineSeries(label, points, color, dash))
    chart = line_chart(
        "pages",
        "Pages and requests, counted from the crawl's first request",
        lines,
        y_label="pages, requests in all",
    )
    if pages is not None:
        offset = pages.began - began
        chart += "<h3>Pages per second</h3>" + rate_chart(
            "rate",
            "Pages fetched per second",
            [offset + edge for edge in pages.edges],
            pages.counts,
        )
    recrawled = figures.document.get("crawl", {}).get("runs", 1) > 1 and any(
        key != "new" for key in figures.document.get("changes") or {}
    )
    note = (
        "<p class=note>A recrawl pass first drops the fetch times its previous pass superseded: "
        "a pass before the last two shows only its pages not fetched again since.</p>"
        if recrawled
        else ""
    )
    return f"<h2>Pages over time</h2>{chart}{note}"


def _pace(host: HostRow) -> Cell:
    text, value = _seconds(host.interval)
    return f"{text}, {host.reason}", value


def _gap_cells(host: HostRow) -> list[Cell]:
    """Pace in force (median), shortest gap, median gap, gaps too soon: from the starts the
    state keeps, the summary's shortest gap without them."""
    gaps = host.gaps
    if gaps is None:
        return [(NONE, -1.0), _seconds(host.shortest_gap), (NONE, -1.0), (NONE, -1.0)]
    return [
        _seconds(gaps.median_pace),
        _seconds(gaps.shortest),
        _seconds(gaps.median),
        (f"{gaps.under:,}", gaps.under),
    ]


def politeness_section(figures: ReportFigures) -> str:
    hosts = figures.hosts
    parts = ["<h2>Politeness: each host's gaps against its interval</h2>"]
    gaps, under = figures.totals.get("gaps", 0), figures.totals.get("under", 0)
    if figures.gaps_known:
        verdict = "ok" if under == 0 else "bad"
        parts.append(
            f'<p class="verdict {verdict}" data-figure="gaps-under">{under:,} of {gaps:,} gaps '
            f"between two requests to one host were shorter than the crawl allowed that host "
            f"(its robots.txt Crawl-delay or Request-rate, politeness.min_delay, a back-off)."
            f"</p>"
        )
    spread = [
        (
            host.least_interval if host.least_interval is not None else host.interval or 0.0,
            host.gaps.shortest if host.gaps and host.gaps.shortest is not None else 0.0,
        )
        for host in hosts
        if host.gaps is not None and host.gaps.shortest is not None
    ]
    if spread:
        shown = [spread[i] for i in sample_evenly(len(spread), OVERVIEW_HOSTS)]
        parts.append(
            "<h3>Every host: its shortest gap against the least gap allowed</h3>"
            + spread_chart("spread", "Each host's shortest gap against its interval", shown)
            + '<p class="note">A dot per host (log scales). On the dashed line the shortest gap '
            "equals the least allowed: a dot on or above it was never asked too soon.</p>"
        )
    busiest = figures.busiest
    if busiest:
        span = max(host.gaps.points[-1][0] for host in busiest if host.gaps and host.gaps.points)
        charts = "".join(
            f'<figure><figcaption>{escape(host.origin)} <span class="muted">'
            f"{host.requests:,} requests</span></figcaption>"
            + gap_chart(
                "gaps",
                f"Gaps between requests to {host.origin}",
                host.gaps.points if host.gaps else (),
                span=span,
            )
            + "</figure>"
            for host in busiest
        )
        parts.append(
            f"<h3>The {min(GAP_CHARTS, len(busiest))} busiest hosts: every gap</h3>"
            f'<div class="grid">{charts}</div>'
            '<p class="note">A dot per gap between two request starts to the host (log scale, '
            "at most 400 a host, the shortest among them). At the start before each gap: the "
            "dashed red line is the least gap the crawl allowed (robots.txt's Crawl-delay or "
            "Request-rate, politeness.min_delay, a back-off), the orange line the pace in force "
            "(with what the host's answer times and refusals taught, counted from its answer). "
            "A dot under the red line would be a request started too soon.</p>"
        )
    elif not figures.gaps_known:
        parts.append(
            "<p class=note>This crawl's state keeps no request starts (a crawl from before "
            "they were kept, or one in memory): the gaps are the summary's shortest only.</p>"
        )
    rows = [
        [
            (host.origin, None),
            (f"{host.requests:,}", host.requests),
            _seconds(host.crawl_delay),
            _seconds(host.least_interval if host.least_interval is not None else host.interval),
            *_gap_cells(host),
            _pace(host),
            (host.robots, None),
        ]
        for host in hosts[:TOP_HOSTS]
    ]
    parts.append(
        "<h3>Busiest hosts</h3>"
        + table(
            "hosts",
            [
                "host",
                "requests",
                "Crawl-delay",
                "least gap allowed",
                "pace in force (median)",
                "shortest gap",
                "median gap",
                "gaps too soon",
                "pace at the end, why",
                "robots.txt",
            ],
            rows,
            total=len(hosts),
        )
    )
    return "".join(parts)


def _bars(counts: Mapping[str, Any], color: Callable[[str], str]) -> list[BarItem]:
    items = [(str(key), int(value)) for key, value in counts.items()]
    items.sort(key=lambda item: (-item[1], item[0]))
    return [BarItem(label, count, color(label)) for label, count in items[:30]]


def answers_section(document: Mapping[str, Any]) -> str:
    statuses = _bars(
        document.get("statuses") or {}, lambda code: STATUS_COLORS.get(code[:1], "#777")
    )
    errors = _bars(document.get("errors") or {}, lambda _: "#c0392b")
    skips = _bars(document.get("skips") or {}, lambda _: "#8e6bb8")
    return (
        '<h2>Answers, failures and skips</h2><div class="grid">'
        f"<figure><figcaption>HTTP status codes (requests)</figcaption>"
        f"{bar_chart('statuses', 'Answers by HTTP status', statuses)}</figure>"
        f"<figure><figcaption>Failures by kind (requests)</figcaption>"
        f"{bar_chart('errors', 'Failures by kind', errors)}</figure>"
        f"<figure><figcaption>URLs not fetched, by reason</figcaption>"
        f"{bar_chart('skips', 'Skips by reason', skips)}</figure></div>"
    )


def hosts_section(figures: ReportFigures) -> str:
    hosts = figures.hosts
    timed = sorted(
        (host for host in hosts if host.answer_time is not None),
        key=lambda host: -(host.answer_time or 0.0),
    )
    slow = [
        [
            (host.origin, None),
            _seconds(host.answer_time),
            (f"{host.requests:,}", host.requests),
            _pace(host),
        ]
        for host in timed[:SLOW_HOSTS]
    ]
    refused_hosts = sorted(
        (host for host in hosts if host.refusals),
        key=lambda host: (-host.refusals, host.origin),
    )
    refused = [
        [
            (host.origin, None),
            (f"{host.refusals:,}", host.refusals),
            (f"{host.requests:,}", host.requests),
            _seconds(host.backed_off),
            _pace(host),
        ]
        for host in refused_hosts[:SLOW_HOSTS]
    ]
    parts = [
        "<h2>Slowest hosts</h2>",
        table(
            "slowest",
            ["host", "time to first byte", "requests", "pace at the end, why"],
            slow,
            total=len(timed),
        )
        if slow
        else "<p class=note>No host's answer time was measured.</p>",
        "<h2>Most refused hosts (429 and 503)</h2>",
        table(
            "refused",
            ["host", "refusals", "requests", "held back in all", "pace at the end, why"],
            refused,
            total=len(refused_hosts),
        )
        if refused
        else '<p class="verdict ok" data-figure="refusals">No host refused a request '
        "(429 or 503).</p>",
    ]
    document = figures.document
    given_up = document.get("given_up") or {}
    if given_up:
        items = sorted(given_up.items())
        parts.append(
            "<h2>Hosts given up</h2>"
            + table(
                "given-up",
                ["host", "why"],
                [[(str(o), None), (str(w), None)] for o, w in items[:TOP_HOSTS]],
                total=len(items),
            )
        )
    deferred = document.get("deferred") or []
    if deferred:
        parts.append(
            "<h2>Hosts deferred (waits over politeness.max_wait)</h2>"
            + table(
                "deferred",
                ["host", "until", "URLs waiting", "why"],
                [
                    [
                        (str(h.get("origin")), None),
                        (str(h.get("until") or NONE), None),
                        (f"{int(h.get('pending') or 0):,}", int(h.get("pending") or 0)),
                        (str(h.get("reason")), None),
                    ]
                    for h in deferred[:TOP_HOSTS]
                ],
                total=len(deferred),
            )
        )
    return "".join(parts)


CHANGE_COLORS = {
    "new": "#1f6fb2",
    "changed": "#e08a00",
    "unchanged": "#2e8b57",
    "gone": "#c0392b",
    "failed": "#7f2a1f",
}


def changes_section(document: Mapping[str, Any]) -> str:
    changes = document.get("changes") or {}
    items = _bars(changes, lambda kind: CHANGE_COLORS.get(kind, "#777"))
    recrawl = any(key != "new" for key in changes)
    began = (document.get("recrawl") or {}).get("began_at")
    if isinstance(began, str):
        pages = int((document.get("figures") or {}).get("pages") or 0)
        before = int((document.get("recrawl") or {}).get("pages_before") or 0)
        when = escape(began[:19].replace("T", " "))
        pass_text = (
            f'<p data-figure="recrawl-pass">The last recrawl pass began {when} UTC; '
            f"{max(pages - before, 0):,} pages in it.</p>"
        )
    else:
        pass_text = ""
    what = (
        "Each URL the last recrawl pass asked for again, against its fetch before: unchanged "
        "(a 304, or the same content), changed, gone (404 or 410), failed, or new (found in "
        "the pass). <code>crawl export --changed-since DATE</code> lists them."
        if recrawl
        else "A first crawl: every page is new. A recrawl (<code>crawl --recrawl</code>) says "
        "here which pages changed, stayed the same or went away."
    )
    return (
        f"<h2>What the recrawl found</h2>{pass_text}<p>{what}</p>"
        f"{bar_chart('changes', 'Fetched URLs by what they found against the last fetch', items)}"
    )
