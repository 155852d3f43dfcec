"""The prescan's model of the HTML tree builder (crawler.page.bounds): the stack of open elements
and the list of active formatting elements, as far as the bounds need them. Pure."""

from __future__ import annotations

from crawler.page.tag_classes import (
    IS_FORMATTING,
    IS_LIST,
    IS_MARKER,
    IS_SCOPE,
    IS_SPECIAL,
    IS_TABLE_BOUNDARY,
    IS_TABLE_PART,
    M_BUTTON,
    PAST_DEPTH,
    STOP_ALL,
)

__all__ = ["WINDOW", "OpenElements"]

WINDOW = 8
"""How far down the stack a start tag looks for what it closes."""


class OpenElements:
    """The stack of open elements and the list of active formatting elements, as the model
    keeps them: (name, flags) on the stack; (name, attributes as written) in the list, None for
    a marker. `real`: the elements on the stack the parser has open, those not PAST_DEPTH (the
    depth the parser's scope checks walk)."""

    __slots__ = ("formatting", "real", "stack")

    def __init__(self) -> None:
        self.stack: list[tuple[bytes, int]] = []
        self.formatting: list[tuple[bytes, bytes] | None] = []
        self.real = 0

    def active(self) -> int:
        """Entries after the last marker: the most the parser can rebuild at once."""
        count = 0
        for entry in reversed(self.formatting):
            if entry is None:
                break
            count += 1
        return count

    def pop_from(self, position: int) -> None:
        for _, flags in self.stack[position:]:
            if flags & PAST_DEPTH:
                continue  # never the parser's: in no list
            self.real -= 1
            if flags & IS_MARKER:
                self.clear_to_marker()
        del self.stack[position:]

    def clear_to_marker(self) -> None:
        while self.formatting:
            if self.formatting.pop() is None:
                break

    def forget(self, name: bytes) -> None:
        """The latest entry for `name` after the last marker leaves the list."""
        for index in range(len(self.formatting) - 1, -1, -1):
            entry = self.formatting[index]
            if entry is None:
                return
            if entry[0] == name:
                del self.formatting[index]
                return

    def add(self, name: bytes, attributes: bytes) -> None:
        """A formatting element enters the list; a fourth identical one (Noah's Ark) puts the
        earliest out."""
        same = []
        for index in range(len(self.formatting) - 1, -1, -1):
            entry = self.formatting[index]
            if entry is None:
                break
            if entry == (name, attributes):
                same.append(index)
        if len(same) >= 3:
            del self.formatting[same[-1]]
        self.formatting.append((name, attributes))

    def end_tag(self, name: bytes, flags: int) -> tuple[int, bool]:
        """The parser's reading of an end tag, as far as the stack goes: the steps it took, and
        whether the element it ends opened past the depth (the parser is not given it)."""
        stack = self.stack
        depth = len(stack)
        if name in (b"body", b"html", b"br"):
            return 1, False  # body and html stay open; </br> is a <br>
        if flags & IS_FORMATTING:
            return self._formatting_end(name)
        if flags & IS_TABLE_PART:
            stop = IS_TABLE_BOUNDARY
        elif name == b"li":
            stop = IS_SCOPE | IS_LIST
        elif name == b"p":
            stop = IS_SCOPE | M_BUTTON
        else:
            stop = IS_SCOPE if flags & IS_SPECIAL else IS_SPECIAL
        position = depth - 1
        while position >= 0:
            open_name, open_flags = stack[position]
            if open_name == name:
                if name == b"form":
                    del stack[position]  # </form> takes the form element alone off the stack
                    self.real -= not open_flags & PAST_DEPTH
                else:
                    self.pop_from(position)
                return depth - position, bool(open_flags & PAST_DEPTH)
            if open_flags & stop:
                break
            position -= 1
        return depth - position, False

    def _formatting_end(self, name: bytes) -> tuple[int, bool]:
        # The adoption agency: the element in scope is popped with what is above it, unless a
        # special element is above it (that one stays, and a copy of the element goes in
        # below it: the stack is as deep as before). One past the depth the parser never had:
        # it goes, with what is above it.
        stack = self.stack
        depth = len(stack)
        special_above = False
        position = depth - 1
        while position >= 0:
            open_name, open_flags = stack[position]
            if open_name == name:
                if open_flags & PAST_DEPTH:
                    self.pop_from(position)
                    return depth - position, True
                if not special_above:
                    self.pop_from(position)
                    self.forget(name)
                return depth - position, False
            if open_flags & IS_SCOPE:
                break
            special_above = special_above or bool(
                open_flags & IS_SPECIAL and not open_flags & PAST_DEPTH
            )
            position -= 1
        # In the list only, it leaves the list; the search for it is counted, as the stack may
        # be long past the depth.
        scanned = 0
        for open_name, open_flags in stack:
            scanned += 1
            if open_name == name and not open_flags & PAST_DEPTH:
                break
        else:
            self.forget(name)
        return depth - position + scanned, False

    def closes(self, closes: int, stops: int) -> None:
        """A start tag closes the lowest open element of its group near the top."""
        stack = self.stack
        depth = len(stack)
        lowest = -1
        for position in range(depth - 1, max(depth - WINDOW, 0) - 1, -1):
            open_flags = stack[position][1]
            if open_flags & closes:
                lowest = position
            elif open_flags & stops:
                break
            if stops & STOP_ALL:
                break
        if lowest >= 0:
            name, flags = stack[lowest]
            self.pop_from(lowest)
            if flags & IS_FORMATTING and not flags & PAST_DEPTH:
                self.forget(name)
