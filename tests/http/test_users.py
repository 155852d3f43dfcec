"""What users bring to each request, decided per URL (crawler.http.users, crawler.http.cookies):
credentials only under their prefix, the cookie jar's RFC 6265 rules, its dump and load for the
state, and credentials kept out of the WARC's request records (crawler.output.warc)."""

from __future__ import annotations

import base64
import time

import pytest

from crawler.config import load_config
from crawler.errors import ConfigError
from crawler.http.cookies import CookieJar
from crawler.http.users import Secret, UserRequests, basic_credentials
from crawler.output.warc import redacted


def users(*overrides: str, environ: dict[str, str] | None = None) -> UserRequests:
    return UserRequests.of(load_config(None, list(overrides)).fetch, environ or {})


def test_credentials_go_only_under_their_prefix() -> None:
    given = users(
        "fetch.auth=[{url: 'https://a.test/docs/', username: me, password_env: PW}]",
        environ={"PW": "pass word"},
    )
    expected = "Basic " + base64.b64encode(b"me:pass word").decode()
    under = given.credentials_for("https://a.test/docs/x?y=1")
    assert under is not None and under.value == expected
    for elsewhere in (
        "https://a.test/doc",  # the path is a prefix, not a word
        "http://a.test/docs/",  # another scheme
        "https://a.test:8443/docs/",  # another port
        "https://a.test.evil.test/docs/",  # another host that begins alike
        "https://b.test/docs/",
    ):
        assert given.credentials_for(elsewhere) is None, elsewhere
    assert ("Authorization", expected) in given.headers_for("https://a.test/docs/")
    assert all(name != "Authorization" for name, _ in given.headers_for("https://b.test/"))


def test_a_password_variable_not_set_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"fetch\.auth\[1\]\.password_env: .* NOT_SET_PW"):
        users(
            "fetch.auth=[{url: 'https://a.test/', username: a, password_env: PW},"
            " {url: 'https://b.test/', username: b, password_env: NOT_SET_PW}]",
            environ={"PW": "x"},
        )


def test_a_secret_is_shown_nowhere() -> None:
    secret = basic_credentials("me", "hunter2")
    assert "hunter2" not in repr(secret) and "hunter2" not in str(secret)
    assert base64.b64encode(b"me:hunter2").decode() not in repr(secret) + str(secret)
    assert repr(Secret("x")) == "Secret([redacted])"


def test_the_headers_and_the_jar_on_each_request() -> None:
    given = users("fetch.headers={X-Token: t}", "fetch.cookies=true")
    assert given.headers_for("https://a.test/") == [("X-Token", "t")]
    given.answered("https://a.test/login", ["sid=1; Path=/", "pref=dark; Path=/settings"])
    assert given.headers_for("https://a.test/page") == [("X-Token", "t"), ("Cookie", "sid=1")]
    assert ("Cookie", "pref=dark; sid=1") in given.headers_for("https://a.test/settings/x")


def test_the_jar_keeps_domains_paths_expiry_and_secure() -> None:
    jar = CookieJar()
    jar.store(
        "https://www.shop.test/a/b",
        [
            "host=1",  # host-only, path /a (the request's directory)
            "wide=2; Domain=shop.test; Path=/",
            "safe=3; Secure; Path=/",
            "gone=4; Path=/; Max-Age=0",
            f"old=5; Path=/; Expires={time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime(0))}",
            "foreign=6; Domain=other.test; Path=/",
        ],
    )
    assert jar.header("https://www.shop.test/a/c") == "host=1; safe=3; wide=2"
    assert jar.header("http://www.shop.test/a/c") == "host=1; wide=2"  # not the Secure one
    assert jar.header("https://api.shop.test/") == "wide=2"  # the others are www's own
    assert jar.header("https://other.test/") is None
    assert jar.header("https://www.shop.test/z") == "safe=3; wide=2"


def test_the_jar_is_dumped_and_loaded_whole() -> None:
    jar = CookieJar()
    jar.store("https://a.test/", ["sid=abc; Path=/", "lasting=1; Path=/; Max-Age=3600"])
    assert jar.changed
    rows = jar.dump()
    assert not jar.changed
    again = CookieJar()
    again.load([*rows, {"name": "broken"}])  # a row it cannot read is left out
    assert again.header("https://a.test/") == jar.header("https://a.test/")
    assert len(again) == 2


def test_credentials_are_redacted_in_archived_requests() -> None:
    request = (
        b"GET /p HTTP/1.1\r\nHost: a.test\r\nAuthorization: Basic bWU6aHVudGVyMg==\r\n"
        b"Proxy-Authorization: Basic cDpx\r\nX-Token: t\r\n\r\n"
    )
    assert redacted(request) == (
        b"GET /p HTTP/1.1\r\nHost: a.test\r\nAuthorization: Basic [redacted]\r\n"
        b"Proxy-Authorization: Basic [redacted]\r\nX-Token: t\r\n\r\n"
    )
    plain = b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"
    assert redacted(plain) is plain
