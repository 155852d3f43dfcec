"""What a crawl may be for. The user says it (`--purpose`, `usage.purpose`); each signal refuses
some of these (crawler.usage.vocab).

- `search`: building a search index and showing results that link to the pages, with short
  excerpts (aipref vocab-08 section 4.3; Content Signals section 3.1). No AI-written summaries.
- `ai-input`: giving pages to an AI model as input at the time it answers: retrieval-augmented
  generation, grounding, AI search answers (Content Signals section 3.2; aipref vocab-08 section
  4.2, "AI Use").
- `ai-train`: training or fine-tuning AI models on the pages (Content Signals section 3.3; aipref
  vocab-08 section 4.1, "AI Training").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal, get_args

from crawler.errors import ConfigError

__all__ = [
    "PURPOSES",
    "PURPOSE_MEANINGS",
    "Purpose",
    "check_purpose",
    "purpose_bit",
    "refused_bits",
]

Purpose = Literal["search", "ai-input", "ai-train"]
PURPOSES: Final[tuple[Purpose, ...]] = get_args(Purpose)
PURPOSE_MEANINGS: Final[dict[Purpose, str]] = {
    "search": "a search index whose results link to the pages, with short excerpts",
    "ai-input": "pages given to an AI model as input when it answers (RAG, grounding)",
    "ai-train": "training or fine-tuning AI models on the pages",
}
_BITS: Final[dict[str, int]] = {purpose: 1 << number for number, purpose in enumerate(PURPOSES)}


def purpose_bit(purpose: str) -> int:
    """The purpose's bit in an index row's `refuses` column."""
    return _BITS[purpose]


def refused_bits(purposes: Iterable[str]) -> int:
    bits = 0
    for purpose in purposes:
        bits |= _BITS[purpose]
    return bits


def check_purpose(purpose: str | None) -> None:
    """ConfigError for a purpose that is none of PURPOSES (None: the default, fine)."""
    if purpose is not None and purpose not in PURPOSES:
        raise ConfigError(f"unknown purpose {purpose!r} (known: {', '.join(PURPOSES)})")
