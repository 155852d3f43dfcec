"""`crawl` on a terminal, as a user sees it: a pseudo-terminal of a given width, and what the
bytes it received leave on the screen."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import unicodedata

__all__ = ["in_terminal", "rows_drawn", "wraps_on"]


def in_terminal(*args: str, columns: int, set_columns: bool) -> tuple[int, str]:
    """`crawl ARGS` with stdout and stderr on a pseudo-terminal `columns` wide, told either by
    the terminal's window size or by COLUMNS (the terminal itself then says 200): the exit
    status and everything the terminal received."""
    master, slave = pty.openpty()
    size = 200 if set_columns else columns
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, size, 0, 0))
    env = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES")}
    if set_columns:
        env["COLUMNS"] = str(columns)
    process = subprocess.Popen(
        [sys.executable, "-m", "crawler", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    received = bytearray()
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every copy of the terminal's other end is closed
                break
            if not chunk:
                break
            received += chunk
    finally:
        os.close(master)
    return process.wait(timeout=60), received.decode("utf-8", "replace")


def wraps_on(output: str, columns: int) -> list[str]:
    """Replay `output` on a terminal `columns` wide that wraps at its edge: the rows it wrapped
    (none, when every line fits)."""
    wrapped, row, column = [], "", 0
    for char in output:
        if char in "\r\n":
            column = 0
            row = "" if char == "\n" else row
            continue
        width = 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
        if column + width > columns:
            wrapped.append(row)
            column = 0
        row += char
        column += width
    return wrapped


def rows_drawn(output: str) -> list[str]:
    """Replay `output` on a terminal wide enough not to wrap: each row as it stood whenever the
    cursor left it or went back to its start (a redraw overwrites in place, so a shorter line
    that did not blank the rest shows what was left of the longer one)."""
    drawn: list[str] = []
    row: list[str] = []
    column, written = 0, False
    for char in output:
        if char in "\r\n":
            if written:  # a terminal's \r\n for a newline shows the row once
                drawn.append("".join(row).rstrip())
            column, written = 0, False
            if char == "\n":
                row = []
            continue
        if column < len(row):
            row[column] = char
        else:
            row.append(char)
        column, written = column + 1, True
    if written:
        drawn.append("".join(row).rstrip())
    return [line for line in drawn if line]
