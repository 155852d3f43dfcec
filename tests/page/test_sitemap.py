"""crawler.page.sitemap: a sitemap's bytes in, its URLs out, within the protocol's caps."""

from __future__ import annotations

import datetime
import gzip
import zlib

import pytest

from crawler.page.sitemap import MAX_URLS, SitemapEntry, parse_lastmod, read_sitemap

SITEMAP = "http://example.com/catalog/sitemap.xml"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*entries: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{"".join(entries)}</urlset>'.encode()
    )


def url(loc: str, extra: str = "") -> str:
    return f"<url><loc>{loc}</loc>{extra}</url>"


def test_a_urlset_gives_each_url_with_its_lastmod_changefreq_and_priority() -> None:
    read = read_sitemap(
        urlset(
            url(
                "http://example.com/catalog/a?x=1&amp;y=2",
                "<lastmod>2026-11-20T10:00:00+01:00</lastmod><changefreq>daily</changefreq>"
                "<priority>0.8</priority>",
            ),
            url("http://example.com/catalog/b", "<lastmod>2026-11</lastmod><priority>7</priority>"),
            url("  http://EXAMPLE.com:80/catalog/c  "),
        ),
        SITEMAP,
    )
    assert read.kind == "urlset" and read.cut is None and read.error is None
    assert read.entries == (
        SitemapEntry(
            "http://example.com/catalog/a?x=1&y=2",
            datetime.datetime(2026, 11, 20, 9, tzinfo=datetime.UTC).timestamp(),
            "daily",
            0.8,
        ),
        # A priority outside 0.0-1.0 is no priority.
        SitemapEntry(
            "http://example.com/catalog/b",
            datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC).timestamp(),
        ),
        SitemapEntry("http://example.com/catalog/c"),  # normal form
    )


def test_a_sitemap_lists_only_urls_under_its_own_location_unless_cross_submitted() -> None:
    body = urlset(
        url("http://example.com/catalog/ok"),
        url("http://example.com/images/no"),
        url("https://example.com/catalog/other-scheme"),
        url("http://other.example/catalog/x"),
        url("not a url"),
        "<url><lastmod>2026-01-01</lastmod></url>",
    )
    read = read_sitemap(body, SITEMAP)
    assert [entry.url for entry in read.entries] == ["http://example.com/catalog/ok"]
    refused = dict(read.refused)
    assert refused["http://example.com/images/no"] == (
        "outside the sitemap's location (http://example.com/catalog/)"
    )
    assert "http://other.example/catalog/x" in refused
    assert "https://example.com/catalog/other-scheme" in refused
    reasons = dict(read.skipped)
    assert set(reasons) == {"not a url", ""}
    assert reasons["not a url"].startswith("not a URL")
    assert reasons[""] == "an entry without <loc>"
    # other.example's robots.txt named this sitemap: the protocol's cross-submission.
    crossed = read_sitemap(body, SITEMAP, also_allowed=lambda u: u.startswith("http://other."))
    assert "http://other.example/catalog/x" in [entry.url for entry in crossed.entries]


def test_an_index_names_sitemaps_of_its_own_site() -> None:
    body = (
        f"<sitemapindex {NS}>"
        "<sitemap><loc>http://example.com/s1.xml.gz</loc><lastmod>2026-11-01</lastmod></sitemap>"
        "<sitemap><loc>http://example.com/deep/s2.txt</loc></sitemap>"
        "<sitemap><loc>http://elsewhere.example/s3.xml</loc></sitemap>"
        "</sitemapindex>"
    ).encode()
    read = read_sitemap(body, "http://example.com/sitemap_index.xml")
    assert read.kind == "index"
    assert [entry.url for entry in read.entries] == [
        "http://example.com/s1.xml.gz",
        "http://example.com/deep/s2.txt",
    ]
    assert read.refused == (
        ("http://elsewhere.example/s3.xml", "a sitemap index names sitemaps of its own site only"),
    )
    assert read.skipped == ()


def test_gzip_is_told_by_its_bytes_and_a_text_sitemap_is_a_url_a_line() -> None:
    body = urlset(url("http://example.com/catalog/z"))
    assert read_sitemap(gzip.compress(body), SITEMAP).entries == read_sitemap(body, SITEMAP).entries
    text = b"http://example.com/catalog/1\r\n\nhttp://example.com/catalog/2\n  \nnonsense\n"
    read = read_sitemap(gzip.compress(text), "http://example.com/catalog/urls.txt")
    assert read.kind == "text"
    assert [entry.url for entry in read.entries] == [
        "http://example.com/catalog/1",
        "http://example.com/catalog/2",
    ]
    assert [(line, reason.split(":")[0]) for line, reason in read.skipped] == [
        ("nonsense", "not a URL")
    ]


def test_a_sitemap_past_the_url_cap_is_read_up_to_it() -> None:
    body = urlset(*(url(f"http://example.com/catalog/{n}") for n in range(MAX_URLS + 10)))
    read = read_sitemap(body, SITEMAP)
    assert len(read.entries) == MAX_URLS
    assert read.cut == f"more than {MAX_URLS} URLs"
    text = "".join(f"http://example.com/catalog/{n}\n" for n in range(30)).encode()
    small = read_sitemap(text, "http://example.com/catalog/t.txt", max_urls=20)
    assert len(small.entries) == 20 and small.cut == "more than 20 URLs"


def test_a_gzip_bomb_is_decompressed_no_further_than_the_byte_cap() -> None:
    # 100 MB of a valid sitemap's whitespace, about 100 KB compressed.
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [squeeze.compress(urlset(url("http://example.com/catalog/first"))[: -len("</urlset>")])]
    megabyte = b" " * (1 << 20)
    parts += [squeeze.compress(megabyte) for _ in range(100)]
    parts.append(squeeze.flush())
    bomb = b"".join(parts)
    assert len(bomb) < 1 << 20
    read = read_sitemap(bomb, SITEMAP)
    assert read.cut == f"more than {50 * 1024 * 1024} bytes"
    assert [entry.url for entry in read.entries] == ["http://example.com/catalog/first"]
    text = read_sitemap(
        b"http://example.com/catalog/a\n" * 10, "http://example.com/catalog/t", max_bytes=100
    )
    assert text.cut == "more than 100 bytes"
    assert len(text.entries) == 3  # 100 bytes hold three whole lines; the cut one is not a URL


def test_what_is_no_sitemap_says_why_and_keeps_what_came_before() -> None:
    broken = read_sitemap(urlset(url("http://example.com/catalog/a"))[:-3] + b"<<", SITEMAP)
    assert broken.error is not None and broken.error.startswith("malformed XML")
    assert [entry.url for entry in broken.entries] == ["http://example.com/catalog/a"]
    html = read_sitemap(b"<!doctype html><html><body>404</body></html>", SITEMAP)
    assert html.kind is None and html.error is not None
    feed = read_sitemap(b"<rss><channel/></rss>", SITEMAP)
    assert feed.error == "not a sitemap: the root is <rss>"
    damaged = read_sitemap(
        gzip.compress(b"http://example.com/catalog/a\n")[:-12] + b"xxxxxxxxxxxx", SITEMAP
    )
    assert damaged.error is not None and "gzip" in damaged.error
    assert read_sitemap(b"", SITEMAP).entries == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026", datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)),
        ("2026-11", datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)),
        ("2026-11-24", datetime.datetime(2026, 11, 24, tzinfo=datetime.UTC)),
        ("2026-11-24T10:30Z", datetime.datetime(2026, 11, 24, 10, 30, tzinfo=datetime.UTC)),
        (
            "2026-11-24T10:30:15.5-05:00",
            datetime.datetime(2026, 11, 24, 15, 30, 15, 500000, tzinfo=datetime.UTC),
        ),
        ("2026-11-24T10:30:15", datetime.datetime(2026, 11, 24, 10, 30, 15, tzinfo=datetime.UTC)),
    ],
)
def test_lastmod_reads_every_w3c_datetime_form(text: str, expected: datetime.datetime) -> None:
    assert parse_lastmod(text) == expected.timestamp()


@pytest.mark.parametrize("text", ["", "yesterday", "2026-13-01", "24/11/2026"])
def test_an_unreadable_lastmod_is_none(text: str) -> None:
    assert parse_lastmod(text) is None


def test_entity_expansion_is_refused_not_performed() -> None:
    """A "billion laughs": ten levels of ten entities each. expat (2.4 and later) stops it."""
    entities = b"".join(
        b'<!ENTITY lol%d "%s">' % (level, (b"&lol%d;" % (level - 1) if level > 1 else b"lol") * 10)
        for level in range(1, 10)
    )
    body = b"<!DOCTYPE lolz [" + entities + b"]><urlset><url><loc>&lol9;</loc></url></urlset>"
    read = read_sitemap(body, SITEMAP)
    assert read.entries == ()
    assert read.error is not None and read.error.startswith("malformed XML")
