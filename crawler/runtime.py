"""Process-wide tuning the crawl benefits from. Nothing here runs on import: the `crawl` command
calls `tune_allocator()`, `tune_gc()` and `raise_open_files_limit()` at start and runs its event
loop with `run()`, and an application that embeds `Crawler` may do the same.

Why uvloop: the crawl is many small requests on one event loop, and uvloop's loop (libuv) runs
them with less overhead than asyncio's own. It is used where it is installed (a dependency on
Linux and macOS with CPython); `CRAWLER_EVENT_LOOP=asyncio` chooses asyncio's loop. The crawl does
not time politeness by the loop's clock, which uvloop keeps in whole milliseconds.

Why the allocator: lexbor (selectolax's parser) builds each document in a few large memory pools
and frees them when the document goes; with glibc's defaults the top of the heap goes back to the
kernel after every page, and the next parse page-faults it all in again. Keeping up to 256 MiB of
free heap costs a crawl process that much resident memory at most.

Why the garbage collector's settings: a crawl keeps tens of thousands of long-lived objects (its
hosts, their timing, the modules it imported) that CPython's full collections walk, each walk a
pause of the event loop during which no answer is stamped and no due host starts; and it makes
objects by the million that nearly all die young, by reference counting, before a collection
could see them. `tune_gc()` moves what exists at start-up out of the collector's sight
(`gc.freeze()`: it is never garbage) and makes collections of every generation rarer. Garbage in
cycles is still collected, later.

The figures behind each: benchmarks/README.md, "The allocator", "The garbage collector",
"Background threads".
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["background_thread", "event_loop_name", "run", "tune_allocator", "tune_gc"]

T = TypeVar("T")

_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
KEEP_FREE_HEAP = 256 * 1024 * 1024
HEAP_GROWTH = 64 * 1024 * 1024
GC_YOUNG_THRESHOLD = 50_000
"""New objects (less those freed) before a young collection (CPython's default is 700)."""
GC_MIDDLE_THRESHOLD = 20
"""Young collections before a middle one (CPython's default is 10)."""
GC_OLDEST_THRESHOLD = 100
"""Middle-generation collections before a full one (CPython's default is 10)."""


def tune_allocator() -> bool:
    """Keep freed heap for reuse instead of returning it to the kernel after every page. True
    when applied; False where the C library is not glibc (the defaults then stay)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        # The process's own symbols, the C library's among them: find_library("c") runs
        # `ldconfig -p` in a subprocess at every start.
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_TRIM_THRESHOLD, KEEP_FREE_HEAP)) and bool(
        mallopt(_M_TOP_PAD, HEAP_GROWTH)
    )


BACKGROUND_NICENESS = 10
"""How much lower than the crawl's the background threads' CPU priority is (Linux nice steps)."""


def background_thread() -> bool:
    """Lower the calling thread's CPU priority: it does background work (the index writer's
    FTS5 inserts, WAL checkpoints) that must not take a core from the event loop, whose promptness
    is the crawl's politeness timing (at equal priority the index writer left the loop waiting for
    a core). The thread still runs whenever a core is free; a writer that falls behind blocks the
    crawl through its bounded queue.
    True when applied (Linux, where a thread has its own priority); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        thread = threading.get_native_id()
        os.setpriority(
            os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + BACKGROUND_NICENESS
        )
    except (OSError, AttributeError):
        return False
    return True


def tune_gc() -> None:
    """Freeze the objects that exist now and make collections rarer (see the module doc). Call
    once, after start-up, before the crawl."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, GC_MIDDLE_THRESHOLD, GC_OLDEST_THRESHOLD)


OPEN_FILES_SPARE = 64
"""Files the crawl keeps open beside its connections: its databases and their journals, the
JSONL files, the loop's own descriptors, imports."""


def raise_open_files_limit(connections: int) -> tuple[int, int]:
    """Raise this process's soft limit on open files towards `connections` + OPEN_FILES_SPARE, as
    far as the hard limit allows; returns (soft limit now, what was wanted).

    Why: with one request in flight per host, a crawl keeps a connection per host it is busy
    with (at most `concurrency` + 8, crawler.http.http1). Many systems start processes with a
    soft limit of 1,024 open files, and at `concurrency` 1,000 every connection past it would fail
    (EMFILE) and its host back off, though the hard limit (often 524,288) allows far more."""
    wanted = connections + OPEN_FILES_SPARE
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return wanted, wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (OSError, ValueError):
            pass
    return (wanted if soft == resource.RLIM_INFINITY else soft), wanted


def event_loop_name() -> str:
    """The event loop `run` uses: 'uvloop' or 'asyncio'."""
    if os.environ.get("CRAWLER_EVENT_LOOP", "").strip().lower() == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on uvloop's event loop where it is installed, else on asyncio's."""
    if event_loop_name() == "uvloop":
        import uvloop

        return uvloop.run(main)
    # Here, not at the top: the crawl's own processes (crawler.child) read this module, and
    # asyncio took a third of their start.
    import asyncio

    return asyncio.run(main)
