"""Counting the event loop's iterations, for tests of what runs in one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def start_iteration_counter(loop: asyncio.AbstractEventLoop) -> Callable[[], int]:
    """A callback that reschedules itself with call_soon runs once per loop iteration; the
    returned function reads how many iterations have run since."""
    count = 0

    def tick() -> None:
        nonlocal count
        count += 1
        loop.call_soon(tick)

    loop.call_soon(tick)

    def read() -> int:
        return count

    return read
