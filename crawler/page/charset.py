"""Which encoding an HTML body is in (the HTML standard's sniffing, in short). Pure.

A byte order mark wins; else the Content-Type charset; else a `<meta charset>` (or http-equiv
content type) within the first 1024 bytes, where the standard stops looking; else UTF-8 when the
bytes are UTF-8 and windows-1252 when not. Labels are read as the Encoding Standard reads them
(`iso-8859-1` is windows-1252, `gb2312` is GBK, ...); a label Python cannot decode text with is
ignored.
"""

from __future__ import annotations

import codecs
import functools
import re

__all__ = ["PRESCAN_BYTES", "sniff_encoding"]

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
PRESCAN_BYTES = 1024
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:\-]+)", re.IGNORECASE)
# The Encoding Standard reads these labels as the supersets browsers decode them with.
_SUPERSETS = {
    "ascii": "cp1252",
    "iso8859-1": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "gb2312": "gbk",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
}


@functools.lru_cache(maxsize=256)  # a crawl meets a handful of labels, once per page each
def _codec(label: str) -> str | None:
    try:
        info = codecs.lookup(label.strip().strip("\"'"))
    except LookupError:
        return None
    # base64, rot13 and the like are codecs too, but cannot read text.
    if not getattr(info, "_is_text_encoding", True):
        return None
    return _SUPERSETS.get(info.name, info.name)


def _is_utf8(body: bytes) -> bool:
    if body.isascii():
        return True
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as error:
        # A body cut at the size cap may end inside a character.
        return error.reason == "unexpected end of data" and error.start >= len(body) - 3
    return True


def sniff_encoding(body: bytes, header_charset: str | None = None) -> tuple[str, int]:
    """(Python codec, length of the byte order mark) for an HTML body."""
    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            return bom_codec, len(bom)
    declared = _codec(header_charset) if header_charset else None
    if declared is not None:
        return declared, 0
    head = body[:PRESCAN_BYTES]
    if b"charset" in head.lower():
        match = _META_CHARSET.search(head)
        declared = _codec(match.group(1).decode("ascii")) if match is not None else None
        if declared is not None:
            # A document that says UTF-16 inside itself was read as ASCII to find it: it isn't.
            return ("utf-8" if declared.startswith("utf-16") else declared), 0
    return ("utf-8" if _is_utf8(body) else "cp1252"), 0
