"""robots.txt: parse once, answer many questions. Pure: no I/O, no clock reads.

The public face of the engine (SPEC sections 1 to 5):
- `RobotsTxt.parse(body, **options)` never raises for any bytes; `can_fetch`, `explain`,
  `crawl_delay`, `request_rate(s)`, `visit_time` and `sitemaps` answer for a product token.
- Defaults follow RFC 9309: groups apply by exact product token, else the `*` groups, else none;
  the longest pattern wins, Allow on a tie; `/robots.txt` is always allowed. The legacy options
  from the seeds (`RobotsOptions`) each change exactly one of these decisions.
- `validate_product_token` says why a token cannot be matched, and crawler.robots.agent which
  token a User-Agent string names. What a fetch outcome means is crawler.robots.outcome's.

How the work is split, for speed: `lines` sorts lines into groups at parse time; `rules`
compiles the rules of the groups that apply to an agent on the first question about it, and
keeps them; `rates` reads the rate and time extensions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from crawler.canonical_urls import match_target
from crawler.errors import InvalidRobotsOptionError
from crawler.robots.agent import product_token_from_user_agent, validate_product_token
from crawler.robots.lines import (
    CRAWL_DELAY,
    MAX_BODY_BYTES,
    MAX_LINE_BYTES,
    REQUEST_RATE,
    VISIT_TIME,
    WHITESPACE,
    Group,
    is_star,
    prepare,
    product_token_of,
    scan,
)
from crawler.robots.rates import (
    RequestRate,
    TimeWindow,
    parse_crawl_delay,
    parse_request_rate,
    parse_visit_time,
    second_of_day,
)
from crawler.robots.rules import DEFAULT_OPTIONS, AgentView, Names, RobotsOptions, Substrings
from crawler.robots.usage_lines import UsageLine, applying, usage_lines

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_LINE_BYTES",
    "Explanation",
    "RobotsOptions",
    "RobotsTxt",
    "UsageLine",
    "product_token_from_user_agent",
    "validate_product_token",
]

Agent = str | Sequence[str]


# --- the public face -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a URL is allowed or not: the deciding line, the group that applied, or why none did."""

    allowed: bool
    reason: Literal["rule", "no-matching-rule", "no-group", "robots-txt", "policy"]
    message: str
    line: int | None = None
    """Number of the deciding line (1-based; CRLF counts as one line end)."""
    text: str | None = None
    """The deciding line as written, without its comment."""
    group: tuple[tuple[int, str], ...] = ()
    """The User-agent lines (number, value) of the groups that applied."""

    def __str__(self) -> str:
        return self.message


class RobotsTxt:
    """A parsed robots.txt. Immutable to its users; it memoises the rules compiled per agent."""

    __slots__ = (
        "_by_groups",
        "_groups",
        "_names",
        "_options",
        "_policy",
        "_sitemaps",
        "_text",
        "_views",
    )

    def __init__(
        self,
        text: str,
        groups: list[Group],
        sitemaps: list[str],
        options: RobotsOptions,
        policy: Explanation | None = None,
    ) -> None:
        self._text = text
        self._groups = groups
        self._sitemaps = tuple(sitemaps)
        self._options = options
        self._policy = policy
        self._views: dict[Agent, AgentView] = {}
        # Agents that land on the same groups share one compiled view: most robots.txt files name
        # few robots, so most agents fall to the same `*` groups.
        self._by_groups: dict[tuple[bool, tuple[int, ...]], AgentView] = {}
        self._names: list[tuple[bool, Names]] | None = None

    @classmethod
    def parse(cls, body: bytes | str, **options: object) -> RobotsTxt:
        """Parse a robots.txt body; never raises for any bytes. Options: see RobotsOptions."""
        parsed_options = _options_from(options)
        text = prepare(body)
        groups, sitemaps = scan(text)
        return cls(text, groups, sitemaps, parsed_options)

    @classmethod
    def allow_all(cls, reason: str) -> RobotsTxt:
        """Rules for an origin whose robots.txt is unavailable (4xx): everything allowed."""
        return cls._policy_only(True, f"allowed: {reason}")

    @classmethod
    def disallow_all(cls, reason: str) -> RobotsTxt:
        """Rules for an origin whose robots.txt is unreachable (5xx, network error)."""
        return cls._policy_only(False, f"disallowed: {reason}")

    @classmethod
    def _policy_only(cls, allowed: bool, message: str) -> RobotsTxt:
        policy = Explanation(allowed=allowed, reason="policy", message=message)
        return cls("", [], [], DEFAULT_OPTIONS, policy)

    @classmethod
    def restore(cls, text: str, options: RobotsOptions, policy: Explanation | None) -> RobotsTxt:
        """The rules again from what `text` and `policy` gave, read with `options` (a crawl state
        keeps robots.txt files this way)."""
        if policy is not None:
            return cls._policy_only(policy.allowed, policy.message)
        groups, sitemaps = scan(text)
        return cls(text, groups, sitemaps, options)

    @property
    def text(self) -> str:
        """The body the rules were read from, as `prepare` left it (undecodable bytes as
        surrogate escapes); empty for `allow_all` and `disallow_all` rules."""
        return self._text

    @property
    def policy(self) -> Explanation | None:
        """The one decision of `allow_all` and `disallow_all` rules; None for a parsed file."""
        return self._policy

    @property
    def options(self) -> RobotsOptions:
        return self._options

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """Sitemap URLs in file order; they belong to no group."""
        return self._sitemaps

    def can_fetch(self, url: str, agent: Agent) -> bool:
        """May `agent` (a product token, or several) fetch `url` (a full URL, or a path with
        query)?"""
        target = match_target(url)
        if target == "/robots.txt":
            return True
        if self._policy is not None:
            return self._policy.allowed
        view = self._views.get(agent) if isinstance(agent, str) else None
        if view is None:
            view = self._view(agent)
        return view.allowed(target)

    def explain(self, url: str, agent: Agent) -> Explanation:
        """The decision for `url` with its grounds: the deciding line, or why nothing applied."""
        target = match_target(url)
        if target == "/robots.txt":
            return Explanation(True, "robots-txt", "allowed: /robots.txt itself is always allowed")
        if self._policy is not None:
            return self._policy
        view = self._view(agent)
        group = tuple(line for g in view.groups for line in g.agents)
        if not view.groups:
            names = ", ".join(_tokens(agent)) or "''"
            return Explanation(
                True,
                "no-group",
                f"allowed: no group names {names} and there is no 'User-agent: *' group",
            )
        whose = "; ".join(f"line {number}: User-agent: {value}" for number, value in group)
        entry = view.first_match(target)
        if entry is None:
            return Explanation(
                True,
                "no-matching-rule",
                f"allowed: no rule of the group ({whose}) matches {target}",
                group=group,
            )
        _, disallow, line, _, _, _, synthetic = entry
        text = self._line_text(line)
        verdict = "disallowed" if disallow else "allowed"
        how = ", read also as allowing its directory" if synthetic else ""
        return Explanation(
            not disallow,
            "rule",
            f"{verdict} by line {line} {text!r}{how} in the group ({whose})",
            line=line,
            text=text,
            group=group,
        )

    def usage_lines(self, url: str, agent: Agent) -> tuple[UsageLine, ...]:
        """The Content-Signal and Content-Usage lines that apply to `url` for `agent`: none when
        robots.txt disallows it (crawler.robots.usage_lines)."""
        if self._policy is not None:
            return ()
        view = self._view(agent)
        if not usage_lines(view):
            return ()
        target = match_target(url)
        if not view.allowed(target):
            return ()
        return applying(view, target)

    def all_usage_lines(self, agent: Agent) -> tuple[UsageLine, ...]:
        """Every usage line of the groups that apply to `agent`, in file order."""
        if self._policy is not None:
            return ()
        return usage_lines(self._view(agent))

    def crawl_delay(self, agent: Agent) -> float | None:
        """Seconds between requests the agent's group asks for; the largest if it says several."""
        delays = [parse_crawl_delay(v) for v in self._view(agent).extension_values(CRAWL_DELAY)]
        valid = [delay for delay in delays if delay is not None]
        return max(valid) if valid else None

    def request_rates(self, agent: Agent) -> tuple[RequestRate, ...]:
        """Every valid Request-rate line of the agent's group, each with its window if any."""
        rates = (parse_request_rate(v) for v in self._view(agent).extension_values(REQUEST_RATE))
        return tuple(rate for rate in rates if rate is not None)

    def request_rate(self, agent: Agent, now: float | None = None) -> RequestRate | None:
        """The strictest Request-rate in force at `now` (epoch seconds), or over the whole day when
        `now` is None."""
        rates = self.request_rates(agent)
        if now is not None:
            second = second_of_day(now)
            rates = tuple(rate for rate in rates if rate.applies_at(second))
        return max(rates, key=lambda rate: rate.interval, default=None)

    def visit_time(self, agent: Agent) -> tuple[TimeWindow, ...]:
        """The UTC windows in which the agent may visit; empty means any time."""
        windows = (parse_visit_time(v) for v in self._view(agent).extension_values(VISIT_TIME))
        return tuple(window for window in windows if window is not None)

    def _view(self, agent: Agent) -> AgentView:
        key: Agent = agent if isinstance(agent, str) else tuple(agent)
        view = self._views.get(key)
        if view is None:
            view = self._select(_tokens(agent))
            self._views[key] = view
        return view

    def _select(self, tokens: tuple[str, ...]) -> AgentView:
        lowered = [token.lower() for token in tokens]
        specific: list[int] = []
        star: list[int] = []
        for index, (names_all, names) in enumerate(self._group_names()):
            if not names.isdisjoint(lowered):
                specific.append(index)
            elif names_all:
                star.append(index)
        key = (True, tuple(specific)) if specific else (False, tuple(star))
        view = self._by_groups.get(key)
        if view is None:
            groups = [self._groups[index] for index in key[1]]
            view = self._by_groups[key] = AgentView(groups, key[0], self._options)
        return view

    def _group_names(self) -> list[tuple[bool, Names]]:
        """Per group: does it name every robot (`*`), and which names does it give."""
        if self._names is None:
            substring = self._options.agent_match == "substring"
            self._names = [
                (
                    any(is_star(value) for _, value in group.agents),
                    Substrings(value.lower() for _, value in group.agents if not is_star(value))
                    if substring
                    else {product_token_of(v).lower() for _, v in group.agents if not is_star(v)},
                )
                for group in self._groups
            ]
        return self._names

    def _line_text(self, number: int) -> str:
        lines = self._text.split("\n")
        line = lines[number - 1] if 0 < number <= len(lines) else ""
        return line.partition("#")[0].strip(WHITESPACE)

    def __repr__(self) -> str:
        if self._policy is not None:
            return f"RobotsTxt({self._policy.message!r})"
        rules = sum(group.rule_count() for group in self._groups)
        return (
            f"RobotsTxt(groups={len(self._groups)}, rules={rules}, sitemaps={len(self._sitemaps)})"
        )


def _tokens(agent: Agent) -> tuple[str, ...]:
    return (agent,) if isinstance(agent, str) else tuple(agent)


def _options_from(options: dict[str, object]) -> RobotsOptions:
    if not options:
        return DEFAULT_OPTIONS
    known = set(RobotsOptions.__dataclass_fields__)
    unknown = sorted(set(options) - known)
    if unknown:
        raise InvalidRobotsOptionError(
            f"unknown robots option {', '.join(unknown)}; "
            f"expected one of {', '.join(sorted(known))}"
        )
    return RobotsOptions(**options)  # type: ignore[arg-type]
