"""Which addresses `fetch.block_private_addresses` keeps the crawl from connecting to: every one
that is not a public unicast address. Pure; both clients ask it about the addresses a host name
resolved to, at connect time, so that neither a DNS name nor a redirect gets past it.

An IPv6 address that carries an IPv4 one (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4,
Teredo) is judged by the IPv4 address it carries too: ::ffff:127.0.0.1 is loopback.
"""

from __future__ import annotations

import ipaddress

__all__ = ["blocked_reason"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

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
