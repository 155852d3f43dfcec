"""Who the crawl says it is. Pure: the decision whether a crawl goes out under the placeholder
User-Agent, and what to tell the person starting it.

A site's operator who finds an unknown crawler in the logs has the User-Agent to go by: its product
token is what robots.txt groups are matched against (`User-agent: PoliteBot`), and its contact URL
(or the From header, `fetch.from_address`) is whom to ask to slow down. The default,
`PoliteBot/0.1 (+https://example.org/bot)`, names a page on a domain reserved for examples (RFC
2606): it reaches nobody, and every crawl left on it shares one robots.txt token. On loopback, the
crawl's own tests and demo, that does not matter; anywhere else it does.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from crawler.config import DEFAULT_USER_AGENT, Config

__all__ = ["agent_line", "is_loopback_host", "placeholder_user_agent_notice"]


def is_loopback_host(host: str) -> bool:
    """Whether `host` (a name or an IP literal, brackets allowed) is this machine: 127.0.0.0/8,
    ::1 (or an IPv4-mapped 127 address), `localhost` or a name under it (RFC 6761 6.3)."""
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name.partition("%")[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def _hosts(urls: Iterable[str]) -> Iterable[str]:
    for url in urls:
        try:
            host = urlsplit(url.strip()).hostname
        except ValueError:
            continue  # the seeds file reports a URL it cannot read; nothing goes there
        if host:
            yield host


def placeholder_user_agent_notice(config: Config, targets: Iterable[str]) -> str | None:
    """What to say before a crawl that would go out under the placeholder User-Agent to a host
    other than this machine; None when the User-Agent is the crawl's own, or every target (seed
    URLs, and the domains `scope.allow_domains` lets in) is on loopback."""
    if config.user_agent.strip() != DEFAULT_USER_AGENT:
        return None
    remote = sorted(
        {
            host
            for host in (*_hosts(targets), *config.scope.allow_domains)
            if not is_loopback_host(host)
        }
    )
    if not remote:
        return None
    shown = ", ".join(remote[:3]) + (f" and {len(remote) - 3} more" if len(remote) > 3 else "")
    return (
        f"this crawl goes to {shown} as {DEFAULT_USER_AGENT!r}, the placeholder User-Agent.\n"
        "  Its contact page is on example.org, which reaches nobody, and its robots.txt token,\n"
        "  PoliteBot, is shared by every crawl left on it. Site operators read the User-Agent to\n"
        "  know who crawls them and whom to ask; name your crawler and a page about it:\n"
        "    crawl SEEDS --user-agent 'MyBot/1.0 (+https://mysite.example/bot)'\n"
        "  (or -s 'user_agent=...', or user_agent: in the YAML config given with -c). Its first\n"
        "  product, MyBot, becomes the robots.txt token; -s fetch.from_address=you@mysite.example\n"
        "  adds a From header with an address to write to."
    )


def agent_line(config: Config) -> str:
    """What the crawl says at its start of the name it obeys rules as: a site's operator writes
    robots.txt groups for it, and a crawl matched with the wrong token obeys the wrong ones."""
    agent = config.agent_token
    return f"obeying robots.txt, META robots and X-Robots-Tag as {agent.token} ({agent.source})"
