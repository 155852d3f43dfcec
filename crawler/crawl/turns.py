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
so the loop polls between page steps. The steps still run in the order their answers came, and the
same total work is done; what changes is that nothing waits behind a whole burst of it.
"""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["Turns"]


class Turns:
    """A first-come, first-served queue granting one turn per event-loop iteration.

    `await turns.take()` returns when the caller's turn has come; the caller then does its step
    without awaiting. A waiter cancelled before its turn gives the turn up."""

    __slots__ = ("_granting", "_waiting")

    def __init__(self) -> None:
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._granting = False

    def __len__(self) -> int:
        """Waiters not yet granted a turn (cancelled ones included until their turn is skipped)."""
        return len(self._waiting)

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
