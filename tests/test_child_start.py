"""The crawl's own processes (crawler.child: the page reader, the index writer) start with the
modules they use and no others: the page reader's start is waited for by the crawl's first pages,
and every module read is CPU the crawl, on two cores, does not have. They end without the
interpreter's teardown (crawler.child.end), all they wrote written."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

UNUSED = (
    "asyncio",  # the event loop: the crawl's, not theirs
    "ssl",
    "yaml",
    "http.cookiejar",
    "crawler.config",
    "crawler.http.fetcher",
    "crawler.output.index",  # the sink, its threads
    "crawler.state",
    "crawler.crawl.crawler",
    "crawler.output.searching",  # searches and exports: the crawl writes, it does not read
    "crawler.output.export",
    "crawler.output.jsonl",
)
WRITER_UNUSED = (
    "crawler.page.read",  # the writer stores pages read by the page reader
    "selectolax",
    "crawler.http.answer",
)


@pytest.mark.parametrize(
    ("module", "setup", "unused"),
    [
        # What each process's main() reads as it starts, before its first message.
        ("crawler.crawl.reader_process", "from crawler.runtime import tune_gc", UNUSED),
        (
            "crawler.output.index_writer",
            "from crawler.runtime import background_thread",
            UNUSED + WRITER_UNUSED,
        ),
    ],
)
def test_a_process_of_the_crawls_own_reads_only_what_it_uses(
    module: str, setup: str, unused: tuple[str, ...]
) -> None:
    code = f"import sys, {module}\n{setup}\nprint(' '.join(sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert module in loaded
    assert [name for name in unused if name in loaded] == []


def test_a_child_ends_with_its_status_and_all_it_wrote() -> None:
    # Standard output to a pipe is buffered: `end` skips the interpreter's exit, not the flush.
    code = "import sys\nfrom crawler.child import end\nsys.stdout.write('said')\nend(3)\n"
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    ended = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=buffered
    )
    assert (ended.returncode, ended.stdout) == (3, "said")
