"""Content-Encoding and Content-Type, as the http1 client (crawler.http.http1) reads answers: a
body read to a cap on decoded bytes, and a Content-Type's media type and charset. Sans-I/O: bytes
in, bytes out, so the fuzz tests feed it directly.

The cap holds inside one chunk: every decoder is asked for at most the room left (zlib's
`max_length`, brotli's `output_buffer_limit`), so a few kilobytes of a compression bomb cost about
the cap in memory and time, never what they would unpack to.
"""

from __future__ import annotations

import zlib
from typing import Protocol

__all__ = ["BROTLI", "BodyReader", "DecodeError", "accept_encoding", "body_decoder", "media_type"]


try:  # the same optional package aiohttp decodes br with
    import brotli  # type: ignore[import-untyped, import-not-found, unused-ignore]
except ImportError:  # pragma: no cover - depends on what is installed
    brotli = None


def _brotli_bounded() -> bool:
    """Whether the installed brotli can bound one call's output (`output_buffer_limit`, in
    Google's Brotli 1.2): without it a 50 KB answer could unpack into gigabytes in one call, so
    br is then neither asked for nor decoded."""
    if brotli is None or not hasattr(brotli, "Decompressor"):
        return False
    try:
        brotli.Decompressor().process(b"", output_buffer_limit=1)
    except (TypeError, AttributeError):  # pragma: no cover - depends on what is installed
        return False
    return True


BROTLI = _brotli_bounded()


class DecodeError(Exception):
    """The body does not decode as its Content-Encoding says."""


class Decoder(Protocol):
    """A streaming decoder whose every call hands out about `limit` bytes at most."""

    def decode(self, data: bytes, limit: int) -> bytes:
        """Decoded bytes of `data` (may be empty: go on with what is held), at most about
        `limit` of them."""
        ...

    @property
    def holding(self) -> bool:
        """Input or output held back by the limit: `decode(b"", ...)` has more to give."""
        ...

    def finish(self) -> bytes:
        """What is left once the body has ended, when nothing is `holding`."""
        ...


class _ZlibDecoder:
    """gzip, or a zlib stream; deflate's two forms (`_DeflateDecoder`) pick one of these."""

    __slots__ = ("_zlib",)

    def __init__(self, wbits: int) -> None:
        self._zlib = zlib.decompressobj(wbits)

    def decode(self, data: bytes, limit: int) -> bytes:
        tail = self._zlib.unconsumed_tail
        if tail:
            data = tail + data if data else tail
        try:
            return self._zlib.decompress(data, limit)
        except zlib.error as error:
            raise DecodeError(str(error)) from None

    @property
    def holding(self) -> bool:
        return bool(self._zlib.unconsumed_tail)

    def finish(self) -> bytes:
        try:
            return self._zlib.flush()
        except zlib.error as error:  # pragma: no cover - flush reports no errors today
            raise DecodeError(str(error)) from None


class _DeflateDecoder:
    """`Content-Encoding: deflate` is a zlib stream by the RFC, and a raw deflate stream from
    servers that read the name literally; the first byte tells them apart."""

    __slots__ = ("_zlib",)

    def __init__(self) -> None:
        self._zlib: _ZlibDecoder | None = None

    def decode(self, data: bytes, limit: int) -> bytes:
        if self._zlib is None:
            if not data:
                return b""
            zlib_header = data[0] & 0x0F == 8
            self._zlib = _ZlibDecoder(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)
        return self._zlib.decode(data, limit)

    @property
    def holding(self) -> bool:
        return self._zlib is not None and self._zlib.holding

    def finish(self) -> bytes:
        return b"" if self._zlib is None else self._zlib.finish()


class _BrotliDecoder:
    """brotli's streaming decompressor. Past its output limit it takes no input until it has
    handed out what it holds (`can_accept_more_data`): input given meanwhile waits here."""

    __slots__ = ("_brotli", "_waiting")

    def __init__(self) -> None:
        self._brotli = brotli.Decompressor()
        self._waiting = b""

    def decode(self, data: bytes, limit: int) -> bytes:
        decompressor = self._brotli
        if data:
            self._waiting += data
        try:
            if not decompressor.can_accept_more_data():
                return bytes(decompressor.process(b"", output_buffer_limit=limit))
            data, self._waiting = self._waiting, b""
            if decompressor.is_finished():
                return b""  # bytes after the stream's end: ignored, as zlib does
            return bytes(decompressor.process(data, output_buffer_limit=limit))
        except brotli.error as error:
            raise DecodeError(str(error) or "not a brotli stream") from None

    @property
    def holding(self) -> bool:
        return bool(self._waiting) or not self._brotli.can_accept_more_data()

    def finish(self) -> bytes:
        return b""


def body_decoder(encoding: str) -> Decoder | None:
    """A decoder for the Content-Encoding, or None to take the body as it came (identity, or an
    encoding we did not ask for and cannot decode: aiohttp passes those through too)."""
    if encoding in ("gzip", "x-gzip"):
        return _ZlibDecoder(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _DeflateDecoder()
    if encoding == "br" and BROTLI:
        return _BrotliDecoder()
    return None


class BodyReader:
    """An answer's body, decoded, read up to `cap` bytes: `feed` each chunk as it comes (False
    once past the cap: read no more), then `body()`. Raises `DecodeError` only."""

    __slots__ = ("_cap", "_chunks", "_decoder", "size")

    def __init__(self, cap: int, decoder: Decoder | None = None) -> None:
        self._cap = cap
        self._decoder = decoder
        self._chunks: list[bytes] = []
        self.size = 0
        """Decoded bytes read so far; past the cap by at most what one decoder call gave."""

    @property
    def over_cap(self) -> bool:
        return self.size > self._cap

    def feed(self, chunk: bytes) -> bool:
        """Read one chunk of the body as it came; False once past the cap."""
        decoder = self._decoder
        if decoder is None:
            self._keep(chunk)
            return not self.over_cap
        data = chunk
        while not self.over_cap:
            # One more byte than there is room for: that byte says the body went past the cap.
            self._keep(decoder.decode(data, self._cap - self.size + 1))
            data = b""
            if not decoder.holding:
                break
        return not self.over_cap

    def _keep(self, data: bytes) -> None:
        if data:
            self._chunks.append(data)
            self.size += len(data)

    def body(self, *, ended: bool) -> tuple[bytes, bool]:
        """The body, at most `cap` bytes, and whether there was more. `ended`: the whole body
        came, so what the decoder holds to the end is read too."""
        if ended and not self.over_cap and self._decoder is not None:
            self._keep(self._decoder.finish())
        chunks, self._chunks = self._chunks, []
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        truncated = self.over_cap
        return (body[: self._cap] if truncated else body), truncated


def accept_encoding() -> str:
    return "gzip, deflate, br" if BROTLI else "gzip, deflate"


def media_type(value: str) -> tuple[str, str | None]:
    """A Content-Type value's media type (lower case, no parameters) and its charset parameter."""
    media, _, parameters = value.partition(";")
    charset = None
    if parameters:
        for parameter in parameters.split(";"):
            name, equals, given = parameter.partition("=")
            if equals and name.strip().lower() == "charset":
                charset = given.strip().strip("\"'").strip() or None
                break
    return media.strip().lower(), charset
