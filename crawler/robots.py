"""robots.txt: parse once, answer many questions. Pure: no I/O, no clock reads.

Rules this module keeps (SPEC sections 1 to 5):
- `RobotsTxt.parse` never raises for any bytes. It reads the first 500 KiB and, like Google's
  reference parser, the first 16,663 bytes of a line.
- Lines end at LF, CR or CRLF; a leading (partial) UTF-8 BOM is skipped; `#` starts a comment.
  Keys are read case-insensitively and by prefix, with the reference parser's accepted misspellings.
- A group is a run of User-agent lines and the lines after them; it ends at a User-agent line that
  follows an Allow or Disallow. Groups naming the same agent merge. Rules before any User-agent
  line belong to no group.
- Defaults follow RFC 9309: groups apply by exact product token, else the `*` groups, else none;
  the longest pattern wins, Allow on a tie; `/robots.txt` is always allowed. The legacy options
  from the seeds change exactly one of these decisions each.
- Matching compares canonical forms (see `crawler.urls`): percent-encoding is normalised on both
  sides, so the decision does not depend on how a URL or a rule spells a character.

Work is split for speed: `parse` only classifies lines into groups; the rules for an agent are
compiled on the first question about that agent and kept.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from crawler.errors import InvalidProductTokenError, InvalidRobotsOptionError
from crawler.robots_rates import (
    RequestRate,
    TimeWindow,
    parse_crawl_delay,
    parse_request_rate,
    parse_visit_time,
    second_of_day,
)
from crawler.urls import canonical_pattern, match_target, utf8_bytes

MAX_BODY_BYTES: Final = 500 * 1024
# The reference parser's line buffer: 2083 * 8 bytes, one of them for the terminating NUL.
MAX_LINE_BYTES: Final = 2083 * 8 - 1
MAX_REDIRECTS: Final = 5

AgentMatch = Literal["rfc", "substring"]
Precedence = Literal["longest-match", "first-match"]
Agent = str | Sequence[str]

# Whitespace as the reference parser's C locale sees it.
_WS: Final = " \t\n\v\f\r"
# Below this many characters a line cannot pass MAX_LINE_BYTES, whatever its encoding.
_SHORT_LINE_CHARS: Final = MAX_LINE_BYTES // 4

_UA, _ALLOW, _DISALLOW, _SITEMAP, _CRAWL_DELAY, _REQUEST_RATE, _VISIT_TIME, _OTHER = range(8)

# Exact spellings seen in nearly every file, looked up before any lower-casing or prefix test.
_COMMON_KEYS: Final = {
    spelling: kind
    for key, kind in (
        ("user-agent", _UA),
        ("allow", _ALLOW),
        ("disallow", _DISALLOW),
        ("sitemap", _SITEMAP),
        ("crawl-delay", _CRAWL_DELAY),
        ("request-rate", _REQUEST_RATE),
        ("visit-time", _VISIT_TIME),
    )
    for spelling in (key, key.title(), key.capitalize(), key.upper())
}
# The reference parser reads a key by its prefix and forgives these misspellings (SPEC section 2).
_KEY_PREFIXES: Final = (
    (("user-agent", "useragent", "user agent"), _UA),
    (("allow",), _ALLOW),
    (("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"), _DISALLOW),
    (("sitemap", "site-map"), _SITEMAP),
)
_ANY_KEY_PREFIX: Final = tuple(prefix for prefixes, _ in _KEY_PREFIXES for prefix in prefixes)
# The extensions are no part of the reference parser; their keys are read whole, in these spellings.
_EXTENSION_KEYS: Final = {
    first + separator + second: kind
    for first, second, kind in (
        ("crawl", "delay", _CRAWL_DELAY),
        ("request", "rate", _REQUEST_RATE),
        ("visit", "time", _VISIT_TIME),
    )
    for separator in ("-", "_", " ", "")
}

_BLANKS = re.compile(r"[ \t]+")
# The first letters of every key of a known kind, any case: a cheap test that rules out most prose
# and markup (some servers answer robots.txt with an HTML page).
_MAY_START_KEY = re.compile(r"[ \t\n\v\f\r]*[uUaAdDsScCrRvV]").match
_AGENT_PREFIX = re.compile(r"[A-Za-z_-]*")
_VALID_TOKEN = re.compile(r"[A-Za-z_-]+")
_STARS = re.compile(r"\*{2,}")


def _compute_key_kind(key: str) -> int:
    lowered = key.strip(_WS).lower()
    kind = _COMMON_KEYS.get(lowered)
    if kind is not None:
        return kind
    if lowered.startswith(_ANY_KEY_PREFIX):
        for prefixes, prefix_kind in _KEY_PREFIXES:
            if lowered.startswith(prefixes):
                return prefix_kind
    # An empty key is no directive, like an unknown one.
    return _EXTENSION_KEYS.get(lowered, _OTHER)


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


# --- options -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RobotsOptions:
    """How to read a robots.txt. The defaults are RFC 9309; each other value is an older convention
    from the seeds, kept for operators who need it."""

    agent_match: AgentMatch = "rfc"
    """"rfc": a group's product token equals ours. "substring" (1994/1996 texts): a group's
    User-agent value contains our token, case-insensitively."""
    precedence: Precedence = "longest-match"
    """"longest-match" (RFC 9309). "first-match" (1996 draft): the first matching line in file
    order decides."""
    case_insensitive_paths: bool = False
    """Match paths case-insensitively, as the Ultraseek engine did."""
    split_values: bool = False
    """Read `Disallow: /tmp /spool` as two rules, as the 1994 Lycos checker did."""

    def __post_init__(self) -> None:
        if self.agent_match not in ("rfc", "substring"):
            raise InvalidRobotsOptionError(
                f"robots agent_match must be 'rfc' or 'substring', not {self.agent_match!r}"
            )
        if self.precedence not in ("longest-match", "first-match"):
            raise InvalidRobotsOptionError(
                "robots precedence must be 'longest-match' or 'first-match', "
                f"not {self.precedence!r}"
            )
        for name in ("case_insensitive_paths", "split_values"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidRobotsOptionError(
                    f"robots {name} must be true or false, not {getattr(self, name)!r}"
                )


_DEFAULT_OPTIONS: Final = RobotsOptions()


# --- product tokens ------------------------------------------------------------------------------


def validate_product_token(token: str) -> str:
    """Return `token` if robots.txt files can name it, else raise InvalidProductTokenError."""
    if _VALID_TOKEN.fullmatch(token):
        return token
    readable = _AGENT_PREFIX.match(token)
    seen_as = readable.group() if readable else ""
    hint = f" (a robots.txt line 'User-agent: {token}' is read as '{seen_as}')" if seen_as else ""
    raise InvalidProductTokenError(
        f"product token {token!r} is not valid: it must be one or more of the letters A-Z, a-z, "
        f"'-' and '_' (RFC 9309 section 2.2.1){hint}"
    )


def product_token_from_user_agent(user_agent: str) -> str:
    """The product token of a User-Agent string: `PoliteBot/1.0 (+https://x.org/bot)` gives
    `PoliteBot`."""
    first_product = user_agent.strip().split(" ", 1)[0]
    return validate_product_token(first_product.split("/", 1)[0])


# --- what a robots.txt fetch outcome means (SPEC section 1) --------------------------------------


class RobotsPolicy(enum.Enum):
    PARSE = "parse"
    ALLOW_ALL = "allow-all"
    DISALLOW_ALL = "disallow-all"
    FOLLOW = "follow-redirect"


@dataclass(frozen=True, slots=True)
class FetchDecision:
    policy: RobotsPolicy
    reason: str
    retry: bool = False
    """True when the origin is unreachable: fetch robots.txt again later, with backoff."""


def robots_fetch_decision(
    status: int | None,
    *,
    redirects: int = 0,
    error: str | None = None,
    has_location: bool = True,
    auth_disallows: bool = False,
) -> FetchDecision:
    """Map one robots.txt response (or network `error`) to what the crawler does next (RFC 9309
    section 2.3.1). `redirects` counts the hops already followed to get this response."""
    if error is not None or status is None:
        return FetchDecision(
            RobotsPolicy.DISALLOW_ALL, f"unreachable: {error or 'no response'}", retry=True
        )
    if 200 <= status < 300:
        return FetchDecision(RobotsPolicy.PARSE, f"status {status}")
    if 300 <= status < 400:
        if not has_location:
            return FetchDecision(
                RobotsPolicy.ALLOW_ALL, f"status {status} without Location: unavailable"
            )
        if redirects >= MAX_REDIRECTS:
            return FetchDecision(
                RobotsPolicy.ALLOW_ALL, f"more than {MAX_REDIRECTS} redirects: unavailable"
            )
        return FetchDecision(RobotsPolicy.FOLLOW, f"status {status}: redirect {redirects + 1}")
    if status == 429:
        return FetchDecision(RobotsPolicy.DISALLOW_ALL, "status 429: unreachable", retry=True)
    if status in (401, 403) and auth_disallows:
        return FetchDecision(
            RobotsPolicy.DISALLOW_ALL, f"status {status}: access denied, read as disallow-all"
        )
    if 400 <= status < 500:
        return FetchDecision(RobotsPolicy.ALLOW_ALL, f"status {status}: unavailable")
    return FetchDecision(RobotsPolicy.DISALLOW_ALL, f"status {status}: unreachable", retry=True)


# --- parsing -------------------------------------------------------------------------------------


class _Group:
    """User-agent lines and the lines that follow them, each with its line number."""

    __slots__ = ("agents", "extensions", "rules")

    def __init__(self) -> None:
        self.agents: list[tuple[int, str]] = []
        self.rules: list[tuple[int, bool, str]] = []
        self.extensions: list[tuple[int, int, str]] = []


def _prepare(body: bytes | str) -> str:
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
    line = line.strip(_WS)
    blanks = _BLANKS.search(line)
    if blanks is None:
        return None
    kind = _key_kind(line[: blanks.start()])
    if kind == _OTHER:
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


def _scan(text: str) -> tuple[list[_Group], list[str]]:
    """Sort lines into groups. The hot loop of parsing: every name it uses is local."""
    groups: list[_Group] = []
    sitemaps: list[str] = []
    group: _Group | None = None
    add_rule = add_agent = add_extension = None
    # True until the current group has an Allow or Disallow: until then a User-agent line joins it.
    taking_agents = False
    lines = text.split("\n")
    if "\x00" in text or (
        len(text) > _SHORT_LINE_CHARS and max(map(len, lines)) > _SHORT_LINE_CHARS
    ):
        lines = [_c_string_line(line) for line in lines]
    memo = _KIND_MEMO
    whitespace = _WS
    ua, allow, disallow, sitemap, other = _UA, _ALLOW, _DISALLOW, _SITEMAP, _OTHER
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
                group = _Group()
                groups.append(group)
                add_rule = group.rules.append
                add_agent = group.agents.append
                add_extension = group.extensions.append
                taking_agents = True
            add_agent((number, value.strip(whitespace)))  # type: ignore[misc]
        elif kind == sitemap:
            value = value.strip(whitespace)
            if value and value not in sitemaps:
                sitemaps.append(value)
        elif kind != other and add_extension is not None:
            add_extension((number, kind, value))
    return groups, sitemaps


# --- matching ------------------------------------------------------------------------------------

_PREFIX, _EXACT, _GLOB = range(3)

# One compiled rule: (-priority, is_disallow, line, kind, pattern, glob, synthetic). The first
# three fields make plain tuple order the RFC 9309 precedence: longest pattern first, Allow before
# Disallow on a tie, then file order.
# - priority: length of the pattern as written, non-ASCII counted as its %XX escapes (as the
#   reference parser counts it);
# - pattern: canonical form, without its `$` anchor for _EXACT;
# - glob: for _GLOB, (head, tail, anchored, middle): the literal parts around the `*`s;
# - synthetic: the reference parser's reading of `Allow: /d/index.html` as also allowing `/d/`.
_Glob = tuple[str, str, bool, tuple[str, ...]]
_Entry = tuple[int, bool, int, int, str, _Glob, bool]
_NO_GLOB: Final[_Glob] = ("", "", False, ())

_CHARS = r"[A-Za-z0-9\-._~!&'()+,;=:@/?\[\]*]*\$?"
# Every pattern of a group already canonical: one C-level check for the usual case.
_ALL_CANONICAL = re.compile(rf"(?:{_CHARS}\n)*{_CHARS}").fullmatch


def _written_length(value: str) -> int:
    if value.isascii():
        return len(value)
    return sum(
        1 if ord(char) < 0x80 else 3 * len(char.encode("utf-8", "surrogateescape"))
        for char in value
    )


def _index_html_directory(value: str) -> str | None:
    """`/d/index.html` -> `/d/$`: the reference parser allows a directory whose index is allowed."""
    slash = value.rfind("/")
    if slash != -1 and value.startswith("/index.htm", slash):
        return value[: slash + 1] + "$"
    return None


def _entry(pattern: str, priority: int, allow: bool, line: int, synthetic: bool) -> _Entry:
    """How to test one rule: a plain prefix, an exact path, or a wildcard pattern split at `*`."""
    if "**" in pattern:
        pattern = _STARS.sub("*", pattern)
    if "*" in pattern:
        anchored = pattern[-1] == "$"
        head, *middle, tail = (pattern[:-1] if anchored else pattern).split("*")
        glob = (head, tail, anchored, tuple(middle))
        return (-priority, not allow, line, _GLOB, pattern, glob, synthetic)
    if pattern[-1] == "$":
        return (-priority, not allow, line, _EXACT, pattern[:-1], _NO_GLOB, synthetic)
    return (-priority, not allow, line, _PREFIX, pattern, _NO_GLOB, synthetic)


def _glob_fits(target: str, head: str, middle: tuple[str, ...], tail: str, anchored: bool) -> bool:
    """Does `target`, which starts with `head` and holds `tail`, fit `head*middle...*tail`?"""
    # Leftmost placement of each literal part is enough for `*`-only globs: no backtracking, so a
    # hostile pattern costs one scan of the path per part.
    position = len(head)
    for part in middle:
        position = target.find(part, position)
        if position == -1:
            return False
        position += len(part)
    if anchored:
        return len(target) - len(tail) >= position
    return target.find(tail, position) != -1


def _compile(groups: list[_Group], options: RobotsOptions) -> list[_Entry]:
    whitespace = _WS
    # Groups are contiguous in the file, so their rules concatenated are in file order. An empty
    # value (`Disallow:`) matches nothing and is dropped here.
    rules = [
        (line, allow, stripped)
        for group in groups
        for line, allow, value in group.rules
        if (stripped := value.strip(whitespace))
    ]
    if options.split_values:
        rules = [(line, allow, part) for line, allow, value in rules for part in value.split()]
    fold = options.case_insensitive_paths
    entries: list[_Entry]
    if not fold and _ALL_CANONICAL("\n".join([value for _, _, value in rules])):
        # The usual file: patterns already canonical and mostly plain prefixes, built in one pass.
        entries = [
            (-len(value), not allow, line, _PREFIX, value, _NO_GLOB, False)
            if "*" not in value and value[-1] != "$"
            else _entry(value, len(value), allow, line, False)
            for line, allow, value in rules
        ]
    else:
        entries = [
            _entry(_pattern(value, fold), _written_length(value), allow, line, False)
            for line, allow, value in rules
        ]
    for line, allow, value in rules:
        if allow and "/index.htm" in value:
            directory = _index_html_directory(value)
            if directory is not None:
                pattern = _pattern(directory, fold)
                entries.append(_entry(pattern, _written_length(directory), True, line, True))
    if options.precedence == "longest-match":
        entries.sort()
    else:
        # File order, a line's reading of its index.html directly after the line itself.
        entries.sort(key=lambda entry: (entry[2], entry[6]))
    return entries


def _pattern(value: str, fold: bool) -> str:
    pattern = canonical_pattern(value)
    return pattern.lower() if fold else pattern


def _first_of(entries: list[_Entry], target: str, hit: _Entry | None) -> _Entry | None:
    """The first of `entries` (in rank order) that matches `target` and outranks `hit`, else
    `hit`. The hot loop of matching: the glob tests are inlined, cheapest first."""
    for entry in entries:
        if hit is not None and entry > hit:
            break  # every rule from here on ranks below the one already found
        _, _, _, kind, pattern, glob, _ = entry
        if kind == _PREFIX:
            if target.startswith(pattern):
                return entry
        elif kind == _EXACT:
            if target == pattern:
                return entry
        else:
            head, tail, anchored, middle = glob
            if anchored:
                if not target.endswith(tail):
                    continue
            elif tail not in target:
                continue
            if target.startswith(head) and _glob_fits(target, head, middle, tail, anchored):
                return entry
    return hit


# Below this many prefix rules, testing them in rank order beats building the index.
_INDEX_PREFIXES_OVER: Final = 8


class _AgentView:
    """What a robots.txt says to one agent: the groups that apply and their rules, in the order
    that decides."""

    __slots__ = (
        "_by_pattern",
        "_lengths",
        "_prefixes",
        "_rest",
        "entries",
        "fold_case",
        "groups",
        "specific",
    )

    def __init__(self, groups: list[_Group], specific: bool, options: RobotsOptions) -> None:
        self.groups = groups
        self.specific = specific
        self.fold_case = options.case_insensitive_paths
        self.entries = entries = _compile(groups, options)
        prefix_entries = [entry for entry in entries if entry[3] == _PREFIX]
        # One C-level startswith over every plain prefix rules them all out at once, which is the
        # usual answer; then only the other rules need a look.
        self._prefixes = tuple(entry[4] for entry in prefix_entries)
        self._rest = [entry for entry in entries if entry[3] != _PREFIX]
        # When a prefix rule's rank is its length (longest-match, pattern as written), the best
        # matching prefix is found by probing the target's own prefixes, longest first, instead
        # of testing every rule.
        self._by_pattern: dict[str, _Entry] | None = None
        self._lengths: tuple[int, ...] = ()
        if (
            len(prefix_entries) > _INDEX_PREFIXES_OVER
            and options.precedence == "longest-match"
            and all(-entry[0] == len(entry[4]) for entry in prefix_entries)
        ):
            by_pattern: dict[str, _Entry] = {}
            for entry in prefix_entries:
                by_pattern.setdefault(entry[4], entry)  # sorted, so the first one is the best
            self._by_pattern = by_pattern
            self._lengths = tuple(sorted({len(pattern) for pattern in by_pattern}, reverse=True))

    def first_match(self, target: str) -> _Entry | None:
        """The rule that decides for `target`, or None when none matches."""
        if self.fold_case:
            target = target.lower()
        by_pattern = self._by_pattern
        if by_pattern is None:
            entries = self.entries if target.startswith(self._prefixes) else self._rest
            return _first_of(entries, target, None)
        hit = None
        if target.startswith(self._prefixes):
            size = len(target)
            for length in self._lengths:
                if length <= size:
                    hit = by_pattern.get(target[:length])
                    if hit is not None:
                        break
        return _first_of(self._rest, target, hit)

    def allowed(self, target: str) -> bool:
        entry = self.first_match(target)
        return entry is None or not entry[1]

    def extension_values(self, kind: int) -> list[str]:
        return [
            value
            for group in self.groups
            for _, line_kind, value in group.extensions
            if line_kind == kind
        ]


def _product_token_of(value: str) -> str:
    """A User-agent value cut at its first character outside [A-Za-z_-]: `Googlebot/2.1` gives
    `Googlebot`."""
    match = _AGENT_PREFIX.match(value)
    return match.group() if match else ""


class _Substrings(tuple[str, ...]):
    """User-agent values that name a token when they contain it (the 1994/1996 reading)."""

    __slots__ = ()

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and bool(token) and any(token in value for value in self)


_Names = set[str] | _Substrings


def _is_star(value: str) -> bool:
    # `* anything` still names every robot, as in the reference parser.
    return value[:1] == "*" and (len(value) == 1 or value[1] in _WS)


# --- the public face -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a URL is allowed or not: the deciding line, the group that applied, or why none did."""

    allowed: bool
    reason: Literal["rule", "no-matching-rule", "no-group", "robots-txt", "policy"]
    message: str
    line: int | None = None
    """Number of the deciding line (1-based; CRLF counts as one line end)."""
    text: str | None = None
    """The deciding line as written, without its comment."""
    group: tuple[tuple[int, str], ...] = ()
    """The User-agent lines (number, value) of the groups that applied."""

    def __str__(self) -> str:
        return self.message


class RobotsTxt:
    """A parsed robots.txt. Immutable to its users; it memoises the rules compiled per agent."""

    __slots__ = (
        "_by_groups",
        "_groups",
        "_names",
        "_options",
        "_policy",
        "_sitemaps",
        "_text",
        "_views",
    )

    def __init__(
        self,
        text: str,
        groups: list[_Group],
        sitemaps: list[str],
        options: RobotsOptions,
        policy: Explanation | None = None,
    ) -> None:
        self._text = text
        self._groups = groups
        self._sitemaps = tuple(sitemaps)
        self._options = options
        self._policy = policy
        self._views: dict[Agent, _AgentView] = {}
        # Agents that land on the same groups share one compiled view: most robots.txt files name
        # few robots, so most agents fall to the same `*` groups.
        self._by_groups: dict[tuple[bool, tuple[int, ...]], _AgentView] = {}
        self._names: list[tuple[bool, _Names]] | None = None

    @classmethod
    def parse(cls, body: bytes | str, **options: object) -> RobotsTxt:
        """Parse a robots.txt body; never raises for any bytes. Options: see RobotsOptions."""
        parsed_options = _options_from(options)
        text = _prepare(body)
        groups, sitemaps = _scan(text)
        return cls(text, groups, sitemaps, parsed_options)

    @classmethod
    def allow_all(cls, reason: str) -> RobotsTxt:
        """Rules for an origin whose robots.txt is unavailable (4xx): everything allowed."""
        return cls._policy_only(True, f"allowed: {reason}")

    @classmethod
    def disallow_all(cls, reason: str) -> RobotsTxt:
        """Rules for an origin whose robots.txt is unreachable (5xx, network error)."""
        return cls._policy_only(False, f"disallowed: {reason}")

    @classmethod
    def _policy_only(cls, allowed: bool, message: str) -> RobotsTxt:
        policy = Explanation(allowed=allowed, reason="policy", message=message)
        return cls("", [], [], _DEFAULT_OPTIONS, policy)

    @property
    def options(self) -> RobotsOptions:
        return self._options

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """Sitemap URLs in file order; they belong to no group."""
        return self._sitemaps

    def can_fetch(self, url: str, agent: Agent) -> bool:
        """May `agent` (a product token, or several) fetch `url` (a full URL, or a path with
        query)?"""
        target = match_target(url)
        if target == "/robots.txt":
            return True
        if self._policy is not None:
            return self._policy.allowed
        view = self._views.get(agent) if isinstance(agent, str) else None
        if view is None:
            view = self._view(agent)
        return view.allowed(target)

    def explain(self, url: str, agent: Agent) -> Explanation:
        """The decision for `url` with its grounds: the deciding line, or why nothing applied."""
        target = match_target(url)
        if target == "/robots.txt":
            return Explanation(True, "robots-txt", "allowed: /robots.txt itself is always allowed")
        if self._policy is not None:
            return self._policy
        view = self._view(agent)
        group = tuple(line for g in view.groups for line in g.agents)
        if not view.groups:
            names = ", ".join(_tokens(agent)) or "''"
            return Explanation(
                True,
                "no-group",
                f"allowed: no group names {names} and there is no 'User-agent: *' group",
            )
        whose = "; ".join(f"line {number}: User-agent: {value}" for number, value in group)
        entry = view.first_match(target)
        if entry is None:
            return Explanation(
                True,
                "no-matching-rule",
                f"allowed: no rule of the group ({whose}) matches {target}",
                group=group,
            )
        _, disallow, line, _, _, _, synthetic = entry
        text = self._line_text(line)
        verdict = "disallowed" if disallow else "allowed"
        how = ", read also as allowing its directory" if synthetic else ""
        return Explanation(
            not disallow,
            "rule",
            f"{verdict} by line {line} {text!r}{how} in the group ({whose})",
            line=line,
            text=text,
            group=group,
        )

    def crawl_delay(self, agent: Agent) -> float | None:
        """Seconds between requests the agent's group asks for; the largest if it says several."""
        delays = [parse_crawl_delay(v) for v in self._view(agent).extension_values(_CRAWL_DELAY)]
        valid = [delay for delay in delays if delay is not None]
        return max(valid) if valid else None

    def request_rates(self, agent: Agent) -> tuple[RequestRate, ...]:
        """Every valid Request-rate line of the agent's group, each with its window if any."""
        rates = (parse_request_rate(v) for v in self._view(agent).extension_values(_REQUEST_RATE))
        return tuple(rate for rate in rates if rate is not None)

    def request_rate(self, agent: Agent, now: float | None = None) -> RequestRate | None:
        """The strictest Request-rate in force at `now` (epoch seconds), or over the whole day when
        `now` is None."""
        rates = self.request_rates(agent)
        if now is not None:
            second = second_of_day(now)
            rates = tuple(rate for rate in rates if rate.applies_at(second))
        return max(rates, key=lambda rate: rate.interval, default=None)

    def visit_time(self, agent: Agent) -> tuple[TimeWindow, ...]:
        """The UTC windows in which the agent may visit; empty means any time."""
        windows = (parse_visit_time(v) for v in self._view(agent).extension_values(_VISIT_TIME))
        return tuple(window for window in windows if window is not None)

    def _view(self, agent: Agent) -> _AgentView:
        key: Agent = agent if isinstance(agent, str) else tuple(agent)
        view = self._views.get(key)
        if view is None:
            view = self._select(_tokens(agent))
            self._views[key] = view
        return view

    def _select(self, tokens: tuple[str, ...]) -> _AgentView:
        lowered = [token.lower() for token in tokens]
        specific: list[int] = []
        star: list[int] = []
        for index, (names_all, names) in enumerate(self._group_names()):
            if any(token in names for token in lowered):
                specific.append(index)
            elif names_all:
                star.append(index)
        key = (True, tuple(specific)) if specific else (False, tuple(star))
        view = self._by_groups.get(key)
        if view is None:
            groups = [self._groups[index] for index in key[1]]
            view = self._by_groups[key] = _AgentView(groups, key[0], self._options)
        return view

    def _group_names(self) -> list[tuple[bool, _Names]]:
        """Per group: does it name every robot (`*`), and which names does it give."""
        if self._names is None:
            substring = self._options.agent_match == "substring"
            self._names = [
                (
                    any(_is_star(value) for _, value in group.agents),
                    _Substrings(value.lower() for _, value in group.agents if not _is_star(value))
                    if substring
                    else {_product_token_of(v).lower() for _, v in group.agents if not _is_star(v)},
                )
                for group in self._groups
            ]
        return self._names

    def _line_text(self, number: int) -> str:
        lines = self._text.split("\n")
        line = lines[number - 1] if 0 < number <= len(lines) else ""
        return line.partition("#")[0].strip(_WS)

    def __repr__(self) -> str:
        if self._policy is not None:
            return f"RobotsTxt({self._policy.message!r})"
        rules = sum(len(group.rules) for group in self._groups)
        return (
            f"RobotsTxt(groups={len(self._groups)}, rules={rules}, sitemaps={len(self._sitemaps)})"
        )


def _tokens(agent: Agent) -> tuple[str, ...]:
    return (agent,) if isinstance(agent, str) else tuple(agent)


def _options_from(options: dict[str, object]) -> RobotsOptions:
    if not options:
        return _DEFAULT_OPTIONS
    known = set(RobotsOptions.__dataclass_fields__)
    unknown = sorted(set(options) - known)
    if unknown:
        raise InvalidRobotsOptionError(
            f"unknown robots option {', '.join(unknown)}; "
            f"expected one of {', '.join(sorted(known))}"
        )
    return RobotsOptions(**options)  # type: ignore[arg-type]
