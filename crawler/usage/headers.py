"""The usage signals of an answer's headers. Pure. (noai and noimageai in X-Robots-Tag are read
with its other words, by crawler.page.read.)

- `Content-Usage` (aipref attach-05 section 2): its field lines joined with commas are one
  Structured Fields dictionary (RFC 9651 section 4.2), one signal.
- `Content-Signal`: its field lines joined with commas, one signal, read as the robots.txt line.
- `tdm-reservation` and `tdm-policy` (TDMRep section 6.2).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from crawler.usage.signals import MAX_SIGNALS, UsageSignal
from crawler.usage.vocab import CONTENT_SIGNAL, CONTENT_USAGE, MAX_VALUE_CHARS, TDM_RESERVATION

__all__ = ["Headers", "header_signals"]


class Headers(Protocol):
    def getall(self, key: str, default: Sequence[str], /) -> Sequence[str]: ...


def _joined(values: Iterable[str]) -> str:
    return ", ".join(value.strip() for value in values)[:MAX_VALUE_CHARS]


def header_signals(headers: Headers) -> tuple[UsageSignal, ...]:
    """The usage signals of an answer's headers."""
    signals: list[UsageSignal] = []
    usage = headers.getall("Content-Usage", ())
    if usage:
        signals.append(UsageSignal(CONTENT_USAGE, "header", _joined(usage)))
    content_signal = headers.getall("Content-Signal", ())
    if content_signal:
        signals.append(UsageSignal(CONTENT_SIGNAL, "header", _joined(content_signal)))
    reservation = headers.getall("tdm-reservation", ())
    if reservation:
        policies = headers.getall("tdm-policy", ())
        policy = policies[0].strip()[:MAX_VALUE_CHARS] if policies else None
        # One field; several say no more than the last (TDMRep: later values supersede).
        value = reservation[-1].strip()[:MAX_VALUE_CHARS]
        signals.append(UsageSignal(TDM_RESERVATION, "header", value, policy or None))
    return tuple(signals[:MAX_SIGNALS])
