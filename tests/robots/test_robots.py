"""The pure robots.txt engine, table by table (SPEC sections 1 to 5).

The conformance vectors (test_robots_conformance.py) cover the reference parser's corners; these
tables cover what the engine adds: group bookkeeping, the legacy options, explain(), policies, the
size caps, the rate and time extensions, fetch outcomes and product tokens.
"""

from __future__ import annotations

import pytest

from crawler.errors import ConfigError, InvalidProductTokenError, InvalidRobotsOptionError
from crawler.robots.outcome import MAX_REDIRECTS, FetchDecision, RobotsPolicy, robots_fetch_decision
from crawler.robots.rates import DAY_SECONDS, RequestRate, TimeWindow
from crawler.robots.txt import (
    MAX_BODY_BYTES,
    MAX_LINE_BYTES,
    Explanation,
    RobotsOptions,
    RobotsTxt,
    product_token_from_user_agent,
    validate_product_token,
)

AGENT = "FooBot"
HOUR = 3600
# An epoch time at midnight UTC (2024-01-01): `MIDNIGHT + 7 * HOUR` is 07:00 UTC that day.
MIDNIGHT = 1_704_067_200


def allowed(body: str | bytes, url: str, agent: str = AGENT, **options: object) -> bool:
    return RobotsTxt.parse(body, **options).can_fetch(url, agent)


def explain(body: str | bytes, url: str, agent: str = AGENT, **options: object) -> Explanation:
    return RobotsTxt.parse(body, **options).explain(url, agent)


# --- groups --------------------------------------------------------------------------------------

MERGED = """\
User-agent: FooBot
Disallow: /a

User-agent: *
Disallow: /b

User-agent: foobot
Disallow: /c
"""

GROUP_CASES = [
    # (id, robots.txt, agent, url, allowed)
    ("merged-first", MERGED, "FooBot", "/a", False),
    ("merged-second", MERGED, "FooBot", "/c", False),
    ("merged-star-not-inherited", MERGED, "FooBot", "/b", True),
    ("merged-other-agent-gets-star", MERGED, "BarBot", "/b", False),
    ("merged-other-agent-not-specific", MERGED, "BarBot", "/a", True),
    ("agent-case-insensitive", "User-agent: FOOBOT\nDisallow: /\n", "foobot", "/x", False),
    ("agent-version-cut", "User-agent: FooBot/2.1\nDisallow: /\n", "FooBot", "/x", False),
    ("agent-not-prefix", "User-agent: FooBotX\nDisallow: /\n", "FooBot", "/x", True),
    ("star-with-trailing-words", "User-agent: * everyone\nDisallow: /\n", "FooBot", "/x", False),
    (
        "several-agents-one-group",
        "User-agent: BarBot\nUser-agent: FooBot\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
    ),
    ("blank-lines-mean-nothing", "User-agent: FooBot\n\n\nDisallow: /x\n", "FooBot", "/x", False),
    (
        "blank-line-between-agents",
        "User-agent: BarBot\n\nUser-agent: FooBot\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
    ),
    (
        "rule-then-agent-starts-group",
        "User-agent: FooBot\nDisallow: /x\nUser-agent: BarBot\nDisallow: /y\n",
        "FooBot",
        "/y",
        True,
    ),
    (
        "sitemap-does-not-close-group",
        "User-agent: FooBot\nSitemap: http://x/s.xml\nUser-agent: BarBot\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
    ),
    (
        "crawl-delay-does-not-close-group",
        "User-agent: FooBot\nCrawl-delay: 5\nUser-agent: BarBot\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
    ),
    (
        "unknown-line-does-not-close-group",
        "User-agent: FooBot\nNoindex: /y\nUser-agent: BarBot\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
    ),
    (
        "sitemap-inside-rules-keeps-group",
        "User-agent: FooBot\nDisallow: /x\nSitemap: http://x/s.xml\nDisallow: /y\n",
        "FooBot",
        "/y",
        False,
    ),
    ("rules-before-any-agent", "Disallow: /\nUser-agent: *\nAllow: /x\n", "FooBot", "/y", True),
    ("only-rules-no-agent", "Disallow: /\nAllow: /x\n", "FooBot", "/y", True),
    (
        "empty-specific-group-allows-all",
        "User-agent: *\nDisallow: /\n\nUser-agent: FooBot\n",
        "FooBot",
        "/x",
        True,
    ),
    ("empty-disallow-matches-nothing", "User-agent: *\nDisallow:\n", "FooBot", "/x", True),
    ("comment-only-value", "User-agent: *\nDisallow: # /x\n", "FooBot", "/x", True),
    ("missing-colon", "User-agent FooBot\nDisallow /x\n", "FooBot", "/x", False),
    ("misspelt-keys", "useragent: FooBot\ndissallow: /x\n", "FooBot", "/x", False),
    ("key-case-and-spacing", "USER-AGENT :FooBot\n  DISALLOW  :  /x  \n", "FooBot", "/x", False),
]


@pytest.mark.parametrize(
    ("body", "agent", "url", "expected"),
    [case[1:] for case in GROUP_CASES],
    ids=[case[0] for case in GROUP_CASES],
)
def test_groups(body: str, agent: str, url: str, expected: bool) -> None:
    assert allowed(body, url, agent) is expected


def test_merged_groups_are_named_in_explain() -> None:
    explanation = explain(MERGED, "/c")
    assert explanation.group == ((1, "FooBot"), (7, "foobot"))
    assert (explanation.line, explanation.text) == (8, "Disallow: /c")


def test_several_tokens_combine_their_groups() -> None:
    body = "User-agent: FooBot\nDisallow: /a\n\nUser-agent: BarBot\nDisallow: /b\n"
    robots = RobotsTxt.parse(body)
    assert not robots.can_fetch("/a", ["FooBot", "BarBot"])
    assert not robots.can_fetch("/b", ("FooBot", "BarBot"))
    assert robots.can_fetch("/b", ["FooBot"])


# --- precedence and matching ---------------------------------------------------------------------

# More than 16 rules, which none of the URLs below meets: such a file keeps its plain prefix rules
# in a dict (crawler.robots.rules.AgentView), and each question is asked of both shapes.
MANY_RULES = "".join(f"Disallow: /zz{n}/\n" for n in range(20))

MATCH_CASES = [
    # (id, robots.txt rules for *, url, allowed)
    ("longest-wins-allow", "Disallow: /\nAllow: /public\n", "/public/x", True),
    ("longest-wins-disallow", "Allow: /p\nDisallow: /public\n", "/public/x", False),
    ("tie-allow-wins", "Disallow: /a\nAllow: /a\n", "/a", True),
    ("tie-allow-wins-reversed", "Allow: /a\nDisallow: /a\n", "/a", True),
    ("case-sensitive", "Disallow: /Private\n", "/private", True),
    ("wildcard", "Disallow: /*.pdf\n", "/docs/a.pdf?x", False),
    ("anchor", "Disallow: /*.pdf$\n", "/docs/a.pdf?x", True),
    ("anchor-exact", "Disallow: /*.pdf$\n", "/docs/a.pdf", False),
    ("dollar-in-middle-is-literal", "Disallow: /a$b\n", "/a$b", False),
    ("dollar-in-middle-no-anchor", "Disallow: /a$b\n", "/a", True),
    ("query-matched", "Disallow: /*?sort=\n", "/list?sort=asc", False),
    ("fragment-ignored", "Disallow: /a$\n", "/a#section", False),
    ("escape-unreserved-rule", "Disallow: /%7Euser\n", "/~user/x", False),
    ("escape-unreserved-url", "Disallow: /~user\n", "/%7euser/x", False),
    ("non-ascii-rule-vs-escaped-url", "Disallow: /café\n", "/caf%C3%A9", False),
    ("escaped-rule-vs-non-ascii-url", "Disallow: /caf%c3%a9\n", "/café", False),
    ("reserved-escape-not-decoded", "Disallow: /a%2Fb\n", "/a/b", True),
    ("reserved-escape-hex-case", "Disallow: /a%2fb\n", "/a%2Fb", False),
    ("encoded-star-is-literal", "Disallow: /a%2A\n", "/a*", False),
    ("encoded-star-not-wildcard", "Disallow: /a%2A\n", "/ab", True),
    ("dot-segments-in-url", "Disallow: /a\n", "/x/../a", False),
    ("index-html-allows-directory", "Disallow: /d/\nAllow: /d/index.html\n", "/d/", True),
    ("index-html-not-below", "Disallow: /d/\nAllow: /d/index.html\n", "/d/x", False),
    ("index-html-exact-directory", "Disallow: /d/\nAllow: /d/index.html\n", "/d/?q", False),
]


@pytest.mark.parametrize(
    ("rules", "url", "expected"),
    [case[1:] for case in MATCH_CASES],
    ids=[case[0] for case in MATCH_CASES],
)
@pytest.mark.parametrize("filler", ["", MANY_RULES], ids=["few-rules", "many-rules"])
def test_matching(rules: str, url: str, expected: bool, filler: str) -> None:
    assert allowed("User-agent: *\n" + filler + rules, url) is expected


# --- reserved characters: a literal and its escape -----------------------------------------------
#
# RFC 3986 section 2.2: replacing a reserved character by its escape makes a different URI, and
# RFC 9309 section 2.2.2 never decodes a reserved escape. Google's reference parser compares the
# URL and the rule byte by byte as written (robots.cc, RobotsMatchStrategy::Matches), escaping
# only non-ASCII bytes and upper-casing hex digits in the rule (MaybeEscapePattern). So a
# sub-delimiter, `:` or `@` matches itself and its escape matches its escape, in the path and in
# the query, but the character and its escape never meet. (fast-robotstxt, the oracle of
# test_robots_properties.py, decodes both sides: its "reserved-escape" divergence.)

SUB_DELIMS = "!&'()+,;=:@"


def _reserved_cases(char: str) -> list[tuple[str, str, str, bool]]:
    escape = f"%{ord(char):02X}"
    cases = []
    for where, start in (("path", "/a"), ("query", "/q?k=")):
        for name, rule, url, expected in (
            ("literal-both", char, char, False),
            ("escape-both", escape, escape, False),
            ("escape-hex-case", escape.lower(), escape, False),
            ("literal-rule-escape-url", char, escape, True),
            ("escape-rule-literal-url", escape, char, True),
        ):
            cases.append(
                (
                    f"{char}-{where}-{name}",
                    f"Disallow: {start}{rule}b\n",
                    f"{start}{url}b",
                    expected,
                )
            )
    return cases


# `*` and `$` mean something in a rule, so the URL's literal `*` and `$` are compared as `%2A` and
# `%24`: RFC 9309 section 2.2.3 (figure 6) has the rule `/path/foo-%24` match the URL
# `/path/foo-$`. Google's reference parser compares bytes and does not (its fork fast-robotstxt
# does). A `$` that does not end a rule is the character (SPEC section 4, and Google's matcher:
# "Includes '$' when not at end of pattern"), so it is `%24` too, and it meets a URL's `%24` as
# well as its `$`, where Google's parser meets only the `$`: RFC 9309 asks `%24` in a rule to
# match both, and one canonical form cannot tell them apart again.
SPECIAL_CASES = [
    # (id, rules, url, allowed)
    ("star-literal-both", "Disallow: /a*b\n", "/a*b", False),
    ("star-wildcard-matches-escape", "Disallow: /a*b\n", "/a%2Ab", False),
    ("star-wildcard-matches-other", "Disallow: /a*b\n", "/axyb", False),
    ("star-escape-rule-literal-url", "Disallow: /a%2Ab\n", "/a*b", False),
    ("star-escape-both", "Disallow: /a%2ab\n", "/a%2Ab", False),
    ("star-escape-is-no-wildcard", "Disallow: /a%2Ab\n", "/axb", True),
    ("star-escape-in-query", "Disallow: /*?k=%2A\n", "/q?k=*", False),
    ("dollar-literal-both", "Disallow: /a$b\n", "/a$b", False),
    ("dollar-literal-rule-escape-url", "Disallow: /a$b\n", "/a%24b", False),
    ("dollar-escape-rule-literal-url", "Disallow: /a%24b\n", "/a$b", False),
    ("dollar-escape-both", "Disallow: /a%24b\n", "/a%24b", False),
    ("dollar-in-query", "Disallow: /*?k=$v\n", "/q?k=$v", False),
    ("dollar-final-is-anchor", "Disallow: /a$\n", "/a$", True),
    ("dollar-final-escaped", "Disallow: /a%24\n", "/a$", False),
    ("dollar-escaped-then-anchor", "Disallow: /a%24$\n", "/a$", False),
    ("dollar-escaped-then-anchor-longer", "Disallow: /a%24$\n", "/a$b", True),
    ("dollar-twice", "Disallow: /a$$\n", "/a$", False),
    ("dollar-then-star", "Disallow: /a$*\n", "/a$b", False),
    # Issue 16: the rule as real files write it, the URL with its braces escaped and not.
    ("issue-16-escaped-braces", "Disallow: /a/$%7Bx%7D/\n", "http://h/a/$%7Bx%7D/", False),
    ("issue-16-literal-braces", "Disallow: /a/$%7Bx%7D/\n", "http://h/a/${x}/y", False),
    ("issue-16-other-path", "Disallow: /a/$%7Bx%7D/\n", "http://h/a/%7Bx%7D/", True),
]

RESERVED_CASES = [case for char in SUB_DELIMS for case in _reserved_cases(char)] + SPECIAL_CASES


@pytest.mark.parametrize(
    ("rules", "url", "expected"),
    [case[1:] for case in RESERVED_CASES],
    ids=[case[0] for case in RESERVED_CASES],
)
@pytest.mark.parametrize("filler", ["", MANY_RULES], ids=["few-rules", "many-rules"])
def test_reserved_characters(rules: str, url: str, expected: bool, filler: str) -> None:
    assert allowed("User-agent: *\n" + filler + rules, url) is expected


def test_robots_txt_is_always_allowed() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /\nDisallow: /robots.txt\n")
    assert robots.can_fetch("http://example.com/robots.txt", AGENT)
    assert robots.can_fetch("/robots.txt", AGENT)
    assert not robots.can_fetch("/robots.txt?x=1", AGENT)
    assert robots.explain("/robots.txt", AGENT).reason == "robots-txt"


# --- legacy options ------------------------------------------------------------------------------

CAMBRIDGE = """\
# local search engine
User-agent: University of Cambridge search (
Disallow: /cgi/
Disallow: /internal-only/

# Everything else
User-agent: *
Disallow: /
"""

OPTION_CASES = [
    # (id, robots.txt, agent, url, options, allowed)
    ("substring-matches", CAMBRIDGE, "Cambridge", "/cgi/x", {"agent_match": "substring"}, False),
    ("substring-group-applies", CAMBRIDGE, "cambridge", "/x", {"agent_match": "substring"}, True),
    ("substring-first-word", CAMBRIDGE, "University", "/x", {"agent_match": "substring"}, True),
    ("substring-miss-gets-star", CAMBRIDGE, "Oxford", "/x", {"agent_match": "substring"}, False),
    ("rfc-no-substring", CAMBRIDGE, "Cambridge", "/x", {}, False),
    ("rfc-first-word", CAMBRIDGE, "University", "/x", {}, True),
    (
        "first-match-disallow-first",
        "User-agent: *\nDisallow: /\nAllow: /public\n",
        AGENT,
        "/public",
        {"precedence": "first-match"},
        False,
    ),
    (
        "longest-match-disallow-first",
        "User-agent: *\nDisallow: /\nAllow: /public\n",
        AGENT,
        "/public",
        {},
        True,
    ),
    (
        "first-match-allow-first",
        "User-agent: *\nAllow: /public\nDisallow: /\n",
        AGENT,
        "/public",
        {"precedence": "first-match"},
        True,
    ),
    (
        "first-match-across-merged-groups",
        "User-agent: FooBot\nDisallow: /a\n\nUser-agent: FooBot\nAllow: /a/b\n",
        AGENT,
        "/a/b",
        {"precedence": "first-match"},
        False,
    ),
    (
        "first-match-no-match",
        "User-agent: *\nDisallow: /x\n",
        AGENT,
        "/y",
        {"precedence": "first-match"},
        True,
    ),
    (
        "case-insensitive-rule-upper",
        "User-agent: *\nDisallow: /Private\n",
        AGENT,
        "/private/x",
        {"case_insensitive_paths": True},
        False,
    ),
    (
        "case-insensitive-url-upper",
        "User-agent: *\nDisallow: /private\n",
        AGENT,
        "/PRIVATE/x",
        {"case_insensitive_paths": True},
        False,
    ),
    (
        "case-insensitive-escape",
        "User-agent: *\nDisallow: /a%2fb\n",
        AGENT,
        "/A%2Fb",
        {"case_insensitive_paths": True},
        False,
    ),
    (
        "case-insensitive-wildcard",
        "User-agent: *\nDisallow: /*.PDF$\n",
        AGENT,
        "/a.pdf",
        {"case_insensitive_paths": True},
        False,
    ),
    (
        "case-sensitive-by-default",
        "User-agent: *\nDisallow: /private\n",
        AGENT,
        "/PRIVATE/x",
        {},
        True,
    ),
    ("one-value-tmp", "User-agent: *\nDisallow: /tmp /spool\n", AGENT, "/tmp", {}, True),
    ("one-value-spool", "User-agent: *\nDisallow: /tmp /spool\n", AGENT, "/spool", {}, True),
    (
        "one-value-whole",
        "User-agent: *\nDisallow: /tmp /spool\n",
        AGENT,
        "/tmp%20/spool",
        {},
        False,
    ),
    (
        "split-tmp",
        "User-agent: *\nDisallow: /tmp /spool\n",
        AGENT,
        "/tmp/x",
        {"split_values": True},
        False,
    ),
    (
        "split-spool",
        "User-agent: *\nDisallow: /tmp /spool\n",
        AGENT,
        "/spool/x",
        {"split_values": True},
        False,
    ),
    (
        "split-other",
        "User-agent: *\nDisallow: /tmp /spool\n",
        AGENT,
        "/var",
        {"split_values": True},
        True,
    ),
]


@pytest.mark.parametrize(
    ("body", "agent", "url", "options", "expected"),
    [case[1:] for case in OPTION_CASES],
    ids=[case[0] for case in OPTION_CASES],
)
def test_legacy_options(
    body: str, agent: str, url: str, options: dict[str, object], expected: bool
) -> None:
    assert allowed(body, url, agent, **options) is expected


def test_first_match_names_the_first_line() -> None:
    explanation = explain(
        "User-agent: *\nDisallow: /\nAllow: /public\n", "/public", precedence="first-match"
    )
    assert (explanation.allowed, explanation.line, explanation.text) == (False, 2, "Disallow: /")


def test_split_values_names_the_whole_line() -> None:
    explanation = explain("User-agent: *\nDisallow: /tmp /spool\n", "/spool", split_values=True)
    assert (explanation.line, explanation.text) == (2, "Disallow: /tmp /spool")


def test_options_are_kept() -> None:
    robots = RobotsTxt.parse("", precedence="first-match", split_values=True)
    assert robots.options == RobotsOptions(precedence="first-match", split_values=True)
    assert RobotsTxt.parse("").options == RobotsOptions()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"agent_match": "exact"}, "agent_match"),
        ({"agent_match": None}, "agent_match"),
        ({"precedence": "shortest-match"}, "precedence"),
        ({"case_insensitive_paths": "yes"}, "case_insensitive_paths"),
        ({"split_values": 1}, "split_values"),
        ({"strict": True}, "strict"),
        ({"agent-match": "rfc"}, "agent-match"),
    ],
    ids=lambda value: str(value),
)
def test_invalid_options(options: dict[str, object], named: str) -> None:
    with pytest.raises(InvalidRobotsOptionError, match=named) as raised:
        RobotsTxt.parse("User-agent: *\nDisallow: /\n", **options)
    assert isinstance(raised.value, ConfigError)
    assert isinstance(raised.value, ValueError)


# --- explain() -----------------------------------------------------------------------------------

EXPLAIN_CASES = [
    # (id, robots.txt, url, allowed, line, text)
    (
        "lf",
        "User-agent: *\nDisallow: /a\nAllow: /a/b\n",
        "/a/b",
        True,
        3,
        "Allow: /a/b",
    ),
    (
        "crlf",
        "User-agent: *\r\n\r\nDisallow: /a # private\r\nAllow: /a/b\r\n",
        "/a/x",
        False,
        3,
        "Disallow: /a",
    ),
    (
        "cr",
        "User-agent: *\r\rDisallow: /a # private\rAllow: /a/b\r",
        "/a/b",
        True,
        4,
        "Allow: /a/b",
    ),
    (
        "mixed-endings",
        "# head\rUser-agent: *\r\n\nDisallow: /x\r",
        "/x",
        False,
        4,
        "Disallow: /x",
    ),
    (
        "comments",
        "# robots.txt for example.com\n# more\nUser-agent: *  # all\n# the rules\n"
        "Disallow: /x   # keep out\n",
        "/x/y",
        False,
        5,
        "Disallow: /x",
    ),
    (
        "bom",
        "\ufeffUser-agent: *\nDisallow: /x\n",
        "/x",
        False,
        2,
        "Disallow: /x",
    ),
    (
        "index-html",
        "User-agent: *\nDisallow: /d/\nAllow: /d/index.html\n",
        "/d/",
        True,
        3,
        "Allow: /d/index.html",
    ),
    (
        "index-html-file-itself",
        "User-agent: *\nDisallow: /d/\nAllow: /d/index.html\n",
        "/d/index.html",
        True,
        3,
        "Allow: /d/index.html",
    ),
    (
        "wildcard",
        "User-agent: *\nDisallow: /*.pdf$\n",
        "http://example.com/a/b.pdf",
        False,
        2,
        "Disallow: /*.pdf$",
    ),
    (
        "missing-colon",
        "User-agent: *\nDisallow /x\n",
        "/x",
        False,
        2,
        "Disallow /x",
    ),
]


@pytest.mark.parametrize(
    ("body", "url", "expected", "line", "text"),
    [case[1:] for case in EXPLAIN_CASES],
    ids=[case[0] for case in EXPLAIN_CASES],
)
def test_explain_names_the_deciding_line(
    body: str, url: str, expected: bool, line: int, text: str
) -> None:
    explanation = explain(body, url)
    assert explanation.reason == "rule"
    assert (explanation.allowed, explanation.line, explanation.text) == (expected, line, text)
    assert f"line {line}" in explanation.message
    assert text in explanation.message
    assert explanation.allowed is allowed(body, url)


def test_explain_index_html_says_directory() -> None:
    explanation = explain("User-agent: *\nDisallow: /d/\nAllow: /d/index.html\n", "/d/")
    assert "directory" in explanation.message
    assert str(explanation) == explanation.message


def test_explain_no_group() -> None:
    explanation = explain("User-agent: BarBot\nDisallow: /\n", "/x")
    assert explanation.allowed
    assert explanation.reason == "no-group"
    assert explanation.line is None and explanation.text is None
    assert explanation.group == ()
    assert "FooBot" in explanation.message


def test_explain_no_group_for_several_tokens() -> None:
    explanation = RobotsTxt.parse("").explain("/x", ["FooBot", "BarBot"])
    assert explanation.reason == "no-group"
    assert "FooBot" in explanation.message and "BarBot" in explanation.message


def test_explain_no_matching_rule() -> None:
    explanation = explain("# x\nUser-agent: *\nDisallow: /private\n", "/public")
    assert explanation.allowed
    assert explanation.reason == "no-matching-rule"
    assert explanation.line is None
    assert explanation.group == ((2, "*"),)
    assert "/public" in explanation.message


def test_explain_specific_group_over_star() -> None:
    explanation = explain("User-agent: *\nDisallow: /\n\nUser-agent: FooBot\nAllow: /\n", "/x")
    assert explanation.group == ((4, "FooBot"),)
    assert (explanation.allowed, explanation.line) == (True, 5)


# --- policies: allow_all / disallow_all ----------------------------------------------------------


def test_allow_all() -> None:
    robots = RobotsTxt.allow_all("status 404")
    assert robots.can_fetch("/anything", AGENT)
    explanation = robots.explain("/anything", AGENT)
    assert (explanation.allowed, explanation.reason) == (True, "policy")
    assert "status 404" in explanation.message
    assert robots.crawl_delay(AGENT) is None
    assert robots.request_rate(AGENT) is None
    assert robots.visit_time(AGENT) == ()
    assert robots.sitemaps == ()


def test_disallow_all() -> None:
    robots = RobotsTxt.disallow_all("status 503")
    assert not robots.can_fetch("/", AGENT)
    assert not robots.can_fetch("http://example.com/x?y", ["FooBot", "BarBot"])
    explanation = robots.explain("/x", AGENT)
    assert (explanation.allowed, explanation.reason) == (False, "policy")
    assert "status 503" in explanation.message


def test_disallow_all_still_allows_robots_txt() -> None:
    robots = RobotsTxt.disallow_all("unreachable")
    assert robots.can_fetch("http://example.com/robots.txt", AGENT)
    assert robots.explain("/robots.txt", AGENT).reason == "robots-txt"


# --- size caps -----------------------------------------------------------------------------------

RULE = b"Disallow: /\n"


def _padded(head: bytes, size: int) -> bytes:
    """`head` and then comment lines, `size` bytes in all."""
    lines = [head]
    remaining = size - len(head)
    while remaining > 0:
        length = min(remaining, 100)
        lines.append(b"#" * (length - 1) + b"\n")
        remaining -= length
    body = b"".join(lines)
    assert len(body) == size
    return body


def test_line_after_500_kib_is_ignored() -> None:
    body = _padded(b"User-agent: *\n", MAX_BODY_BYTES) + RULE
    assert MAX_BODY_BYTES == 500 * 1024
    assert allowed(body, "/x")


def test_line_ending_at_500_kib_is_read() -> None:
    body = _padded(b"User-agent: *\n", MAX_BODY_BYTES - len(RULE)) + RULE
    assert len(body) == MAX_BODY_BYTES
    assert not allowed(body, "/x")


def test_cap_counts_bytes_of_a_str_body() -> None:
    # 262,600 characters but 520,000 bytes: the rule starts past 500 KiB of UTF-8.
    padding = ("#" + "é" * 99 + "\n") * 2_600
    assert len(padding) < MAX_BODY_BYTES < len(padding.encode())
    assert allowed("User-agent: *\n" + padding + "Disallow: /\n", "/x")


def test_long_line_is_cut_at_max_line_bytes() -> None:
    # "Disallow: " is 10 bytes, so the pattern keeps MAX_LINE_BYTES - 10 of them and loses "$".
    kept = MAX_LINE_BYTES - len("Disallow: ")
    body = "User-agent: *\nDisallow: /" + "a" * (kept + 50) + "$\n"
    assert not allowed(body, "/" + "a" * (kept - 1))
    assert not allowed(body, "/" + "a" * (kept + 20))
    assert allowed(body, "/" + "a" * (kept - 2))


# --- Crawl-delay ---------------------------------------------------------------------------------

CRAWL_DELAY_CASES = [
    # (id, lines for the * group, delay)
    ("integer", "Crawl-delay: 10\n", 10.0),
    ("fractional", "Crawl-delay: 0.5\n", 0.5),
    ("leading-dot", "Crawl-delay: .5\n", 0.5),
    ("seconds-unit", "Crawl-delay: 2s\n", 2.0),
    ("zero", "Crawl-delay: 0\n", 0.0),
    ("with-comment", "Crawl-delay: 7 # be nice\n", 7.0),
    ("negative-ignored", "Crawl-delay: -1\n", None),
    ("garbage-ignored", "Crawl-delay: soon\n", None),
    # A number however written: a huge one asks to go slowly, never to be ignored (the cap,
    # politeness.max_crawl_delay, then reports it).
    ("exponent", "Crawl-delay: 1e3\n", 1000.0),
    ("huge-exponent-read-as-the-most", "Crawl-delay: 1e308\n", 1e9),
    ("hundred-digits-read-as-the-most", "Crawl-delay: " + "9" * 100 + "\n", 1e9),
    ("infinity-ignored", "Crawl-delay: inf\n", None),
    ("nan-ignored", "Crawl-delay: NaN\n", None),
    ("empty-ignored", "Crawl-delay:\n", None),
    ("absent", "Disallow: /x\n", None),
    ("largest-of-several", "Crawl-delay: 3\nCrawl-delay: 7\nCrawl-delay: 5\n", 7.0),
    ("garbage-beside-valid", "Crawl-delay: x\nCrawl-delay: 4\n", 4.0),
    ("key-spellings", "crawl_delay: 2\nCRAWL-DELAY: 3\nCrawl delay: 4\n", 4.0),
]


@pytest.mark.parametrize(
    ("lines", "delay"),
    [case[1:] for case in CRAWL_DELAY_CASES],
    ids=[case[0] for case in CRAWL_DELAY_CASES],
)
def test_crawl_delay(lines: str, delay: float | None) -> None:
    assert RobotsTxt.parse("User-agent: *\n" + lines).crawl_delay(AGENT) == delay


# Each group has a rule: a Crawl-delay line alone does not end a group, so a User-agent line after
# it would join the same group (see test_crawl_delay_shared_by_agents_of_one_group).
DELAYS = """\
User-agent: *
Crawl-delay: 3
Disallow: /tmp

User-agent: BarBot
Disallow: /tmp
Crawl-delay: 9

User-agent: FooBot
Disallow: /private
"""


@pytest.mark.parametrize(
    ("agent", "delay"),
    [("OtherBot", 3.0), ("BarBot", 9.0), ("FooBot", None)],
    ids=["star-group", "own-group", "specific-group-does-not-inherit-star"],
)
def test_crawl_delay_comes_from_the_applying_group(agent: str, delay: float | None) -> None:
    assert RobotsTxt.parse(DELAYS).crawl_delay(agent) == delay


def test_crawl_delay_before_any_group_is_ignored() -> None:
    assert (
        RobotsTxt.parse("Crawl-delay: 5\nUser-agent: *\nDisallow: /x\n").crawl_delay(AGENT) is None
    )


def test_crawl_delay_shared_by_agents_of_one_group() -> None:
    robots = RobotsTxt.parse(
        "User-agent: FooBot\nCrawl-delay: 5\nUser-agent: BarBot\nDisallow: /\n"
    )
    assert robots.crawl_delay("FooBot") == robots.crawl_delay("BarBot") == 5.0


# --- Request-rate --------------------------------------------------------------------------------

WINDOW_0600_0845 = TimeWindow(6 * HOUR, 8 * HOUR + 45 * 60)

REQUEST_RATE_CASES = [
    # (id, value, rates)
    ("per-seconds", "1/5", (RequestRate(1, 5.0),)),
    ("seconds-unit", "1/5s", (RequestRate(1, 5.0),)),
    ("per-minute", "10/1m", (RequestRate(10, 60.0),)),
    ("per-hour", "1/1h", (RequestRate(1, 3600.0),)),
    ("per-day", "2/1d", (RequestRate(2, 86400.0),)),
    ("spaces", "1 / 5", (RequestRate(1, 5.0),)),
    ("window", "1/10 0600-0845", (RequestRate(1, 10.0, WINDOW_0600_0845),)),
    ("window-utc", "1/10 0600-0845 UTC", (RequestRate(1, 10.0, WINDOW_0600_0845),)),
    ("window-colons", "1/10 06:00-08:45", (RequestRate(1, 10.0, WINDOW_0600_0845),)),
    ("zero-requests", "0/5", ()),
    ("zero-period", "1/0", ()),
    ("garbage", "fast", ()),
    ("bad-window", "1/10 2500-0100", ()),
]


@pytest.mark.parametrize(
    ("value", "rates"),
    [case[1:] for case in REQUEST_RATE_CASES],
    ids=[case[0] for case in REQUEST_RATE_CASES],
)
def test_request_rates(value: str, rates: tuple[RequestRate, ...]) -> None:
    robots = RobotsTxt.parse(f"User-agent: *\nRequest-rate: {value}\n")
    assert robots.request_rates(AGENT) == rates


def test_request_rate_interval() -> None:
    assert RequestRate(10, 60.0).interval == 6.0
    assert RequestRate(1, 5.0).interval == 5.0
    assert str(RequestRate(1, 10.0, WINDOW_0600_0845)) == "1/10s 06:00-08:45 UTC"


RATES = """\
User-agent: *
Request-rate: 1/5
Request-rate: 1/60 0600-0845
Request-rate: 10/1m 2200-0400
"""


@pytest.mark.parametrize(
    ("clock", "interval"),
    [
        (None, 60.0),  # over the whole day: the strictest line
        (5 * HOUR, 5.0),  # no window open: the plain rate
        (6 * HOUR, 60.0),  # the window opens at 06:00
        (7 * HOUR, 60.0),
        (8 * HOUR + 45 * 60, 5.0),  # and is closed at 08:45
        (12 * HOUR, 5.0),
        (23 * HOUR, 6.0),  # 10/1m in force, stricter than 1/5
        (1 * HOUR, 6.0),  # the 2200-0400 window wraps midnight
        (4 * HOUR, 5.0),
    ],
    ids=lambda value: str(value),
)
def test_request_rate_at(clock: float | None, interval: float) -> None:
    now = None if clock is None else MIDNIGHT + clock
    rate = RobotsTxt.parse(RATES).request_rate(AGENT, now)
    assert rate is not None
    assert rate.interval == interval


def test_request_rate_none_when_no_rate_is_in_force() -> None:
    robots = RobotsTxt.parse("User-agent: *\nRequest-rate: 1/60 0600-0845\n")
    assert robots.request_rate(AGENT, MIDNIGHT + 12 * HOUR) is None
    assert robots.request_rate(AGENT, MIDNIGHT + 7 * HOUR) == RequestRate(1, 60.0, WINDOW_0600_0845)
    assert RobotsTxt.parse("User-agent: *\n").request_rate(AGENT) is None


def test_request_rate_from_the_applying_group_only() -> None:
    robots = RobotsTxt.parse(
        "User-agent: *\nRequest-rate: 1/5\nDisallow: /tmp\n\nUser-agent: FooBot\nAllow: /\n"
    )
    assert robots.request_rates("FooBot") == ()
    assert robots.request_rates("BarBot") == (RequestRate(1, 5.0),)


def test_request_rate_for_the_whole_day_window() -> None:
    """`0000-2400` is the whole day, so the rate holds at every hour."""
    robots = RobotsTxt.parse("User-agent: *\nRequest-rate: 1/10 0000-2400\n")
    rates = robots.request_rates(AGENT)
    assert len(rates) == 1
    assert (rates[0].requests, rates[0].seconds) == (1, 10.0)
    for hour in (0, 6, 12, 23):
        assert robots.request_rate(AGENT, MIDNIGHT + hour * HOUR) == rates[0]


@pytest.mark.parametrize(
    "value",
    [
        "9" * 400 + "/1",  # more requests than a float holds: `interval` overflows
        "9" * 400 + "/1 0600-0845",
        "9" * 5000 + "/5",  # more digits than int() converts (sys.get_int_max_str_digits())
        "1/" + "9" * 400,
        "9" * 400 + "/" + "9" * 400,
    ],
    ids=[
        "requests-overflow-float",
        "requests-overflow-float-window",
        "requests-too-many-digits",
        "period-overflow",
        "both-overflow",
    ],
)
def test_request_rate_absurd_numbers_do_not_raise(value: str) -> None:
    robots = RobotsTxt.parse(f"User-agent: *\nRequest-rate: 1/5\nRequest-rate: {value}\n")
    rates = robots.request_rates(AGENT)
    assert RequestRate(1, 5.0) in rates
    for now in (None, MIDNIGHT + 7 * HOUR):
        rate = robots.request_rate(AGENT, now)
        assert rate is not None
        assert 0 <= rate.interval < float("inf")


# --- Visit-time ----------------------------------------------------------------------------------

VISIT_TIME_CASES = [
    # (id, value, windows)
    ("hhmm", "0600-0845", (WINDOW_0600_0845,)),
    ("colons", "06:00-08:45", (WINDOW_0600_0845,)),
    ("spaces-around-dash", "0600 - 0845", (WINDOW_0600_0845,)),
    ("utc-suffix", "0600-0845 UTC", (WINDOW_0600_0845,)),
    ("three-digits", "600-845", (WINDOW_0600_0845,)),
    ("wraps-midnight", "2200-0400", (TimeWindow(22 * HOUR, 4 * HOUR),)),
    ("ends-at-2400", "1800-2400", (TimeWindow(18 * HOUR, 24 * HOUR),)),
    ("garbage", "mornings", ()),
    ("hour-out-of-range", "2500-0100", ()),
    ("minute-out-of-range", "0660-0700", ()),
    ("empty-window", "0600-0600", ()),
    ("hours-only", "06-08", ()),
]


@pytest.mark.parametrize(
    ("value", "windows"),
    [case[1:] for case in VISIT_TIME_CASES],
    ids=[case[0] for case in VISIT_TIME_CASES],
)
def test_visit_time(value: str, windows: tuple[TimeWindow, ...]) -> None:
    robots = RobotsTxt.parse(f"User-agent: *\nVisit-time: {value}\n")
    assert robots.visit_time(AGENT) == windows


def test_visit_time_several_lines() -> None:
    robots = RobotsTxt.parse(
        "User-agent: *\nVisit-time: 0100-0200\nVisit-time: nonsense\nVisit-time: 2200-0400\n"
    )
    assert robots.visit_time(AGENT) == (TimeWindow(HOUR, 2 * HOUR), TimeWindow(22 * HOUR, 4 * HOUR))
    assert RobotsTxt.parse("User-agent: *\nDisallow:\n").visit_time(AGENT) == ()


def test_visit_time_whole_day() -> None:
    """`0000-2400` is the whole day: a window open at every second, not an ignored line."""
    robots = RobotsTxt.parse("User-agent: *\nVisit-time: 0000-2400\nVisit-time: 0100-0200\n")
    windows = robots.visit_time(AGENT)
    assert len(windows) == 2
    for second in (0, 12 * HOUR, DAY_SECONDS - 1):
        assert any(window.contains(second) for window in windows)


WINDOW_CASES = [
    # (id, window, second of the day, contains, seconds until open)
    ("before", WINDOW_0600_0845, 5 * HOUR, False, 3600.0),
    ("at-start", WINDOW_0600_0845, 6 * HOUR, True, 0.0),
    ("inside", WINDOW_0600_0845, 7 * HOUR + 0.5, True, 0.0),
    ("last-second", WINDOW_0600_0845, 8 * HOUR + 45 * 60 - 1, True, 0.0),
    ("at-end", WINDOW_0600_0845, 8 * HOUR + 45 * 60, False, 21 * HOUR + 15 * 60),
    ("after", WINDOW_0600_0845, 9 * HOUR, False, 21 * HOUR),
    ("midnight", WINDOW_0600_0845, 0, False, 6 * HOUR),
    ("wrap-late", TimeWindow(22 * HOUR, 4 * HOUR), 23 * HOUR, True, 0.0),
    ("wrap-early", TimeWindow(22 * HOUR, 4 * HOUR), 3 * HOUR, True, 0.0),
    ("wrap-midnight", TimeWindow(22 * HOUR, 4 * HOUR), 0, True, 0.0),
    ("wrap-end", TimeWindow(22 * HOUR, 4 * HOUR), 4 * HOUR, False, 18 * HOUR),
    ("wrap-noon", TimeWindow(22 * HOUR, 4 * HOUR), 12 * HOUR, False, 10 * HOUR),
    ("wrap-just-before", TimeWindow(22 * HOUR, 4 * HOUR), 22 * HOUR - 1.5, False, 1.5),
]


@pytest.mark.parametrize(
    ("window", "second", "contains", "wait"),
    [case[1:] for case in WINDOW_CASES],
    ids=[case[0] for case in WINDOW_CASES],
)
def test_time_window(window: TimeWindow, second: float, contains: bool, wait: float) -> None:
    assert window.contains(second) is contains
    assert window.seconds_until_open(second) == pytest.approx(wait)


def test_time_window_str() -> None:
    assert str(WINDOW_0600_0845) == "06:00-08:45 UTC"
    assert str(TimeWindow(22 * HOUR, 4 * HOUR)) == "22:00-04:00 UTC"


# --- Sitemaps ------------------------------------------------------------------------------------


def test_sitemaps_are_global_and_deduplicated() -> None:
    body = """\
Sitemap: http://example.com/a.xml
User-agent: BarBot
Disallow: /
Sitemap: http://example.com/b.xml
sitemap:   http://example.com/a.xml
User-agent: *
Site-map: http://example.com/c.xml # comment
Sitemap:
"""
    robots = RobotsTxt.parse(body)
    assert robots.sitemaps == (
        "http://example.com/a.xml",
        "http://example.com/b.xml",
        "http://example.com/c.xml",
    )
    # A Sitemap line belongs to no group: it does not end BarBot's group or start another.
    assert not robots.can_fetch("/x", "BarBot")
    assert robots.can_fetch("/x", "FooBot")


def test_no_sitemaps() -> None:
    assert RobotsTxt.parse("User-agent: *\nDisallow: /\n").sitemaps == ()


# --- what a robots.txt fetch outcome means -------------------------------------------------------

FETCH_CASES = [
    # (id, status, keyword arguments, policy, retry)
    ("200", 200, {}, RobotsPolicy.PARSE, False),
    ("204", 204, {}, RobotsPolicy.PARSE, False),
    *[
        (f"301-after-{hops}", 301, {"redirects": hops}, RobotsPolicy.FOLLOW, False)
        for hops in range(MAX_REDIRECTS)
    ],
    ("301-after-5", 301, {"redirects": 5}, RobotsPolicy.ALLOW_ALL, False),
    ("302", 302, {}, RobotsPolicy.FOLLOW, False),
    ("307", 307, {"redirects": 2}, RobotsPolicy.FOLLOW, False),
    ("308", 308, {}, RobotsPolicy.FOLLOW, False),
    ("301-no-location", 301, {"has_location": False}, RobotsPolicy.ALLOW_ALL, False),
    ("304-no-location", 304, {"has_location": False}, RobotsPolicy.ALLOW_ALL, False),
    ("404", 404, {}, RobotsPolicy.ALLOW_ALL, False),
    ("410", 410, {}, RobotsPolicy.ALLOW_ALL, False),
    ("401", 401, {}, RobotsPolicy.ALLOW_ALL, False),
    ("403", 403, {}, RobotsPolicy.ALLOW_ALL, False),
    ("401-auth-disallows", 401, {"auth_disallows": True}, RobotsPolicy.DISALLOW_ALL, False),
    ("403-auth-disallows", 403, {"auth_disallows": True}, RobotsPolicy.DISALLOW_ALL, False),
    ("404-auth-disallows", 404, {"auth_disallows": True}, RobotsPolicy.ALLOW_ALL, False),
    ("429", 429, {}, RobotsPolicy.DISALLOW_ALL, True),
    ("429-auth-disallows", 429, {"auth_disallows": True}, RobotsPolicy.DISALLOW_ALL, True),
    # A 407 is the proxy's (fetch.proxy), not the site's: the file is not reached.
    ("407-proxy", 407, {}, RobotsPolicy.DISALLOW_ALL, True),
    ("500", 500, {}, RobotsPolicy.DISALLOW_ALL, True),
    ("503", 503, {}, RobotsPolicy.DISALLOW_ALL, True),
    ("599", 599, {}, RobotsPolicy.DISALLOW_ALL, True),
    ("timeout", None, {"error": "timeout"}, RobotsPolicy.DISALLOW_ALL, True),
    ("dns", None, {"error": "DNS lookup failed"}, RobotsPolicy.DISALLOW_ALL, True),
    ("no-response", None, {}, RobotsPolicy.DISALLOW_ALL, True),
    ("error-beats-status", 200, {"error": "connection reset"}, RobotsPolicy.DISALLOW_ALL, True),
]


@pytest.mark.parametrize(
    ("status", "kwargs", "policy", "retry"),
    [case[1:] for case in FETCH_CASES],
    ids=[case[0] for case in FETCH_CASES],
)
def test_robots_fetch_decision(
    status: int | None, kwargs: dict[str, object], policy: RobotsPolicy, retry: bool
) -> None:
    decision = robots_fetch_decision(status, **kwargs)
    assert isinstance(decision, FetchDecision)
    assert (decision.policy, decision.retry) == (policy, retry)
    assert decision.reason
    if status is not None and "error" not in kwargs:
        assert str(status) in decision.reason or "redirects" in decision.reason


def test_redirect_chain_follows_five_hops() -> None:
    followed = 0
    while (
        decision := robots_fetch_decision(301, redirects=followed)
    ).policy is RobotsPolicy.FOLLOW:
        followed += 1
        assert followed <= 10, "redirects never stop"
    assert followed == 5
    assert decision.policy is RobotsPolicy.ALLOW_ALL


def test_network_error_is_named() -> None:
    decision = robots_fetch_decision(None, error="DNS lookup failed")
    assert "DNS lookup failed" in decision.reason


# --- product tokens ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        ("PoliteBot/1.0 (+https://example.org/bot)", "PoliteBot"),
        ("PoliteBot", "PoliteBot"),
        ("  Polite-Bot_x/2 extra", "Polite-Bot_x"),
    ],
)
def test_product_token_from_user_agent(user_agent: str, token: str) -> None:
    assert product_token_from_user_agent(user_agent) == token


def test_invalid_product_token_names_it() -> None:
    with pytest.raises(InvalidProductTokenError) as raised:
        validate_product_token("MJ12bot")
    message = str(raised.value)
    assert "'MJ12bot'" in message
    assert "'MJ'" in message  # what a robots.txt line naming it is read as
    assert "A-Z" in message
    assert isinstance(raised.value, ConfigError)


@pytest.mark.parametrize(
    "user_agent", ["MJ12bot/1.0 (+http://mj12bot.com/)", "Polite.Bot/1.0", "", "/1.0"]
)
def test_product_token_from_user_agent_rejects(user_agent: str) -> None:
    with pytest.raises(InvalidProductTokenError):
        product_token_from_user_agent(user_agent)


@pytest.mark.parametrize("token", ["PoliteBot", "a", "Foo-Bar_baz"])
def test_valid_product_token_returned(token: str) -> None:
    assert validate_product_token(token) == token


# --- odd input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\xef\xbb\xbf",
        b"\xff\xfe\x00U\x00s\x00e\x00r",
        b"\x00" * 100,
        b"User-agent: *\nDisallow: /\xff\xfe\n",
        b"\r\r\r\n\n\n",
        "User-agent: *\nDisallow: /\ud800\n",
    ],
    ids=["empty", "bom-only", "utf16", "nuls", "bad-utf8", "line-ends", "lone-surrogate"],
)
def test_odd_bodies_parse(body: bytes | str) -> None:
    robots = RobotsTxt.parse(body)
    robots.can_fetch("/x", AGENT)
    robots.explain("/x", AGENT)


def test_undecodable_bytes_match_their_escapes() -> None:
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /\xff\n")
    assert not robots.can_fetch("/%FF", AGENT)
    assert not robots.can_fetch("/%ffx", AGENT)
    assert robots.can_fetch("/%FE", AGENT)


def test_str_body_with_surrogate_escapes_reads_as_its_bytes() -> None:
    """A body decoded with errors="surrogateescape" keeps its undecodable bytes as U+DC80-U+DCFF,
    as crawler.urls reads them in a URL (and as explain() shows them): the str and the bytes must
    give the same answers."""
    raw = b"User-agent: *\nDisallow: /caf\xe9\n"  # a Latin-1 byte, not UTF-8
    text = raw.decode("utf-8", "surrogateescape")
    assert not RobotsTxt.parse(raw).can_fetch("/caf%E9", AGENT)
    assert not RobotsTxt.parse(text).can_fetch("/caf%E9", AGENT)


def test_nul_ends_a_line_as_in_the_reference_parser() -> None:
    assert not allowed(b"User-agent: *\nDisallow: /a\x00bc\n", "/ax")


def test_repr() -> None:
    assert repr(RobotsTxt.parse("Sitemap: s\nUser-agent: *\nDisallow: /\nAllow: /a\n")) == (
        "RobotsTxt(groups=1, rules=2, sitemaps=1)"
    )
    assert "503" in repr(RobotsTxt.disallow_all("status 503"))


def test_many_sitemap_lines_are_each_kept_once() -> None:
    # 30,000 distinct Sitemap lines fit in the 500 KiB cap (and took seconds with a list-based
    # de-duplication); a repeated one is kept once.
    body = "".join(f"Sitemap:{n}\n" for n in range(30_000))
    robots = RobotsTxt.parse(body + "Sitemap:7\n")
    assert len(robots.sitemaps) == 30_000
    assert robots.sitemaps[7] == "7"
