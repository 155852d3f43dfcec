"""Content-Encoding and Content-Type, as the http1 client (crawler.http.http1) reads answers:
decoders that hand out no more than asked for (brotli's: checked per chunk), and a Content-Type's
media type and charset.
"""

from __future__ import annotations

import zlib
from typing import Protocol

__all__ = ["DECODE_ERRORS", "Decoder", "accept_encoding", "body_decoder", "media_type"]


try:  # the same optional package aiohttp decodes br with
    import brotli  # type: ignore[import-untyped, import-not-found, unused-ignore]

    BROTLI = True
except ImportError:  # pragma: no cover - depends on what is installed
    BROTLI = False


class Decoder(Protocol):
    """zlib's decompressor interface, which every decoder here has."""

    def decompress(self, data: bytes, /, max_length: int = 0) -> bytes: ...

    @property
    def unconsumed_tail(self) -> bytes: ...

    def flush(self) -> bytes: ...


class _BrotliDecoder:
    """brotli's decompressor behind zlib's interface. It cannot bound one call's output, so the
    cap is checked after each chunk the socket delivered."""

    __slots__ = ("_decompressor",)

    def __init__(self) -> None:
        self._decompressor = brotli.Decompressor()

    def decompress(self, data: bytes, /, max_length: int = 0) -> bytes:
        return bytes(self._decompressor.process(data))

    @property
    def unconsumed_tail(self) -> bytes:
        return b""

    def flush(self) -> bytes:
        return b""


class _DeflateDecoder:
    """`Content-Encoding: deflate` is a zlib stream by the RFC, and a raw deflate stream from
    servers that read the name literally; the first byte tells them apart."""

    __slots__ = ("_zlib",)

    def __init__(self) -> None:
        self._zlib: Decoder | None = None

    def decompress(self, data: bytes, /, max_length: int = 0) -> bytes:
        if self._zlib is None:
            zlib_header = bool(data) and data[0] & 0x0F == 8
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)
        return bytes(self._zlib.decompress(data, max_length))

    @property
    def unconsumed_tail(self) -> bytes:
        return b"" if self._zlib is None else bytes(self._zlib.unconsumed_tail)

    def flush(self) -> bytes:
        return b"" if self._zlib is None else bytes(self._zlib.flush())


def body_decoder(encoding: str) -> Decoder | None:
    """A decompressor for the Content-Encoding, or None to take the body as it came (identity,
    or an encoding we did not ask for and cannot decode: aiohttp passes those through too)."""
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _DeflateDecoder()
    if encoding == "br" and BROTLI:
        return _BrotliDecoder()
    return None


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


try:
    DECODE_ERRORS: tuple[type[Exception], ...] = (zlib.error, brotli.error)
except NameError:  # pragma: no cover - brotli not installed
    DECODE_ERRORS = (zlib.error,)
