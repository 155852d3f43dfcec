"""The `fetch:` section: the HTTP client's timeouts, caps, redirects and retries, where a name
connects, and what users bring to each request (headers, cookies, credentials, a proxy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from crawler.config.users import AuthEntry, read_auth, read_headers, read_proxy
from crawler.config.values import field_spec as _spec


@dataclass(frozen=True, slots=True)
class FetchConfig:
    """The HTTP client: timeouts, size cap, redirects, retries, where a name connects, and what
    users bring to each request (headers, cookies, credentials, a proxy)."""

    connect_timeout: float = _spec(10.0, minimum=0.001)
    read_timeout: float = _spec(30.0, minimum=0.001)
    total_timeout: float = _spec(60.0, minimum=0.001)
    """Deadline of a whole answer (robots.txt included), from the connect's start to the last
    body byte: a server dripping bytes just under read_timeout holds a request no longer."""
    max_body_bytes: int = _spec(5 * 1024 * 1024, minimum=1)
    """Cap on a page's decoded (decompressed) body; the rest is not read."""
    html_only: bool = True
    """Read only HTML bodies of pages; others' bodies are not downloaded. false reads every
    body (up to max_body_bytes), so that output.warc archives PDFs, images and the rest too
    (scope.skip_extensions still says which links are fetched); links come from HTML only."""
    page_requisites: bool = False
    """For each HTML page, also fetch what a browser loads to show it (stylesheets and what
    they import, images, scripts, icons, fonts, frames), wherever it lives: after its host's
    robots.txt, at its host's pace, without its host joining the scope. Archived with
    output.warc (which it needs); never indexed. wget's --page-requisites."""
    max_requisites_per_page: int = _spec(100, minimum=1)
    """Requisites taken from one page (or stylesheet), in document order; the rest are not
    fetched."""
    max_requisite_bytes: int = _spec(10 * 1024 * 1024, minimum=1)
    """Cap on a requisite's decoded body; the rest is not read (WARC-Truncated: length)."""
    requisite_media: bool = False
    """Also fetch <audio> and <video> media (each up to max_requisite_bytes)."""
    max_redirects: int = _spec(5, minimum=0)
    max_retries: int = _spec(3, minimum=0)
    """Retries of a URL after 429, 5xx, timeouts or connection errors, before giving up."""
    client: Literal["auto", "http1", "aiohttp"] = "auto"
    """The HTTP client: http1 (crawler.http.http1, on httptools), aiohttp, or auto: http1 where
    httptools is installed, else aiohttp."""
    verify_tls: bool = True
    """Verify servers' certificates and host names; false only for sites you control."""
    ca_bundle: str = ""
    """A PEM file of the certificate authorities to trust instead of the system's."""
    slow_after: float = _spec(1.0, minimum=0.001)
    """A request running longer than this no longer counts against `concurrency` (up to
    max_slow_requests such requests): slow servers cannot take the slots of the crawl."""
    max_slow_requests: int = _spec(1_000, minimum=0)
    """Slow requests (past slow_after) that may wait on their servers beside `concurrency`
    others: each costs a socket and a few kilobytes while it waits."""
    block_private_addresses: bool = False
    """Refuse to connect to any loopback, private, link-local, multicast, reserved or
    unspecified address, the seeds' own too, but those allow_addresses lists: for a service
    that crawls URLs its users give it. Off (the default), such an address is connected to only
    when a seed names it (its host is it, or resolves to it) or allow_addresses lists it; a
    redirect, link or robots.txt hop to another is refused, a skip ('address refused'). Checked
    on the resolved address at connect time. A cloud metadata address (169.254.169.254,
    fd00:ec2::254, ...) only when a seed names it, and never with this on."""
    allow_addresses: tuple[str, ...] = ()
    """Addresses and networks that are not public which the crawl may connect to besides the
    seeds' own: 10.0.0.0/8, 192.168.1.5, ::1 (no cloud metadata address)."""
    from_address: str = ""
    """An e-mail address sent as the From header of every request, robots.txt's included (RFC
    9110 10.1.2): whom a site's operator can write to about the crawl. Empty: no From header."""
    resolve: tuple[str, ...] = _spec((), pairs=True)
    """Host names and the address to connect to for each, as curl's --resolve: a mapping
    (`{staging.example.org: 10.0.0.5}`) or HOST=ADDRESS strings. The URL, the Host header, TLS
    and robots.txt stay the name's; only the connection goes to the address, whatever DNS says."""

    headers: tuple[tuple[str, str], ...] = _spec((), read=read_headers)
    """Request headers sent with every page and sitemap request (not robots.txt's, which every
    crawler asks for alike): a mapping, {X-Api-Key: abc, Accept-Language: fr}. Those the crawl
    sets itself (Host, User-Agent, Authorization, ...: crawler.config.users) are refused."""
    cookies: bool = False
    """Keep the cookies sites set (RFC 6265: domain, path, expiry, Secure), one jar per crawl,
    kept in the state so a resumed or shared crawl keeps its session. robots.txt requests send
    none."""
    auth: tuple[AuthEntry, ...] = _spec((), read=read_auth)
    """HTTP Basic credentials, each for the URLs under a prefix: a list of {url: PREFIX,
    username: NAME, password_env: VARIABLE}, the password read from that environment variable.
    Over https only, but to a loopback host or with allow_http: true."""
    proxy: str = _spec("", read=read_proxy)
    """A proxy every request goes through, robots.txt's included: http://HOST:PORT (https URLs
    tunnel through it, CONNECT), or SOCKS5, socks5://HOST:PORT (the crawl resolves the names,
    so the address guard judges every address) or socks5h://HOST:PORT (the proxy resolves
    them). Empty: none."""
    proxy_username: str = ""
    """The proxy's user name, when it asks for one (Basic; SOCKS5's RFC 1929 login)."""
    proxy_password_env: str = ""
    """The environment variable that holds the proxy's password."""

    def pinned(self) -> dict[str, str]:
        """`resolve` as a map from host name (lower case) to IP address."""
        return {
            host.strip().lower(): address.strip()
            for host, _, address in (entry.partition("=") for entry in self.resolve)
        }
