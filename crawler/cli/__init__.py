"""`crawl`, the command line.

main.py      arguments and dispatch; the console script's `main`
crawling.py  `crawl SEEDS`: lock, resume, signals, progress, summary
commands.py  `crawl robots`, `crawl search`, `crawl export`
report.py    the progress line, the summary, the resume note, `--version`
seeds.py     the seeds file
exits.py     exit statuses
"""

from crawler.cli.main import main

__all__ = ["main"]
