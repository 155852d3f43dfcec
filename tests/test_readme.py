"""The README's examples run as written.

- Every ```python block runs in a subprocess of its own, in an empty working directory, and must
  exit 0. A block that crawls (calls `.crawl(`) names one seed, https://example.org/: the test
  serves a small site on loopback and puts its URL in that seed's place, the only change made to
  the block, so the example's code, config and data directory are the ones a reader runs. Its
  output must list the site's pages.
- Every `crawl ...` command line of a ```sh block, and the arguments a `docker run` line gives the
  image's `crawl`, must parse as the command line parses them (the commands themselves do not
  run: tests/cli runs them). Brackets marking optional parts and `...` are dropped first, and a
  line with `jsonl|csv` is parsed once with each choice.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import re
import shlex
import sys
from pathlib import Path

import pytest
from support.loopback import LoopbackWeb

# The module, not the function crawler.cli re-exports under the same name.
cli = importlib.import_module("crawler.cli.command")

README = Path(__file__).resolve().parents[1] / "README.md"
SEED = '"https://example.org/"'
A = "127.0.1.1"

_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def blocks(language: str) -> list[tuple[int, str]]:
    """(line, code) of each fenced block of `language` in the README."""
    text = README.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, match.start()) + 1, match.group(2))
        for match in _BLOCK.finditer(text)
        if match.group(1) == language
    ]


def python_blocks() -> list[object]:
    return [
        pytest.param(
            code,
            id=f"README line {line}",
            marks=[pytest.mark.loopback] if ".crawl(" in code else [],
        )
        for line, code in blocks("python")
    ]


async def run_python(code: str, cwd: Path) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def test_the_readme_has_the_examples_this_file_runs() -> None:
    assert len(blocks("python")) >= 2
    assert sum(".crawl(" in code for _line, code in blocks("python")) >= 1
    assert len(crawl_command_lines()) >= 5


@pytest.mark.parametrize("code", python_blocks())
async def test_each_python_block_runs(code: str, tmp_path: Path) -> None:
    if ".crawl(" not in code:
        status, out, err = await run_python(code, tmp_path)
        assert status == 0, err
        return
    assert code.count(SEED) == 1, f"a crawling example names its one seed as {SEED}"
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nDisallow: /private\n")
        site.page("/", "/about", "/private", title="Home")
        site.page("/about", "/", title="About")
        status, out, err = await run_python(code.replace(SEED, repr(site.url("/"))), tmp_path)
    assert status == 0, err
    assert f"200 {site.url('/')} Home 2 True" in out
    assert f"200 {site.url('/about')} About 1 True" in out
    assert "/private" not in net.paths(A)
    assert (tmp_path / "crawl-data" / "index.sqlite").is_file()  # the example's data directory


def _logical_lines(code: str) -> list[str]:
    """The block's lines with `\\` continuations joined and comments dropped."""
    return [
        line.strip()
        for line in code.replace("\\\n", " ").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


_CHOICES = re.compile(r"(?<=[^\s|])\|(?=[^\s|])")
"""The `|` of `--format jsonl|csv`: one of the words it joins (a shell pipe has spaces)."""


def _choices(words: list[str]) -> list[list[str]]:
    """`words` once per alternative a `a|b` word offers: the first of each, the second, ..."""
    split = [_CHOICES.split(word) for word in words]
    widest = max(len(choices) for choices in split)
    return [[choices[min(n, len(choices) - 1)] for choices in split] for n in range(widest)]


def crawl_command_lines() -> list[list[str]]:
    """The arguments `crawl` gets on each command line of the README's shell blocks."""
    found: list[list[str]] = []
    for _line, code in blocks("sh"):
        for line in _logical_lines(code):
            # A shell comment ends the line: `crawl status  # what it did` is `crawl status`.
            words = shlex.split(re.sub(r"[\[\]]|\.\.\.", "", line), comments=True)
            if words[0] == "crawl":
                found.extend(_choices(words[1:]))
            elif words[:2] == ["docker", "run"] and "crawler" in words:
                found.extend(_choices(words[words.index("crawler") + 1 :]))
    return found


@pytest.mark.parametrize("arguments", crawl_command_lines(), ids=" ".join)
def test_each_crawl_command_line_parses(
    arguments: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[argparse.Namespace] = []

    def parse_only(args: argparse.Namespace) -> int:
        parsed.append(args)
        return 0

    monkeypatch.setattr(cli, "crawl_command", parse_only)
    for name in cli._COMMANDS:
        monkeypatch.setitem(cli._COMMANDS, name, parse_only)
    assert cli.main(arguments) == 0  # a line that does not parse exits 2 (SystemExit) here
    assert len(parsed) == 1
