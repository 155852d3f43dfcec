"""`Turns`: CPU-heavy steps of the crawl take turns, one per event-loop iteration.

Why: with one request in flight per host, the next request to a host may start only a full
interval after its answer (crawler.politeness), and the crawl knows of an answer only when the
loop gets round to it. An event loop runs every callback that was ready when an iteration began
before it looks at its sockets and timers again. When a thousand hosts answer at once, a thousand
page steps (parse, rules, links, records: about half a millisecond each) would run in one
iteration; the answers arriving meanwhile would be stamped, and the hosts due meanwhile started,
up to half a second late, and every host would lose that much of its pace (benchmarks/README.md,
"Page steps take turns").

Taking turns keeps each iteration to one page step plus the light callbacks (I/O, timers, stamps),
so the loop polls between page steps. A robots.txt answer's step (its parse, its rules) takes a
turn too: the first wave of a crawl is every host's robots.txt at once. The steps still run in the
order their answers came, and the same total work is done; what changes is that nothing waits
behind a whole burst of it.

A step too heavy for one turn (a big page's parse: up to about half a second, however the page
is bounded) runs `off_loop`, on one worker thread, one such step after another: lexbor lets go
of the GIL while it parses, so the loop goes on serving every other host meanwhile. Counted
among the waiters until it is done, so the scheduler holds back new requests while big answers
wait for the worker, as it does while answers wait for a turn.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["Turns"]

T = TypeVar("T")


class Turns:
    """A first-come, first-served queue granting one turn per event-loop iteration.

    `await turns.take()` returns when the caller's turn has come; the caller then does its step
    without awaiting. A waiter cancelled before its turn gives the turn up."""

    __slots__ = ("_granting", "_off_loop", "_waiting", "_worker")

    def __init__(self) -> None:
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._granting = False
        self._worker: ThreadPoolExecutor | None = None
        self._off_loop = 0

    def __len__(self) -> int:
        """Waiters not yet granted a turn (cancelled ones included until their turn is skipped),
        and steps given to the worker thread and not done."""
        return len(self._waiting) + self._off_loop

    async def off_loop(self, step: Callable[[], T]) -> T:
        """`step()` on the worker thread, once the steps given to it before are done. Cancelled,
        the caller goes on at once; the step runs to its end, its result unread."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="crawler-step")
        return await self.elsewhere(asyncio.get_running_loop().run_in_executor(self._worker, step))

    async def elsewhere(self, step: Awaitable[T]) -> T:
        """Await `step`, done elsewhere (crawler.crawl.page_reader's process), counted among the
        waiters until it is done, as a step on the worker thread is."""
        self._off_loop += 1
        try:
            return await step
        finally:
            self._off_loop -= 1

    def close(self) -> None:
        """Let the worker thread go once its steps are done (a later `off_loop` starts another);
        steps not started are dropped, their callers cancelled."""
        if self._worker is not None:
            self._worker.shutdown(wait=False, cancel_futures=True)
            self._worker = None

    async def take(self) -> None:
        loop = asyncio.get_running_loop()
        turn: asyncio.Future[None] = loop.create_future()
        self._waiting.append(turn)
        if not self._granting:
            self._granting = True
            loop.call_soon(self._grant)
        await turn

    def _grant(self) -> None:
        # The granted waiter wakes in the next iteration, and so does the next grant, queued
        # after it: one turn per iteration, with a poll of the loop's sockets between turns.
        waiting = self._waiting
        while waiting:
            turn = waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                break
        if waiting:
            asyncio.get_running_loop().call_soon(self._grant)
        else:
            self._granting = False

    def __repr__(self) -> str:
        return f"Turns({len(self._waiting)} waiting)"
