"""URLs and robots.txt patterns in canonical form: what robots.txt matching compares. Pure:
no I/O. crawler.urls builds the normal form on the same percent-encoding.

What robots.txt matching needs from a URL (SPEC section 4):
- `match_target(url)`: the path and query a robots.txt rule is matched against, fragment dropped,
  dot segments resolved and percent-encoding in canonical form.
- `canonical_pattern(value)`: a robots.txt Allow/Disallow value in the same canonical form, so a
  rule and a URL that spell one resource two ways compare equal.

The canonical form (RFC 9309 section 2.2.2 and RFC 3986 section 6.2.2):
- `%XX` of an unreserved character (`A-Z a-z 0-9 - . _ ~`) is decoded;
- every other `%XX` stays encoded, with upper-case hex digits (`%2f` -> `%2F`, never `/`);
- bytes outside the URI character set (non-ASCII as UTF-8, controls, space, `"<>\\^`{|}`) are
  encoded;
- in a URL, `*` and `$` are encoded (`%2A`, `%24`) because a pattern gives them meaning: only an
  encoded `%2A` in a rule matches a literal asterisk (RFC 9309 section 2.2.3);
- in a pattern, `*` stays a wildcard and only a final `$` stays an anchor; any other `$` is a
  literal and is encoded.
"""

from __future__ import annotations

import re

__all__ = [
    "CANONICAL_CHARS",
    "ESCAPE",
    "canonical_escape",
    "canonical_path",
    "canonical_pattern",
    "encode_run",
    "match_target",
    "path_and_query",
    "remove_dot_segments",
    "utf8_bytes",
]

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

# A URL or pattern made only of these characters is already canonical: the common case, decided by
# one C-level regex call instead of a character loop.
# Characters a canonical path keeps as they are (unreserved and reserved but `*` and `$`); a
# canonical pattern may add `*` and a final `$`. crawler.robots.rules builds on it too.
CANONICAL_CHARS = r"A-Za-z0-9\-._~!&'()+,;=:@/?\[\]"
_CANONICAL_URL = re.compile(rf"[{CANONICAL_CHARS}]*").fullmatch
_CANONICAL_PATTERN = re.compile(rf"[{CANONICAL_CHARS}*]*\$?").fullmatch

ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
"""A percent escape; group 1 is its two hex digits. crawler.urls normalises escapes with it too."""
# Characters that must be percent-encoded. `%` is absent: escapes were normalised first and a stray
# `%` is kept as the reference parser keeps it.
_TO_ENCODE_IN_URL = re.compile(r"[^A-Za-z0-9\-._~!&'()+,;=:@/?#\[\]%]+")
_TO_ENCODE_IN_PATTERN = re.compile(r"[^A-Za-z0-9\-._~!&'()+,;=:@/?#\[\]%*]+")
_PATH_START = re.compile(r"[/?;]")
# The usual URL, `scheme://authority/path?query#fragment` with a path already in canonical form:
# `path_and_query` and `canonical_path` would both return the path group unchanged.
_PLAIN_URL = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*://[^/?;#]*(/[A-Za-z0-9\-._~!&'()+,;=:@/?\[\]]*)(?:#.*)?", re.DOTALL
).fullmatch


def utf8_bytes(text: str) -> bytes:
    """The bytes `text` stands for: surrogate escapes give back the original undecodable bytes."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # A lone surrogate that is no escape (only a caller's str can carry one): keep its bytes.
        return text.encode("utf-8", "surrogatepass")


def canonical_escape(match: re.Match[str]) -> str:
    """For `ESCAPE.sub`: the escape decoded if it is of an unreserved character, else with
    upper-case hex digits."""
    hex_digits = match.group(1)
    char = chr(int(hex_digits, 16))
    return char if char in _UNRESERVED else "%" + hex_digits.upper()


def encode_run(match: re.Match[str]) -> str:
    """For `sub` with a pattern of characters to encode: the run matched, percent-encoded."""
    return "".join(f"%{byte:02X}" for byte in utf8_bytes(match.group()))


def _canonical(text: str, to_encode: re.Pattern[str]) -> str:
    if "%" in text:
        text = ESCAPE.sub(canonical_escape, text)
    return to_encode.sub(encode_run, text)


def canonical_path(path: str) -> str:
    """`path` (path and query) in canonical percent-encoding, `*` and `$` encoded."""
    if _CANONICAL_URL(path):
        return path
    return _canonical(path, _TO_ENCODE_IN_URL)


def canonical_pattern(pattern: str) -> str:
    """A robots.txt Allow/Disallow value in canonical percent-encoding; `*` and a final `$` keep
    their meaning."""
    if _CANONICAL_PATTERN(pattern):
        return pattern
    anchor = ""
    if pattern.endswith("$"):
        anchor, pattern = "$", pattern[:-1]
    return _canonical(pattern, _TO_ENCODE_IN_PATTERN) + anchor


def path_and_query(url: str) -> str:
    """The path, params and query of `url`, without scheme, authority or fragment; always starts
    with `/`.

    Accepts what the reference parser accepts: a full URL, a protocol-relative `//host/path`, a
    scheme-less `host/path?q` and a bare `/path?q`. A URL with no path gives `/`.
    """
    search_start = 2 if url.startswith("//") else 0
    early = _PATH_START.search(url, search_start)
    protocol_end = url.find("://", search_start)
    if protocol_end != -1 and early is not None and early.start() < protocol_end:
        # A "://" after the path has begun is part of the path or query, not a scheme.
        protocol_end = -1
    protocol_end = search_start if protocol_end == -1 else protocol_end + 3
    start = _PATH_START.search(url, protocol_end)
    if start is None:
        return "/"
    path_start = start.start()
    hash_pos = url.find("#", search_start)
    if hash_pos != -1 and hash_pos < path_start:
        return "/"
    result = url[path_start:] if hash_pos == -1 else url[path_start:hash_pos]
    return result if result[0] == "/" else "/" + result


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 on a path without query: `/a/./b/../c` -> `/a/c`."""
    output: list[str] = []
    segments = path.split("/")
    # segments[0] is "" since the path starts with "/".
    for index, segment in enumerate(segments[1:], 1):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if output:
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/" + "/".join(output)


def match_target(url: str) -> str:
    """What a robots.txt rule is matched against for `url`: canonical path and query."""
    plain = _PLAIN_URL(url)
    target = plain.group(1) if plain else canonical_path(path_and_query(url))
    if "/." in target:
        path, mark, query = target.partition("?")
        if "/." in path:
            target = remove_dot_segments(path) + mark + query
    return target
