"""The charts from given series: what is drawn where, read back from the SVG text."""

from __future__ import annotations

import math
import re

import pytest

from crawler.crawl_report.svg import (
    BarItem,
    LineSeries,
    bar_chart,
    duration_text,
    gap_chart,
    line_chart,
    linear_ticks,
    log_ticks,
    rate_chart,
    seconds_text,
    spread_chart,
)


def numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text)]


def polyline(svg: str, css: str) -> list[tuple[float, float]]:
    found = re.search(rf'<polyline class="{css}" points="([^"]*)"', svg)
    assert found is not None, css
    values = numbers(found.group(1))
    return list(zip(values[::2], values[1::2], strict=True))


def dots(svg: str, css: str = "gap") -> list[tuple[float, float]]:
    return [
        (float(x), float(y))
        for x, y in re.findall(rf'<circle class="{css}" cx="([\d.]+)" cy="([\d.]+)"', svg)
    ]


@pytest.mark.parametrize("top", [0.3, 1, 7, 48, 1234, 99_999])
def test_linear_ticks_start_at_zero_reach_the_top_in_round_steps(top: float) -> None:
    ticks = linear_ticks(top)
    step = ticks[1] - ticks[0]
    assert ticks[0] == 0 and ticks[-1] >= top and ticks[-2] < top
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in (1, 2, 5)
    assert len(ticks) <= 8


def test_log_ticks_span_the_values_in_powers_of_ten() -> None:
    assert log_ticks(0.05, 3.0) == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
    assert log_ticks(0.001, 1000.0) == [0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]


def test_times_read_in_the_unit_that_fits() -> None:
    assert [seconds_text(v) for v in (0, 0.0042, 0.25, 1.5, 30)] == [
        "0 s",
        "4.2 ms",
        "0.25 s",
        "1.5 s",
        "30 s",
    ]
    assert [duration_text(v) for v in (45, 600, 5400, 36_000)] == [
        "45 s",
        "10 min",
        "90 min",
        "10 h",
    ]


def test_a_gap_under_the_least_allowed_is_drawn_below_its_line() -> None:
    points = [(1.0, 1.0, 1.0, 1.5), (2.0, 1.6, 1.0, 1.5), (3.0, 0.4, 1.0, 1.5)]
    svg = gap_chart("gaps", "gaps of a.test", points)
    least, pace, gaps = polyline(svg, "least"), polyline(svg, "pace"), dots(svg)
    assert len(gaps) == 3 and len(least) == 3 and len(pace) == 3
    # SVG's y grows downward: a dot under the line has the larger y.
    assert gaps[0][1] == pytest.approx(least[0][1], abs=0.1)
    assert gaps[1][1] < pace[1][1] < least[1][1]
    assert gaps[2][1] > least[2][1]
    assert [x for x, _ in gaps] == [x for x, _ in least]
    assert "<title>gaps of a.test</title>" in svg


def test_charts_of_one_span_share_their_time_axis() -> None:
    short = gap_chart("gaps", "a", [(10.0, 1.0, 1.0, 1.0)], span=100.0)
    long = gap_chart("gaps", "b", [(100.0, 1.0, 1.0, 1.0)], span=100.0)
    assert dots(short)[0][0] < dots(long)[0][0]
    assert ">100 s<" in short and ">100 s<" in long


def test_lines_climb_with_their_counts_and_carry_a_legend() -> None:
    svg = line_chart(
        "pages",
        "pages",
        [LineSeries("pages", [(0, 0), (150, 10), (300, 40)], "#000")],
        y_label="pages",
    )
    (points,) = [
        numbers(found) for found in re.findall(r'data-series="pages" points="([^"]*)"', svg)
    ]
    ys = points[1::2]
    assert ys[0] > ys[1] > ys[2]
    assert ">pages</text>" in svg and ">5 min<" in svg


def test_rates_are_counts_per_second_of_each_bin() -> None:
    svg = rate_chart("rate", "pages per second", [0.0, 10.0, 20.0], [50, 100])
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)"', svg)]
    assert len(heights) == 2 and heights[1] == pytest.approx(2 * heights[0], rel=0.01)


def test_bars_are_labelled_with_their_counts_and_an_empty_chart_says_none() -> None:
    svg = bar_chart("statuses", "statuses", [BarItem("200", 900), BarItem("404", 300)])
    assert '<g data-label="200" data-count="900">' in svg and ">900</text>" in svg
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', svg)]
    assert widths[0] == pytest.approx(3 * widths[1], rel=0.01)
    assert ">none</text>" in bar_chart("errors", "errors", [])


def test_the_spread_puts_a_host_asked_too_soon_under_the_line() -> None:
    svg = spread_chart("spread", "hosts", [(1.0, 2.0), (1.0, 0.5)])
    line = re.search(r'class="equal" x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)"', svg)
    assert line is not None
    x1, y1, x2, y2 = map(float, line.groups())
    (ax, ay), (_, by) = [
        (float(x), float(y)) for x, y in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', svg)
    ]
    on_line = y1 + (y2 - y1) * (ax - x1) / (x2 - x1)
    assert ay < on_line < by
