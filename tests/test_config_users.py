"""What users bring, read from the config: each bad value refused naming its key and what it
expects (exit status 2 at the command line, tests/cli); good values typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.config import load_config
from crawler.errors import ConfigError
from crawler.page.fields import FieldSelector


def test_good_values_are_typed() -> None:
    config = load_config(
        None,
        [
            "extract={title: h1::text, sku: 'meta[itemprop=sku]::attr(content)',"
            " tags: {css: .tag::text, all: true}, box: div.box}",
            "fetch.headers={X-Api-Key: abc, X-Version: 2}",
            "fetch.cookies=true",
            "fetch.auth=[{url: 'https://example.org/private/', username: me,"
            " password_env: SITE_PW}, {url: 'http://127.0.0.1:8080/', username: u,"
            " password_env: LOCAL_PW}]",
            "fetch.proxy=http://127.0.0.1:3128",
            "fetch.proxy_username=crawler",
            "fetch.proxy_password_env=PROXY_PW",
        ],
    )
    assert config.extract == (
        FieldSelector("title", "h1", "text", "", False, "h1::text"),
        FieldSelector(
            "sku",
            "meta[itemprop=sku]",
            "attr",
            "content",
            False,
            "meta[itemprop=sku]::attr(content)",
        ),
        FieldSelector("tags", ".tag", "text", "", True, ".tag::text"),
        FieldSelector("box", "div.box", "html", "", False, "div.box"),
    )
    assert config.fetch.headers == (("X-Api-Key", "abc"), ("X-Version", "2"))
    assert config.fetch.cookies is True
    assert [entry.url for entry in config.fetch.auth] == [
        "https://example.org/private/",
        "http://127.0.0.1:8080/",
    ]
    assert config.fetch.proxy == "http://127.0.0.1:3128"


@pytest.mark.parametrize(
    ("override", "said"),
    [
        ("extract={t: 'h1::txt'}", "extract.t: 'h1::txt': ::txt is not read here"),
        ("extract={t: 'a[x=1]'}", "extract.t: 'a[x=1]' is not a valid CSS selector"),
        ("extract={t: 'p:contains(x)'}", "the crawl's parser (lexbor) cannot read"),
        ("extract={t: ''}", "selects no element"),
        ("extract={'1t': h1}", "'1t' is not a field name"),
        ("extract={t: {css: h1, every: true}}", "extract.t: unknown key every"),
        ("extract={t: {css: h1, all: 3}}", "extract.t.all must be true or false"),
        ("extract=[h1]", "extract must be a mapping of field names to CSS selectors"),
        ("fetch.headers={Host: x}", "fetch.headers: Host is the crawl's to set"),
        ("fetch.headers={user-agent: x}", "set it with user_agent"),
        ("fetch.headers={Authorization: x}", "give fetch.auth"),
        ("fetch.headers={'bad name': x}", "is not a header name"),
        ("fetch.headers=[X-A]", "fetch.headers must be a mapping of header names"),
        ("fetch.cookies=yes please", "fetch.cookies must be true or false"),
        (
            "fetch.auth=[{url: 'http://example.org/', username: u, password_env: P}]",
            "credentials go over https only",
        ),
        (
            "fetch.auth=[{url: 'https://example.org/', username: u, password: hunter2}]",
            "a password is never written in a config",
        ),
        (
            "fetch.auth=[{url: 'https://example.org/', username: u, password_env: 'A-B'}]",
            "password_env must name an environment variable",
        ),
        ("fetch.auth=[{url: ftp://x/, username: u, password_env: P}]", "an http(s) URL"),
        ("fetch.auth={url: x}", "fetch.auth must be a list"),
        ("fetch.proxy=socks4://127.0.0.1:1080", "socks4:// proxies are not supported"),
        ("fetch.proxy=http://u:pw@127.0.0.1:3128", "no credentials in the URL"),
        ("fetch.proxy=socks5h://u:pw@127.0.0.1:1080", "no credentials in the URL"),
        ("fetch.proxy=127.0.0.1:3128", "fetch.proxy must be http://HOST:PORT, socks5://"),
        ("fetch.proxy=socks5://127.0.0.1:x", "fetch.proxy: 'socks5://127.0.0.1:x'"),
        ("fetch.proxy_username=u", "need fetch.proxy"),
    ],
)
def test_bad_values_are_refused_with_the_key(override: str, said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(None, [override])
    assert said in str(refused.value)


@pytest.mark.parametrize("scheme", ["socks5", "socks5h"])
def test_a_socks5_proxy_is_taken_as_written(scheme: str) -> None:
    config = load_config(None, [f"fetch.proxy={scheme}://127.0.0.1:1080/"])
    assert config.fetch.proxy == f"{scheme}://127.0.0.1:1080"


def test_a_socks5_user_name_is_at_most_255_bytes() -> None:
    with pytest.raises(ConfigError, match=r"fetch\.proxy_username: a SOCKS5 user name is at most"):
        load_config(
            None,
            [
                "fetch.proxy=socks5://127.0.0.1:1080",
                "fetch.proxy_username=" + "u" * 256,
                "fetch.proxy_password_env=PW",
            ],
        )


def test_a_cookie_header_and_the_jar_contradict() -> None:
    with pytest.raises(ConfigError, match=r"fetch\.headers\.Cookie with fetch\.cookies true"):
        load_config(None, ["fetch.headers={Cookie: a=b}", "fetch.cookies=true"])


def test_a_refusal_in_a_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("concurrency: 2\nextract:\n  price: '.price::attr('\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"c.yaml line 3: extract.price:"):
        load_config(path)
