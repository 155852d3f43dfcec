"""Processes of the crawl's own (the WARC writer, the page reader): how they start, how they die
with the crawl, and how they talk to it: pickles framed by their length over a pipe."""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal
import subprocess
import sys
from typing import IO, Any, NoReturn

__all__ = [
    "PARENT_VARIABLE",
    "Frames",
    "die_with_parent",
    "end",
    "environment",
    "frame",
    "receive",
    "send",
    "start",
]

PARENT_VARIABLE = "CRAWLER_PARENT"
"""The crawl's process id, in a child's environment: the child dies with it."""

LENGTH_BYTES = 8
_PR_SET_PDEATHSIG = 1


def frame(message: object) -> bytes:
    """`message` as it goes over a pipe: a pickle after its length."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(LENGTH_BYTES, "little") + data


def send(stream: IO[bytes], message: object) -> None:
    """A message to a child process, or from it (`frame`), flushed."""
    stream.write(frame(message))
    stream.flush()


def receive(stream: IO[bytes]) -> Any:
    """The next message (`send`); EOFError when the other side is gone."""
    head = stream.read(LENGTH_BYTES)
    if len(head) < LENGTH_BYTES:
        raise EOFError("the other side closed")
    length = int.from_bytes(head, "little")
    data = stream.read(length)
    if len(data) < length:
        raise EOFError("the other side closed mid-message")
    return pickle.loads(data)


class Frames:
    """Messages out of a byte stream that comes in pieces (`frame`d): feed each piece, get the
    messages it completes."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        buffer = self._buffer
        buffer += data
        messages = []
        at, end = 0, len(buffer)
        while end - at >= LENGTH_BYTES:
            length = int.from_bytes(buffer[at : at + LENGTH_BYTES], "little")
            start = at + LENGTH_BYTES
            if end - start < length:
                break
            messages.append(pickle.loads(buffer[start : start + length]))
            at = start + length
        del buffer[:at]
        return messages


def start(module: str) -> subprocess.Popen[bytes]:
    """`python -m module`, its standard input and output pipes to this process, its standard
    error this process's, its environment `environment()`."""
    return subprocess.Popen(
        [sys.executable, "-m", module],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=environment(),
    )


def environment() -> dict[str, str]:
    """A child's environment: it finds this crawler as this process does (a checkout not
    installed, too), and is told this process's id (`die_with_parent`)."""
    path = os.pathsep.join(entry for entry in sys.path if entry)
    return {**os.environ, "PYTHONPATH": path, PARENT_VARIABLE: str(os.getpid())}


def die_with_parent() -> None:
    """In a child (`start`): be killed when the crawl dies (Linux), so a killed crawl leaves
    none behind; and leave Ctrl-C to the crawl, which stops its children when it is done with
    them."""
    parent = int(os.environ.get(PARENT_VARIABLE, os.getppid()))
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)  # the crawl died before the line above took hold
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def end(status: int) -> NoReturn:
    """End a child once its `main` has returned with `status`, all it writes written and closed:
    without the interpreter's teardown, which frees every object and module one by one, 23 ms
    of a child that has read the crawl's modules, while the crawl waits for it to exit (its
    close waits for the index writer's; benchmarks/README.md, "A child's end")."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # gone (a closed pipe): nothing left to say
            stream.flush()
    os._exit(status)
