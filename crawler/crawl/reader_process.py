"""The page reader's process (crawler.crawl.page_reader), run as `python -m
crawler.crawl.reader_process`: the rules first, then each request (a body, its URL, charset,
X-Robots-Tag and the digest it had when unchanged) answered in order with the body's digest and
the page as read, each a pickle framed by its length (crawler.child).

A module of its own, without the event loop's: the process starts while the crawl fetches its
first pages, which wait for it, and asyncio was a third of its start."""

from __future__ import annotations

import os
from typing import Any

from crawler.child import Frames, die_with_parent, end, frame
from crawler.output.records import body_digest
from crawler.page.read import PageRules, read_page

__all__ = ["main", "serve"]


def serve(
    rules: PageRules, frames: Frames, pending: list[Any], requests: int, answers: int
) -> None:
    """Answer the `pending` requests, then read more from the file descriptor `requests` (into
    `frames`) until it ends, answering each on `answers`, in order: every request that came in
    one read of the pipe is answered in one write."""
    while True:
        _write_all(answers, b"".join(_reply(rules, *request) for request in pending))
        data = os.read(requests, 1 << 20)
        if not data:
            return
        pending = frames.feed(data)


def _write_all(fd: int, data: bytes) -> None:
    out = memoryview(data)
    while out:
        out = out[os.write(fd, out) :]


def _reply(
    rules: PageRules,
    body: bytes,
    url: str,
    charset: str | None,
    x_robots_tag: tuple[str, ...],
    unchanged_digest: str | None,
) -> bytes:
    try:
        digest = body_digest(body)
        page = (
            None
            if digest == unchanged_digest
            else read_page(body, url, charset=charset, x_robots_tag=x_robots_tag, rules=rules)
        )
    except Exception as error:  # a bug of ours: the crawl records it against this page
        return frame(("error", f"{type(error).__name__}: {error}", None))
    return frame(("read", digest, page))


def main() -> int:
    die_with_parent()
    from crawler.runtime import BACKGROUND_NICENESS, tune_gc

    # Behind the crawl's loop and the servers it talks to for a core (a page waits for its read
    # while its host waits out its interval anyway), and ahead of the index writer, whose lag
    # holds nothing back: the links a page holds are the crawl's next URLs.
    os.nice(BACKGROUND_NICENESS // 2)

    frames = Frames()
    messages: list[Any] = []
    while not messages:
        data = os.read(0, 1 << 20)
        if not data:
            return 0
        # The first message is the rules; requests may follow in the same read.
        messages = frames.feed(data)
    tune_gc()
    serve(messages[0], frames, messages[1:], 0, 1)
    return 0


if __name__ == "__main__":
    end(main())
