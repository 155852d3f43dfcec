"""robots.txt lines into groups, read as Google's reference parser reads them. Pure.

- The first 500 KiB of the body is read; a leading (partial) UTF-8 BOM is skipped.
- Lines end at LF, CR or CRLF; a line is cut at 16,663 bytes and at a NUL (the reference parser's
  C buffer); `#` starts a comment.
- Keys are read case-insensitively and by prefix, with the reference parser's accepted
  misspellings and its forgiveness of a missing colon between exactly two words.
- A group is a run of User-agent lines and the lines after them; it ends at a User-agent line that
  follows an Allow or Disallow. Sitemap lines belong to no group; rules before any User-agent line
  are dropped.

`scan` is the hot loop of parsing: it only sorts lines into groups. Values are trimmed where they
are used, since most lines belong to groups for other robots and are never looked at again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from crawler.canonical_urls import utf8_bytes

MAX_BODY_BYTES: Final = 500 * 1024
# The reference parser's line buffer: 2083 * 8 bytes, one of them for the terminating NUL.
MAX_LINE_BYTES: Final = 2083 * 8 - 1


# Whitespace as the reference parser's C locale sees it.
WHITESPACE: Final = " \t\n\v\f\r"
# Below this many characters a line cannot pass MAX_LINE_BYTES, whatever its encoding.
_SHORT_LINE_CHARS: Final = MAX_LINE_BYTES // 4

UA, ALLOW, DISALLOW, SITEMAP, CRAWL_DELAY, REQUEST_RATE, VISIT_TIME, OTHER = range(8)
# The usage lines (crawler.robots.usage_lines): extensions too, read whole.
CONTENT_SIGNAL, CONTENT_USAGE = 8, 9

# Exact spellings seen in nearly every file, looked up before any lower-casing or prefix test.
_COMMON_KEYS: Final = {
    spelling: kind
    for key, kind in (
        ("user-agent", UA),
        ("allow", ALLOW),
        ("disallow", DISALLOW),
        ("sitemap", SITEMAP),
        ("crawl-delay", CRAWL_DELAY),
        ("request-rate", REQUEST_RATE),
        ("visit-time", VISIT_TIME),
    )
    for spelling in (key, key.title(), key.capitalize(), key.upper())
}
# The reference parser reads a key by its prefix and forgives these misspellings (SPEC section 2).
_KEY_PREFIXES: Final = (
    (("user-agent", "useragent", "user agent"), UA),
    (("allow",), ALLOW),
    (("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"), DISALLOW),
    (("sitemap", "site-map"), SITEMAP),
)
_ANY_KEY_PREFIX: Final = tuple(prefix for prefixes, _ in _KEY_PREFIXES for prefix in prefixes)
# The extensions are no part of the reference parser; their keys are read whole, in these spellings.
# None of them ends a group's User-agent lines, as no line the reference parser does not know does.
_EXTENSION_KEYS: Final = {
    first + separator + second: kind
    for first, second, kind in (
        ("crawl", "delay", CRAWL_DELAY),
        ("request", "rate", REQUEST_RATE),
        ("visit", "time", VISIT_TIME),
        ("content", "signal", CONTENT_SIGNAL),
        ("content", "usage", CONTENT_USAGE),
    )
    for separator in ("-", "_", " ", "")
}

_BLANKS = re.compile(r"[ \t]+")
# The first letters of every key of a known kind, any case: a cheap test that rules out most prose
# and markup (some servers answer robots.txt with an HTML page).
_MAY_START_KEY = re.compile(r"[ \t\n\v\f\r]*[uUaAdDsScCrRvV]").match
_AGENT_PREFIX = re.compile(r"[A-Za-z_-]*")


def _compute_key_kind(key: str) -> int:
    lowered = key.strip(WHITESPACE).lower()
    kind = _COMMON_KEYS.get(lowered)
    if kind is not None:
        return kind
    if lowered.startswith(_ANY_KEY_PREFIX):
        for prefixes, prefix_kind in _KEY_PREFIXES:
            if lowered.startswith(prefixes):
                return prefix_kind
    # An empty key is no directive, like an unknown one.
    return _EXTENSION_KEYS.get(lowered, OTHER)


# Keys as written, with the kind they read as. Keys repeat across lines and files, so a bounded memo
# turns most classifications into one dict lookup; the bounds keep hostile files from growing it.
_KIND_MEMO: dict[str, int] = dict(_COMMON_KEYS)
_KIND_MEMO_LIMIT: Final = 8192
_KIND_MEMO_KEY_CHARS: Final = 64


def _key_kind(key: str) -> int:
    kind = _KIND_MEMO.get(key)
    if kind is None:
        kind = _compute_key_kind(key)
        if len(key) <= _KIND_MEMO_KEY_CHARS and len(_KIND_MEMO) < _KIND_MEMO_LIMIT:
            _KIND_MEMO[key] = kind
    return kind


class Group:
    """User-agent lines and the lines that follow them, each with its line number."""

    __slots__ = ("agents", "extensions", "flat_rules")

    def __init__(self) -> None:
        self.agents: list[tuple[int, str]] = []
        self.extensions: list[tuple[int, int, str]] = []
        # Allow and Disallow lines flat, [line, is_allow, value, line, ...]: one list instead of a
        # tuple per line spares the garbage collector most of a large robots cache's objects.
        self.flat_rules: list[int | bool | str] = []

    def rules(self) -> Iterator[tuple[int, bool, str]]:
        """(line number, is_allow, value as written) per Allow or Disallow line, in file order."""
        flat = self.flat_rules
        return zip(flat[0::3], flat[1::3], flat[2::3], strict=True)  # type: ignore[arg-type]

    def rule_values(self) -> list[str]:
        return self.flat_rules[2::3]  # type: ignore[return-value]

    def rule_count(self) -> int:
        return len(self.flat_rules) // 3


def prepare(body: bytes | str) -> str:
    """The text the reference parser reads: the first 500 KiB of the body's bytes, without a
    leading (partial) BOM, undecodable bytes kept as surrogate escapes, and every line end an LF."""
    data = body if isinstance(body, bytes) else utf8_bytes(body)
    data = data[:MAX_BODY_BYTES]
    if data[:1] == b"\xef":
        # A BOM, or the start of one, is skipped byte by byte as the reference parser does.
        skip = 3 if data[:3] == b"\xef\xbb\xbf" else 2 if data[:2] == b"\xef\xbb" else 1
        data = data[skip:]
    text = data.decode("utf-8", "surrogateescape")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _cut_long_line(line: str) -> str:
    data = line.encode("utf-8", "surrogateescape")
    if len(data) <= MAX_LINE_BYTES:
        return line
    return data[:MAX_LINE_BYTES].decode("utf-8", "surrogateescape")


def _without_colon(line: str) -> tuple[int, str] | None:
    """The reference parser forgives a forgotten colon between exactly two words (`Disallow /x`)."""
    if not _MAY_START_KEY(line):
        return None
    line = line.strip(WHITESPACE)
    blanks = _BLANKS.search(line)
    if blanks is None:
        return None
    kind = _key_kind(line[: blanks.start()])
    if kind == OTHER:
        return None
    value = line[blanks.end() :]
    if " " in value or "\t" in value:
        return None
    return kind, value


def _c_string_line(line: str) -> str:
    """A line as the reference parser's C buffer holds it: cut at MAX_LINE_BYTES and at a NUL."""
    if len(line) > _SHORT_LINE_CHARS:
        line = _cut_long_line(line)
    return line.partition("\x00")[0]


def scan(text: str) -> tuple[list[Group], list[str]]:
    """Sort lines into groups. The hot loop of parsing: every name it uses is local."""
    groups: list[Group] = []
    sitemaps: list[str] = []
    seen_sitemaps: set[str] = set()  # a list's `in` would make 100,000 Sitemap lines quadratic
    group: Group | None = None
    add_rule = add_agent = add_extension = None
    # True until the current group has an Allow or Disallow: until then a User-agent line joins it.
    taking_agents = False
    lines = text.split("\n")
    if "\x00" in text or (
        len(text) > _SHORT_LINE_CHARS and max(map(len, lines)) > _SHORT_LINE_CHARS
    ):
        lines = [_c_string_line(line) for line in lines]
    memo = _KIND_MEMO
    whitespace = WHITESPACE
    ua, allow, disallow, sitemap, other = UA, ALLOW, DISALLOW, SITEMAP, OTHER
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        if "#" in line:
            line = line[: line.index("#")]
        key, colon, value = line.partition(":")
        if colon:
            # Values are stripped where they are used: most lines belong to groups for other
            # robots and are never looked at again.
            kind = memo.get(key)
            if kind is None:
                kind = _key_kind(key)
        elif line and not line.isspace():
            pair = _without_colon(line)
            if pair is None:
                continue
            kind, value = pair
        else:
            continue
        if kind in (disallow, allow):
            if add_rule is not None:
                add_rule((number, kind == allow, value))
                taking_agents = False
        elif kind == ua:
            if group is None or not taking_agents:
                group = Group()
                groups.append(group)
                add_rule = group.flat_rules.extend
                add_agent = group.agents.append
                add_extension = group.extensions.append
                taking_agents = True
            add_agent((number, value.strip(whitespace)))  # type: ignore[misc]
        elif kind == sitemap:
            value = value.strip(whitespace)
            if value and value not in seen_sitemaps:
                seen_sitemaps.add(value)
                sitemaps.append(value)
        elif kind != other and add_extension is not None:
            add_extension((number, kind, value))
    return groups, sitemaps


def product_token_of(value: str) -> str:
    """A User-agent value cut at its first character outside [A-Za-z_-]: `Googlebot/2.1` gives
    `Googlebot`."""
    match = _AGENT_PREFIX.match(value)
    return match.group() if match else ""


def is_star(value: str) -> bool:
    # `* anything` still names every robot, as in the reference parser.
    return value[:1] == "*" and (len(value) == 1 or value[1] in WHITESPACE)
