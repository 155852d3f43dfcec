"""The usage signals of an answer's headers (crawler.usage.headers), and the noai words of its
X-Robots-Tag and META robots, read with their other words (crawler.page.read)."""

from __future__ import annotations

from multidict import CIMultiDict, CIMultiDictProxy

from crawler.page.read import read_page
from crawler.usage.headers import header_signals


def headers(*pairs: tuple[str, str]) -> CIMultiDictProxy[str]:
    return CIMultiDictProxy(CIMultiDict(pairs))


def test_content_usage_field_lines_are_one_dictionary() -> None:
    (signal,) = header_signals(
        headers(("Content-Usage", "train-ai=n"), ("content-usage", "train-ai=y"))
    )
    assert signal.value == "train-ai=n, train-ai=y"
    assert signal.reading().says == (("ai-train", True),)  # the last of a key counts


def test_x_robots_tag_ai_words_for_everyone_or_for_our_token() -> None:
    found = read_page(
        b"<p>x</p>",
        "https://a.test/",
        x_robots_tag=(
            "otherbot: noai",
            "crawler: noimageai, noindex",
            "unavailable_after: 2030-01-01, noai",
        ),
    ).usage
    assert [(s.kind, s.source) for s in found] == [
        ("noimageai", "X-Robots-Tag"),
        ("noai", "X-Robots-Tag"),
    ]


def test_tdm_headers_with_the_policy_beside() -> None:
    (signal,) = header_signals(
        headers(("TDM-Reservation", "1"), ("tdm-policy", " https://a.test/p.json "))
    )
    assert (signal.kind, signal.value, signal.policy) == (
        "tdm-reservation",
        "1",
        "https://a.test/p.json",
    )


def test_no_signal_headers_no_signals() -> None:
    assert header_signals(headers(("X-Robots-Tag", "noindex"))) == ()


def meta_words(content: str) -> tuple[str, ...]:
    html = f'<meta name="robots" content="{content}"><p>x</p>'.encode()
    return tuple(signal.value for signal in read_page(html, "https://a.test/").usage)


def test_meta_words() -> None:
    assert meta_words("noindex, NoAI") == ("noai",)
    assert meta_words("noai noimageai") == ("noai", "noimageai")
    assert meta_words("noainot") == ()


def test_a_robots_section_with_noai_is_no_section() -> None:
    html = b'<p>kept</p><!-- robots content="noai" --><p>also kept</p><!-- /robots -->'
    page = read_page(html, "https://a.test/")
    assert (page.text, page.sections, page.usage) == ("kept also kept", 0, ())
