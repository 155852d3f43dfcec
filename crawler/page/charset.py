"""Which encoding an HTML body is in, and its text (the HTML standard's encoding sniffing, in
short). Pure.

The order is the HTML standard's: a byte order mark wins; else the transport layer's charset (the
Content-Type header's); else a `<meta charset>` (or http-equiv content type) within the first
1024 bytes, where the standard's prescan stops looking; else UTF-8 when the bytes are UTF-8 and
windows-1252 when not (the standard leaves this last step to the user agent; windows-1252 is its
default for most locales). A header and a meta that disagree: the header wins.

Labels are read as the WHATWG Encoding Standard reads them, and only those: its table of labels
(`_ENCODINGS`) maps each to the encoding browsers decode with (`latin1`, `iso-8859-1`, `ascii`
and `us-ascii` are windows-1252, `gb2312` is GBK whose decoder is gb18030's, `utf-16` is
UTF-16LE, `iso-2022-kr` and its kin are the replacement encoding). A label not in the table
(`utf-7`, `base64`, `bogus`) is no label: the next step decides, as in a browser. From a meta
tag, UTF-16 is read as UTF-8 (the document was read as ASCII to find it) and x-user-defined as
windows-1252, as the standard's prescan says.

Two encodings are no Python codec: x-user-defined (bytes 0x80-0xFF are U+F780-U+F7FF) and the
replacement encoding (the whole body is one U+FFFD: it stops the decoding of encodings that can
smuggle markup past a filter). `decode` reads both.
"""

from __future__ import annotations

import codecs
import re

__all__ = [
    "PRESCAN_BYTES",
    "REPLACEMENT",
    "USER_DEFINED",
    "decode",
    "label_codec",
    "sniff_encoding",
]

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
PRESCAN_BYTES = 1024
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:\-]+)", re.IGNORECASE)
REPLACEMENT = "replacement"
USER_DEFINED = "x-user-defined"

# The Encoding Standard's labels (encodings.json), by the Python codec that decodes as its
# encoding does: Python's name, then the labels.
_ENCODINGS = {
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "cp866": "866 cp866 csibm866 ibm866",
    "iso8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 "
    "iso_8859-2:1987 l2 latin2",
    "iso8859-3": "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 "
    "iso_8859-3:1988 l3 latin3",
    "iso8859-4": "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 "
    "iso_8859-4:1988 l4 latin4",
    "iso8859-5": "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 "
    "iso_8859-5 iso_8859-5:1988",
    "iso8859-6": "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 "
    "iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987",
    "iso8859-7": "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 "
    "iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    # ISO-8859-8 and ISO-8859-8-I decode alike; they differ in the direction of the text only.
    "iso8859-8": "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 "
    "iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical",
    "iso8859-10": "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    "iso8859-13": "iso-8859-13 iso8859-13 iso885913",
    "iso8859-14": "iso-8859-14 iso8859-14 iso885914",
    "iso8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    "iso8859-16": "iso-8859-16",
    "koi8-r": "cskoi8r koi koi8 koi8-r koi8_r",
    "koi8-u": "koi8-ru koi8-u",
    "mac-roman": "csmacintosh mac macintosh x-mac-roman",
    "cp874": "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
    "cp1250": "cp1250 windows-1250 x-cp1250",
    "cp1251": "cp1251 windows-1251 x-cp1251",
    "cp1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 "
    "iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252",
    "cp1253": "cp1253 windows-1253 x-cp1253",
    "cp1254": "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
    "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254",
    "cp1255": "cp1255 windows-1255 x-cp1255",
    "cp1256": "cp1256 windows-1256 x-cp1256",
    "cp1257": "cp1257 windows-1257 x-cp1257",
    "cp1258": "cp1258 windows-1258 x-cp1258",
    "mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
    # The standard's GBK decoder is its gb18030 decoder.
    "gb18030": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk "
    "gb18030",
    # The standard's Big5 is Big5-HKSCS.
    "big5hkscs": "big5 big5-hkscs cn-big5 csbig5 x-x-big5",
    "euc_jp": "cseucpkdfmtjapanese euc-jp x-euc-jp",
    "iso2022_jp": "csiso2022jp iso-2022-jp",
    "cp932": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "cp949": "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 "
    "ksc5601 ksc_5601 windows-949",
    REPLACEMENT: "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr replacement",
    "utf-16-be": "unicodefffe utf-16be",
    "utf-16-le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
    USER_DEFINED: "x-user-defined",
}
_LABELS = {label: codec for codec, labels in _ENCODINGS.items() for label in labels.split()}
_LABEL_WHITESPACE = "\t\n\f\r "
_USER_DEFINED_TABLE = {byte: 0xF780 + byte - 0x80 for byte in range(0x80, 0x100)}


def label_codec(label: str) -> str | None:
    """The codec of an Encoding Standard label (`decode` reads it), None for any other word.
    Quotes around it are dropped, as a Content-Type parameter may keep them."""
    return _LABELS.get(label.strip(_LABEL_WHITESPACE).strip("\"'").lower())


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
    """(codec, length of the byte order mark) for an HTML body: a Python codec, or
    USER_DEFINED or REPLACEMENT, which `decode` reads."""
    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            return bom_codec, len(bom)
    declared = label_codec(header_charset) if header_charset else None
    if declared is not None:
        return declared, 0
    head = body[:PRESCAN_BYTES]
    if b"charset" in head.lower():
        match = _META_CHARSET.search(head)
        declared = label_codec(match.group(1).decode("ascii")) if match is not None else None
        if declared is not None:
            # A document that says UTF-16 inside itself was read as ASCII to find it: it isn't.
            if declared.startswith("utf-16"):
                return "utf-8", 0
            return ("cp1252" if declared == USER_DEFINED else declared), 0
    return ("utf-8" if _is_utf8(body) else "cp1252"), 0


def decode(body: bytes, codec: str) -> str:
    """`body` as text in `codec` (from `sniff_encoding`); bytes that do not decode are U+FFFD."""
    if codec == REPLACEMENT:
        return "\ufffd" if body else ""
    if codec == USER_DEFINED:
        return body.decode("latin-1").translate(_USER_DEFINED_TABLE)
    return body.decode(codec, "replace")
