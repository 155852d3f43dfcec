"""The usage signals a page's META tags give (crawler.page.read: `Page.usage`), read on both
walks, and never changing what the robots words decide."""

from __future__ import annotations

from crawler.page.read import PageRules, read_page
from crawler.usage.signals import UsageSignal


def usage(head: str, token: str = "crawler") -> tuple[UsageSignal, ...]:
    html = f"<html><head>{head}</head><body><p>words</p></body></html>".encode()
    page = read_page(html, "https://a.test/", rules=PageRules(token=token))
    assert page.index and page.text == "words"  # use signals never touch indexing by robots rules
    return page.usage


def test_noai_and_noimageai_in_meta_robots_and_our_tokens_meta() -> None:
    assert usage('<meta name="robots" content="noindex-not, NOAI">') == (
        UsageSignal("noai", "meta robots", "noai"),
    )
    assert usage('<meta name="Crawler" content="noimageai, noai">') == (
        UsageSignal("noai", "meta crawler", "noai"),
        UsageSignal("noimageai", "meta crawler", "noimageai"),
    )


def test_another_robots_meta_is_not_ours() -> None:
    assert usage('<meta name="otherbot" content="noai">') == ()


def test_tdm_reservation_meta_with_its_policy() -> None:
    assert usage(
        '<meta name="tdm-policy" content="https://a.test/p.json">'
        '<meta name="TDM-Reservation" content=" 1 ">'
    ) == (UsageSignal("tdm-reservation", "meta tdm-reservation", "1", "https://a.test/p.json"),)


def test_a_page_without_signals_has_none() -> None:
    assert usage('<meta name="robots" content="index, follow">') == ()


def test_a_page_noindex_and_noai_says_both() -> None:
    html = b'<html><head><meta name="robots" content="noindex, noai"></head><body>x</body></html>'
    page = read_page(html, "https://a.test/")
    assert (page.index, page.usage) == (False, (UsageSignal("noai", "meta robots", "noai"),))
