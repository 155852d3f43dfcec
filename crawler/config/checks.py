"""Checks on a built `Config` that no field's type can make: keys against each other (a recrawl
needs the SQLite state, a WARC the http1 client), and values of a form (patterns, extensions, host
maps, the server URL, the From address)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence

from crawler.config.fetch import FetchConfig
from crawler.config.schema import Config, StateConfig
from crawler.config.values import EMAIL_ADDRESS, parse_serve_address, parse_server_url
from crawler.errors import ConfigError, InvalidProductTokenError
from crawler.robots.agent import browser_token_refusal, validate_product_token


def check_config(config: Config, *, is_file: Callable[[str], bool]) -> None:
    """Raise ConfigError at the first check `config` fails. The order is fixed: a config with
    several faults is always told the same one. `is_file(path)`: whether a file is there."""
    config.robots.options()
    _check_token(config)
    for key in ("allow", "deny"):
        for pattern in getattr(config.scope, key):
            try:
                re.compile(pattern)
            except re.error as error:
                raise ConfigError(
                    f"scope.{key}: {pattern!r} is not a valid regular expression ({error})"
                ) from error
    for extension in config.scope.skip_extensions:
        if not re.fullmatch(r"\.?[A-Za-z0-9][A-Za-z0-9.+_-]*", extension):
            raise ConfigError(
                f"scope.skip_extensions: {extension!r} is not a file name extension "
                "(letters and digits, like pdf or tar.gz)"
            )
    _check_state(config.state)
    if config.politeness.refusal_recovery >= 1:
        raise ConfigError(
            "politeness.refusal_recovery is the fraction of the way down to its floor each "
            "accepted answer takes the learned interval: below 1 (like 0.5), not "
            f"{config.politeness.refusal_recovery!r}"
        )
    _check_recrawl(config)
    if config.politeness.per_server and config.state.backend != "sqlite":
        raise ConfigError(
            "politeness.per_server paces the servers of one process; a shared crawl "
            "(state.backend redis) cannot group hosts by server yet"
        )
    if config.recrawl.enabled and config.state.backend == "sqlite" and not config.state.durable:
        raise ConfigError(
            "recrawl.enabled (--recrawl) needs state.durable true: a recrawl reads what the "
            "crawl's state kept of every fetch"
        )
    if config.output.warc and config.fetch.client == "aiohttp":
        raise ConfigError(
            "output.warc needs fetch.client http1 or auto: only the http1 client keeps the "
            "bytes of each answer as they came, which a WARC record holds"
        )
    if config.fetch.page_requisites and config.state.backend != "sqlite":
        raise ConfigError(
            "fetch.page_requisites (--page-requisites) queues a page's requisites ahead of its "
            "host's pages in one process's state; a shared crawl (state.backend redis) cannot "
            "fetch them yet"
        )
    if config.fetch.page_requisites and not config.output.warc:
        raise ConfigError(
            "fetch.page_requisites (--page-requisites) fetches what a page needs to be replayed, "
            "for the archive: it needs output.warc true (--warc)"
        )
    bundle = config.fetch.ca_bundle
    # Whether it is a file is the loader's question to answer (is_file): this module does no I/O.
    if bundle and not is_file(bundle):
        raise ConfigError(f"fetch.ca_bundle: {bundle!r} is not a file (expected a PEM file)")
    _check_resolve(config.fetch.resolve)
    for entry in config.fetch.allow_addresses:
        try:
            ipaddress.ip_network(entry.strip(), strict=False)
        except ValueError:
            raise ConfigError(
                f"fetch.allow_addresses: {entry!r} is no IP address or network; expected one "
                "like 10.0.0.0/8, 192.168.1.5 or ::1"
            ) from None
    if config.monitor.serve:
        try:
            parse_serve_address(config.monitor.serve)
        except ConfigError as error:
            raise ConfigError(f"monitor.serve (--serve): {error}") from None
    _check_users(config.fetch)
    address = config.fetch.from_address
    if address and not (len(address) <= 254 and EMAIL_ADDRESS.fullmatch(address)):
        raise ConfigError(
            f"fetch.from_address must be an e-mail address (like crawler-admin@example.org), "
            f"or empty for no From header; not {address!r}"
        )


def _check_resolve(entries: Sequence[str]) -> None:
    for entry in entries:
        host, equals, address = (part.strip() for part in entry.partition("="))
        expected = "expected HOST=ADDRESS, like staging.example.org=10.0.0.5"
        if not equals or not host or any(c in host for c in " /:@[]"):
            raise ConfigError(f"fetch.resolve: {entry!r} names no host name; {expected}")
        try:
            ipaddress.ip_address(address)
        except ValueError:
            raise ConfigError(
                f"fetch.resolve: {host} maps to {address!r}, not an IP address; {expected}"
            ) from None


def _check_recrawl(config: Config) -> None:
    recrawl = config.recrawl
    if recrawl.keep_fresh and not recrawl.enabled:
        raise ConfigError(
            "recrawl.keep_fresh goes over the crawl again and again: it needs recrawl.enabled "
            "true (--keep-fresh sets both)"
        )
    if recrawl.min_interval > recrawl.max_interval:
        raise ConfigError(
            f"recrawl.min_interval ({recrawl.min_interval:g} s) is longer than "
            f"recrawl.max_interval ({recrawl.max_interval:g} s): the shortest revisit interval "
            "must not be longer than the longest"
        )
    if recrawl.lastmod_sample > 1:
        raise ConfigError(
            "recrawl.lastmod_sample is the share of a trusted host's pages checked anyway: "
            f"from 0 to 1 (like 0.1), not {recrawl.lastmod_sample!r}"
        )


def _check_users(fetch: FetchConfig) -> None:
    """What users bring, checked against each other: the proxy's credentials need a proxy, a
    Cookie header and a cookie jar would contradict each other."""
    if fetch.cookies and any(name.lower() == "cookie" for name, _ in fetch.headers):
        raise ConfigError(
            "fetch.headers.Cookie with fetch.cookies true: the jar sends the cookies sites set; "
            "drop the header, or set fetch.cookies false to send only it"
        )
    if (fetch.proxy_username or fetch.proxy_password_env) and not fetch.proxy:
        raise ConfigError("fetch.proxy_username and proxy_password_env need fetch.proxy")
    if bool(fetch.proxy_username) != bool(fetch.proxy_password_env):
        raise ConfigError("fetch.proxy_username and fetch.proxy_password_env go together")
    env = fetch.proxy_password_env
    if env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env):
        raise ConfigError(
            f"fetch.proxy_password_env must name an environment variable, not {env!r}"
        )
    if ":" in fetch.proxy_username or not fetch.proxy_username.isprintable():
        raise ConfigError("fetch.proxy_username: no ':' or control characters in it")
    if fetch.proxy.startswith("socks") and len(fetch.proxy_username.encode()) > 255:
        raise ConfigError("fetch.proxy_username: a SOCKS5 user name is at most 255 bytes")


def _check_token(config: Config) -> None:
    """Our product token can be named by robots.txt files, and is no browser's."""
    key = "robots.token" if config.robots.token else "user_agent"
    try:
        token = validate_product_token(config.product_token)
    except InvalidProductTokenError as error:
        raise InvalidProductTokenError(f"{key}: {error}") from None
    refusal = browser_token_refusal(token)
    if refusal is not None:
        raise InvalidProductTokenError(
            f"{key}: {refusal}; give the crawler's own name (letters, '-' and '_')"
        )


def _check_state(state: StateConfig) -> None:
    if state.backend == "redis":
        if not state.url:
            raise ConfigError(
                "state.url: a server is needed with state.backend redis (expected "
                "redis://HOST:PORT/DB; on the command line, --state URL)"
            )
        try:
            parse_server_url(state.url)
        except ConfigError as error:
            raise ConfigError(f"state.url: {error}") from None
    elif state.url:
        raise ConfigError(
            f"state.url is {state.url!r} but state.backend is {state.backend!r}: set "
            "state.backend to redis for a shared crawl (or --state URL)"
        )
    if not state.key_prefix or any(c.isspace() for c in state.key_prefix):
        raise ConfigError(
            f"state.key_prefix must be a non-empty string without spaces, not {state.key_prefix!r}"
        )
