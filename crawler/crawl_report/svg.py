"""Charts as inline SVG text, drawn from given series: pure (numbers in, markup out), so the
report needs no script to show them and no file from elsewhere.

Each chart is an `<svg class="chart" data-chart=NAME>` with a `<title>` saying what it shows;
axes carry their units. Log scales (gaps, intervals) take positive values only: a value at or
under zero is drawn at the axis' floor.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

__all__ = [
    "BarItem",
    "LineSeries",
    "bar_chart",
    "duration_text",
    "gap_chart",
    "line_chart",
    "linear_ticks",
    "log_ticks",
    "rate_chart",
    "seconds_text",
    "spread_chart",
]

FONT = 'font-family="system-ui, sans-serif" font-size="12"'
AXIS = "#555"
GRID = "#e4e4e4"
LIMIT = "#c0392b"
"""The interval line: the pace the crawl had to keep."""
POINT = "#1f6fb2"


@dataclass(frozen=True, slots=True)
class LineSeries:
    name: str
    points: Sequence[tuple[float, float]]
    color: str
    dash: str = ""
    """stroke-dasharray: "" draws a solid line."""


@dataclass(frozen=True, slots=True)
class BarItem:
    label: str
    count: int
    color: str = POINT


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def seconds_text(value: float) -> str:
    """A short time in seconds as an axis or table shows it: 0.25 s, 1.5 s, 30 s."""
    if value == 0:
        return "0 s"
    if abs(value) < 0.01:
        return f"{value * 1000:.3g} ms"
    return f"{value:.3g} s"


def duration_text(seconds: float) -> str:
    """A span of the crawl's time: 45 s, 12 min, 3.5 h."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


def linear_ticks(top: float, most: int = 6) -> list[float]:
    """Round ticks from 0 to at least `top` (1, 2 or 5 times a power of ten apart)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    count = math.ceil(top / step - 1e-9)
    return [step * i for i in range(count + 1)]


def log_ticks(low: float, high: float) -> list[float]:
    """Powers of ten spanning [low, high] (positive), with 2 and 5 between when few."""
    first = math.floor(math.log10(low))
    last = math.ceil(math.log10(high))
    if last == first:
        last += 1
    decades = [10.0**e for e in range(first, last + 1)]
    if len(decades) > 4:
        return decades
    return [d * m for d in decades for m in (1, 2, 5) if d * m <= decades[-1]]


class _Frame:
    """A plot area inside margins, mapping data to pixels."""

    def __init__(
        self, width: int, height: int, left: int = 64, bottom: int = 40, top: int = 16
    ) -> None:
        self.width, self.height = width, height
        # Room on the right for half the last tick's label.
        self.left, self.right, self.top, self.bottom = left, width - 28, top, height - bottom

    def x(self, fraction: float) -> float:
        return self.left + (self.right - self.left) * min(max(fraction, 0.0), 1.0)

    def y(self, fraction: float) -> float:
        return self.bottom - (self.bottom - self.top) * min(max(fraction, 0.0), 1.0)


def _scale(low: float, high: float, log: bool) -> Callable[[float], float]:
    if log:
        a, b = math.log10(low), math.log10(high)
        return lambda v: (math.log10(max(v, low)) - a) / (b - a)
    return lambda v: (v - low) / (high - low) if high > low else 0.0


def _open(name: str, title: str, frame: _Frame) -> list[str]:
    return [
        f'<svg class="chart" data-chart="{escape(name)}" role="img" '
        f'viewBox="0 0 {frame.width} {frame.height}" width="100%" '
        f'style="max-width:{frame.width}px" xmlns="http://www.w3.org/2000/svg" {FONT}>',
        f"<title>{escape(title)}</title>",
    ]


def _axes(
    frame: _Frame,
    x_ticks: Sequence[tuple[float, str]],
    y_ticks: Sequence[tuple[float, str]],
    x_label: str,
    y_label: str,
) -> list[str]:
    """Grid lines and labels; ticks as (fraction of the axis, text)."""
    out = []
    for fraction, text in y_ticks:
        y = frame.y(fraction)
        out.append(
            f'<line x1="{frame.left}" x2="{frame.right}" y1="{_num(y)}" y2="{_num(y)}" '
            f'stroke="{GRID}"/>'
            f'<text x="{frame.left - 6}" y="{_num(y + 4)}" text-anchor="end" '
            f'fill="{AXIS}">{escape(text)}</text>'
        )
    for fraction, text in x_ticks:
        x = frame.x(fraction)
        out.append(
            f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{frame.bottom}" y2="{frame.bottom + 4}" '
            f'stroke="{AXIS}"/>'
            f'<text x="{_num(x)}" y="{frame.bottom + 17}" text-anchor="middle" '
            f'fill="{AXIS}">{escape(text)}</text>'
        )
    out.append(
        f'<line x1="{frame.left}" x2="{frame.right}" y1="{frame.bottom}" y2="{frame.bottom}" '
        f'stroke="{AXIS}"/>'
        f'<text x="{(frame.left + frame.right) / 2:.0f}" y="{frame.height - 4}" '
        f'text-anchor="middle" fill="{AXIS}">{escape(x_label)}</text>'
        f'<text transform="translate(14 {(frame.top + frame.bottom) / 2:.0f}) rotate(-90)" '
        f'text-anchor="middle" fill="{AXIS}">{escape(y_label)}</text>'
    )
    return out


def _time_axis(span: float) -> tuple[float, list[tuple[float, str]]]:
    """The time axis' end (at least `span` seconds, on a round tick) and its ticks: on round
    seconds, minutes or hours, whichever the span reads best in."""
    unit = 3600.0 if span >= 7200 else 60.0 if span >= 120 else 1.0
    name = {3600.0: "h", 60.0: "min", 1.0: "s"}[unit]
    ticks = linear_ticks(span / unit)
    end = ticks[-1] * unit or 1.0
    return end, [(t * unit / end, f"{_num(t)} {name}") for t in ticks]


def line_chart(
    name: str,
    title: str,
    series: Sequence[LineSeries],
    *,
    y_label: str,
    width: int = 900,
    height: int = 260,
) -> str:
    """Lines over the crawl's time: x in seconds from its start, y from 0."""
    frame = _Frame(width, height)
    span, x_ticks = _time_axis(max((x for line in series for x, _ in line.points), default=0.0))
    top = max((y for line in series for _, y in line.points), default=0.0)
    y_ticks = linear_ticks(top)
    high = y_ticks[-1] or 1.0
    out = _open(name, title, frame)
    out += _axes(
        frame,
        x_ticks,
        [(t / high, _num(t) if t < 1e4 else f"{t:,.0f}") for t in y_ticks],
        "time since the crawl's first request",
        y_label,
    )
    for index, line in enumerate(series):
        path = " ".join(
            f"{_num(frame.x(x / span))},{_num(frame.y(y / high))}" for x, y in line.points
        )
        dash = f' stroke-dasharray="{line.dash}"' if line.dash else ""
        out.append(
            f'<polyline data-series="{escape(line.name)}" points="{path}" fill="none" '
            f'stroke="{line.color}" stroke-width="2"{dash}/>'
        )
        lx = frame.left + 12 + 180 * index
        out.append(
            f'<line x1="{lx}" x2="{lx + 16}" y1="{frame.top + 2}" y2="{frame.top + 2}" '
            f'stroke="{line.color}" stroke-width="2"{dash}/>'
            f'<text x="{lx + 22}" y="{frame.top + 6}">{escape(line.name)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def bar_chart(name: str, title: str, items: Sequence[BarItem], *, width: int = 540) -> str:
    """Horizontal bars, one a row, each labelled with its count; empty: a line saying none."""
    row = 22
    # Room for the longest label, at about 7 px a character.
    label_width = min(260, 12 + 7 * max((len(item.label) for item in items), default=4))
    height = max(1, len(items)) * row + 8
    out = [
        f'<svg class="chart" data-chart="{escape(name)}" role="img" '
        f'viewBox="0 0 {width} {height}" width="100%" style="max-width:{width}px" '
        f'xmlns="http://www.w3.org/2000/svg" {FONT}>',
        f"<title>{escape(title)}</title>",
    ]
    if not items:
        out.append(f'<text x="0" y="16" fill="{AXIS}">none</text></svg>')
        return "".join(out)
    most = max(item.count for item in items) or 1
    room = width - label_width - 70
    for index, item in enumerate(items):
        y = 4 + index * row
        length = max(1.0, room * item.count / most)
        out.append(
            f'<g data-label="{escape(item.label)}" data-count="{item.count}">'
            f'<text x="{label_width - 6}" y="{y + 14}" text-anchor="end">'
            f"{escape(item.label)}</text>"
            f'<rect x="{label_width}" y="{y + 2}" width="{_num(length)}" height="{row - 6}" '
            f'fill="{item.color}"/>'
            f'<text x="{_num(label_width + length + 6)}" y="{y + 14}">{item.count:,}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)


def _log_bounds(values: Sequence[float]) -> tuple[float, float]:
    positive = [v for v in values if v > 0]
    if not positive:
        return 0.01, 1.0
    low, high = min(positive), max(positive)
    # A value on a power of ten gets the decade below too: no dot sits on the axis.
    return 10 ** math.floor(math.log10(low) - 1e-9), 10 ** math.ceil(math.log10(high) + 1e-9)


def _legend(frame: _Frame, entries: Sequence[tuple[str, str]]) -> list[str]:
    """Keys in a row at the plot's top right: (an SVG mark drawn in a 16x8 box at 0,0, text)."""
    out, x = [], frame.right
    for mark, text in reversed(entries):
        x -= 7 * len(text) + 28
        out.append(
            f'<g transform="translate({x} {frame.top - 12})">{mark}'
            f'<text x="20" y="8">{escape(text)}</text></g>'
        )
    return out


GAP_MARK = f'<circle cx="8" cy="4" r="2.5" fill="{POINT}"/>'
LEAST_MARK = f'<line x1="0" x2="16" y1="4" y2="4" stroke="{LIMIT}" stroke-dasharray="4 2"/>'
PACE = "#e08a00"
PACE_MARK = f'<line x1="0" x2="16" y1="4" y2="4" stroke="{PACE}" stroke-width="2"/>'


def gap_chart(
    name: str,
    title: str,
    points: Sequence[tuple[float, float, float, float]],
    *,
    span: float | None = None,
    width: int = 540,
) -> str:
    """One host's gaps: a dot per gap, (seconds since the crawl's first request, gap) on a log
    scale, over `span` seconds (default: to the last gap), with two step lines from the start
    before each gap: the least gap the crawl allowed (red, dashed: a dot under it would be a
    request started too soon) and the pace in force (orange)."""
    frame = _Frame(width, 230, left=58, top=28)
    span, x_ticks = _time_axis(span if span is not None else max((p[0] for p in points), default=0))
    low, high = _log_bounds([v for point in points for v in point[1:]])
    ticks = log_ticks(low, high)
    low, high = ticks[0], ticks[-1]
    y = _scale(low, high, log=True)
    out = _open(name, title, frame)
    out += _axes(
        frame,
        x_ticks,
        [(y(t), seconds_text(t)) for t in ticks],
        "time since the crawl's first request",
        "gap between starts",
    )
    for column, color, dash, css in ((3, PACE, "", "pace"), (2, LIMIT, "5 3", "least")):
        steps = " ".join(
            f"{_num(frame.x(point[0] / span))},{_num(frame.y(y(point[column])))}"
            for point in points
        )
        if steps:
            out.append(
                f'<polyline class="{css}" points="{steps}" fill="none" stroke="{color}" '
                f'stroke-width="1.5"' + (f' stroke-dasharray="{dash}"' if dash else "") + "/>"
            )
    out.extend(
        f'<circle class="gap" cx="{_num(frame.x(at / span))}" cy="{_num(frame.y(y(gap)))}" '
        f'r="2.2" '
        f'fill="{POINT}" fill-opacity="0.7"/>'
        for at, gap, _, _ in points
    )
    out += _legend(
        frame, [(GAP_MARK, "gap"), (PACE_MARK, "pace in force"), (LEAST_MARK, "least allowed")]
    )
    out.append("</svg>")
    return "".join(out)


def rate_chart(
    name: str, title: str, edges: Sequence[float], counts: Sequence[int], *, width: int = 900
) -> str:
    """Counts per second over the crawl's time, a column per bin: bin i spans edges[i] to
    edges[i + 1] seconds from the crawl's first request."""
    frame = _Frame(width, 170)
    span, x_ticks = _time_axis(edges[-1] if edges else 0.0)
    rates = [
        count / (edges[i + 1] - edges[i]) if edges[i + 1] > edges[i] else 0.0
        for i, count in enumerate(counts)
    ]
    y_ticks = linear_ticks(max(rates, default=0.0), most=4)
    high = y_ticks[-1] or 1.0
    out = _open(name, title, frame)
    out += _axes(
        frame,
        x_ticks,
        [(t / high, _num(t)) for t in y_ticks],
        "time since the crawl's first request",
        "per second",
    )
    for i, rate in enumerate(rates):
        x0, x1 = frame.x(edges[i] / span), frame.x(edges[i + 1] / span)
        top = frame.y(rate / high)
        out.append(
            f'<rect x="{_num(x0)}" y="{_num(top)}" width="{_num(max(x1 - x0 - 0.5, 0.5))}" '
            f'height="{_num(frame.bottom - top)}" fill="{POINT}" fill-opacity="0.8"/>'
        )
    out.append("</svg>")
    return "".join(out)


def spread_chart(
    name: str, title: str, points: Sequence[tuple[float, float]], *, width: int = 900
) -> str:
    """Every host as a dot: (the interval it was to keep, its shortest gap), both on log scales,
    and the line where the two are equal: a dot under it is a host asked too soon."""
    frame = _Frame(width, 250)
    low, high = _log_bounds([v for point in points for v in point])
    ticks = log_ticks(low, high)
    low, high = ticks[0], ticks[-1]
    scale = _scale(low, high, log=True)
    out = _open(name, title, frame)
    labels = [(scale(t), seconds_text(t)) for t in ticks]
    out += _axes(
        frame,
        labels,
        labels,
        "least gap allowed (robots.txt, politeness.min_delay)",
        "shortest gap",
    )
    out.append(
        f'<line class="equal" x1="{frame.x(0)}" y1="{frame.y(0)}" x2="{frame.x(1)}" '
        f'y2="{frame.y(1)}" stroke="{LIMIT}" stroke-dasharray="5 3"/>'
    )
    out.extend(
        f'<circle cx="{_num(frame.x(scale(interval)))}" cy="{_num(frame.y(scale(gap)))}" r="3" '
        f'fill="{POINT}" fill-opacity="0.5"/>'
        for interval, gap in points
    )
    out.append("</svg>")
    return "".join(out)
