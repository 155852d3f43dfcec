"""HTTP: one GET in, a `Response` or a `FetchFailure` out; never raises, follows no redirect.

answer.py          Response, FetchFailure and its kinds: plain values
fetcher.py         Fetcher: picks the client; the `Client` interface a test may stand in for
http1.py           the crawl's own HTTP/1.1 client on httptools: pool, look-ups, TLS
connection.py      one HTTP/1.1 connection: the answer, its stamp, its bounds
coding.py          bounded content decoders; media type and charset
addresses.py       which addresses fetch.block_private_addresses refuses
aiohttp_client.py  aiohttp's client behind the same interface
users.py           what users bring to each request: headers, credentials, cookies
cookies.py         the crawl's cookie jar (http.cookiejar's rules); its changes, for a shared crawl
proxy.py           an http forward proxy for the http1 client (CONNECT for https)
socks.py           a SOCKS5 proxy (socks5://, socks5h://) for both clients, on python-socks
socks_connector.py aiohttp-socks's connector, with the client's resolver and protocol
"""

import typing

from crawler._faces import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from crawler.http.answer import FailureKind, FetchFailure, Response
    from crawler.http.fetcher import Client, Fetcher

_HOMES = {
    "Client": "crawler.http.fetcher",
    "FailureKind": "crawler.http.answer",
    "FetchFailure": "crawler.http.answer",
    "Fetcher": "crawler.http.fetcher",
    "Response": "crawler.http.answer",
}
"""Where each name lives, imported when first used (PEP 562): a process of the crawl's own reads
page records (crawler.output.records), which name a Response, and needs no client."""


__getattr__, __dir__ = _lazy_names(__name__, _HOMES)

__all__ = ["Client", "FailureKind", "FetchFailure", "Fetcher", "Response"]
