"""The usage signals of an answer's headers and META words (crawler.usage.headers)."""

from __future__ import annotations

from multidict import CIMultiDict, CIMultiDictProxy

from crawler.usage.headers import header_signals, meta_ai_words


def headers(*pairs: tuple[str, str]) -> CIMultiDictProxy[str]:
    return CIMultiDictProxy(CIMultiDict(pairs))


def test_content_usage_field_lines_are_one_dictionary() -> None:
    (signal,) = header_signals(
        headers(("Content-Usage", "train-ai=n"), ("content-usage", "train-ai=y")), "crawler"
    )
    assert signal.value == "train-ai=n, train-ai=y"
    assert signal.reading().says == (("ai-train", True),)  # the last of a key counts


def test_x_robots_tag_ai_words_for_everyone_or_for_our_token() -> None:
    found = header_signals(
        headers(
            ("X-Robots-Tag", "otherbot: noai"),
            ("X-Robots-Tag", "crawler: noimageai, noindex"),
            ("X-Robots-Tag", "unavailable_after: 2030-01-01, noai"),
        ),
        "crawler",
    )
    assert [(s.kind, s.source) for s in found] == [
        ("noimageai", "X-Robots-Tag"),
        ("noai", "X-Robots-Tag"),
    ]


def test_tdm_headers_with_the_policy_beside() -> None:
    (signal,) = header_signals(
        headers(("TDM-Reservation", "1"), ("tdm-policy", " https://a.test/p.json ")), "crawler"
    )
    assert (signal.kind, signal.value, signal.policy) == (
        "tdm-reservation",
        "1",
        "https://a.test/p.json",
    )


def test_no_signal_headers_no_signals() -> None:
    assert header_signals(headers(("X-Robots-Tag", "noindex")), "crawler") == ()


def test_meta_words() -> None:
    assert meta_ai_words("noindex, NoAI") == ("noai",)
    assert meta_ai_words("noai noimageai") == ("noai", "noimageai")
    assert meta_ai_words("noainot") == ()
