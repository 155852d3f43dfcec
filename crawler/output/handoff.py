"""What the sinks with a writer of their own share (crawler.output.index, crawler.output.warc):
items gathered into batches on the crawl's side, each batch handed to one writer thread through a
bounded queue, and the writer's failure kept and raised on the crawl's side."""

from __future__ import annotations

import queue
import threading
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
    writer sets `_error` when it loses a batch; every later `flush` or `close` raises it."""

    _writer: threading.Thread

    def __init__(self, name: str, max_batches: int) -> None:
        self._name = name
        """What the sink writes, for messages: 'index DIR/index.sqlite'."""
        self._batch: list[Item] = []
        self._queue: queue.Queue[list[Item] | Signal | None] = queue.Queue(maxsize=max_batches)
        self._error: OutputError | None = None
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
        if self._error is None:
            self._queue.put(batch)  # blocks while the queue is full: the backpressure

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
