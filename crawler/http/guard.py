"""`AddressGuard`: the addresses a crawl's requests may connect to, asked by both clients about
each address a host resolved to, at connect time (crawler.http.addresses decides).

A crawl tells the guard its seeds (`seeds`): an IP literal seed names its address; a seed's host
name, the addresses it resolves to, learnt when the crawl connects to it (or, should a redirect
reach one of them before that, looked up then, every seed name not yet looked up at once). A
client used alone, with no crawl to tell it seeds, refuses only what
`fetch.block_private_addresses` refuses, as before there were seeds to tell.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urlsplit

from crawler.config import FetchConfig
from crawler.http.addresses import (
    IPNetwork,
    address_refusal,
    blocked_reason,
    normal_address,
    parse_networks,
)

__all__ = ["AddressGuard", "Lookup"]

Lookup = Callable[[str], Awaitable[list[str]]]
"""`lookup(name)`: the addresses a host name resolves to."""


async def _getaddrinfo(name: str) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(name, None, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class AddressGuard:
    """Which addresses the crawl may connect to: public ones, and the others a seed names or the
    config lists (see crawler.http.addresses)."""

    __slots__ = (
        "_allowed",
        "_block",
        "_looking_up",
        "_lookup",
        "_pinned",
        "_seed_addresses",
        "_seed_hosts",
        "_unresolved",
        "seeds_only",
    )

    def __init__(
        self, config: FetchConfig, *, seeds_only: bool = False, lookup: Lookup = _getaddrinfo
    ) -> None:
        """`seeds_only`: a crawl's guard, which lets in the addresses that are not public only
        where a seed names them (or the config lists them); else a lone client's."""
        self.seeds_only = seeds_only
        self._block = config.block_private_addresses
        self._pinned = config.pinned()
        # What fetch.resolve pins a name to, the user named: as if listed.
        pinned: list[IPNetwork] = []
        for address in self._pinned.values():
            normal = normal_address(address)
            if normal is not None:
                pinned.append(ipaddress.ip_network(normal))
        self._allowed = (*parse_networks(config.allow_addresses), *pinned)
        self._lookup = lookup
        self._seed_hosts: set[str] = set()
        self._seed_addresses: set[str] = set()
        self._unresolved: set[str] = set()
        """Seed host names whose addresses are not known yet."""
        self._looking_up: asyncio.Task[None] | None = None

    def seeds(self, urls: Iterable[str]) -> None:
        """The crawl's seeds (all of them so far): their hosts' addresses are the user's."""
        for url in urls:
            try:
                host = (urlsplit(url).hostname or "").lower()
            except ValueError:
                continue
            if not host or host in self._seed_hosts:
                continue
            self._seed_hosts.add(host)
            address = normal_address(host) or normal_address(self._pinned.get(host, ""))
            if address is not None:
                self._seed_addresses.add(address)
            else:
                self._unresolved.add(host)

    async def refusal(self, host: str, address: str) -> str | None:
        """Why `host`, resolved to `address`, may not be connected to: the whole message; None
        when it may."""
        if blocked_reason(address) is None:
            return None  # public: the common case, decided without more
        if not (self.seeds_only or self._block):
            return None
        normal = normal_address(address) or address
        name = host.strip("[]").lower()
        if name in self._seed_hosts:
            self._seed_addresses.add(normal)
            self._unresolved.discard(name)
        seed = normal in self._seed_addresses
        looking_up = self._looking_up is not None and not self._looking_up.done()
        if not seed and self.seeds_only and (self._unresolved or looking_up):
            await self._look_up_seeds()
            seed = normal in self._seed_addresses
        why = address_refusal(
            address,
            seed=seed or not self.seeds_only,
            block_private=self._block,
            allowed=self._allowed,
        )
        return None if why is None else f"{host} is at {address}, {why}"

    async def _look_up_seeds(self) -> None:
        """Every seed name not looked up yet, at once (one look-up for all who ask meanwhile)."""
        while self._unresolved or (self._looking_up is not None and not self._looking_up.done()):
            if self._looking_up is None or self._looking_up.done():
                names = sorted(self._unresolved)
                self._unresolved.clear()
                self._looking_up = asyncio.ensure_future(self._look_up(names))
            await asyncio.shield(self._looking_up)

    async def _look_up(self, names: list[str]) -> None:
        found = await asyncio.gather(
            *(self._lookup(name) for name in names), return_exceptions=True
        )
        for answer in found:
            if isinstance(answer, BaseException):
                continue  # a seed that does not resolve names no address
            for address in answer:
                normal = normal_address(address)
                if normal is not None:
                    self._seed_addresses.add(normal)

    def __repr__(self) -> str:
        return (
            f"AddressGuard({len(self._seed_hosts)} seed hosts, {len(self._seed_addresses)} seed "
            f"addresses, {len(self._unresolved)} not looked up)"
        )
