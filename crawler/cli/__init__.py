"""`crawl`, the command line: arguments, commands, the progress line, the summary, exit status."""

from crawler.cli.main import main

__all__ = ["main"]
