"""The usage signals of an answer's headers, and of the robots words of a META tag. Pure.

- `Content-Usage` (aipref attach-05 section 2): its field lines joined with commas are one
  Structured Fields dictionary (RFC 9651 section 4.2), one signal.
- `Content-Signal`: its field lines joined with commas, one signal, read as the robots.txt line.
- `X-Robots-Tag`: the words `noai` and `noimageai`, for every robot or, after `AGENT:`, for our
  product token (the prefix holds for the words after it in the same header, as for noindex).
- `tdm-reservation` and `tdm-policy` (TDMRep section 6.2).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final, Protocol

from crawler.usage.signals import MAX_SIGNALS, UsageSignal
from crawler.usage.vocab import (
    CONTENT_SIGNAL,
    CONTENT_USAGE,
    MAX_VALUE_CHARS,
    NOAI,
    NOIMAGEAI,
    TDM_RESERVATION,
)

__all__ = ["AI_WORDS", "Headers", "header_signals", "meta_ai_words"]

AI_WORDS: Final = (NOAI, NOIMAGEAI)
_WORD_SEPARATORS: Final = re.compile(r"[\s,]+")
# X-Robots-Tag directives that take a value after a colon, so the colon names no agent.
_VALUED: Final = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
_WORDS: Final = frozenset(
    {"noindex", "nofollow", "none", "nosnippet", "index", "follow", "all", "noarchive", *AI_WORDS}
)


class Headers(Protocol):
    def getall(self, key: str, default: Sequence[str], /) -> Sequence[str]: ...


def meta_ai_words(content: str) -> tuple[str, ...]:
    """noai and noimageai, each once, among the words of a META robots content."""
    lowered = content.lower()
    if "noai" not in lowered and "noimageai" not in lowered:
        return ()
    words = set(_WORD_SEPARATORS.split(lowered))
    return tuple(word for word in AI_WORDS if word in words)


def _joined(values: Iterable[str]) -> str:
    return ", ".join(value.strip() for value in values)[:MAX_VALUE_CHARS]


def _x_robots_ai_words(values: Sequence[str], token: str) -> list[str]:
    found: dict[str, None] = {}
    for value in values:
        lowered = value.lower()
        if "noai" not in lowered and "noimageai" not in lowered:
            continue
        agent: str | None = None
        for item in lowered.split(","):
            name, colon, rest = item.partition(":")
            if colon:
                key = name.strip()
                if key in _VALUED:
                    continue
                if key not in _WORDS:
                    agent, item = key, rest
            if agent is None or agent == token:
                for word in meta_ai_words(item):
                    found[word] = None
    return list(found)


def header_signals(headers: Headers, token: str) -> tuple[UsageSignal, ...]:
    """The usage signals of an answer's headers that speak to `token` (our product token)."""
    signals: list[UsageSignal] = []
    usage = headers.getall("Content-Usage", ())
    if usage:
        signals.append(UsageSignal(CONTENT_USAGE, "header", _joined(usage)))
    content_signal = headers.getall("Content-Signal", ())
    if content_signal:
        signals.append(UsageSignal(CONTENT_SIGNAL, "header", _joined(content_signal)))
    x_robots = headers.getall("X-Robots-Tag", ())
    if x_robots:
        words = _x_robots_ai_words(x_robots, token.lower())
        signals.extend(UsageSignal(word, "X-Robots-Tag", word) for word in words)
    reservation = headers.getall("tdm-reservation", ())
    if reservation:
        policies = headers.getall("tdm-policy", ())
        policy = policies[0].strip()[:MAX_VALUE_CHARS] if policies else None
        # One field; several say no more than the last (TDMRep: later values supersede).
        value = reservation[-1].strip()[:MAX_VALUE_CHARS]
        signals.append(UsageSignal(TDM_RESERVATION, "header", value, policy or None))
    return tuple(signals[:MAX_SIGNALS])
