"""An origin's /.well-known/tdmrep.json (W3C TDMRep final report, 2024, section 6.1), read and
matched to a URL. Pure; never raises.

- The file is a JSON array of rules `{"location": PATTERN, "tdm-reservation": 0|1, "tdm-policy":
  URL}`; a URL takes the first rule whose location matches its path ("the most specific match
  is the first in sequence"), matched as robots.txt paths are: by prefix, case-sensitively,
  percent-encoding made canonical, `*` any characters, a final `$` the end.
- Bounded: the first MAX_TDMREP_BYTES of the body, MAX_RULES rules, locations of at most
  MAX_LOCATION_CHARS. A file that is not such an array (malformed, too large, nested past
  Python's parser) is read as no reservation, and the reading says why; so is a rule without a
  location. A reservation other than 0 or 1 is kept as written and read as unset.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Final

from crawler.canonical_urls import canonical_pattern, match_target
from crawler.usage.signals import UsageSignal
from crawler.usage.vocab import TDM_RESERVATION

__all__ = [
    "MAX_LOCATION_CHARS",
    "MAX_RULES",
    "MAX_TDMREP_BYTES",
    "TDMREP_PATH",
    "TdmRep",
    "TdmRule",
    "read_tdmrep",
]

TDMREP_PATH: Final = "/.well-known/tdmrep.json"
MAX_TDMREP_BYTES: Final = 64 * 1024
"""The whole of any real file (a few rules): a bigger one is not read, and is reported."""
MAX_RULES: Final = 1000
MAX_LOCATION_CHARS: Final = 2048


@dataclass(frozen=True, slots=True)
class TdmRule:
    number: int
    """Its place in the file, from 1."""
    location: str
    reservation: str
    """'1', '0', or the value as written (unset)."""
    policy: str | None = None


@dataclass(frozen=True, slots=True)
class TdmRep:
    """What an origin's tdmrep.json says, and how it was had."""

    reason: str
    """'status 200', 'status 404: no file', 'not asked: disallowed by robots.txt', ..."""
    rules: tuple[TdmRule, ...] = ()
    problems: tuple[str, ...] = ()
    """What could not be read, each said once."""

    def signal_for(self, url: str) -> UsageSignal | None:
        """The reservation of the first rule matching `url`'s path, or None."""
        if not self.rules:
            return None
        target = match_target(url)
        for rule in self.rules:
            if _fits(_compiled(rule.location), target):
                source = f"tdmrep.json rule {rule.number} ({rule.location})"
                return UsageSignal(TDM_RESERVATION, source, rule.reservation, rule.policy)
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "rules": [[r.number, r.location, r.reservation, r.policy] for r in self.rules],
            "problems": list(self.problems),
        }

    @classmethod
    def from_json(cls, data: object) -> TdmRep | None:
        """A reading `to_json` kept; None for anything else."""
        if not isinstance(data, dict) or not isinstance(data.get("reason"), str):
            return None
        rules = []
        for item in data.get("rules") or ():
            if isinstance(item, list) and len(item) == 4:
                number, location, reservation, policy = item
                if isinstance(location, str) and isinstance(reservation, str):
                    policy = policy if isinstance(policy, str) else None
                    rules.append(TdmRule(int(number), location, reservation, policy))
        problems = tuple(str(p) for p in data.get("problems") or ())
        return cls(data["reason"], tuple(rules[:MAX_RULES]), problems)


def read_tdmrep(body: bytes, reason: str) -> TdmRep:
    """The rules of a tdmrep.json body fetched with outcome `reason` ('status 200')."""
    if len(body) > MAX_TDMREP_BYTES:
        return TdmRep(reason, problems=(f"over {MAX_TDMREP_BYTES:,} bytes: not read",))
    try:
        data = json.loads(body.decode("utf-8-sig"))
    except (ValueError, RecursionError) as error:
        # UnicodeDecodeError and JSONDecodeError are ValueErrors; so is a number of 5,000 digits.
        return TdmRep(reason, problems=(f"not JSON ({_short(str(error))}): no reservation",))
    if not isinstance(data, list):
        return TdmRep(reason, problems=("not a JSON array of rules: no reservation",))
    rules: list[TdmRule] = []
    problems: dict[str, None] = {}
    if len(data) > MAX_RULES:
        problems[f"{len(data):,} rules: the first {MAX_RULES:,} read"] = None
    for number, item in enumerate(data[:MAX_RULES], 1):
        rule = _rule(number, item, problems)
        if rule is not None:
            rules.append(rule)
    return TdmRep(reason, tuple(rules), tuple(problems))


def _rule(number: int, item: object, problems: dict[str, None]) -> TdmRule | None:
    if not isinstance(item, dict):
        problems[f"rule {number}: not an object, skipped"] = None
        return None
    location = item.get("location")
    if not isinstance(location, str) or not location.startswith(("/", "*")):
        problems[f"rule {number}: no location that is a path, skipped"] = None
        return None
    if len(location) > MAX_LOCATION_CHARS:
        problems[f"rule {number}: location over {MAX_LOCATION_CHARS:,} characters, skipped"] = None
        return None
    value = item.get("tdm-reservation")
    # 1 and 0 as JSON numbers; anything else (true, "1", 2) is kept as written and read as unset.
    reservation = (
        str(value) if type(value) is int and value in (0, 1) else _short(json.dumps(value))
    )
    if reservation not in ("0", "1"):
        problems[f"rule {number}: tdm-reservation {reservation}: expected 0 or 1, unset"] = None
    policy = item.get("tdm-policy")
    if policy is not None and not isinstance(policy, str):
        problems[f"rule {number}: tdm-policy is not a URL, ignored"] = None
        policy = None
    return TdmRule(number, location, reservation, _short(policy) if policy else None)


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:199] + "…"


_Pattern = tuple[str, tuple[str, ...], bool]


@functools.lru_cache(maxsize=4096)
def _compiled(location: str) -> _Pattern:
    """(head, the parts after each `*`, anchored) of a location in canonical form."""
    pattern = canonical_pattern(location)
    anchored = pattern.endswith("$")
    if anchored:
        pattern = pattern[:-1]
    head, *rest = pattern.split("*")
    return head, tuple(rest), anchored


def _fits(compiled: _Pattern, target: str) -> bool:
    head, rest, anchored = compiled
    if not target.startswith(head):
        return False
    if not rest:
        return not anchored or target == head
    # Leftmost placement of each part is enough for `*`-only patterns (no backtracking); the last
    # part of an anchored pattern must end the path.
    position = len(head)
    last = len(rest) - 1
    for index, part in enumerate(rest):
        if index == last and anchored:
            return target.endswith(part) and len(target) - len(part) >= position
        found = target.find(part, position)
        if found == -1:
            return False
        position = found + len(part)
    return True
