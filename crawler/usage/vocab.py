"""Each usage signal's value read into what it says per purpose: allowed, refused, or nothing
(absent from the result). Pure; every reader takes any text and never raises: what it cannot read
it reports in `Reading.problems` and reads as saying nothing.

The readings (the README's table of signals says the same, with its sources):
- Content-Signal (robots.txt line or header; draft-romm-aipref-contentsignals-00 section 3 and
  the policy text of contentsignals.org): comma-separated `key=yes|no`; `search`, `ai-input` and
  `ai-train` name our purposes one to one. Keys and values are read case-insensitively, as the
  files Cloudflare writes vary. `use=` (Cloudflare's level of use) is recorded and refuses
  nothing: no text defines its levels. A key said twice: the most restrictive reading.
- Content-Usage (robots.txt line or header; draft-ietf-aipref-attach-05 sections 2 and 3,
  draft-ietf-aipref-vocab-08 section 6.5): a Structured Fields dictionary (RFC 9651), its labels
  `search`, `ai-use` and `train-ai` to search, ai-input and ai-train; the Token `y` allows, `n`
  refuses, anything else says nothing; a key said twice: the last one (vocab 6.5.1); parameters
  ignored; a value that does not parse says nothing at all. Labels of earlier drafts (`bots`,
  `train-genai`, ...) are unknown to vocab-08 and ignored, as it says unknown labels must be.
- noai, noimageai (META robots and X-Robots-Tag; DeviantArt's announcement, 2022): "either of
  these directives" excludes the content from AI training datasets, and it "may not be used as
  input to AI models": both refuse ai-train and ai-input; neither says anything of search.
- tdm-reservation (tdmrep.json, header, META; W3C TDMRep final report, 2024, section 5.1): 1
  reserves text-and-data-mining rights (EU DSM directive, Article 4): ai-train and ai-input are
  refused; 0 allows them; search is no TDM (the TDMRep group's note on TDM's meaning), so neither
  speaks of it. Any other value is unset (section 5.1: a protocol error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from crawler.usage.purposes import Purpose

__all__ = [
    "CONTENT_SIGNAL",
    "CONTENT_USAGE",
    "KINDS",
    "NOAI",
    "NOIMAGEAI",
    "TDM_RESERVATION",
    "Reading",
    "family_of",
    "read_signal",
]

CONTENT_SIGNAL: Final = "Content-Signal"
CONTENT_USAGE: Final = "Content-Usage"
NOAI: Final = "noai"
NOIMAGEAI: Final = "noimageai"
TDM_RESERVATION: Final = "tdm-reservation"
KINDS: Final = (CONTENT_SIGNAL, CONTENT_USAGE, NOAI, NOIMAGEAI, TDM_RESERVATION)
_FAMILIES: Final = {
    CONTENT_SIGNAL: "Content-Signal",
    CONTENT_USAGE: "Content-Usage",
    NOAI: "noai",
    NOIMAGEAI: "noai",
    TDM_RESERVATION: "TDMRep",
}

_SIGNAL_KEYS: Final[dict[str, Purpose]] = {
    "search": "search",
    "ai-input": "ai-input",
    "ai-train": "ai-train",
}
_SIGNAL_VALUES: Final = {"yes": True, "no": False}
_SIGNAL_RECORDED: Final = frozenset({"use"})
_USAGE_LABELS: Final[dict[str, Purpose]] = {
    "search": "search",
    "ai-use": "ai-input",
    "train-ai": "ai-train",
}
_USAGE_VALUES: Final = {"y": True, "n": False}
_AI: Final[tuple[Purpose, ...]] = ("ai-input", "ai-train")
MAX_VALUE_CHARS: Final = 2048
"""A value is read up to this many characters: a signal is a few words, and a hostile one of
megabytes must cost no more than a normal one."""


@dataclass(frozen=True, slots=True)
class Reading:
    """What one signal's value says: (purpose, allowed) pairs, and what could not be read."""

    says: tuple[tuple[Purpose, bool], ...] = ()
    problems: tuple[str, ...] = ()

    def refuses(self) -> tuple[Purpose, ...]:
        return tuple(purpose for purpose, allowed in self.says if not allowed)

    def on(self, purpose: str) -> bool | None:
        """True allowed, False refused, None: says nothing of `purpose`."""
        for said, allowed in self.says:
            if said == purpose:
                return allowed
        return None


def family_of(kind: str) -> str:
    """The kind of signal a summary counts refusals under: noai and noimageai are one."""
    return _FAMILIES.get(kind, kind)


def read_signal(kind: str, value: str) -> Reading:
    """What a signal of `kind` (KINDS) with `value` says."""
    value = value[:MAX_VALUE_CHARS]
    if kind == CONTENT_SIGNAL:
        return read_content_signal(value)
    if kind == CONTENT_USAGE:
        return read_content_usage(value)
    if kind in (NOAI, NOIMAGEAI):
        return Reading(tuple((purpose, False) for purpose in _AI))
    if kind == TDM_RESERVATION:
        return read_tdm_reservation(value)
    return Reading(problems=(f"unknown signal {kind!r}",))


def read_content_signal(value: str) -> Reading:
    says: dict[Purpose, bool] = {}
    problems: list[str] = []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        key, equals, word = item.partition("=")
        key, word = key.strip().lower(), word.strip().lower()
        if not equals:
            problems.append(f"{item!r} is no key=value pair, ignored")
        elif key in _SIGNAL_KEYS:
            allowed = _SIGNAL_VALUES.get(word)
            purpose = _SIGNAL_KEYS[key]
            if allowed is None:
                problems.append(f"{key}={word}: expected yes or no, ignored")
            else:
                # A key said twice: the most restrictive reading.
                says[purpose] = says.get(purpose, True) and allowed
        elif key not in _SIGNAL_RECORDED:
            problems.append(f"unknown key {key!r}, ignored")
    return Reading(tuple(says.items()), tuple(problems))


def read_content_usage(value: str) -> Reading:
    # Imported on the first Content-Usage met, which most crawls never meet: http_sf brings
    # typing_extensions and inspect, some 6% of the instructions a crawl's start-up takes.
    import http_sf

    try:
        parsed = http_sf.parse(value.strip().encode("utf-8", "replace"), tltype="dictionary")
    except (http_sf.StructuredFieldError, ValueError, RecursionError) as error:
        # vocab-08 6.5: a value that is not a dictionary says nothing of any category.
        return Reading(problems=(f"not a Structured Fields dictionary ({error}), ignored",))
    assert isinstance(parsed, dict)
    says: dict[Purpose, bool] = {}
    problems: list[str] = []
    for label, member in parsed.items():
        # A member is (item, parameters), or (inner list, parameters): only a Token item counts.
        item = member[0] if isinstance(member, tuple) else None
        purpose = _USAGE_LABELS.get(label)
        if purpose is None:
            problems.append(f"unknown label {label!r}, ignored")
            continue
        allowed = _USAGE_VALUES.get(str(item)) if isinstance(item, http_sf.Token) else None
        if allowed is None:
            problems.append(f"{label}: expected the token y or n, says nothing")
            says.pop(purpose, None)  # the last value of a key is the one that counts
        else:
            says[purpose] = allowed
    return Reading(tuple(says.items()), tuple(problems))


def read_tdm_reservation(value: str) -> Reading:
    word = value.strip()
    if word == "1":
        return Reading(tuple((purpose, False) for purpose in _AI))
    if word == "0":
        return Reading(tuple((purpose, True) for purpose in _AI))
    return Reading(problems=(f"tdm-reservation {word!r}: expected 0 or 1, read as unset",))
