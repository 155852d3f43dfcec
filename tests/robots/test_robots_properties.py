"""Properties of the robots.txt engine: it never raises, and it agrees with Google's parser.

The oracle is fast-robotstxt 1.1.0 (a test-only dependency): a fork of Google's reference parser
that parses URLs with the WHATWG parser ada and percent-DECODES everything before matching. Where
RFC 9309 / SPEC and that build part ways, the disagreement has a name here:

- "robots.txt-itself": RFC 9309 2.2.2, `/robots.txt` is always allowed; the oracle applies rules.
- "reserved-escape": a percent-escape of a reserved or other non-unreserved character (`%2F`,
  `%3F`, `%25`, `%20`, the sub-delimiters `%21 %24 %26 %27 %28 %29 %2A %2B %2C %3B %3D`, `%3A`,
  `%40`...) in the URL or a rule. SPEC section 4 and RFC 9309 section 2.2.2: never decode those,
  since a reserved character and its escape are different URIs (RFC 3986 section 2.2); the oracle
  decodes them, so for it `%2F` is `/` and `%21` is `!`. Google's own parser (google/robotstxt,
  robots.cc) decodes nothing and compares bytes, so it agrees with us that `!` and `%21` differ;
  it differs from both of us on `*` and `$`: RFC 9309 section 2.2.3 has the rule's `%2A` and
  `%24` match the URL's `*` and `$`, which we and the oracle do and robots.cc does not (nor does
  it let a `$` inside a rule, a literal `$`, meet the URL's `%24`).
- "lowercase-escape": a URL escape written in lower case (`%c3%a9`, `%7e`) and a rule holding a
  letter a-f outside its escapes. We compare escapes case-insensitively (RFC 3986 6.2.2.1: `%c3`
  is `%C3`), so a rule's `a` never meets the hex digit of `%a9`; the oracle matches the URL's
  escapes as written, so `Disallow: /*a` blocks `/%c3%a9` but not `/%C3%A9`. The crawl never
  asks about such a URL: its normal URLs write escapes in upper case (crawler/urls.py).
- "empty-query": a URL ending in `?`; the oracle's URL parser drops the empty query.
- "backslash": a `\\` in the URL; the oracle's browser-style parser reads it as `/`, RFC 3986 does
  not, so for us it is the character %5C (seen in the corpus benchmark, not generated here).

`test_agrees_with_google` generates none of these triggers, so any disagreement fails.
`test_disagreements_are_named` may generate them and fails on a disagreement the classifier cannot
name. The example tests at the bottom pin each named case down with the answers of both sides.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robotstxt import RobotsMatcher
from robotstxt.robots import _lib

from crawler.robots.txt import MAX_LINE_BYTES, RobotsTxt

_MATCHER = RobotsMatcher()


def google_allows(body: bytes, agent: str, url: str) -> bool:
    """The oracle's answer, from the C library on raw bytes (the Python wrapper takes str)."""
    ub, ab = url.encode(), agent.encode()
    return bool(
        _lib.robots_allowed_by_robots(_MATCHER._ptr, body, len(body), ab, len(ab), ub, len(ub))
    )


# --- (a) never raises ----------------------------------------------------------------------------

_FRAGMENTS = (
    "user-agent",
    "User-Agent",
    "useragent",
    "disallow",
    "Disallow",
    "dissallow",
    "allow",
    "sitemap",
    "crawl-delay",
    "request-rate",
    "visit-time",
    "foobot",
    "*",
    "$",
    "#",
    "%",
    "%2",
    "%2F",
    "%zz",
    "%C3%A9",
    ":",
    " ",
    "\t",
    "/",
    "?",
    ".",
    "..",
    "index.html",
    "0600-0845",
    "1/5",
    "10",
    "-1",
    "\r",
    "\n",
    "\r\n",
    "\x00",
    "\xef\xbb\xbf",
    "\ufeff",
    "é",
    "日本",
    "\U0001f916",
    "\udcff",
    "\ud800",
)


def _lines_of(fragments: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.lists(
        st.lists(st.sampled_from(fragments) | st.text(max_size=8), max_size=8).map("".join),
        max_size=30,
    ).map("\n".join)


robots_like_lines = _lines_of(_FRAGMENTS)
# Without surrogate escapes (U+DC80-U+DCFF), which a str body does not read as the bytes they
# stand for: see test_robots.py::test_str_body_with_surrogate_escapes_reads_as_its_bytes.
_PLAIN_TEXT_LINES = _lines_of(tuple(f for f in _FRAGMENTS if f != "\udcff"))


def _to_bytes(text: str) -> bytes:
    # Lone surrogates stand for raw bytes (or survive as they are), so no text is unencodable.
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


# Numbers for the extension lines, long digit runs included: a value is read lazily, on the first
# question, and a number too big for int() or float() must still be ignored, not raised.
_NUMBERS = st.sampled_from(("0", "1", "5", "10", "0.5", ".5", "-1", "1e3", "inf", "nan")) | (
    st.integers(1, 5000).map(lambda digits: "9" * digits)
)
_extension_lines = st.tuples(
    st.sampled_from(("Crawl-delay: ", "Request-rate: ", "Visit-time: ")),
    _NUMBERS,
    st.sampled_from(("", "/", " / ", "-")),
    _NUMBERS,
    st.sampled_from(("", "s", "m", "h", "d", "x")),
    st.sampled_from(("", " 0600-0845", " 2200-0400", " 0000-2400", " 9999-0000")),
).map("".join)
_extension_bodies = st.lists(_extension_lines, min_size=1, max_size=4).map(
    lambda lines: "User-agent: *\n" + "\n".join(lines)
)

robots_bodies = (
    st.binary(max_size=4096)
    | robots_like_lines.map(_to_bytes)
    | robots_like_lines
    | st.tuples(st.binary(max_size=4), robots_like_lines.map(_to_bytes)).map(b"".join)
    | _extension_bodies
)
_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "agent_match": st.sampled_from(["rfc", "substring"]),
        "precedence": st.sampled_from(["longest-match", "first-match"]),
        "case_insensitive_paths": st.booleans(),
        "split_values": st.booleans(),
    },
)
_AGENTS = (
    st.sampled_from(["FooBot", "foobot", "*", "", "MJ12bot", "Foo Bot"])
    | st.text(max_size=12)
    | st.lists(st.text(max_size=8), max_size=3)
)
_URLS = (
    st.text(max_size=60)
    | st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=5), max_size=10).map(
        lambda parts: "http://example.com/" + "".join(parts)
    )
    | st.sampled_from(["", "/", "/robots.txt", "//host", "http://", "?", "#", "%", "http://x/%"])
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=robots_bodies,
    options=_OPTIONS,
    url=_URLS,
    agent=_AGENTS,
    now=st.none() | st.floats(min_value=-1e12, max_value=1e12, allow_nan=False),
)
def test_never_raises(
    body: bytes | str,
    options: dict[str, object],
    url: str,
    agent: str | list[str],
    now: float | None,
) -> None:
    robots = RobotsTxt.parse(body, **options)
    allowed = robots.can_fetch(url, agent)
    explanation = robots.explain(url, agent)
    assert explanation.allowed is allowed
    assert explanation.reason in {"rule", "no-matching-rule", "no-group", "robots-txt"}
    if explanation.reason == "rule":
        assert explanation.line is not None
        assert explanation.text is not None
    str(explanation)
    delay = robots.crawl_delay(agent)
    assert delay is None or delay >= 0
    rates = robots.request_rates(agent)
    rate = robots.request_rate(agent, now)
    assert rate is None or rate in rates
    for window in robots.visit_time(agent):
        str(window)
    repr(robots)
    assert all(isinstance(sitemap, str) for sitemap in robots.sitemaps)


@settings(max_examples=200, deadline=None)
@given(body=_PLAIN_TEXT_LINES, url=_URLS, agent=st.sampled_from(["FooBot", "foobot", "*", ""]))
def test_text_and_its_bytes_read_the_same(body: str, url: str, agent: str) -> None:
    """A str body is its UTF-8 bytes; one token is the same as a list of that one token."""
    from_text = RobotsTxt.parse(body)
    from_bytes = RobotsTxt.parse(_to_bytes(body))
    assert from_text.can_fetch(url, agent) is from_bytes.can_fetch(url, agent)
    assert from_text.explain(url, agent) == from_bytes.explain(url, [agent])
    assert from_text.crawl_delay(agent) == from_bytes.crawl_delay([agent])
    assert from_text.sitemaps == from_bytes.sitemaps


@settings(max_examples=100, deadline=None)
@given(body=st.binary(max_size=256), padding=st.integers(min_value=0, max_value=3))
def test_never_raises_around_the_line_cap(body: bytes, padding: int) -> None:
    """Lines longer than MAX_LINE_BYTES, multi-byte characters cut at the cap, a NUL after it."""
    long_line = b"Disallow: /" + "é".encode() * (MAX_LINE_BYTES // 2 - padding) + b"\x00" + body
    robots = RobotsTxt.parse(b"User-agent: *\n" + long_line + b"\n" + body)
    robots.can_fetch("/é", "FooBot")
    robots.explain("/é", "FooBot")


# --- (b) differential against Google's parser ----------------------------------------------------

_HOST = "http://example.com"

# Path pieces shared by rules and URLs. Their escapes are of unreserved characters (both sides
# decode them) or of the UTF-8 bytes of non-ASCII characters (both sides compare those octets).
_SEGMENTS = (
    "a",
    "b",
    "ab",
    "foo",
    "bar",
    "x.html",
    "index.html",
    "index.htm",
    "-",
    "_",
    "~",
    ".",
    "..",
    "$",
    "=",
    "&",
    # The other sub-delimiters and `:` `@`, as characters: both sides compare them as they are.
    "!",
    "'",
    "(",
    ")",
    "+",
    ",",
    ";",
    ":",
    "@",
    "%7E",
    "%7e",
    "%41",
    "%61",
    "%2D",
    "%5F",
    "%2E",
    "é",
    "日本",
    "%C3%A9",
    "%c3%a9",
    "ü",
    " ",
    "**",
)
# Escapes of reserved and other non-unreserved ASCII characters: the "reserved-escape" trigger.
# Every sub-delimiter's, `:`'s and `@`'s is here, the ones with a letter in both cases.
_RESERVED_ESCAPES = (
    "%2F",
    "%2f",
    "%3F",
    "%25",
    "%20",
    *(f"%{ord(char):02X}" for char in "!$&'()*+,;=:@"),
    *(f"%{ord(char):02x}" for char in "*+,;=:"),
)

_UA_KEYS = ("User-agent", "user-agent", "USER-AGENT", "useragent", "User agent")
_RULE_KEYS = (
    "Allow",
    "allow",
    "ALLOW",
    "Disallow",
    "disallow",
    "DISALLOW",
    "Disallow",
    "dissallow",
    "dissalow",
    "disalow",
    "diasllow",
    "disallaw",
)
_UA_VALUES = (
    "FooBot",
    "FooBot",
    "foobot",
    "FOOBOT",
    "*",
    "*",
    "* ignored",
    "BarBot",
    "FooBot/1.2",
    "FooBotX",
    "Foo",
    "Foo-Bot",
)
_OTHER_LINES = (
    "",
    "# a comment",
    "#Disallow: /",
    "Sitemap: http://example.com/sitemap.xml",
    "Crawl-delay: 5",
    "Request-rate: 1/5",
    "Visit-time: 0600-0845",
    "foo: bar",
    "dsallow: /",
    "Disallow /a /b",
    "Disallow",
    "   ",
)
_SEPARATORS = (":", ": ", ": ", " : ", " :", ":\t", "  :  ")
_AGENT_TOKENS = ("FooBot", "FooBot", "FooBot", "foobot", "BarBot", "Foo", "Foo-Bot")


def _cases(segments: tuple[str, ...], *, triggers: bool) -> st.SearchStrategy[tuple[bytes, str]]:
    """(robots.txt body, URL) pairs. Most URLs are built from one of the file's own patterns, so
    rules match often; with `triggers` the inputs may hold the named divergences' triggers."""
    segment = st.sampled_from(segments)
    pattern_piece = st.sampled_from(("/", "/", "*", "?")) | segment
    pattern = st.tuples(
        st.sampled_from(("/", "/", "/", "/", "*", "/*", "")),
        st.lists(pattern_piece, max_size=4),
        st.sampled_from(("", "", "$")),
    ).map(lambda t: t[0] + "".join(t[1]) + t[2])
    # A rule line and its pattern; the reference parser forgives a missing colon between exactly
    # two words.
    rule_line = st.tuples(
        st.sampled_from(("", "", " ")),
        st.sampled_from(_RULE_KEYS),
        st.sampled_from((*_SEPARATORS, " ")),
        pattern,
        st.sampled_from(("", "", "", " # note", "#x")),
    ).map(lambda t: ("".join(t), t[3]))
    other_line = st.sampled_from(_OTHER_LINES).map(lambda line: (line, None))
    ua_line = st.tuples(
        st.sampled_from(("", "", " ")),
        st.sampled_from(_UA_KEYS),
        st.sampled_from((*_SEPARATORS, " ")),
        st.sampled_from(_UA_VALUES),
    ).map(lambda t: ("".join(t), None))
    group_line = rule_line | rule_line | other_line
    agents = st.lists(ua_line, min_size=1, max_size=2)
    group_lines = st.lists(group_line, min_size=1, max_size=5)
    small_group = st.tuples(agents, group_lines)
    # More than 16 rules, so the engine keeps the group's plain prefix rules in a dict; the filler
    # rules meet no generated URL (no segment holds a `z`) and no URL is made from them.
    fillers = [(f"Disallow: /zz{n}/", None) for n in range(17)]
    large_group = st.tuples(agents, group_lines.map(lambda lines: fillers + lines))
    group = small_group | small_group | small_group | large_group
    url_piece = st.sampled_from(("/", "/", "*")) | segment
    filler = st.lists(url_piece, max_size=2).map("".join)
    query = st.lists(st.sampled_from(("q", "=", "1", "&")) | segment, max_size=3).map("".join)
    endings = st.sampled_from(("\n", "\n", "\n", "\r\n", "\r"))

    @st.composite
    def build(draw: st.DrawFn) -> tuple[bytes, str]:
        lines = draw(st.lists(group_line, max_size=1))
        for agents, rules in draw(st.lists(group, min_size=1, max_size=4)):
            lines += agents + rules
        bom = draw(st.sampled_from(("", "", "", "\ufeff")))
        body = bom + "".join(line + draw(endings) for line, _ in lines)

        patterns = [value for _, value in lines if value is not None]
        choice = draw(st.integers(0, len(patterns) + 1))
        # About one URL in sixteen is robots.txt itself (integers() would favour its bounds).
        if triggers and draw(st.sampled_from(range(16))) == 7:
            path = "/robots.txt"
        elif choice < len(patterns):
            # A URL this pattern can match: each `*` filled, the `$` anchor dropped, maybe more.
            stars = patterns[choice].removesuffix("$").split("*")
            path = stars[0] + "".join(draw(filler) + part for part in stars[1:])
            path += draw(filler) if draw(st.booleans()) else ""
        else:
            path = draw(st.lists(url_piece, max_size=6).map("".join))
        if draw(st.booleans()):
            path += "?" + draw(query)
        # A URL parser strips spaces that end the URL; a link extractor never hands one over.
        path = path.rstrip(" ")
        if not triggers:  # escapes as normal URLs write them: no "lowercase-escape" trigger
            path = _ESCAPE_TEXT.sub(lambda escape: escape.group(0).upper(), path)
        if not triggers and path.endswith("?"):
            path += "q"
        fragment = draw(st.sampled_from(("", "", "", "#frag", "#a?b")))
        return body.encode(), _HOST + "/" + path.lstrip("/") + fragment

    return build()


def _report(body: bytes, agent: str, url: str, google: bool, ours: bool) -> str:
    explanation = RobotsTxt.parse(body).explain(url, agent)
    return (
        f"robots.txt and Google's parser disagree\n--- robots.txt ---\n{body!r}\n"
        f"--- agent {agent!r}, url {url!r}\n"
        f"google: {'allowed' if google else 'disallowed'}; "
        f"ours: {'allowed' if ours else 'disallowed'}\n"
        f"explain(): {explanation}"
    )


_DIFFERENTIAL = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@_DIFFERENTIAL
@given(case=_cases(_SEGMENTS, triggers=False), agent=st.sampled_from(_AGENT_TOKENS))
def test_agrees_with_google(case: tuple[bytes, str], agent: str) -> None:
    """No named trigger can be generated here, so every disagreement is a failure."""
    body, url = case
    assert classify_disagreement(body, url) is None, "the generator produced a named trigger"
    ours = RobotsTxt.parse(body).can_fetch(url, agent)
    google = google_allows(body, agent, url)
    assert ours == google, _report(body, agent, url, google, ours)


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")


def _has_reserved_escape(data: bytes) -> bool:
    """A `%XX` of an ASCII character outside the unreserved set: kept by SPEC, decoded by the
    oracle."""
    for match in _ESCAPE.finditer(data):
        code = int(match.group(1), 16)
        if code < 0x80 and chr(code) not in _UNRESERVED:
            return True
    return False


_ESCAPE_TEXT = re.compile(r"%[0-9A-Fa-f]{2}")
_LOWERCASE_ESCAPE = re.compile(r"%(?:[a-f][0-9A-Fa-f]|[0-9A-F][a-f])")
_RULE_LINE = re.compile(r"\s*([A-Za-z]+)\s*:?\s*(.*)")
_RULE_KEYS_LOWER = frozenset(key.lower() for key in _RULE_KEYS)


def _has_lowercase_escape_meeting_a_letter(body: bytes, url: str) -> bool:
    """A URL escape in lower case, and a rule with a letter a-f outside its own escapes."""
    if not _LOWERCASE_ESCAPE.search(url):
        return False
    for line in re.split(r"\r\n|\r|\n", body.decode("utf-8", "replace")):
        match = _RULE_LINE.match(line.partition("#")[0])
        if (
            match
            and match.group(1).lower() in _RULE_KEYS_LOWER
            and re.search("[a-f]", _ESCAPE_TEXT.sub("", match.group(2)))
        ):
            return True
    return False


def classify_disagreement(body: bytes, url: str) -> str | None:
    """The documented divergence these inputs can trigger, read from their text alone; None when
    they hold no trigger. When several are present the first in this order names the case."""
    without_fragment = url.partition("#")[0]
    if without_fragment == _HOST + "/robots.txt":
        return "robots.txt-itself"
    if _has_reserved_escape(body) or _has_reserved_escape(url.encode()):
        return "reserved-escape"
    if _has_lowercase_escape_meeting_a_letter(body, without_fragment):
        return "lowercase-escape"
    if without_fragment.endswith("?"):
        return "empty-query"
    if "\\" in without_fragment:
        return "backslash"
    return None


@_DIFFERENTIAL
@given(
    case=_cases(_SEGMENTS + _RESERVED_ESCAPES, triggers=True),
    agent=st.sampled_from(_AGENT_TOKENS),
)
def test_disagreements_are_named(case: tuple[bytes, str], agent: str) -> None:
    """With the triggers in play, every disagreement must be one of the documented cases."""
    body, url = case
    ours = RobotsTxt.parse(body).can_fetch(url, agent)
    google = google_allows(body, agent, url)
    if ours != google:
        assert classify_disagreement(body, url) is not None, "unclassified: " + _report(
            body, agent, url, google, ours
        )


# --- the named divergences, one example each -----------------------------------------------------


def _both(body: bytes, url: str, agent: str = "FooBot") -> tuple[bool, bool]:
    """(Google's answer, ours)."""
    return google_allows(body, agent, url), RobotsTxt.parse(body).can_fetch(url, agent)


def test_divergence_robots_txt_itself() -> None:
    body = b"User-agent: *\nDisallow: /\n"
    url = _HOST + "/robots.txt"
    assert classify_disagreement(body, url) == "robots.txt-itself"
    assert _both(body, url) == (False, True)
    assert RobotsTxt.parse(body).explain(url, "FooBot").reason == "robots-txt"


@pytest.mark.parametrize(
    ("body", "url", "google", "ours"),
    [
        # The rule names a literal %2F inside one segment; the URL has two segments.
        (b"User-agent: *\nDisallow: /a%2Fb\n", _HOST + "/a/b", False, True),
        (b"User-agent: *\nDisallow: /a/b\n", _HOST + "/a%2Fb", False, True),
        # An encoded '?' is part of the path, not the start of a query.
        (b"User-agent: *\nDisallow: /a%3Fb\n", _HOST + "/a?b", False, True),
        (b"User-agent: *\nDisallow: /a%25\n", _HOST + "/a%", False, True),
    ],
    ids=["rule-%2F", "url-%2F", "rule-%3F", "rule-%25"],
)
def test_divergence_reserved_escape(body: bytes, url: str, google: bool, ours: bool) -> None:
    assert classify_disagreement(body, url) == "reserved-escape"
    assert _both(body, url) == (google, ours)


@pytest.mark.parametrize("char", list("!&'()+,;=:@$*"))
@pytest.mark.parametrize("start", ["/a", "/q?k="], ids=["path", "query"])
def test_divergence_reserved_escape_sub_delims(char: str, start: str) -> None:
    """Each sub-delimiter, `:` and `@`, in the path and in the query: as a character in the rule and
    the URL, and as an escape in both, the two sides agree; a character on one side and its escape
    on the other meet for the oracle, which decodes, and for us only for `*` and `$` (RFC 9309
    section 2.2.3: a rule's `%2A` and `%24` match the URL's `*` and `$`)."""
    escape = f"%{ord(char):02X}"

    def case(rule: str, url: str) -> tuple[bytes, str]:
        return f"User-agent: *\nDisallow: {start}{rule}b\n".encode(), f"{_HOST}{start}{url}b"

    assert classify_disagreement(*case(char, char)) is None
    assert _both(*case(char, char)) == (False, False)
    assert _both(*case(escape, escape.lower())) == (False, False)
    ours = char not in "*$"
    for body, url in (case(char, escape), case(escape, char)):
        assert classify_disagreement(body, url) == "reserved-escape"
        assert _both(body, url) == (False, ours)


@pytest.mark.parametrize(
    ("body", "url", "google", "ours"),
    [
        # The oracle drops the '?', so `/a$` matches; for us the target is `/a?`.
        (b"User-agent: *\nDisallow: /a$\n", _HOST + "/a?", False, True),
        (b"User-agent: *\nDisallow: /a$\n", _HOST + "/a?#frag", False, True),
        # For us the pattern `/a?` matches the target `/a?`; the oracle matches against `/a`.
        (b"User-agent: *\nDisallow: /a?\n", _HOST + "/a?", True, False),
    ],
    ids=["anchor", "anchor-with-fragment", "question-mark-rule"],
)
def test_divergence_empty_query(body: bytes, url: str, google: bool, ours: bool) -> None:
    assert classify_disagreement(body, url) == "empty-query"
    assert _both(body, url) == (google, ours)


@pytest.mark.parametrize(
    ("body", "url", "google", "ours"),
    [
        # The oracle parses URLs as a browser does (WHATWG), reading `\` as `/`; RFC 3986 has no
        # such rule, so for us `\` is the character %5C, in the URL and in the rule alike.
        (b"User-agent: *\nDisallow: /a/b\n", _HOST + "/a\\b", False, True),
        (b"User-agent: *\nDisallow: /a\\b\n", _HOST + "/a\\b", True, False),
    ],
    ids=["url-backslash", "rule-and-url-backslash"],
)
def test_divergence_backslash(body: bytes, url: str, google: bool, ours: bool) -> None:
    assert classify_disagreement(body, url) == "backslash"
    assert _both(body, url) == (google, ours)


@pytest.mark.parametrize(
    ("body", "url", "google", "ours"),
    [
        # For us `%c3%a9` is `%C3%A9`: no `a` in it. The oracle meets the `a` of `%a9`.
        (b"User-agent: *\nDisallow: /*a\n", _HOST + "/%c3%a9", False, True),
        (b"User-agent: *\nDisallow: /*e\n", _HOST + "/%7e", False, True),
        # Written in upper case, as the crawl's normal URLs are, both sides agree.
        (b"User-agent: *\nDisallow: /*a\n", _HOST + "/%C3%A9", True, True),
    ],
    ids=["letter-in-escape", "letter-in-unreserved-escape", "upper-case-agrees"],
)
def test_divergence_lowercase_escape(body: bytes, url: str, google: bool, ours: bool) -> None:
    expected = "lowercase-escape" if google != ours else None
    assert classify_disagreement(body, url) == expected
    assert _both(body, url) == (google, ours)


def test_classifier_names_nothing_without_a_trigger() -> None:
    body = b"User-agent: *\nDisallow: /%7Ex/%C3%A9*$\n"
    assert classify_disagreement(body, _HOST + "/~x/%c3%a9?q=1#x?") is None
    assert classify_disagreement(body, _HOST + "/robots.txt?x") is None
    assert _both(body, _HOST + "/~x/%c3%a9?q=1#x?") == (False, False)
    # The agreeing generator's case that found "lowercase-escape", escapes now in upper case.
    found = b"User-agent:FooBot\nAllow:/\nAllow:/*a\n\nUser-agent:FooBot\nDisallow:/*\n"
    assert classify_disagreement(found, _HOST + "/%C3%A9") is None
    assert classify_disagreement(found, _HOST + "/%c3%a9") == "lowercase-escape"
