"""A watcher of `crawl --serve`: while a run goes on, it reads what a browser on the status page
and a Prometheus server would (/status.json with a page of the host table every `every` seconds,
/metrics as often), so that a benchmark measures a crawl being watched, not one merely serving.
A thread of the benchmark's own: the crawl's process does the serving."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request

__all__ = ["SERVE_PORT", "Watcher"]

SERVE_PORT = 8799
"""Where the benchmarks' `crawl --serve` serves (127.0.0.1), unless told otherwise."""


class Watcher:
    """`with Watcher(url): ...` reads url/status.json and url/metrics every `every` seconds."""

    def __init__(self, url: str, every: float = 1.0) -> None:
        self.url = url
        self.every = every
        self.reads = 0
        """Answers read whole (status 200)."""
        self.failures = 0
        """Reads that got no answer: before the crawl serves, and after it ended."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _watch(self) -> None:
        while not self._stop.wait(self.every):
            for path in ("status.json?sort=requests&limit=50", "metrics"):
                try:
                    with urllib.request.urlopen(self.url + path, timeout=5) as answer:
                        answer.read()
                    self.reads += 1
                except (OSError, urllib.error.URLError):
                    self.failures += 1
