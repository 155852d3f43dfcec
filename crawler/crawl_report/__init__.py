"""The report of a crawl as one self-contained HTML page: pages over time, each host's gaps
against its interval, status codes, skips, the slowest and most refused hosts, what a recrawl
found. Pure: it takes the crawl's summary document and the rows its state keeps (read by
crawler.cli.report_file, `crawl report`), never its log.

    figures.py   what the report shows, from the summary document and the state's rows
    svg.py       the charts as inline SVG
    sections.py  the report's sections as HTML
    page.py      the whole page: styles, the table-sorting script, the sections
"""

from crawler.crawl_report.figures import ReportFigures, Start, report_figures
from crawler.crawl_report.page import report_html

__all__ = ["ReportFigures", "Start", "report_figures", "report_html"]
