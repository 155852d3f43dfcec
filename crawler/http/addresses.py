"""Which addresses the crawl may connect to. Pure; both clients ask it (through crawler.http.guard)
about the addresses a host name resolved to, at connect time, so that neither a DNS name nor a
redirect gets past it.

- A public unicast address: always.
- Any other (loopback, private, link-local, shared, reserved, multicast, unspecified:
  `blocked_reason` says which): when a seed names it (the user did: the address a seed's host is,
  or resolves to), or `fetch.allow_addresses` (and `fetch.resolve`) list it; a redirect, a link
  or a robots.txt hop to another is refused. `fetch.block_private_addresses` refuses the seeds'
  too: everything not public but what the allow list names.
- A cloud metadata service's address (`METADATA_ADDRESSES`): only when a seed names it, and never
  with `fetch.block_private_addresses`; no allow list lets one in. A server-side request that
  reaches one gives its credentials away.

An IPv6 address that carries an IPv4 one (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4,
Teredo) is judged by the IPv4 address it carries too: ::ffff:127.0.0.1 is loopback.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "METADATA_ADDRESSES",
    "Address",
    "IPNetwork",
    "address_refusal",
    "blocked_reason",
    "interleaved",
    "normal_address",
    "parse_networks",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, Google Cloud (metadata.google.internal), Azure, Oracle, ...
        "fd00:ec2::254",  # AWS over IPv6
        "169.254.170.2",  # AWS ECS task metadata
        "100.100.100.200",  # Alibaba Cloud
    )
)
"""Cloud instance metadata services: the credentials of the machine the crawl runs on."""

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")  # RFC 6598, carrier-grade NAT


def blocked_reason(address: str) -> str | None:
    """Why `address` (an IP address as text; an IPv6 one may carry a %zone) is not to be
    connected to, or None for a public unicast address. Text that is no IP address is blocked:
    what cannot be judged is not connected to."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return "not an IP address"
    for carried in _carried(ip):
        reason = _reason(carried)
        if reason is not None:
            return reason if carried == ip else f"{reason} (as {carried})"
    return None


def _carried(ip: IPAddress) -> list[IPAddress]:
    """The addresses to judge: an IPv4-mapped or NAT64 address by the IPv4 address it stands
    for alone (their own prefixes are reserved space); a 6to4 or Teredo one by itself and what
    it carries."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return [ip.ipv4_mapped]
        if ip in _NAT64:
            return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
        found: list[IPAddress] = [ip]
        if ip.sixtofour is not None:
            found.append(ip.sixtofour)
        if ip.teredo is not None:
            found.extend(ip.teredo)
        return found
    return [ip]


def _reason(ip: IPAddress) -> str | None:
    # Order matters: 127.0.0.1 is private too, and 169.254.169.254 reserved; the first name that
    # fits is the one a reader expects.
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address (cloud metadata services live here)"
    if ip.is_multicast:
        return "a multicast address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED:
        return "a shared (carrier-grade NAT) address"
    if ip.is_reserved:
        return "a reserved address"
    if ip.is_private:
        return "a private address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return "a site-local address"
    if not ip.is_global:
        return "not a public address"
    return None


def normal_address(address: str) -> str | None:
    """`address` (an IP address as text, an IPv6 one maybe with a %zone) in its one written
    form, or None when it is no IP address."""
    try:
        return ipaddress.ip_address(address.partition("%")[0]).compressed
    except ValueError:
        return None


def parse_networks(entries: Iterable[str]) -> tuple[IPNetwork, ...]:
    """Addresses and networks as `fetch.allow_addresses` writes them (`10.0.0.0/8`,
    `192.168.1.5`, `::1`); ValueError naming the first that is neither."""
    networks: list[IPNetwork] = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is no IP address or network (CIDR)") from None
    return tuple(networks)


def address_refusal(
    address: str, *, seed: bool, block_private: bool, allowed: Sequence[IPNetwork] = ()
) -> str | None:
    """Why the crawl may not connect to `address`, as the rest of "HOST is at ADDRESS, ..."; None
    when it may. `seed`: a seed names the address (its host is it, or resolves to it)."""
    reason = blocked_reason(address)
    if reason is None:
        return None
    ip = ipaddress.ip_address(address.partition("%")[0])
    carried = [ip, *(_carried(ip))]
    if any(each in METADATA_ADDRESSES for each in carried):
        if seed and not block_private:
            return None
        return "a cloud metadata service's address: not connected to unless a seed names it"
    if any(each in network for each in carried for network in allowed):
        return None
    if block_private:
        return f"{reason}: not connected to (fetch.block_private_addresses)"
    if seed:
        return None
    return f"{reason}, not one a seed names: not connected to (fetch.allow_addresses lets one in)"


Address = tuple[int, tuple[Any, ...]]
"""An address family and a socket address, as the resolver gives them."""


def interleaved(addresses: list[Address]) -> list[Address]:
    """The resolver's addresses with the families taking turns, the first family first (RFC
    8305 section 4): a broken family costs one attempt before the other is tried."""
    first = [entry for entry in addresses if entry[0] == addresses[0][0]] if addresses else []
    others = [entry for entry in addresses if entry[0] != addresses[0][0]] if addresses else []
    turns: list[Address] = []
    for index in range(max(len(first), len(others))):
        turns += first[index : index + 1] + others[index : index + 1]
    return turns
