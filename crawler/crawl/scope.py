"""Which URLs belong to a crawl (`Scope`): the seeds' hosts, optionally their subdomains, allowed
domains, and allow and deny patterns (the `scope.*` config). Pure.
"""

from __future__ import annotations

import re

from crawler.stats import SkipReason
from crawler.urls import domain_to_ascii, extensions_of, host_of

__all__ = ["Scope"]


class Scope:
    """Which normal URLs belong to a crawl: by host (the seeds' hosts, optionally their
    subdomains, plus allowed domains with theirs), then by pattern (deny wins, then allow).

    `reason_out(url)` is None for a URL in scope, else the reason it is out, as a skip value.
    `seed_hosts`: whether a seed's host is in scope as such (scope.seed_hosts); a host a seed
    redirects to then joins them (`reason_out_as_seed`)."""

    __slots__ = ("_allow", "_deny", "_domains", "_extensions", "_hosts", "_known", "seed_hosts")

    def __init__(
        self,
        hosts: frozenset[str] = frozenset(),
        domains: tuple[str, ...] = (),
        allow: tuple[str, ...] = (),
        deny: tuple[str, ...] = (),
        *,
        seed_hosts: bool = True,
        skip_extensions: tuple[str, ...] = (),
    ) -> None:
        self.seed_hosts = seed_hosts
        self._extensions = frozenset(ext.lower().lstrip(".") for ext in skip_extensions)
        self._hosts = hosts
        self._domains = tuple(domain_to_ascii(domain) for domain in domains)
        # One regex each: joined into one, flags, group names and back-references would clash.
        self._allow = tuple(re.compile(pattern) for pattern in allow)
        self._deny = tuple(re.compile(pattern) for pattern in deny)
        # Host decisions are few and asked often: one dict probe per URL after the first.
        self._known: dict[str, bool] = {}

    @classmethod
    def for_seeds(
        cls,
        seeds: tuple[str, ...],
        *,
        seed_hosts: bool = True,
        include_subdomains: bool = False,
        allow_domains: tuple[str, ...] = (),
        allow: tuple[str, ...] = (),
        deny: tuple[str, ...] = (),
        skip_extensions: tuple[str, ...] = (),
    ) -> Scope:
        hosts = frozenset(host_of(seed) for seed in seeds) if seed_hosts else frozenset()
        domains = allow_domains + (tuple(hosts) if include_subdomains else ())
        return cls(
            hosts,
            domains,
            allow,
            deny,
            seed_hosts=seed_hosts,
            skip_extensions=skip_extensions,
        )

    def host_in_scope(self, host: str) -> bool:
        known = self._known.get(host)
        if known is None:
            known = host in self._hosts or any(
                host == domain or host.endswith("." + domain) for domain in self._domains
            )
            if len(self._known) < 100_000:
                self._known[host] = known
        return known

    def reason_out(self, url: str) -> SkipReason | None:
        if not self.host_in_scope(host_of(url)):
            return "out of scope: host"
        return self._pattern_reason(url)

    def reason_out_of_hosts(self, url: str) -> SkipReason | None:
        """The host part of `reason_out` alone: a sitemap is fetched from any host in scope,
        whatever its path (the patterns and extensions choose pages, among what it lists)."""
        return None if self.host_in_scope(host_of(url)) else "out of scope: host"

    def _pattern_reason(self, url: str) -> SkipReason | None:
        if self._deny and any(pattern.search(url) for pattern in self._deny):
            return "out of scope: deny pattern"
        if self._allow and not any(pattern.search(url) for pattern in self._allow):
            return "out of scope: no allow pattern"
        if self._extensions and not self._extensions.isdisjoint(extensions_of(url)):
            return "not HTML by its extension"
        return None

    def explain(self, url: str, reason: SkipReason) -> str:
        """The rule behind `reason`, which `reason_out(url)` gave: a skip's detail."""
        if reason == "out of scope: host":
            host = host_of(url)
            if not self._domains:
                return f"{host} is not a seed's host"
            return f"{host} is not a seed's host, nor in an allowed domain"
        if reason == "out of scope: deny pattern":
            pattern = next(pattern for pattern in self._deny if pattern.search(url))
            return f"scope.deny {pattern.pattern!r} matches"
        if reason == "out of scope: no allow pattern":
            return "no scope.allow pattern matches"
        if reason == "not HTML by its extension":
            found = sorted(self._extensions.intersection(extensions_of(url)))
            return f"extension .{found[0] if found else '?'} is in scope.skip_extensions"
        return reason

    def reason_out_as_seed(self, url: str) -> SkipReason | None:
        """The reason `url` would be out if its host were a seed's: None when seeds' hosts are
        in scope and no pattern keeps it out."""
        if not self.seed_hosts:
            return "out of scope: host"
        return self._pattern_reason(url)

    def __repr__(self) -> str:
        return f"Scope(hosts={sorted(self._hosts)}, domains={list(self._domains)})"
