"""`PageReader`: pages read in a process of the crawl's own, beside the event loop.

Why: when thousands of hosts come due in the same second, the event loop's own work per request
sets every host's pace (crawler.crawl.turns), and reading a page (parse, walk, rules, links,
digest) is the biggest part of it: about 0.25 ms of a request's 0.6 on the politeness benchmark
(benchmarks/README.md, "Pages read in a process"). A thread cannot take it off the loop: lexbor
lets go of the GIL while it parses, the rest does not. A process can: the loop sends the body and
gets the `Page` back, a few tens of microseconds of pickling, and the loop is free meanwhile.

When (`page.reader`): `auto` starts the process once `START_HOSTS_PER_S` hosts, or
`START_ANSWERS_PER_S` answers, come within a second, on a machine of two cores or more (robots.txt
files count: the process is ready when the pages they lead to come), so a crawl of a few hosts
at a polite pace never pays for it; `process` from the first
page; `loop` never. A page longer than
crawler.crawl.answers' OFF_LOOP_BYTES is not sent: the worker thread reads it without a copy.

Failure: the process reads pages in the order sent and answers in that order, so if it dies (a
parser crash on some page), it died on the oldest page unanswered. That page's read fails with
`PageReaderError` (an internal error of the crawl: counted, recorded, never the crawl's end), and
a new process reads the rest. After `MAX_RESTARTS` deaths with no page read in between, the
process is given up and the pages waiting for it are read on the loop (`PageReaderGoneError`).

The process is crawler.crawl.reader_process.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, cast

from crawler.child import Frames, environment, frame
from crawler.errors import CrawlerError
from crawler.page.read import Page, PageRules

__all__ = ["PageReader", "PageReaderError", "PageReaderGoneError", "Read", "ReaderMode"]

log = logging.getLogger(__name__)

ReaderMode: TypeAlias = Literal["auto", "process", "loop"]

START_HOSTS_PER_S = 100
"""`auto` starts the process once this many hosts answer within a second. What the process buys
is each host's pace when many come due at once (a page read on the loop makes every other host
due meanwhile wait), at a cost in CPU (pickles, a second interpreter): with a few hosts crawled
fast, the loop reading their pages costs less in all, and a crawl writing the index, whose
writer needs that CPU, ended later with the process (benchmarks/README.md, "Pages read in a
process")."""
START_ANSWERS_PER_S = 250
"""`auto` also starts the process once this many answers come within a second, from however few
hosts: reading a page with its main content takes about 1 ms of the loop's CPU, so at this pace a
quarter of the loop's time. On 20 hosts crawled without delay, the process made the JSONL crawl
1.5 times as fast, the index crawl 1.2 times (benchmarks/README.md, "The crawl with the main
content")."""
MAX_RESTARTS = 3
"""Deaths of the process with no page read in between, after which pages are read on the loop."""
STOP_WAIT_S = 5.0
"""How long a closing reader waits for its process to end before it kills it."""

Read: TypeAlias = tuple[str, Page | None]
"""A page's body digest, and the page as read (None: its digest was the one given as unchanged,
so it was not read)."""


class PageReaderError(CrawlerError):
    """The page reader process died while it read this page."""


class PageReaderGoneError(CrawlerError):
    """The page reader process was given up: read this page on the loop."""


@dataclass(slots=True)
class _Job:
    message: bytes
    """The request, framed for the pipe."""
    future: asyncio.Future[Read] = field(repr=False)


class PageReader:
    """Reads pages for the crawl in a process of its own, started when it is worth it; one per
    crawl. `takes` says whether a page goes to it; `read` reads one; `close` stops the process."""

    def __init__(self, rules: PageRules, mode: ReaderMode, cores: int | None = None) -> None:
        if cores is None:
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        self._rules = rules
        self._mode: ReaderMode = mode if mode != "auto" or cores > 1 else "loop"
        self._window: tuple[float, set[str], int] = (0.0, set(), 0)
        """Since when, the origins that answered since, and how many answers."""
        """auto: since when, and which hosts answered, in the current second."""
        self._process: asyncio.SubprocessTransport | None = None
        self._starting: asyncio.Task[None] | None = None
        self._waiting: list[_Job] = []
        """Jobs for a process not yet started."""
        self._sent: deque[_Job] = deque()
        """Jobs sent to the process, in order, their answers awaited."""
        self._deaths = 0
        """Deaths of the process since a page was last read."""
        self._closed = False
        self.started = 0
        """Processes started."""
        self.pages = 0
        """Pages the process read (unchanged ones included)."""

    @property
    def process_id(self) -> int | None:
        """The process's id while one runs."""
        process = self._process
        return process.get_pid() if process is not None else None

    def answered(self, origin: str, now: float) -> None:
        """An answer (a page's, a robots.txt's, a sitemap's) came from `origin` at `now`, in
        seconds: in `auto`, the process starts once START_HOSTS_PER_S hosts, or
        START_ANSWERS_PER_S answers, come within a second, so it is ready by the time the pages
        they lead to come (a crawl's first wave of answers is its robots.txt files)."""
        if self._mode != "auto" or self._process is not None or self._starting is not None:
            return
        since, origins, count = self._window
        if now - since >= 1.0:
            self._window = (now, {origin}, 1)
            return
        origins.add(origin)
        self._window = (since, origins, count + 1)
        if (
            len(origins) >= START_HOSTS_PER_S or count + 1 >= START_ANSWERS_PER_S
        ) and not self._closed:
            self._window = (now, set(), 0)
            self._start()

    def takes(self) -> bool:
        """Whether the next page (of at most OFF_LOOP_BYTES) is read by the process (in
        `process`, started now if it is not running)."""
        if self._mode == "loop" or self._closed:
            return False
        if self._process is None and self._starting is None:
            if self._mode == "auto":
                return False
            self._start()
        return True

    async def read(
        self,
        body: bytes,
        url: str,
        *,
        charset: str | None,
        x_robots_tag: Sequence[str],
        unchanged_digest: str | None,
    ) -> Read:
        """The page read as crawler.page.read_page reads it, with its body's digest; not read
        when the digest is `unchanged_digest`. Raises PageReaderError if the process died on
        this page, PageReaderGoneError if it was given up (read it on the loop)."""
        if self._mode == "loop" or self._closed:
            raise PageReaderGoneError("no page reader process")
        message = frame((body, url, charset, tuple(x_robots_tag), unchanged_digest))
        job = _Job(message, asyncio.get_running_loop().create_future())
        process = self._process
        if process is None:
            self._waiting.append(job)
        else:
            self._sent.append(job)
            _stdin(process).write(message)
        return await job.future

    # --- the process ---------------------------------------------------------------------------

    def _start(self) -> None:
        self.started += 1
        self._starting = asyncio.get_running_loop().create_task(self._spawn())

    async def _spawn(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            process, _ = await loop.subprocess_exec(
                lambda: _Answers(self),
                sys.executable,
                "-m",
                "crawler.crawl.reader_process",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=None,
                env=environment(),
            )
        except Exception as error:  # whatever it was, the pages waiting for it are read here
            log.warning("cannot start the page reader process (%s): pages are read here", error)
            self._give_up()
            return
        finally:
            self._starting = None
        # Closed meanwhile: `close`, waiting for this start, ends it.
        self._process = process
        stdin = _stdin(process)
        stdin.write(frame(self._rules))
        waiting, self._waiting = self._waiting, []
        for job in waiting:
            if not job.future.done():
                self._sent.append(job)
                stdin.write(job.message)

    def _answered(self, message: tuple[str, str | None, Page | None]) -> None:
        if not self._sent:
            return  # an answer the process sent as the reader closed: its page was cancelled
        job = self._sent.popleft()
        self._deaths = 0
        if job.future.done():  # its page task was cancelled
            return
        kind, digest, page = message
        if kind == "read":
            assert digest is not None
            self.pages += 1
            job.future.set_result((digest, page))
        else:
            job.future.set_exception(PageReaderError(f"the page reader failed: {digest}"))

    def _ended(self, process: asyncio.SubprocessTransport) -> None:
        if process is not self._process:
            return
        self._process = None
        if self._closed:
            return
        status = process.get_returncode()
        self._deaths += 1
        unanswered = [job for job in self._sent if not job.future.done()]
        self._sent.clear()
        if unanswered:
            unanswered.pop(0).future.set_exception(
                PageReaderError(
                    f"the page reader process ended (exit status {status}) reading this page"
                )
            )
        self._waiting = unanswered + self._waiting
        if self._deaths > MAX_RESTARTS:
            log.warning(
                "the page reader process ended %d times in a row (last exit status %s): pages "
                "are read here from now on",
                self._deaths,
                status,
            )
            self._give_up()
            return
        log.warning("the page reader process ended (exit status %s); starting another", status)
        self._start()

    def _give_up(self) -> None:
        self._mode = "loop"
        waiting, self._waiting = self._waiting, []
        for job in waiting:
            if not job.future.done():
                job.future.set_exception(
                    PageReaderGoneError("the page reader process was given up")
                )

    async def close(self) -> None:
        """Stop the process (a page waiting for it is cancelled); a closed reader takes no page."""
        self._closed = True
        if self._starting is not None:
            await asyncio.gather(self._starting, return_exceptions=True)
        for job in (*self._waiting, *self._sent):
            job.future.cancel()
        self._waiting.clear()
        self._sent.clear()
        process, self._process = self._process, None
        if process is None:
            return
        _stdin(process).close()  # its end of input: it exits
        try:
            await asyncio.wait_for(_exited(process), STOP_WAIT_S)
        except TimeoutError:
            process.kill()
        finally:
            process.close()

    def __repr__(self) -> str:
        state = "running" if self._process is not None else self._mode
        return f"PageReader({state}, {len(self._sent) + len(self._waiting)} pages waiting)"


def _stdin(process: asyncio.SubprocessTransport) -> asyncio.WriteTransport:
    return cast(asyncio.WriteTransport, process.get_pipe_transport(0))


async def _exited(process: asyncio.SubprocessTransport) -> None:
    while process.get_returncode() is None:
        await asyncio.sleep(0.01)


class _Answers(asyncio.SubprocessProtocol):
    """The reader's side of one process: its answers, and its end."""

    def __init__(self, reader: PageReader) -> None:
        self._reader = reader
        self._frames = Frames()
        self._process: asyncio.SubprocessTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's process transport is not asyncio's class, but is one in all but name.
        self._process = cast(asyncio.SubprocessTransport, transport)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        answered = self._reader._answered
        for message in self._frames.feed(data):
            answered(message)

    def connection_lost(self, exc: Exception | None) -> None:
        # Called once the process has exited and its pipes are closed.
        if self._process is not None:
            self._reader._ended(self._process)
