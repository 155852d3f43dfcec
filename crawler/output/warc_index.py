"""`crawl warc-index`: a CDXJ index of a crawl's WARC files (crawler.output.warc), the form pywb
and the Wayback Machine's tools read: a line per response or revisit record,

    org,example)/docs/a?b=1 20261124183552 {"url": "...", "mime": "text/html", "status": "200",
        "digest": "QNUPEWDC...", "length": "4211", "offset": "498", "filename": "crawl-....warc.gz"}

sorted, so a replay tool can look a URL up by a binary search. The key is the URL's SURT form
(host labels reversed, `www.` dropped, lower case), the way those tools build it.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from crawler.errors import OutputError
from crawler.output.warc import WARC_DIR, warc_files

__all__ = ["cdx_lines", "surt"]

_DEFAULT_PORTS = {"http": "80", "https": "443"}


def surt(url: str) -> str:
    """The SURT key of a URL: `https://www.Example.org:8080/A?b` is `org,example:8080)/a?b`;
    `http://127.0.1.1/` is `127.0.1.1)/`."""
    scheme, _, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    authority = authority.rpartition("@")[2].lower()
    host, colon, port = authority.rpartition(":") if "]" not in authority else (authority, "", "")
    if not colon:
        host, port = authority, ""
    host = host.removeprefix("www.")
    # An address stays as it is; a name's labels go from the top down.
    literal = host.replace(".", "").isdigit() or host.startswith("[")
    key = host if literal else ",".join(reversed(host.split(".")))
    if port and port != _DEFAULT_PORTS.get(scheme.lower()):
        key += f":{port}"
    return f"{key})/{path.partition('#')[0]}".lower() if slash else f"{key})/"


def cdx_lines(directory: Path) -> Iterator[str]:
    """The CDXJ lines of every response and revisit record in DIR/warc, sorted. OutputError if
    there is no WARC file, or one cannot be read (naming it and where)."""
    files = warc_files(directory)
    if not files:
        raise OutputError(
            f"no WARC files in {directory / WARC_DIR}: crawl with --warc (output.warc) first"
        )
    lines = []
    for path in files:
        lines.extend(_lines(path))
    lines.sort()
    yield from lines


def _lines(path: Path) -> list[str]:
    lines = []
    offset = 0
    with path.open("rb") as stream:
        records = ArchiveIterator(stream)
        try:
            for record in records:
                offset = records.get_record_offset()
                kind = record.rec_type
                if kind not in ("response", "revisit"):
                    continue
                headers = record.rec_headers
                url = headers.get_header("WARC-Target-URI")
                date = headers.get_header("WARC-Date") or ""
                http = record.http_headers
                mime = "warc/revisit" if kind == "revisit" else ""
                if http is not None and not mime:
                    mime = (http.get_header("Content-Type") or "").partition(";")[0].strip()
                digest = (headers.get_header("WARC-Payload-Digest") or "").partition(":")[2]
                record.raw_stream.read()  # to its end: the iterator knows the record's length
                fields = {
                    "url": url,
                    "mime": mime or "unk",
                    "status": http.get_statuscode() if http is not None else "-",
                    "digest": digest or "-",
                    "length": str(records.get_record_length()),
                    "offset": str(records.get_record_offset()),
                    "filename": path.name,
                }
                stamp = "".join(ch for ch in date if ch.isdigit())[:14]
                lines.append(f"{surt(url)} {stamp} {json.dumps(fields)}")
            # warcio reads a record cut short at the end of a file (a kill mid-write) without a
            # word: the last gzip member must end.
            stream.seek(offset)
            tail = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while (chunk := stream.read(1 << 20)) and not tail.eof:
                tail.decompress(chunk)
            if not tail.eof:
                raise ValueError("the file ends inside it")
        except (ArchiveLoadFailed, OSError, EOFError, ValueError, zlib.error) as error:
            raise OutputError(
                f"{path}: cannot read the record at byte {offset} ({error}); the records "
                "before it are whole"
            ) from error
    return lines
