"""`crawl`, the command line.

command.py           dispatch: each command's modules read when it runs
parsers.py           the arguments: the crawl's and the other commands', their help
crawling.py          `crawl SEEDS`: lock, resume, signals, progress, summary
commands.py          `crawl robots`, `crawl search`, `crawl export`
report.py            the summary, the resume note, `--version`
progress.py          the live progress line, and printing above it
notices.py           what is said above the line as hosts fail
workers.py           --workers N: the workers, and one line for them all
summary_file.py      DIR/summary.json: written through a run, read by `crawl status`
summary_document.py  what summary.json holds: a run's figures as a document, and back
status.py            `crawl status`
report_file.py       `crawl report`: the HTML report of a crawl (crawler.crawl_report draws it)
text.py              counts in English, lines that fit the terminal
seeds.py             the seeds: files, URLs, `-` for standard input
options.py           the flags that stand for an -s (--max-pages, ...); the data directory
logs.py              where the log goes: stderr or --log-file, text or JSON lines
exits.py             exit statuses
"""

from collections.abc import Sequence as _Sequence

__all__ = ["main"]


def main(argv: _Sequence[str] | None = None) -> int:
    """The `crawl` command (crawler.cli.command) on `argv`, or on the process's arguments. Its
    modules are read when it runs: this package's face reads none, so that `crawl search` reads
    the search's and not the crawl's."""
    from crawler.cli.command import main as command

    return command(argv)
