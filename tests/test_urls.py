"""crawler.urls: what a robots.txt rule is matched against (SPEC section 4)."""

from __future__ import annotations

import pytest

from crawler.urls import (
    canonical_path,
    canonical_pattern,
    match_target,
    path_and_query,
    remove_dot_segments,
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
