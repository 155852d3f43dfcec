"""crawler.urls: what a robots.txt rule is matched against (SPEC section 4)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.crawl.scope import Scope
from crawler.urls import (
    InvalidUrlError,
    LinkResolver,
    canonical_path,
    canonical_pattern,
    extensions_of,
    host_of,
    match_target,
    normalize_url,
    origin_of,
    path_and_query,
    remove_dot_segments,
    resolve_url,
)

PATH_AND_QUERY_CASES = [
    # (id, url, path and query)
    ("full", "http://example.com/a/b?q=1#frag", "/a/b?q=1"),
    ("https-port-params", "https://example.com:8443/x;p?q", "/x;p?q"),
    ("no-path", "http://example.com", "/"),
    ("no-path-query", "http://example.com?q", "/?q"),
    ("no-path-fragment", "http://example.com#frag", "/"),
    ("root", "http://example.com/", "/"),
    ("protocol-relative", "//host/path?q", "/path?q"),
    ("protocol-relative-no-path", "//host", "/"),
    ("host-path", "host/path?q", "/path?q"),
    ("host-query", "host?q", "/?q"),
    ("host-only", "host", "/"),
    ("bare-path", "/path?q", "/path?q"),
    ("bare-path-fragment", "/path?q#frag", "/path?q"),
    ("bare-root", "/", "/"),
    ("empty", "", "/"),
    ("only-fragment", "#frag", "/"),
    ("only-query", "?q", "/?q"),
    ("fragment-before-path", "a#b/c", "/"),
    ("scheme-inside-query", "http://h/p?next=http://x/y", "/p?next=http://x/y"),
    ("query-inside-fragment", "http://h/p#frag?x", "/p"),
    ("second-hash", "http://h/a?b#c#d", "/a?b"),
    ("other-scheme", "ftp://h/a b", "/a b"),
    ("dot-segments-kept", "/a/../b", "/a/../b"),
]


@pytest.mark.parametrize(
    ("url", "expected"),
    [case[1:] for case in PATH_AND_QUERY_CASES],
    ids=[case[0] for case in PATH_AND_QUERY_CASES],
)
def test_path_and_query(url: str, expected: str) -> None:
    assert path_and_query(url) == expected


CANONICAL_CASES = [
    # (id, input, canonical_path, canonical_pattern)
    ("plain", "/a/b?q=1", "/a/b?q=1", "/a/b?q=1"),
    ("non-ascii", "/café", "/caf%C3%A9", "/caf%C3%A9"),
    ("non-ascii-cjk", "/日本", "/%E6%97%A5%E6%9C%AC", "/%E6%97%A5%E6%9C%AC"),
    ("lower-hex-upper-cased", "/caf%c3%a9", "/caf%C3%A9", "/caf%C3%A9"),
    ("tilde-decoded", "/%7euser", "/~user", "/~user"),
    ("unreserved-decoded", "/%41%62%2d%5F%2E%30", "/Ab-_.0", "/Ab-_.0"),
    ("slash-kept-encoded", "/a%2fb", "/a%2Fb", "/a%2Fb"),
    ("slash-upper-kept", "/a%2Fb", "/a%2Fb", "/a%2Fb"),
    ("question-kept-encoded", "/a%3fb", "/a%3Fb", "/a%3Fb"),
    ("percent-kept-encoded", "/100%25", "/100%25", "/100%25"),
    ("space", "/a b", "/a%20b", "/a%20b"),
    ("space-in-query", "/a?b=c d", "/a?b=c%20d", "/a?b=c%20d"),
    ("unsafe-ascii", '/<>"{}|\\^`', "/%3C%3E%22%7B%7D%7C%5C%5E%60", "/%3C%3E%22%7B%7D%7C%5C%5E%60"),
    ("control", "/\x00\x7f", "/%00%7F", "/%00%7F"),
    ("reserved-left-alone", "/~!&'()+,;=:@[]", "/~!&'()+,;=:@[]", "/~!&'()+,;=:@[]"),
    ("stray-percent", "/a%", "/a%", "/a%"),
    ("bad-escape", "/a%zz", "/a%zz", "/a%zz"),
    ("undecodable-byte", "/a\udcff", "/a%FF", "/a%FF"),
    ("star", "/a*b", "/a%2Ab", "/a*b"),
    ("final-dollar", "/a$", "/a%24", "/a$"),
    ("middle-dollar", "/a$b", "/a%24b", "/a%24b"),
    ("two-dollars", "/a$$", "/a%24%24", "/a%24$"),
    ("star-and-anchor", "/*.pdf$", "/%2A.pdf%24", "/*.pdf$"),
    ("non-ascii-before-anchor", "/é$", "/%C3%A9%24", "/%C3%A9$"),
    ("encoded-star-stays", "/a%2a", "/a%2A", "/a%2A"),
    ("encoded-dollar-stays", "/a%24", "/a%24", "/a%24"),
    (
        "reserved-escapes-kept-upper-cased",
        "/%21%26%27%28%29%2b%2c%3b%3d%3a%40?%2a%24",
        "/%21%26%27%28%29%2B%2C%3B%3D%3A%40?%2A%24",
        "/%21%26%27%28%29%2B%2C%3B%3D%3A%40?%2A%24",
    ),
    ("reserved-in-query-left-alone", "/q?k=!&'()+,;=:@", "/q?k=!&'()+,;=:@", "/q?k=!&'()+,;=:@"),
    ("dollar-and-star-in-query", "/q?k=$*", "/q?k=%24%2A", "/q?k=%24*"),
]


@pytest.mark.parametrize(
    ("text", "path", "pattern"),
    [case[1:] for case in CANONICAL_CASES],
    ids=[case[0] for case in CANONICAL_CASES],
)
def test_canonical_forms(text: str, path: str, pattern: str) -> None:
    assert canonical_path(text) == path
    assert canonical_pattern(text) == pattern


@pytest.mark.parametrize("text", [case[1] for case in CANONICAL_CASES])
def test_canonical_forms_are_fixed_points(text: str) -> None:
    assert canonical_path(canonical_path(text)) == canonical_path(text)
    assert canonical_pattern(canonical_pattern(text)) == canonical_pattern(text)


DOT_SEGMENT_CASES = [
    # RFC 3986 section 5.2.4's own examples, then its section 5.4 examples merged onto the base
    # path /b/c/d;p.
    ("/a/b/c/./../../g", "/a/g"),
    ("/mid/content=5/../6", "/mid/6"),
    ("/b/c/g", "/b/c/g"),
    ("/b/c/./g", "/b/c/g"),
    ("/b/c/g/", "/b/c/g/"),
    ("/g", "/g"),
    ("/b/c/.", "/b/c/"),
    ("/b/c/./", "/b/c/"),
    ("/b/c/..", "/b/"),
    ("/b/c/../", "/b/"),
    ("/b/c/../g", "/b/g"),
    ("/b/c/../..", "/"),
    ("/b/c/../../", "/"),
    ("/b/c/../../g", "/g"),
    ("/b/c/../../../g", "/g"),
    ("/b/c/../../../../g", "/g"),
    ("/./g", "/g"),
    ("/../g", "/g"),
    ("/b/c/g.", "/b/c/g."),
    ("/b/c/.g", "/b/c/.g"),
    ("/b/c/g..", "/b/c/g.."),
    ("/b/c/..g", "/b/c/..g"),
    ("/b/c/./../g", "/b/g"),
    ("/b/c/./g/.", "/b/c/g/"),
    ("/b/c/g/./h", "/b/c/g/h"),
    ("/b/c/g/../h", "/b/c/h"),
    ("/b/c/g;x=1/./y", "/b/c/g;x=1/y"),
    ("/b/c/g;x=1/../y", "/b/c/y"),
    ("/", "/"),
    ("/.", "/"),
    ("/..", "/"),
    ("/a//b/../c", "/a//c"),
]


@pytest.mark.parametrize(("path", "expected"), DOT_SEGMENT_CASES)
def test_remove_dot_segments(path: str, expected: str) -> None:
    assert remove_dot_segments(path) == expected


MATCH_TARGET_CASES = [
    # (id, url, target)
    ("full", "http://example.com/a/b?q=1#frag", "/a/b?q=1"),
    ("empty", "", "/"),
    ("dot-segments", "http://h/a/./b/../c", "/a/c"),
    ("dot-segments-not-in-query", "http://h/a/./b?x/../y", "/a/b?x/../y"),
    ("encoded-dots", "http://h/a/%2E%2E/b", "/b"),
    ("mixed-encoded-dots", "http://h/a/.%2e/b", "/b"),
    ("dot-dot-before-query", "http://h/a/..?q", "/?q"),
    ("encoding", "http://h/caf%c3%a9/%7e?a=b c", "/caf%C3%A9/~?a=b%20c"),
    ("non-ascii", "http://h/café", "/caf%C3%A9"),
    ("reserved-escape", "http://h/a%2fb", "/a%2Fb"),
    ("star-dollar", "http://h/a*b$", "/a%2Ab%24"),
    ("robots-txt", "http://h/robots.txt", "/robots.txt"),
    ("robots-txt-via-dots", "http://h/x/../robots.txt", "/robots.txt"),
    ("robots-txt-query", "http://h/robots.txt?x", "/robots.txt?x"),
]


@pytest.mark.parametrize(
    ("url", "target"),
    [case[1:] for case in MATCH_TARGET_CASES],
    ids=[case[0] for case in MATCH_TARGET_CASES],
)
def test_match_target(url: str, target: str) -> None:
    assert match_target(url) == target


@pytest.mark.parametrize(
    ("rule", "url"),
    [
        ("/%7Euser", "/~user"),
        ("/caf%c3%a9", "http://h/café"),
        ("/café", "/caf%C3%A9"),
        ("/a%2fb", "/a%2Fb"),
        ("/a b", "/a%20b"),
    ],
)
def test_rule_and_url_spellings_meet(rule: str, url: str) -> None:
    assert canonical_pattern(rule) == match_target(url)


@pytest.mark.parametrize("char", list("!&'()+,;=:@"))
def test_reserved_character_and_its_escape_stay_apart(char: str) -> None:
    """RFC 3986 section 2.2: a sub-delimiter (or `:`, `@`) and its escape are different URIs; each
    spelling meets only itself, in either case of hex digit."""
    escape = f"%{ord(char):02X}"
    for start in ("/a", "/q?k="):
        assert canonical_pattern(start + char) == match_target(start + char)
        assert canonical_pattern(start + escape.lower()) == match_target(start + escape)
        assert canonical_pattern(start + char) != match_target(start + escape)
        assert canonical_pattern(start + escape) != match_target(start + char)


@pytest.mark.parametrize(
    ("rule", "url"),
    [("/a%2A", "/a*"), ("/a%24", "/a$"), ("/a$b", "/a$b"), ("/a$b", "/a%24b"), ("/q?%2A", "/q?*")],
)
def test_star_and_dollar_meet_their_escapes(rule: str, url: str) -> None:
    """RFC 9309 section 2.2.3: a rule matches a URL's `*` or `$` by its escape; a `$` that does not
    end a rule is the character."""
    assert canonical_pattern(rule) == match_target(url)


# --- normalize_url (SPEC section 8) ---------------------------------------------------------------

NORMALIZE_CASES = [
    # (id, url, normal form)
    ("already-normal", "http://a.test/x/y?q=1", "http://a.test/x/y?q=1"),
    ("scheme-case", "HTTP://a.test/", "http://a.test/"),
    ("scheme-case-https", "hTTpS://a.test/", "https://a.test/"),
    ("host-case", "http://A.Test/Path", "http://a.test/Path"),
    ("path-case-kept", "http://a.test/A/b?C=D", "http://a.test/A/b?C=D"),
    ("default-port-http", "http://a.test:80/x", "http://a.test/x"),
    ("default-port-https", "https://a.test:443/x", "https://a.test/x"),
    ("other-port-kept", "http://a.test:8080/x", "http://a.test:8080/x"),
    ("https-port-on-http-kept", "http://a.test:443/", "http://a.test:443/"),
    ("http-port-on-https-kept", "https://a.test:80/", "https://a.test:80/"),
    ("port-leading-zeros", "http://a.test:0080/", "http://a.test/"),
    ("port-leading-zeros-kept", "http://a.test:08080/", "http://a.test:8080/"),
    ("empty-port", "http://a.test:/", "http://a.test/"),
    ("fragment", "http://a.test/x#frag", "http://a.test/x"),
    ("fragment-after-query", "http://a.test/x?q=1#frag", "http://a.test/x?q=1"),
    ("empty-fragment", "http://a.test/x#", "http://a.test/x"),
    ("dot-segments", "http://a.test/a/./b/../c", "http://a.test/a/c"),
    ("dot-dot-above-root", "http://a.test/../../x", "http://a.test/x"),
    ("final-dot-dot", "http://a.test/a/b/..", "http://a.test/a/"),
    ("final-dot", "http://a.test/a/.", "http://a.test/a/"),
    ("dot-segments-in-query-kept", "http://a.test/a?x/../y", "http://a.test/a?x/../y"),
    ("dots-in-names-kept", "http://a.test/a../.b/..c", "http://a.test/a../.b/..c"),
    # RFC 3986 section 6.2.2: escapes are normalised before dot segments are removed.
    ("escaped-dot-dot", "http://a.test/a/%2E%2E/b", "http://a.test/b"),
    ("half-escaped-dot-dot", "http://a.test/a/.%2e/b", "http://a.test/b"),
    ("escaped-dot", "http://a.test/a/%2e/b", "http://a.test/a/b"),
    ("escaped-dots-in-query-kept", "http://a.test/a?%2E%2E/b", "http://a.test/a?../b"),
    ("unreserved-decoded", "http://a.test/%7euser/%41%2D%5f", "http://a.test/~user/A-_"),
    ("reserved-kept-upper", "http://a.test/a%2fb%3a", "http://a.test/a%2Fb%3A"),
    ("reserved-upper-kept", "http://a.test/a%2Fb", "http://a.test/a%2Fb"),
    ("percent-sign-kept", "http://a.test/100%25", "http://a.test/100%25"),
    ("lower-hex-upper-cased", "http://a.test/caf%c3%a9", "http://a.test/caf%C3%A9"),
    ("non-ascii-path", "http://a.test/café", "http://a.test/caf%C3%A9"),
    ("non-ascii-query", "http://a.test/?q=€", "http://a.test/?q=%E2%82%AC"),
    ("space", "http://a.test/a b?c d", "http://a.test/a%20b?c%20d"),
    ("query-escapes", "http://a.test/?a=%2f&b=%7e", "http://a.test/?a=%2F&b=~"),
    ("star-and-dollar-literal", "http://a.test/a*b$?c=$*", "http://a.test/a*b$?c=$*"),
    ("sub-delims-kept", "http://a.test/!&'()+,;=:@", "http://a.test/!&'()+,;=:@"),
    ("idn-host", "http://Bücher.de/", "http://xn--bcher-kva.de/"),
    ("idn-host-cjk", "http://例え.テスト/", "http://xn--r8jz45g.xn--zckzah/"),
    ("idn-fullwidth-mapped", "http://\uff21\uff22\uff23.test/", "http://abc.test/"),
    ("escaped-host", "http://%C3%BC.test/", "http://xn--tda.test/"),
    ("userinfo", "http://user:secret@a.test/x", "http://a.test/x"),
    ("userinfo-with-port", "http://user@a.test:8080/", "http://a.test:8080/"),
    ("at-in-userinfo", "http://a@b@c.test/", "http://c.test/"),
    ("empty-path", "http://a.test", "http://a.test/"),
    ("empty-path-with-query", "http://a.test?q", "http://a.test/?q"),
    ("empty-path-with-fragment", "http://a.test#f", "http://a.test/"),
    ("empty-query", "http://a.test/x?", "http://a.test/x"),
    ("empty-query-no-path", "http://a.test?", "http://a.test/"),
    ("empty-query-and-fragment", "http://a.test/x?#f", "http://a.test/x"),
    ("trailing-dot-host", "http://a.test./", "http://a.test/"),
    # IDNA mapping can reveal a trailing dot: an ideographic full stop, an ignorable character.
    ("ideographic-full-stop-at-end", "http://a.test\u3002/", "http://a.test/"),
    ("dot-then-ignorable-at-end", "http://a.test.\u200b/", "http://a.test/"),
    ("ideographic-full-stop-inside", "http://a\u3002test/", "http://a.test/"),
    ("surrounding-whitespace", "  http://a.test/x \n", "http://a.test/x"),
    ("tab-and-newline-removed", "http://a.te\nst/x\ty", "http://a.test/xy"),
    ("backslashes-as-slashes", "http:\\\\a.test\\x", "http://a.test/x"),
    # As browsers do: a backslash is a slash before the query, and stays a character in it.
    ("backslash-in-query-kept", "http://a.test/p\\q?r=a\\b", "http://a.test/p/q?r=a%5Cb"),
    ("backslash-in-fragment-dropped", "http://a.test/p#a\\b", "http://a.test/p"),
    ("ipv4", "http://192.0.2.1:80/", "http://192.0.2.1/"),
    ("ipv6", "http://[2001:DB8::1]:80/x", "http://[2001:db8::1]/x"),
    ("ipv6-port", "http://[::1]:8080/", "http://[::1]:8080/"),
]


@pytest.mark.parametrize(
    ("url", "expected"),
    [case[1:] for case in NORMALIZE_CASES],
    ids=[case[0] for case in NORMALIZE_CASES],
)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected
    assert normalize_url(expected) == expected


REJECTED_CASES = [
    # (id, url, words of the reason)
    ("mailto", "mailto:someone@a.test", "scheme 'mailto' is not crawled"),
    ("javascript", "javascript:alert(1)", "scheme 'javascript' is not crawled"),
    ("data", "data:text/html,hi", "scheme 'data' is not crawled"),
    ("ftp", "ftp://a.test/file", "scheme 'ftp' is not crawled"),
    ("relative-path", "/a/b", "not an absolute URL"),
    ("relative-name", "a.test/x", "not an absolute URL"),
    ("protocol-relative", "//a.test/x", "not an absolute URL"),
    ("empty", "", "not an absolute URL"),
    ("blank", "   ", "not an absolute URL"),
    ("no-slashes", "http:a.test/x", "no host"),
    ("empty-host", "http:///x", "no valid host"),
    ("port-only", "http://:80/", "no valid host"),
    ("userinfo-only", "http://user@/", "no valid host"),
    ("space-in-host", "http://a b.test/", "no valid host"),
    ("colons-in-host", "http://a.test::/", "no valid host"),
    ("colon-first-in-host", "http://:a.test:/", "no valid host"),
    ("two-ports", "http://a.test:80:80/", "no valid host"),
    ("brackets-inside-host", "http://a[b]c.test/", "no valid host"),
    ("control-in-host", "http://a\x01b.test/", "no valid host"),
    ("delete-in-host", "http://a\x7fb.test/", "no valid host"),
    ("only-dots-host", "http://../", "no valid host"),
    ("port-too-big", "http://a.test:65536/", "port '65536' is not a number"),
    ("port-letters", "http://a.test:8x/", "port '8x' is not a number"),
    ("port-negative", "http://a.test:-1/", "port '-1' is not a number"),
    ("port-non-ascii-digits", "http://a.test:\u0668\u0660/", "is not a number"),
    ("ipv6-unterminated", "http://[::1/", "unterminated IPv6 address"),
    ("ipv6-junk", "http://[::1]x/", "junk after the IPv6 address"),
    ("idn-disallowed", "http://\u2603-\u2318.test/", "not a valid international domain name"),
    ("host-escape-not-utf8", "http://%FF.test/", "not UTF-8"),
]


@pytest.mark.parametrize(
    ("url", "reason"),
    [case[1:] for case in REJECTED_CASES],
    ids=[case[0] for case in REJECTED_CASES],
)
def test_normalize_url_rejects_with_a_reason(url: str, reason: str) -> None:
    with pytest.raises(InvalidUrlError) as caught:
        normalize_url(url)
    assert reason in caught.value.reason
    assert caught.value.url == url
    assert isinstance(caught.value, ValueError)


URLISH = st.lists(
    st.sampled_from(
        [
            *"aZ09:/?#@[]%.-_~*$\\ \t\n;=&+!é€日",
            "http://",
            "https://",
            "HTTP://",
            "%2F",
            "%41",
            "%e2%82%ac",
            "%zz",
            "%",
            "..",
            ".",
            "xn--",
            ":80",
            ":8080",
            "ß",
            "\x00",
            "\u200b",
            "\u3002",
            "%2E",
            "\x01",
        ]
    ),
    max_size=25,
).map("".join)


@given(st.one_of(st.text(max_size=40), URLISH, URLISH.map(lambda rest: "http://" + rest)))
def test_normalize_url_raises_nothing_but_invalid_url_error(url: str) -> None:
    try:
        normalize_url(url)
    except InvalidUrlError as error:
        assert error.reason
        assert error.url == url


@given(st.one_of(URLISH.map(lambda rest: "http://" + rest), URLISH.map(lambda r: "https://" + r)))
def test_normalize_url_is_idempotent(url: str) -> None:
    try:
        normal = normalize_url(url)
    except InvalidUrlError:
        return
    assert normalize_url(normal) == normal
    assert normal.startswith(("http://", "https://"))
    assert "#" not in normal
    assert "/" in normal.split("//", 1)[1]


# --- resolve_url ---------------------------------------------------------------------------------

RFC_BASE = "http://a/b/c/d;p?q"

RESOLVE_CASES = [
    # (id, base, href, resolved) -- first RFC 3986 section 5.4.1's normal examples that apply to
    # http (fragments dropped by normalisation), then its abnormal examples of 5.4.2, then ours.
    ("rfc-g", RFC_BASE, "g", "http://a/b/c/g"),
    ("rfc-dot-g", RFC_BASE, "./g", "http://a/b/c/g"),
    ("rfc-g-slash", RFC_BASE, "g/", "http://a/b/c/g/"),
    ("rfc-abs-path", RFC_BASE, "/g", "http://a/g"),
    ("rfc-network-path", RFC_BASE, "//g", "http://g/"),
    ("rfc-query", RFC_BASE, "?y", "http://a/b/c/d;p?y"),
    ("rfc-g-query", RFC_BASE, "g?y", "http://a/b/c/g?y"),
    ("rfc-fragment", RFC_BASE, "#s", "http://a/b/c/d;p?q"),
    ("rfc-g-fragment", RFC_BASE, "g#s", "http://a/b/c/g"),
    ("rfc-g-query-fragment", RFC_BASE, "g?y#s", "http://a/b/c/g?y"),
    ("rfc-params", RFC_BASE, ";x", "http://a/b/c/;x"),
    ("rfc-g-params", RFC_BASE, "g;x", "http://a/b/c/g;x"),
    ("rfc-g-params-query-fragment", RFC_BASE, "g;x?y#s", "http://a/b/c/g;x?y"),
    ("rfc-empty", RFC_BASE, "", "http://a/b/c/d;p?q"),
    ("rfc-dot", RFC_BASE, ".", "http://a/b/c/"),
    ("rfc-dot-slash", RFC_BASE, "./", "http://a/b/c/"),
    ("rfc-dot-dot", RFC_BASE, "..", "http://a/b/"),
    ("rfc-dot-dot-slash", RFC_BASE, "../", "http://a/b/"),
    ("rfc-dot-dot-g", RFC_BASE, "../g", "http://a/b/g"),
    ("rfc-dot-dot-twice", RFC_BASE, "../..", "http://a/"),
    ("rfc-dot-dot-twice-slash", RFC_BASE, "../../", "http://a/"),
    ("rfc-dot-dot-twice-g", RFC_BASE, "../../g", "http://a/g"),
    ("rfc-above-root", RFC_BASE, "../../../g", "http://a/g"),
    ("rfc-far-above-root", RFC_BASE, "../../../../g", "http://a/g"),
    ("rfc-abs-dot", RFC_BASE, "/./g", "http://a/g"),
    ("rfc-abs-dot-dot", RFC_BASE, "/../g", "http://a/g"),
    ("rfc-g-dot", RFC_BASE, "g.", "http://a/b/c/g."),
    ("rfc-dot-g-name", RFC_BASE, ".g", "http://a/b/c/.g"),
    ("rfc-g-dot-dot", RFC_BASE, "g..", "http://a/b/c/g.."),
    ("rfc-dot-dot-g-name", RFC_BASE, "..g", "http://a/b/c/..g"),
    ("rfc-dot-then-dot-dot", RFC_BASE, "./../g", "http://a/b/g"),
    ("rfc-g-final-dot", RFC_BASE, "./g/.", "http://a/b/c/g/"),
    ("rfc-g-dot-h", RFC_BASE, "g/./h", "http://a/b/c/g/h"),
    ("rfc-g-dot-dot-h", RFC_BASE, "g/../h", "http://a/b/c/h"),
    ("rfc-params-dot", RFC_BASE, "g;x=1/./y", "http://a/b/c/g;x=1/y"),
    ("rfc-params-dot-dot", RFC_BASE, "g;x=1/../y", "http://a/b/c/y"),
    ("rfc-query-dot-kept", RFC_BASE, "g?y/./x", "http://a/b/c/g?y/./x"),
    ("rfc-query-dot-dot-kept", RFC_BASE, "g?y/../x", "http://a/b/c/g?y/../x"),
    ("rfc-fragment-dot", RFC_BASE, "g#s/./x", "http://a/b/c/g"),
    ("rfc-fragment-dot-dot", RFC_BASE, "g#s/../x", "http://a/b/c/g"),
    ("absolute", RFC_BASE, "https://Other.test:443/x#f", "https://other.test/x"),
    ("absolute-upper-scheme", RFC_BASE, "HTTP://other.test", "http://other.test/"),
    ("network-path-keeps-https", "https://a.test/x", "//b.test/y", "https://b.test/y"),
    ("network-path-with-port", "https://a.test/x", "//b.test:8443", "https://b.test:8443/"),
    ("abs-path-keeps-port", "http://a.test:8080/x/y", "/z?q", "http://a.test:8080/z?q"),
    ("relative-on-directory", "http://a.test/x/", "y", "http://a.test/x/y"),
    ("relative-on-root", "http://a.test/", "y/z", "http://a.test/y/z"),
    ("slash-in-base-query", "http://a.test/x/y?u=/v/w", "z", "http://a.test/x/z"),
    ("query-replaces-query", "http://a.test/x?old", "?new=1", "http://a.test/x?new=1"),
    ("empty-query-href", "http://a.test/x?old", "?", "http://a.test/x"),
    ("fragment-only", "http://a.test/x?q", "#top", "http://a.test/x?q"),
    ("whitespace-around", RFC_BASE, "  \n g \t", "http://a/b/c/g"),
    ("whitespace-only", RFC_BASE, "   ", "http://a/b/c/d;p?q"),
    ("whitespace-around-absolute", RFC_BASE, " https://b.test/ ", "https://b.test/"),
    ("encoded-on-resolve", RFC_BASE, "é f?x=%7e", "http://a/b/c/%C3%A9%20f?x=~"),
    ("ipv6-base", "http://[::1]:8080/a/b", "../c", "http://[::1]:8080/c"),
]


@pytest.mark.parametrize(
    ("base", "href", "expected"),
    [case[1:] for case in RESOLVE_CASES],
    ids=[case[0] for case in RESOLVE_CASES],
)
def test_resolve_url(base: str, href: str, expected: str) -> None:
    assert resolve_url(base, href) == expected


@pytest.mark.parametrize(
    ("href", "reason"),
    [
        ("g:h", "scheme 'g' is not crawled"),
        ("mailto:me@a.test", "scheme 'mailto' is not crawled"),
        ("javascript:void(0)", "scheme 'javascript' is not crawled"),
        (" JavaScript:alert(1)", "scheme 'javascript' is not crawled"),
        ("data:text/plain,x", "scheme 'data' is not crawled"),
        ("tel:+123", "scheme 'tel' is not crawled"),
        ("ftp://a.test/", "scheme 'ftp' is not crawled"),
        ("http:g", "no host"),
        ("//:80/x", "no valid host"),
        ("http://a.test:99999/", "port"),
    ],
)
def test_resolve_url_rejects_what_is_not_a_crawlable_http_url(href: str, reason: str) -> None:
    with pytest.raises(InvalidUrlError) as caught:
        resolve_url(RFC_BASE, href)
    assert reason in caught.value.reason


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("java\nscript:alert(1)", InvalidUrlError),
        ("java\tscript:void(0)", InvalidUrlError),
        ("mail\nto:me@a.test", InvalidUrlError),
        ("\x01javascript:x", InvalidUrlError),
        ("ht\ttp://b.test/x", "http://b.test/x"),
    ],
)
def test_resolve_url_removes_tabs_and_newlines_before_finding_the_scheme(
    href: str, expected: str | type[InvalidUrlError]
) -> None:
    if isinstance(expected, str):
        assert resolve_url(RFC_BASE, href) == expected
    else:
        with pytest.raises(expected):
            resolve_url(RFC_BASE, href)


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("\\\\b.test/x", "http://b.test/x"),
        ("/\\b.test/x", "http://b.test/x"),
        ("\\/b.test/x", "http://b.test/x"),
        ("\\g", "http://a/g"),
    ],
)
def test_resolve_url_reads_backslashes_like_slashes_as_browsers_do(
    href: str, expected: str
) -> None:
    assert resolve_url(RFC_BASE, href) == expected


def test_resolve_url_newline_after_a_found_scheme_is_removed() -> None:
    assert resolve_url(RFC_BASE, "https:\n//b.test/") == "https://b.test/"


def test_resolve_url_backslash_inside_a_relative_path_is_a_slash() -> None:
    assert resolve_url(RFC_BASE, "g\\h") == "http://a/b/c/g/h"
    assert resolve_url(RFC_BASE, "g?x=a\\b") == "http://a/b/c/g?x=a%5Cb"


HREFS = st.lists(
    st.sampled_from(
        [*"g/?#;=.%: \taé", "..", "./", "../", "//", "%2F", "%7e", "http://b.test", "mailto:"]
    ),
    max_size=12,
).map("".join)
BASES = st.sampled_from(
    [
        RFC_BASE,
        "https://a.test:8443/",
        "http://a.test/x?y/z",
        "http://[::1]/p/q",
        "http://xn--tda.de/",
    ]
)


@given(BASES, st.one_of(HREFS, st.text(max_size=20)))
def test_resolve_url_gives_a_normal_url_or_invalid_url_error(base: str, href: str) -> None:
    try:
        resolved = resolve_url(base, href)
    except InvalidUrlError:
        return
    assert normalize_url(resolved) == resolved


# --- origin_of, host_of --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "origin", "host"),
    [
        ("http://a.test/", "http://a.test", "a.test"),
        ("https://a.test/x/y?z=/w", "https://a.test", "a.test"),
        ("http://a.test:8080/x", "http://a.test:8080", "a.test"),
        ("https://sub.a.test:8443/", "https://sub.a.test:8443", "sub.a.test"),
        ("http://[::1]:8080/x", "http://[::1]:8080", "[::1]"),
        ("http://[2001:db8::1]/", "http://[2001:db8::1]", "[2001:db8::1]"),
        ("http://xn--bcher-kva.de/a", "http://xn--bcher-kva.de", "xn--bcher-kva.de"),
    ],
)
def test_origin_and_host_of_a_normal_url(url: str, origin: str, host: str) -> None:
    assert origin_of(url) == origin
    assert host_of(url) == host


def test_origins_differ_by_scheme_host_and_port() -> None:
    origins = {
        origin_of(normalize_url(url))
        for url in (
            "http://example.com/a",
            "http://example.com:80/b",
            "https://example.com/",
            "https://example.com:8443/",
            "http://a.example.com/",
        )
    }
    assert origins == {
        "http://example.com",
        "https://example.com",
        "https://example.com:8443",
        "http://a.example.com",
    }


# --- Scope ---------------------------------------------------------------------------------------

SEEDS = ("http://example.com/start", "https://docs.test:8443/")

SCOPE_CASES = [
    # (id, scope options, url, reason out or None)
    ("seed-host", {}, "http://example.com/other", None),
    ("seed-host-other-scheme", {}, "https://example.com/", None),
    ("seed-host-other-port", {}, "http://example.com:8080/", None),
    ("second-seed-host", {}, "http://docs.test/x", None),
    ("subdomain-not-by-default", {}, "http://www.example.com/", "out of scope: host"),
    ("parent-domain-not-in-scope", {}, "http://com/", "out of scope: host"),
    ("look-alike-host", {}, "http://badexample.com/", "out of scope: host"),
    ("other-host", {}, "http://other.test/", "out of scope: host"),
    ("subdomain-included", {"include_subdomains": True}, "http://www.example.com/", None),
    ("deep-subdomain-included", {"include_subdomains": True}, "http://a.b.docs.test/", None),
    (
        "look-alike-with-subdomains",
        {"include_subdomains": True},
        "http://xexample.com/",
        "out of scope: host",
    ),
    ("allowed-domain", {"allow_domains": ("other.org",)}, "http://other.org/", None),
    ("allowed-domain-subdomain", {"allow_domains": ("other.org",)}, "https://a.other.org/", None),
    ("allowed-domain-case-and-dot", {"allow_domains": ("Other.ORG.",)}, "http://other.org/", None),
    (
        "allowed-domain-look-alike",
        {"allow_domains": ("other.org",)},
        "http://notother.org/",
        "out of scope: host",
    ),
    ("seed-hosts-off", {"seed_hosts": False}, "http://example.com/", "out of scope: host"),
    (
        "seed-hosts-off-allowed-domain",
        {"seed_hosts": False, "allow_domains": ("example.com",)},
        "http://www.example.com/",
        None,
    ),
    (
        "deny",
        {"deny": (r"/private/",)},
        "http://example.com/private/x",
        "out of scope: deny pattern",
    ),
    ("deny-no-match", {"deny": (r"/private/",)}, "http://example.com/public/x", None),
    (
        "deny-searched-anywhere",
        {"deny": (r"\?session=",)},
        "http://example.com/a?session=1",
        "out of scope: deny pattern",
    ),
    (
        "deny-one-of-several",
        {"deny": (r"\.pdf$", r"/tmp/")},
        "http://example.com/tmp/a",
        "out of scope: deny pattern",
    ),
    ("allow-match", {"allow": (r"/docs/",)}, "http://example.com/docs/a", None),
    (
        "allow-requires-match",
        {"allow": (r"/docs/",)},
        "http://example.com/blog/a",
        "out of scope: no allow pattern",
    ),
    ("allow-one-of-several", {"allow": (r"/docs/", r"/api/")}, "http://example.com/api/", None),
    (
        "deny-wins-over-allow",
        {"allow": (r"/docs/",), "deny": (r"\.pdf$",)},
        "http://example.com/docs/a.pdf",
        "out of scope: deny pattern",
    ),
    (
        "host-checked-before-patterns",
        {"allow": (r"/docs/",)},
        "http://other.test/docs/",
        "out of scope: host",
    ),
]


@pytest.mark.parametrize(
    ("options", "url", "reason"),
    [case[1:] for case in SCOPE_CASES],
    ids=[case[0] for case in SCOPE_CASES],
)
def test_scope_for_seeds(options: dict[str, object], url: str, reason: str | None) -> None:
    scope = Scope.for_seeds(SEEDS, **options)  # type: ignore[arg-type]
    assert scope.reason_out(url) == reason
    # Asked twice (the host decision is cached): the same answer.
    assert scope.reason_out(url) == reason


def test_scope_host_in_scope_and_repr() -> None:
    scope = Scope.for_seeds(SEEDS, allow_domains=("other.org",))
    assert scope.host_in_scope("example.com")
    assert scope.host_in_scope("docs.test")
    assert scope.host_in_scope("x.other.org")
    assert not scope.host_in_scope("www.example.com")
    assert repr(scope) == "Scope(hosts=['docs.test', 'example.com'], domains=['other.org'])"


def test_scope_without_seeds_or_domains_admits_nothing() -> None:
    assert Scope().reason_out("http://example.com/") == "out of scope: host"


@pytest.mark.parametrize("domain", ["Bücher.de", "bücher.de.", "xn--bcher-kva.de"])
def test_scope_allow_domains_match_international_domains(domain: str) -> None:
    # Normal URLs carry punycode hosts; a domain configured in Unicode must meet them.
    scope = Scope.for_seeds(SEEDS, allow_domains=(domain,))
    assert scope.reason_out(normalize_url("http://shop.bücher.de/")) is None
    assert scope.reason_out(normalize_url("http://xn--bcher-kva.de/")) is None


@pytest.mark.parametrize(
    ("options", "url", "reason"),
    [
        ({"deny": (r"(?i)\.PDF$",)}, "http://example.com/a.pdf", "out of scope: deny pattern"),
        (
            {"deny": ("/tmp/", r"(?i)\.PDF$")},
            "http://example.com/a.pdf",
            "out of scope: deny pattern",
        ),
        ({"allow": ("(?P<part>docs)/", "(?P<part>api)/")}, "http://example.com/api/", None),
        ({"allow": (r"/(a)\1", r"/(b)\1")}, "http://example.com/bb", None),
    ],
)
def test_scope_patterns_each_keep_their_own_meaning(
    options: dict[str, tuple[str, ...]], url: str, reason: str | None
) -> None:
    scope = Scope.for_seeds(SEEDS, **options)  # type: ignore[arg-type]
    assert scope.reason_out(url) == reason


# --- LinkResolver --------------------------------------------------------------------------------

NORMAL_BASES = st.builds(
    "{}://{}{}/{}{}".format,
    st.sampled_from(["http", "https"]),
    st.sampled_from(["a.test", "sub.a-b.test", "xn--tda.de", "127.0.0.1", "[::1]"]),
    st.sampled_from(["", ":8080", ":1"]),
    st.lists(
        st.sampled_from(["a", "b.html", "c;p=1", "x:y", "%C3%A9", "~u", "", "d-e_f", "*$", "@"]),
        max_size=4,
    ).map("/".join),
    st.sampled_from(["", "?q", "?a=/b/c", "?x=1&y=2", "?%20", "?/./"]),
).map(normalize_url)
LINK_HREFS = st.lists(
    st.sampled_from(
        [
            *"ab/?#;:@%~*$!&=+,[]'() \t\n\\é日",
            "b.html",
            "..",
            ".",
            "./",
            "../",
            "/./",
            "/../",
            "//",
            "?",
            "?q=1",
            "#frag",
            "%2e",
            "%2E%2E",
            "%41",
            "%2F",
            "%zz",
            "%C3%A9",
            "\x00",
            "\x7f",
            "\u200b",
            "xn--",
            ":80",
            "http://b.test",
            "HTTPS://B.Test:443",
            "Http:",
            "//b.test",
            "//B.TEST:80/",
            "mailto:",
            "mailto:me@a.test",
            "javascript:",
            "javascript:void(0)",
            "data:",
            "ftp://",
            "x:y",
        ]
    ),
    max_size=10,
).map("".join)
# Hrefs of only the characters a normal URL keeps, the ones LinkResolver may join without
# resolve_url: its shortcut has to spot every dot segment, scheme, `//` and empty query itself.
PLAIN_HREFS = st.lists(
    st.sampled_from(["a", "b.html", "/", "//", ".", "..", "?", "?q=1", ":", "x:", ";p", "~*$@[]!"]),
    min_size=1,
    max_size=6,
).map("".join)


def _resolved(resolve: LinkResolver, href: str) -> str | type[InvalidUrlError]:
    try:
        return resolve(href)
    except InvalidUrlError:
        return InvalidUrlError


def _resolved_slowly(base: str, href: str) -> str | type[InvalidUrlError]:
    try:
        return resolve_url(base, href)
    except InvalidUrlError:
        return InvalidUrlError


@settings(max_examples=300, deadline=None)
@given(
    NORMAL_BASES,
    st.lists(st.one_of(PLAIN_HREFS, LINK_HREFS, st.text(max_size=20)), min_size=1, max_size=5),
)
def test_link_resolver_agrees_with_resolve_url(base: str, hrefs: list[str]) -> None:
    assert normalize_url(base) == base
    resolve = LinkResolver(base)
    for href in hrefs:
        assert _resolved(resolve, href) == _resolved_slowly(base, href), href


@pytest.mark.parametrize(
    ("url", "extensions"),
    [
        ("http://a.test/x/Book.TAR.gz?x=1", ("tar.gz", "gz")),
        ("http://a.test/img.PNG", ("png",)),
        ("http://a.test/jquery.min.js", ("min.js", "js")),
        ("http://a.test/page.html#photo.jpg", ("html",)),
        ("http://a.test/a.b/index", ()),
        ("http://a.test/v1.2/", ()),
        ("http://a.test/.hidden", ()),
        ("http://a.test/", ()),
        ("http://a.test:8080/file.", ()),
    ],
)
def test_extensions_of(url: str, extensions: tuple[str, ...]) -> None:
    assert extensions_of(url) == extensions
