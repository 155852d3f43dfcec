"""What the sinks with a writer of their own share (crawler.output.index, crawler.output.warc):
items gathered into batches on the crawl's side, each batch handed to one writer thread through a
bounded queue, and the writer's failure kept and raised on the crawl's side."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Generic, Self, TypeVar

from crawler.errors import DiskFullError, OutputError

__all__ = ["BatchHandOff"]

Item = TypeVar("Item")
Signal = TypeVar("Signal")


class BatchHandOff(Generic[Item, Signal]):
    """Batches of `Item` for a writer thread, which a subclass starts as `_writer` and which reads
    `_queue`: a batch, a `Signal` of the subclass's own, or None at the end. The queue is
    bounded: a writer slower than the crawl holds the crawl (`_hand_over` waits), not memory. The
    writer sets `_error` when it loses a batch; every later `flush` or `close` raises it.

    A full disk loses nothing at first: the writer keeps the batch it could not write and every
    one after it (`_keep`), and writes them, in order, when the sink is closed (`_kept_written`):
    by then the crawl has given back the room it held for its last writes
    (crawler.output.reserve). A resumed crawl fetches again only what those writes could not
    store."""

    _writer: threading.Thread

    def __init__(self, name: str, max_batches: int) -> None:
        self._name = name
        """What the sink writes, for messages: 'index DIR/index.sqlite'."""
        self._batch: list[Item] = []
        self._queue: queue.Queue[list[Item] | Signal | None] = queue.Queue(maxsize=max_batches)
        self._error: OutputError | None = None
        self._kept: list[list[Item]] = []
        """Batches not written for want of room, in order (only the writer touches it)."""
        self._closed = False

    def _add(self, item: Item, *, full: bool = False) -> None:
        """Gather `item`; with `full`, hand the batch over."""
        if self._closed:
            raise OutputError(f"{self._name} is closed")
        self._batch.append(item)
        if full:
            self._hand_over()

    def _hand_over(self) -> None:
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        if self._error is None or self._disk_full:
            self._queue.put(batch)  # blocks while the queue is full: the backpressure

    @property
    def failed(self) -> bool:
        return self._error is not None

    @property
    def _disk_full(self) -> bool:
        return isinstance(self._error, DiskFullError)

    def _keep(self, batch: list[Item]) -> bool:
        """In the writer: keep `batch` for the close, when the disk was full; whether it was."""
        if self._disk_full:
            self._kept.append(batch)
        return self._disk_full

    def _kept_written(self, write: Callable[[list[Item]], None]) -> None:
        """In the writer, at the close: the kept batches written in order with `write`, which
        counts each stored; at the first that fails again, it and those after are lost (a
        resumed crawl fetches their URLs again)."""
        kept, self._kept = self._kept, []
        waiting = [item for batch in kept for item in batch]
        while waiting:
            # All at once, the fewest pages written; where that fails for want of room, the
            # first half, and so on: the room there is stores as much as it can.
            size = len(waiting)
            while True:
                try:
                    write(waiting[:size])
                    break
                except Exception:  # still no room: the error already kept says so
                    if size == 1:
                        return
                    size //= 2
            waiting = waiting[size:]

    def _raise_error(self) -> None:
        # Sticky: once a batch is lost, every later flush says so, not just the first.
        error = self._error
        if isinstance(error, DiskFullError):
            raise DiskFullError(error.path, error.reason) from error.__cause__
        if error is not None:
            raise OutputError(str(error)) from error.__cause__

    def _check_open(self) -> None:
        if self._closed:
            raise OutputError(f"{self._name} is closed")

    def close(self) -> None:
        """Write what is left and stop the writer. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._hand_over()
        self._queue.put(None)
        self._writer.join()
        self._raise_error()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
