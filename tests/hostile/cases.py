"""The hostile cases, one host each, and the well-behaved control hosts crawled beside them.

A `Case` says how its host misbehaves (its routes) and what the crawl must make of it (`expect`
and the bounds). Every hostile host answers /robots.txt with `Crawl-delay: 0.2` unless the case is
about robots.txt, so the politeness check has an interval to hold; its seed is `/` unless said.
"""

from __future__ import annotations

import datetime
import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from hostile.servers import (
    CHUNK,
    Exchange,
    Hit,
    HostileHost,
    Route,
    brotli_bomb,
    close_now,
    deflate_bomb,
    drip,
    gzip_bomb,
    hang,
    html_page,
    raw,
    reset_after,
    response,
    stream_forever,
)

__all__ = [
    "CASE_DELAY",
    "HEARTBEAT_DELAY",
    "URL_LIMIT",
    "Case",
    "Control",
    "build_cases",
    "build_controls",
    "build_starvation",
    "prepare_bombs",
]

CASE_DELAY = 0.2
"""Crawl-delay of every hostile host whose robots.txt is not the case."""
CONTROL_DELAY = 0.15
HEARTBEAT_DELAY = 0.3
HEARTBEAT_PAGES = 40
DRIP_INTERVAL = 0.4
"""Seconds between dripped bytes: below the crawl's read timeout, so only a deadline for the
whole answer ends the request."""
URL_LIMIT = 2083
"""The longest URL a crawler should ask for (Scrapy's and Heritrix's limit, named by the issue)."""

Expect = Literal["error", "page", "links", "skip", "recorded", "capped", "bounded"]
"""What the seed's record must be:
error     a page record with an `error` (no usable answer), or a skip with a reason
page      a page record with a 2xx status
links     a 2xx page record whose links include `links` and exclude `absent`
skip      a skip whose reason contains `skip_reason`
recorded  a page record or a skip, whatever it says (the case is about something else)
capped    a page record that is `truncated` or has an `error`: the body was not read whole
bounded   a trap: the host's requests stay within the page budget, and the crawl reports it
"""


@dataclass
class Case:
    name: str
    group: str
    expected: str
    """The expected outcome, in words, for the report table."""
    routes: dict[str, Route]
    expect: Expect
    robots: Route | None = None
    """None: `Crawl-delay: 0.2`, nothing disallowed."""
    seed: str = "/"
    subject: str | None = None
    """The path whose record is judged; None: the seed."""
    links: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    nofollow: tuple[str, ...] = ()
    skip_reason: str = ""
    delay: float = CASE_DELAY
    """The host's interval: no two of its requests (robots.txt included) may start closer."""
    deadline: float | None = None
    """Seconds the client may keep a request to the seed (or /robots.txt, for `deadline_path`)
    open, from its arrival to the client closing the connection."""
    deadline_path: str | None = None
    loop_watch: bool = False
    """The answer must not hold the crawl's event loop: the heartbeat host's pace holds."""
    memory_watch: bool = False
    """Peak RSS while this host is being answered stays under the bound."""
    retry_after: bool = False
    """A 503 with Retry-After: the retry comes within politeness.backoff_max."""
    max_seed_requests: int | None = None
    """Requests for the seed allowed (None: 1 + fetch.max_retries)."""
    accepts_connections: bool = True
    other_host: bool = False
    """The case redirects to a second host of its own, which must never be asked."""
    host: HostileHost = field(init=False)
    other: HostileHost | None = field(init=False, default=None)

    def make_hosts(self, addresses: Iterator[str]) -> list[HostileHost]:
        routes = {"/robots.txt": self.robots or robots_route(), **self.routes}
        self.host = HostileHost(
            next(addresses), routes, accepts_connections=self.accepts_connections
        )
        if not self.other_host:
            return [self.host]
        self.other = HostileHost(next(addresses), {"/robots.txt": robots_route()})
        self.other.routes["/"] = raw(response(200, html_page(title="elsewhere")))
        return [self.host, self.other]


@dataclass
class Control:
    """A well-behaved host: every page in `pages` must be fetched, at its Crawl-delay."""

    name: str
    host: HostileHost
    delay: float
    pages: tuple[str, ...]


def robots_route(
    text: str = f"User-agent: *\nCrawl-delay: {CASE_DELAY}\nDisallow: /private\n",
) -> Route:
    return raw(response(200, text.encode(), content_type="text/plain"))


def page(*links: str, title: str = "page") -> Route:
    return raw(response(200, html_page(*links, title=title)))


def head(*lines: str, status: str = "HTTP/1.1 200 OK", content_type: str = "text/html") -> bytes:
    """A response head (no body), lines as given."""
    all_lines = [status, f"Content-Type: {content_type}", "Connection: close", *lines]
    return ("\r\n".join(all_lines) + "\r\n\r\n").encode("latin-1")


FOUND = page(title="found")
ERROR = "a page record with an error (or a skip), retried at most fetch.max_retries times"


def _slow_cases() -> list[Case]:
    body = html_page("/found", title="slow")
    whole = response(200, body)
    split = len(whole) - len(body)
    return [
        Case(
            "headers-dripped",
            "slow",
            "cut at fetch.total_timeout; " + ERROR,
            {"/": drip(b"", whole, DRIP_INTERVAL)},
            "error",
            deadline=3.0 + 1.0,
        ),
        Case(
            "body-dripped",
            "slow",
            "cut at fetch.total_timeout; " + ERROR,
            {"/": drip(whole[:split], body, DRIP_INTERVAL)},
            "error",
            deadline=3.0 + 1.0,
        ),
        Case(
            "never-answers",
            "slow",
            "cut at fetch.read_timeout; " + ERROR,
            {"/": hang()},
            "error",
            deadline=1.0 + 1.0,
        ),
        Case(
            "connect-never-completes",
            "slow",
            "connect times out; robots.txt unreachable, host given up: a skip with the error",
            {},
            "skip",
            skip_reason="host given up",
            accepts_connections=False,
        ),
    ]


def _big_cases() -> list[Case]:
    endless = stream_forever(head(), b"<p>" + b"endless " * 1000 + b"</p>\n")
    ten_gb = stream_forever(head("Content-Length: 10737418240"), b"x" * CHUNK)
    bombs: list[Case] = []
    for name, encoding in (
        ("gzip-bomb", "gzip"),
        ("deflate-bomb", "deflate"),
        ("brotli-bomb", "br"),
    ):
        bombs.append(
            Case(
                name,
                "big",
                "1 GiB decoded from ~1 MB: cut at fetch.max_body_bytes inside one chunk, "
                "truncated or an error; RSS bounded; the loop stays free",
                {"/": _bomb_route(encoding)},
                "capped",
                memory_watch=True,
                loop_watch=True,
            )
        )
    fifty_mb = stream_forever(
        head(f"Content-Length: {50 * 2**20 + 64}")
        + b'<html><body><a href="/found">found</a><p>'.ljust(64, b" "),
        b"a" * CHUNK,
        limit=50 * 2**20,
    )
    hundred_k_links = "".join(f'<a href="/l/{n}">{n}</a>' for n in range(100_000))
    nested = "<div>" * 100_000 + '<a href="/found">found</a>' + "</div>" * 100_000
    five_mb = 5 * 2**20 - 100
    nul_attribute = b'<a href="/found">found</a><a href="' + b"\0" * five_mb + b'">x</a>'
    end_attributes = b'<a href="/found">found</a>' + b"</p a>" * (five_mb // 6)
    return [
        Case(
            "endless-body",
            "big",
            "read up to fetch.max_body_bytes: truncated (or an error)",
            {"/": endless},
            "capped",
            memory_watch=True,
        ),
        Case(
            "ten-gb-content-length",
            "big",
            "read up to fetch.max_body_bytes: truncated (or an error)",
            {"/": ten_gb},
            "capped",
            memory_watch=True,
        ),
        *bombs,
        Case(
            "megabyte-of-headers",
            "big",
            "a clear error (no client reads 1 MB of headers)",
            {"/": raw(head(*(f"X-Big-{n}: {'b' * 65_000}" for n in range(16))) + b"<p>x</p>")},
            "error",
            memory_watch=True,
        ),
        Case(
            "ten-thousand-header-lines",
            "big",
            "recorded: read or refused, never a traceback",
            {"/": raw(head(*(f"X-H-{n}: v" for n in range(10_000))) + html_page("/found"))},
            "recorded",
        ),
        Case(
            "header-line-never-ends",
            "big",
            "a clear error once the head is over the client's limit",
            {"/": stream_forever(b"HTTP/1.1 200 OK\r\nX-Forever: ", b"a" * CHUNK)},
            "error",
            memory_watch=True,
        ),
        Case(
            "fifty-mb-line",
            "big",
            "truncated at fetch.max_body_bytes, its first link found; the loop stays free",
            {"/": fifty_mb},
            "capped",
            links=("/found",),
            loop_watch=True,
            memory_watch=True,
        ),
        Case(
            "hundred-thousand-links",
            "big",
            "a 2xx page; the loop stays free; the host's budget bounds what is fetched",
            {"/": raw(response(200, hundred_k_links.encode()))},
            "page",
            loop_watch=True,
            memory_watch=True,
        ),
        Case(
            "nul-bytes-in-an-attribute",
            "big",
            "5 MB of NULs in one href (1 GB and 10 s of lexbor): dropped; a 2xx page, its "
            "first link found; the loop stays free",
            {"/": raw(response(200, nul_attribute))},
            "page",
            links=("/found",),
            loop_watch=True,
            memory_watch=True,
        ),
        Case(
            "end-tags-with-attributes",
            "big",
            "5 MB of `</p a>`: cut where the attributes cost MAX_WORK; a 2xx page, its first "
            "link found; the loop stays free",
            {"/": raw(response(200, end_attributes))},
            "page",
            links=("/found",),
            loop_watch=True,
            memory_watch=True,
        ),
        Case(
            "hundred-thousand-nested",
            "big",
            "a 2xx page, read flat past depth 512 as browsers hold it: its last link found; "
            "the loop stays free",
            {"/": raw(response(200, nested.encode()))},
            "links",
            links=("/found",),
            loop_watch=True,
        ),
    ]


BOMBS: dict[str, bytes] = {}
"""Each bomb by its Content-Encoding, made once by `prepare_bombs` before the crawl starts (a
second or two of CPU), so the servers' loop is not busy making one while the crawl runs."""


def prepare_bombs() -> None:
    for encoding, make in (("gzip", gzip_bomb), ("deflate", deflate_bomb), ("br", brotli_bomb)):
        if encoding not in BOMBS:
            BOMBS[encoding] = make() or b""


def _bomb_route(encoding: str) -> Route:
    async def route(exchange: Exchange) -> None:
        headers = [("Content-Encoding", encoding)]
        await exchange.send(response(200, BOMBS[encoding], headers=headers))

    return route


def _broken_cases() -> list[Case]:
    return [
        Case(
            "non-http-bytes",
            "broken",
            ERROR,
            {"/": raw(b"SSH-2.0-OpenSSH_9.6\r\n" + bytes(random.Random(1).randbytes(4096)))},
            "error",
        ),
        Case(
            "invalid-status-line",
            "broken",
            ERROR,
            {"/": raw(b"HTTP/1.1 abc Broken\r\nContent-Length: 5\r\n\r\nhello")},
            "error",
        ),
        Case(
            "negative-content-length",
            "broken",
            ERROR,
            {"/": raw(head("Content-Length: -5") + html_page("/found"))},
            "error",
        ),
        Case(
            "non-numeric-content-length",
            "broken",
            ERROR,
            {"/": raw(head("Content-Length: lots") + html_page("/found"))},
            "error",
        ),
        Case(
            "bad-chunked-encoding",
            "broken",
            ERROR,
            {"/": raw(head("Transfer-Encoding: chunked") + b"zz\r\nhello\r\n0\r\n\r\n")},
            "error",
        ),
        Case(
            "reset-mid-body",
            "broken",
            ERROR,
            {"/": reset_after(head("Content-Length: 100000") + b"<html><body>" + b"x" * 1000)},
            "error",
        ),
        Case(
            "closed-after-headers",
            "broken",
            ERROR,
            {"/": raw(head("Content-Length: 1000"))},
            "error",
        ),
        Case("closed-before-any-byte", "broken", ERROR, {"/": close_now()}, "error"),
        Case(
            "two-responses",
            "broken",
            "the first answer read (its link found), the second ignored",
            {
                "/": raw(
                    response(200, html_page("/found", title="first"))
                    + response(200, html_page("/second", title="second"))
                )
            },
            "links",
            links=("/found",),
            absent=("/second",),
        ),
    ]


def _redirect(location: str, status: int = 302) -> Route:
    return raw(response(status, b"", content_type=None, headers=[("Location", location)]))


def _redirect_to_host(other: HostileHost) -> Route:
    """A redirect to `other`'s front page, its port read when asked (servers start later)."""

    def answer(hit: Hit) -> bytes:
        return response(302, b"", content_type=None, headers=[("Location", other.url("/"))])

    return raw(answer)


def _redirect_cases() -> list[Case]:
    chain = {f"/r/{n}": _redirect(f"/r/{n + 1}") for n in range(50)}
    chain["/r/50"] = FOUND
    long_target = "/" + "a" * 60_000
    longer_link = "/" + "b" * 100_000
    return [
        Case(
            "redirect-loop",
            "redirect",
            "an error after fetch.max_redirects hops",
            {"/": _redirect("/loop/1"), "/loop/1": _redirect("/loop/2"), "/loop/2": _redirect("/")},
            "error",
            max_seed_requests=4,
        ),
        Case(
            "redirect-chain-50",
            "redirect",
            "an error after fetch.max_redirects hops",
            {"/": _redirect("/r/0"), **chain},
            "error",
            max_seed_requests=2,
        ),
        Case(
            "redirect-to-ftp",
            "redirect",
            "an error or a skip: not an http(s) URL",
            {"/": _redirect("ftp://127.0.0.1/file")},
            "error",
        ),
        Case(
            "redirect-to-60kb-url",
            "redirect",
            f"a skip or an error: URL over {URL_LIMIT} characters, never requested",
            {"/": _redirect(long_target), long_target: FOUND},
            "error",
        ),
        Case(
            "link-to-100kb-url",
            "redirect",
            f"the link is a skip: URL over {URL_LIMIT} characters, never requested",
            {"/": raw(response(200, html_page(longer_link, "/found"))), longer_link: FOUND},
            "error",
            subject=longer_link,
        ),
        Case(
            "redirect-to-other-host",
            "redirect",
            "the hop out of scope is a skip; the other host is never asked",
            {"/": page("/away"), "/away": _redirect("OTHER")},
            "recorded",
            subject="/away",
            other_host=True,
        ),
        Case(
            "robots-redirect-loop",
            "redirect",
            "robots.txt unavailable after 5 hops (RFC 9309: allow); every hop at the host's pace",
            {"/": page("/found"), "/robots-b.txt": _redirect("/robots.txt")},
            "recorded",
            robots=_redirect("/robots-b.txt"),
            delay=0.1,
        ),
    ]


def _robots_text(*lines: str) -> Route:
    return raw(response(200, ("\n".join(lines) + "\n").encode(), content_type="text/plain"))


def _robots_cases() -> list[Case]:
    garbage = random.Random(7).randbytes(20_000)
    ten_mb = (
        b"User-agent: *\nDisallow: /private\nCrawl-delay: 0.2\n"
        + b"# padding padding padding padding padding padding padding padding\n" * 160_000
    )
    dripped = response(200, b"User-agent: *\nCrawl-delay: 0.2\n", content_type="text/plain")
    pages = {"/": page("/found", "/private/x"), "/found": FOUND}
    return [
        Case(
            "robots-binary",
            "robots",
            "binary robots.txt parses to no rules: the pages fetched",
            pages,
            "links",
            robots=raw(response(200, garbage, content_type="text/plain")),
            links=("/found",),
            delay=0.1,
        ),
        Case(
            "robots-ten-mb",
            "robots",
            "first 500 KiB read: its rules obeyed (/private disallowed), the pages fetched",
            pages,
            "links",
            robots=raw(response(200, ten_mb, content_type="text/plain")),
            links=("/found",),
            memory_watch=True,
        ),
        Case(
            "robots-dripping",
            "robots",
            "each robots.txt try cut at fetch.total_timeout; host given up: a skip",
            pages,
            "skip",
            robots=drip(b"", dripped, DRIP_INTERVAL),
            skip_reason="host given up",
            delay=0.1,
            deadline=3.0 + 1.0,
            deadline_path="/robots.txt",
        ),
        Case(
            "robots-500-forever",
            "robots",
            "disallowed while retried, given up after robots.give_up_after: a skip",
            pages,
            "skip",
            robots=raw(response(500, b"oops", content_type="text/plain")),
            skip_reason="host given up",
            delay=0.1,
        ),
        Case(
            "crawl-delay-99999999",
            "robots",
            "capped at politeness.max_crawl_delay (1 s), the cap reported; pages fetched",
            pages,
            "links",
            robots=_robots_text("User-agent: *", "Crawl-delay: 99999999"),
            links=("/found",),
            delay=1.0,
        ),
        Case(
            "crawl-delay-negative",
            "robots",
            "ignored: the pages fetched at politeness.min_delay",
            pages,
            "links",
            robots=_robots_text("User-agent: *", "Crawl-delay: -1"),
            links=("/found",),
            delay=0.1,
        ),
        Case(
            "crawl-delay-nan",
            "robots",
            "ignored: the pages fetched at politeness.min_delay",
            pages,
            "links",
            robots=_robots_text("User-agent: *", "Crawl-delay: NaN"),
            links=("/found",),
            delay=0.1,
        ),
        Case(
            "crawl-delay-1e308",
            "robots",
            "capped at politeness.max_crawl_delay (1 s); pages fetched",
            pages,
            "links",
            robots=_robots_text("User-agent: *", "Crawl-delay: 1e308"),
            links=("/found",),
            delay=1.0,
        ),
        Case(
            "request-rate-garbage",
            "robots",
            "ignored (no division by zero): the pages fetched",
            pages,
            "links",
            robots=_robots_text(
                "User-agent: *", "Request-rate: 0/0", "Request-rate: 1/0s", "Request-rate: x/y"
            ),
            links=("/found",),
            delay=0.1,
        ),
        Case(
            "visit-time-garbage",
            "robots",
            "ignored: the pages fetched",
            pages,
            "links",
            robots=_robots_text(
                "User-agent: *", "Visit-time: 2500-9999", "Visit-time: noon", "Visit-time: -"
            ),
            links=("/found",),
            delay=0.1,
        ),
    ]


def _calendar(exchange_path: str) -> bytes:
    day = datetime.date.fromisoformat(exchange_path.rsplit("/", 1)[1])
    links = [f"/cal/{day + datetime.timedelta(days=step)}" for step in (-1, 1, 30)]
    return response(200, html_page(*links, title=str(day)))


def _dynamic(make: Callable[[str], bytes]) -> Route:
    return raw(lambda hit: make(hit.path))


def _trap_cases() -> list[Case]:
    session = itertools.count()

    def fresh_sessions(path: str) -> bytes:
        links = [f"/page?sid={next(session):08x}{random.getrandbits(32):08x}" for _ in range(3)]
        return response(200, html_page(*links))

    def queries(path: str) -> bytes:
        number = int(path.split("n=", 1)[1]) if "n=" in path else 0
        links = [f"/q?n={number * 10 + k}" for k in range(10) if number * 10 + k < 1_000_000]
        return response(200, html_page(*links))

    bounded = "bounded by the host's page budget or a trap rule, and reported"
    return [
        Case(
            "calendar",
            "trap",
            bounded,
            {"/cal/*": _dynamic(_calendar)},
            "bounded",
            seed="/cal/2026-11-24",
        ),
        Case(
            "growing-path",
            "trap",
            bounded,
            {"/a/*": page("a/")},
            "bounded",
            seed="/a/",
        ),
        Case(
            "session-ids",
            "trap",
            bounded,
            {"/page": _dynamic(fresh_sessions)},
            "bounded",
            seed="/page?sid=0",
        ),
        Case(
            "million-queries",
            "trap",
            bounded,
            {"/q": _dynamic(queries)},
            "bounded",
            seed="/q?n=1",
        ),
    ]


def _content(body: bytes, content_type: str = "text/html") -> Route:
    return raw(response(200, body, content_type=content_type))


def _content_cases() -> list[Case]:
    ascii_page = b'<html><body><a href="/found">found</a></body></html>'
    utf16 = '<html><body><p>caf\u00e9</p><a href="/found">found</a></body></html>'
    latin1 = (
        b'<html><head><meta charset="utf-8"></head><body><a href="/caf\xe9">x</a></body></html>'
    )
    utf7 = (
        b"<html><body>+ADw-a href+AD0AIg-/utf7-trap+ACI-+AD4-x+ADw-/a+AD4-"
        b'<a href="/plain">plain</a></body></html>'
    )
    comment = b'<html><body><a href="/found">found</a><!-- never closed <a href="/after">x</a>'
    section = (
        b'<html><body><a href="/found">found</a><!-- robots content="nofollow" -->'
        b'<a href="/after">after</a></body></html>'
    )
    nul = b'<html><body>\x00<p>a\x00b</p>\x00<a href="/found">\x00found</a>\x00</body></html>'
    invalid = (
        b'<html><body><p>\xff\xfe\xc3\x28 \xed\xa0\x80</p><a href="/found">f</a></body></html>'
    )
    bare_lf = html_page("/found", title="bare LF")
    bare_lf_answer = (
        b"HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Length: "
        + str(len(bare_lf)).encode()
        + b"\nConnection: close\n\n"
        + bare_lf
    )
    links = ("/found",)
    return [
        Case(
            "bogus-charset",
            "content",
            "decoded by the fallback; links found",
            {"/": _content(ascii_page, "text/html; charset=no-such-charset-xyz")},
            "links",
            links=links,
        ),
        Case(
            "utf16-without-bom",
            "content",
            "decoded as UTF-16LE (the label's meaning); links found",
            {"/": _content(utf16.encode("utf-16-le"), "text/html; charset=utf-16")},
            "links",
            links=links,
        ),
        Case(
            "invalid-utf8",
            "content",
            "bad bytes become U+FFFD; links found",
            {"/": _content(invalid, "text/html; charset=utf-8")},
            "links",
            links=links,
        ),
        Case(
            "nul-bytes",
            "content",
            "NULs ignored; links found",
            {"/": _content(nul)},
            "links",
            links=links,
        ),
        Case(
            "header-meta-charset-disagree",
            "content",
            "the header's charset wins (windows-1252): /caf%C3%A9",
            {"/": _content(latin1, "text/html; charset=iso-8859-1")},
            "links",
            links=("/caf%C3%A9",),
        ),
        Case(
            "utf7-label",
            "content",
            "UTF-7 is no WHATWG label: not decoded as UTF-7, so only /plain is a link",
            {"/": _content(utf7, "text/html; charset=utf-7")},
            "links",
            links=("/plain",),
            absent=("/utf7-trap",),
        ),
        Case(
            "unclosed-comment",
            "content",
            "the comment runs to the end: /found a link, /after not",
            {"/": _content(comment)},
            "links",
            links=links,
            absent=("/after",),
        ),
        Case(
            "unclosed-nofollow-section",
            "content",
            "the section runs to the end: /after nofollow",
            {"/": _content(section)},
            "links",
            links=links,
            absent=("/after",),
            nofollow=("/after",),
        ),
        Case(
            "bare-lf-header-lines",
            "lenient",
            "read as browsers and curl read it; links found",
            {"/": raw(bare_lf_answer)},
            "links",
            links=links,
        ),
    ]


def _retry_after_cases() -> list[Case]:
    values = {
        "retry-after-1e12": "1000000000000",
        "retry-after-negative": "-30",
        "retry-after-1970": "Thu, 01 Jan 1970 00:00:00 GMT",
        "retry-after-garbage": "soon, maybe",
    }
    return [
        Case(
            name,
            "retry-after",
            f"Retry-After {value!r} bounded by politeness.backoff_max: throttled once, retried "
            "once, recorded",
            {
                "/": raw(
                    response(
                        503, b"busy", content_type="text/plain", headers=[("Retry-After", value)]
                    )
                )
            },
            "recorded",
            retry_after=True,
        )
        for name, value in values.items()
    ]


def build_cases(addresses: Iterator[str]) -> tuple[list[Case], list[HostileHost]]:
    cases = [
        *_slow_cases(),
        *_big_cases(),
        *_broken_cases(),
        *_redirect_cases(),
        *_robots_cases(),
        *_trap_cases(),
        *_content_cases(),
        *_retry_after_cases(),
    ]
    hosts: list[HostileHost] = []
    for case in cases:
        hosts.extend(case.make_hosts(addresses))
        if case.other is not None:
            case.host.routes["/away"] = _redirect_to_host(case.other)
    return cases, hosts


def build_controls(addresses: Iterator[str]) -> list[Control]:
    controls = []
    for number in range(3):
        paths = ["/", *(f"/p{n}" for n in range(1, 10))]
        routes: dict[str, Route] = {
            "/robots.txt": robots_route(f"User-agent: *\nCrawl-delay: {CONTROL_DELAY}\n")
        }
        for index, path in enumerate(paths):
            routes[path] = page(*paths[index + 1 : index + 3], title=f"control {number} {path}")
        host = HostileHost(next(addresses), routes)
        controls.append(Control(f"control-{number}", host, CONTROL_DELAY, tuple(paths)))
    beats = tuple(f"/beat/{n}" for n in range(HEARTBEAT_PAGES))
    routes = {"/robots.txt": robots_route(f"User-agent: *\nCrawl-delay: {HEARTBEAT_DELAY}\n")}
    for index, path in enumerate(beats):
        routes[path] = page(*beats[index + 1 : index + 2], title=f"beat {index}")
    heartbeat = HostileHost(next(addresses), routes)
    controls.append(Control("heartbeat", heartbeat, HEARTBEAT_DELAY, beats))
    return controls


def build_starvation(addresses: Iterator[str], slow: int) -> tuple[list[HostileHost], Control]:
    """`slow` hosts whose front page drips its headers, and one control host."""
    body = html_page(title="slow")
    drippers = [
        HostileHost(
            next(addresses),
            {"/robots.txt": robots_route(), "/": drip(b"", response(200, body), DRIP_INTERVAL)},
        )
        for _ in range(slow)
    ]
    control = build_controls(addresses)[0]
    return drippers, control
