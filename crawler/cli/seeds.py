"""The seeds: the arguments of `crawl SEEDS...`, each a file of URLs, an http(s) URL, or `-` for
the same one-URL-a-line text on standard input; blank lines and `#` comments allowed.

A line that is not a crawlable URL is reported with its line number and skipped; a file that
cannot be read, is not UTF-8 text, or holds no usable URL at all, is a SeedError naming the file
(the CLI exits with status 2). So is an argument that is neither a URL nor a file: the user typed
it, so it is never skipped quietly.

The file is read as a stream, never whole: memory stays bounded whatever its size. A line longer
than `MAX_LINE_BYTES` is skipped without being kept (its bytes are read and dropped), and only
the first `MAX_PROBLEMS` skipped lines get a message each; `Seeds.skipped` counts them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from crawler.cli.text import counted
from crawler.errors import SeedError
from crawler.urls import InvalidUrlError, normalize_url

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_PROBLEMS",
    "SEEDS_ARE",
    "STDIN",
    "Seeds",
    "gather_seeds",
    "parse_seeds",
    "read_seed_stream",
    "read_seeds",
]

MAX_LINE_BYTES = 64 * 1024
"""The longest line read as a seed. A URL over limits.max_url_length (2,083 characters by
default) is skipped by the crawl with that reason; this bound is 31 times that, room for a raised
limit and a comment, and what keeps a file of one endless line from being read into memory."""
MAX_PROBLEMS = 20
"""Skipped lines reported one by one; the rest are counted. A million bad lines make one message
more, not a million."""
_BLOCK_BYTES = 64 * 1024
_LINE_END = re.compile(r"\r\n|\r|\n")
_LINE_END_BYTES = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
STDIN = "-"
"""The SEEDS argument that stands for standard input."""
SEEDS_ARE = (
    "SEEDS are files of URLs (one per line), http:// or https:// URLs, or - for standard input"
)
_URL_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
"""An argument spelt as a URL (`scheme://`) is one, whatever files exist."""
_HOST_LIKE = re.compile(r"(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,63}(?::\d+)?(?:/\S*)?")
_FILE_SUFFIXES = frozenset({"txt", "csv", "tsv", "lst", "list", "json", "jsonl", "yaml", "yml"})


@dataclass(frozen=True, slots=True)
class Seeds:
    urls: tuple[str, ...]
    """Normal URLs, each once, in file order."""
    problems: tuple[str, ...] = ()
    """A message for each of the first `MAX_PROBLEMS` lines skipped, naming the file and the
    line, and then one saying how many more were skipped."""
    skipped: int = 0
    """Every line skipped, reported or not."""


class _Collector:
    """Seeds and problems, line by line."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.urls: dict[str, None] = {}
        self.problems: list[str] = []
        self.skipped = 0

    def line(self, number: int, line: str) -> None:
        entry = line.strip()
        if " #" in entry or "\t#" in entry:
            entry = entry.split(" #", 1)[0].split("\t#", 1)[0].strip()
        if not entry or entry.startswith("#"):
            return
        try:
            self.urls[normalize_url(entry)] = None
        except InvalidUrlError as error:
            self.skip(number, f"skipped {_quoted(entry)}: {error.reason}")

    def skip(self, number: int, message: str) -> None:
        self.skipped += 1
        if self.skipped <= MAX_PROBLEMS:
            self.problems.append(f"{self.where} line {number}: {message}")

    def seeds(self) -> Seeds:
        problems = list(self.problems)
        if self.skipped > MAX_PROBLEMS:
            problems.append(
                f"{self.where}: {counted(self.skipped - MAX_PROBLEMS, 'more line')} skipped "
                f"({self.skipped} in all; the first {MAX_PROBLEMS} are shown)"
            )
        return Seeds(tuple(self.urls), tuple(problems), self.skipped)


def _quoted(entry: str, most: int = 200) -> str:
    """The entry as a message quotes it: a long one cut, so a message stays a line."""
    if len(entry) <= most:
        return repr(entry)
    return f"{entry[:most]!r}... ({len(entry)} characters)"


def parse_seeds(text: str, where: str) -> Seeds:
    collector = _Collector(where)
    # Lines end at LF, CR LF or CR: the numbers an editor shows, whatever else the text holds.
    for number, line in enumerate(_LINE_END.split(text), 1):
        collector.line(number, line)
    return collector.seeds()


def _byte_lines(blocks: Iterable[bytes], most: int) -> Iterator[bytes | None]:
    """The lines of a byte stream, ended by LF, CR LF or CR, without their ends; None for a line
    longer than `most` bytes, whose bytes are dropped as they come. Holds at most one block and
    `most` bytes of a line at a time."""
    carry = b""
    overlong = False
    for block in blocks:
        if overlong and not carry and b"\n" not in block and b"\r" not in block:
            continue  # more of a line already too long
        # bytes.splitlines ends lines at LF, CR LF and CR only, as an editor numbers them.
        lines = (carry + block).splitlines(keepends=True)
        # The last piece is the start of the next line, unless it ended at an LF; one ending at
        # a CR waits too, since an LF may begin the next block (CR LF).
        carry = lines.pop() if lines and not lines[-1].endswith(b"\n") else b""
        for line in lines:
            text = line.rstrip(b"\r\n")
            yield None if overlong or len(text) > most else text
            overlong = False
        if len(carry.removesuffix(b"\r")) > most:
            overlong = True
            carry = carry[-1:] if carry.endswith(b"\r") else b""
    if carry or overlong:
        text = carry.removesuffix(b"\r")
        yield None if overlong or len(text) > most else text


class _UnreadableFileError(SeedError):
    """A seeds file that could not be opened or read (missing, a directory, no permission)."""


def _blocks(path: Path) -> Iterator[bytes]:
    try:
        with path.open("rb") as file:
            while block := file.read(_BLOCK_BYTES):
                yield block
    except OSError as error:
        raise _UnreadableFileError(f"cannot read seeds file {path}: {error.strerror}") from error


def _stream_blocks(stream: BinaryIO, where: str) -> Iterator[bytes]:
    try:
        while block := stream.read(_BLOCK_BYTES):
            yield block
    except OSError as error:
        raise SeedError(f"cannot read seeds from {where}: {error.strerror}") from error


def read_seeds(path: Path) -> Seeds:
    """The seeds in the file at `path`; SeedError if it cannot be read or holds no URL."""
    return _read(_blocks(path), str(path))


def read_seed_stream(stream: BinaryIO, where: str) -> Seeds:
    """The seeds in a byte stream (standard input), read as a file is; `where` names it."""
    return _read(_stream_blocks(stream, where), where)


def _read(blocks: Iterable[bytes], where: str) -> Seeds:
    collector = _Collector(where)
    for number, raw in enumerate(_byte_lines(blocks, MAX_LINE_BYTES), 1):
        if raw is None:
            collector.skip(
                number,
                f"skipped a line of more than {MAX_LINE_BYTES} bytes, not read "
                "(expected one URL per line)",
            )
            continue
        if number == 1:
            raw = raw.removeprefix(_BOM)  # as Windows Notepad writes it
        if b"\0" in raw:
            raise SeedError(
                f"{where} line {number}: a NUL byte: a binary file, not a list of URLs; "
                "expected UTF-8 text, one http:// or https:// URL per line"
            )
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SeedError(
                f"{where} line {number}: not UTF-8 text ({error.reason} at column "
                f"{error.start + 1}); expected UTF-8 text, one http:// or https:// URL per line"
            ) from error
        collector.line(number, line)
    seeds = collector.seeds()
    if not seeds.urls:
        detail = f" ({counted(seeds.skipped, 'line')} skipped)" if seeds.skipped else ""
        first = f"; the first: {seeds.problems[0]}" if seeds.problems else ""
        raise SeedError(
            f"{where}: no URL to crawl{detail}; expected one http:// or https:// URL per line"
            + first
        )
    return seeds


def gather_seeds(arguments: Sequence[str], stdin: BinaryIO) -> Seeds:
    """The seeds of `crawl SEEDS...`, in the order given, each URL once: an argument spelt as a
    URL (`scheme://...`) is a URL, `-` is standard input, anything else a file of URLs. Files,
    URLs and `-` mix freely. SeedError for an argument that is none of them."""
    if list(arguments).count(STDIN) > 1:
        raise SeedError(f"{STDIN} given more than once: standard input is read once")
    parts: list[Seeds] = []
    for argument in arguments:
        if argument == STDIN:
            parts.append(read_seed_stream(stdin, "standard input"))
        elif _URL_LIKE.match(argument):
            parts.append(Seeds((_url_argument(argument),)))
        else:
            parts.append(_file_argument(argument))
    urls = dict.fromkeys(url for part in parts for url in part.urls)
    problems = tuple(problem for part in parts for problem in part.problems)
    return Seeds(tuple(urls), problems, sum(part.skipped for part in parts))


def _url_argument(argument: str) -> str:
    try:
        return normalize_url(argument)
    except InvalidUrlError as error:
        raise SeedError(f"seed {_quoted(argument)}: {error.reason}; {SEEDS_ARE}") from error


def _file_argument(argument: str) -> Seeds:
    try:
        return read_seeds(Path(argument))
    except _UnreadableFileError as error:
        raise SeedError(f"{error}; {SEEDS_ARE}{_scheme_hint(argument)}") from error


def _scheme_hint(argument: str) -> str:
    """For `example.org`, which wget would crawl: how to say it is a URL."""
    host = argument.partition("/")[0].partition(":")[0]
    if not _HOST_LIKE.fullmatch(argument) or host.rpartition(".")[2].lower() in _FILE_SUFFIXES:
        return ""
    return f" (for a URL, give its scheme: https://{argument})"
