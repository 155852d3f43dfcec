"""`UsageSignal`: one statement of a site's owner about the use of a page, and where it came
from; and what the statements that apply to a page decide for a purpose. Pure.

How statements combine for a purpose:
- TDMRep's own sources override each other, the more specific later one winning even when it is
  more permissive (TDMRep section 6.7): tdmrep.json, then the header, then the META tag.
- Everything else, and the TDMRep value left standing, combine most restrictively: the purpose
  is refused when any of them refuses it (aipref vocab-08 section 5.1 says so across aipref's
  own methods; across families no text says, and the most restrictive reading is the polite one).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from crawler.usage.purposes import PURPOSES, Purpose
from crawler.usage.vocab import (
    KINDS,
    NOAI,
    NOIMAGEAI,
    TDM_RESERVATION,
    Reading,
    family_of,
    read_signal,
)

__all__ = [
    "UsageSignal",
    "refusal",
    "refused_purposes",
    "refusing",
    "refusing_kinds",
    "signals_from_json",
    "signals_json",
]

MAX_SIGNALS = 64
"""Signals kept per page: a page that sends a thousand headers says no more than one that sends
sixty-four, and its record must stay small."""


@dataclass(frozen=True, slots=True)
class UsageSignal:
    kind: str
    """Which signal (crawler.usage.vocab.KINDS): Content-Signal, Content-Usage, noai, noimageai,
    tdm-reservation."""
    source: str
    """Where it was said: 'robots.txt line 3', 'header', 'meta robots', 'X-Robots-Tag',
    'tdmrep.json rule 2 (/private/)', 'meta tdm-reservation'."""
    value: str
    """What was said, as written (for noai and noimageai, the word)."""
    policy: str | None = None
    """TDMRep's tdm-policy URL beside a reservation: how to ask for a licence (recorded, not
    fetched)."""

    def reading(self) -> Reading:
        return _reading(self.kind, self.value)

    def describe(self) -> str:
        if self.kind in (NOAI, NOIMAGEAI):
            return f"{self.kind} ({self.source})"
        return f"{self.kind} {self.value!r} ({self.source})"

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"signal": self.kind, "source": self.source, "value": self.value}
        if self.policy is not None:
            found["policy"] = self.policy
        found["refuses"] = list(self.reading().refuses())
        return found


@functools.lru_cache(maxsize=1024)
def _reading(kind: str, value: str) -> Reading:
    return read_signal(kind, value)


def _tdm_rank(signal: UsageSignal) -> int:
    source = signal.source
    return 0 if source.startswith("tdmrep.json") else 2 if source.startswith("meta") else 1


def _standing(signals: Sequence[UsageSignal]) -> list[UsageSignal]:
    """The signals that count: TDMRep's most specific valid one, and all others."""
    tdm = [s for s in signals if s.kind == TDM_RESERVATION and s.reading().says]
    standing = [s for s in signals if s.kind != TDM_RESERVATION]
    if tdm:
        # The most specific source; among equals, the last said (sorted keeps their order).
        standing.append(sorted(tdm, key=_tdm_rank)[-1])
    return standing


def refusing(signals: Sequence[UsageSignal], purpose: str) -> list[UsageSignal]:
    """The signals that refuse `purpose`, in the order given."""
    if not signals:
        return []
    return [s for s in _standing(signals) if s.reading().on(purpose) is False]


def refusal(signals: Sequence[UsageSignal], purpose: str) -> str | None:
    """Why `purpose` may not use a page with these signals, or None when it may."""
    found = refusing(signals, purpose)
    if not found:
        return None
    return f"usage: {purpose} refused by " + "; ".join(s.describe() for s in found)


def refused_purposes(signals: Sequence[UsageSignal]) -> tuple[Purpose, ...]:
    return tuple(purpose for purpose in PURPOSES if refusing(signals, purpose))


def refusing_kinds(signals: Sequence[UsageSignal], purpose: str) -> tuple[str, ...]:
    """The kinds of signal (Content-Signal, Content-Usage, noai, TDMRep) that refuse `purpose`,
    each once."""
    return tuple(dict.fromkeys(family_of(s.kind) for s in refusing(signals, purpose)))


def signals_json(signals: Iterable[UsageSignal]) -> list[dict[str, Any]]:
    return [signal.to_json() for signal in signals]


def signals_from_json(text: str | None) -> tuple[UsageSignal, ...]:
    """Signals as an index row or a state keeps them (`signals_json`, as JSON text); what is not
    a signal is left out."""
    if not text:
        return ()
    try:
        items = json.loads(text)
    except ValueError:
        return ()
    found: list[UsageSignal] = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        kind, source, value = item.get("signal"), item.get("source"), item.get("value")
        policy = item.get("policy")
        if kind in KINDS and isinstance(source, str) and isinstance(value, str):
            found.append(
                UsageSignal(kind, source, value, policy if isinstance(policy, str) else None)
            )
    return tuple(found[:MAX_SIGNALS])
