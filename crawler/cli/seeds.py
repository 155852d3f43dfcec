"""The seeds file: one URL per line; blank lines and `#` comments allowed.

A line that is not a crawlable URL is reported with its line number and skipped; a file that
cannot be read, or holds no usable URL at all, is a SeedError (the CLI exits with status 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from crawler.config import read_user_text
from crawler.errors import SeedError
from crawler.urls import InvalidUrlError, normalize_url

__all__ = ["Seeds", "parse_seeds", "read_seeds"]

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Seeds:
    urls: tuple[str, ...]
    """Normal URLs, each once, in file order."""
    problems: tuple[str, ...] = ()
    """One message per line skipped, naming the file and the line."""


def parse_seeds(text: str, where: str) -> Seeds:
    urls: dict[str, None] = {}
    problems: list[str] = []
    # Lines end at LF, CR LF or CR: the numbers an editor shows, whatever else the text holds.
    for number, line in enumerate(_LINE_END.split(text), 1):
        entry = line.strip()
        if " #" in entry or "\t#" in entry:
            entry = entry.split(" #", 1)[0].split("\t#", 1)[0].strip()
        if not entry or entry.startswith("#"):
            continue
        try:
            urls[normalize_url(entry)] = None
        except InvalidUrlError as error:
            problems.append(f"{where} line {number}: skipped {entry!r}: {error.reason}")
    return Seeds(tuple(urls), tuple(problems))


def read_seeds(path: Path) -> Seeds:
    text = read_user_text(path, "seeds file", SeedError)
    seeds = parse_seeds(text, str(path))
    if not seeds.urls:
        detail = f" ({len(seeds.problems)} lines skipped)" if seeds.problems else ""
        raise SeedError(
            f"{path}: no URL to crawl{detail}; expected one http:// or https:// URL per line"
        )
    return seeds
