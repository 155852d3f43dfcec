"""Configuration: typed, frozen, validated once at load.

`load_config(path, overrides)` reads a YAML file (config/crawler.yaml documents every key),
applies `-s key=value` overrides by dotted path, and returns a `Config`, or raises ConfigError
naming the file, the line where it can, the key and what was expected. Each component receives its
own slice (`config.robots`, `config.politeness`, ...), never the whole bag.

Every key is a dataclass field; its type annotation (a `Literal` lists the choices) and `_spec(...)`
metadata (bounds) are the whole schema, so the loader, the documentation test and the components
cannot disagree.
"""

from __future__ import annotations

import difflib
import ipaddress
import math
import re
import reprlib
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, TypeAlias
from urllib.parse import unquote, urlsplit

import yaml

from crawler.errors import ConfigError
from crawler.robots.rules import AgentMatch, Precedence
from crawler.robots.txt import RobotsOptions, product_token_from_user_agent, validate_product_token

OutputFormat: TypeAlias = Literal["index", "jsonl", "both"]
Stemming: TypeAlias = Literal["none", "english"]
StateBackend: TypeAlias = Literal["sqlite", "redis"]

SKIP_EXTENSIONS = (
    "7z",
    "7zip",
    "bz2",
    "gz",
    "rar",
    "tar",
    "tar.gz",
    "tgz",
    "xz",
    "zip",
    "mng",
    "pct",
    "bmp",
    "gif",
    "jpg",
    "jpeg",
    "png",
    "pst",
    "psp",
    "tif",
    "tiff",
    "ai",
    "drw",
    "dxf",
    "eps",
    "ps",
    "svg",
    "cdr",
    "ico",
    "webp",
    "avif",
    "heic",
    "mp3",
    "wma",
    "ogg",
    "oga",
    "opus",
    "flac",
    "wav",
    "ra",
    "aac",
    "mid",
    "au",
    "aiff",
    "3gp",
    "asf",
    "asx",
    "avi",
    "mov",
    "mp4",
    "mpg",
    "mpeg",
    "mkv",
    "qt",
    "rm",
    "swf",
    "wmv",
    "m4a",
    "m4v",
    "flv",
    "webm",
    "woff",
    "woff2",
    "ttf",
    "otf",
    "eot",
    "xls",
    "xlsm",
    "xlsx",
    "xltm",
    "xltx",
    "potm",
    "potx",
    "ppt",
    "pptm",
    "pptx",
    "pps",
    "doc",
    "docb",
    "docm",
    "docx",
    "dotm",
    "dotx",
    "odt",
    "ods",
    "odg",
    "odp",
    "epub",
    "css",
    "pdf",
    "exe",
    "bin",
    "rss",
    "dmg",
    "iso",
    "img",
    "apk",
    "jar",
    "deb",
    "rpm",
    "msi",
    "msp",
    "sh",
    "rb",
    "js",
    "hta",
    "bat",
    "cpl",
    "py",
)
"""Scrapy's IGNORED_EXTENSIONS, with fonts and a few more images, archives and media."""

DEFAULT_USER_AGENT = "PoliteBot/0.1 (+https://example.org/bot)"


def _spec(
    default: Any, *, minimum: float | None = None, duration: bool = False, pairs: bool = False
) -> Any:
    """A field with its validation rules beside its default. A field's choices are its
    `Literal` type's values. `duration`: seconds, also written as 90s, 30m, 12h, 7d or 2w.
    `pairs`: a list of KEY=VALUE strings, also written as a mapping."""
    return field(
        default=default, metadata={"minimum": minimum, "duration": duration, "pairs": pairs}
    )


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_duration(text: str) -> float | None:
    """Seconds in `90s`, `30m`, `12h`, `7d`, `2w` or `1d12h`; None if it is no such duration."""
    compact = text.strip().lower()
    if not compact:
        return None
    at, seconds = 0, 0.0
    for match in _DURATION.finditer(compact):
        if match.start() != at:
            return None
        seconds += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        at = match.end()
    return seconds if at == len(compact) else None


@dataclass(frozen=True, slots=True)
class RobotsConfig:
    """How robots.txt files are read, cached, and what their fetch outcomes mean."""

    token: str = ""
    """Product token matched against User-agent lines; empty: the first product of user_agent."""
    agent_match: AgentMatch = "rfc"
    precedence: Precedence = "longest-match"
    case_insensitive_paths: bool = False
    split_values: bool = False
    auth_disallows: bool = False
    """Read a robots.txt answered 401/403 as disallow-all (1996) instead of allow-all (RFC 9309)."""
    cache_ttl: float = _spec(86_400.0, minimum=0)
    """Seconds a fetched robots.txt stays fresh."""
    retry_initial: float = _spec(60.0, minimum=0)
    """First wait before asking an unreachable origin for its robots.txt again; doubles."""
    retry_max: float = _spec(3_600.0, minimum=0)
    give_up_after: float = _spec(300.0, minimum=0)
    """Seconds an origin's robots.txt may stay unanswered before the crawl gives the origin up;
    a name that does not resolve or a certificate that fails verification: after two tries."""

    def options(self) -> RobotsOptions:
        return RobotsOptions(
            agent_match=self.agent_match,
            precedence=self.precedence,
            case_insensitive_paths=self.case_insensitive_paths,
            split_values=self.split_values,
        )


@dataclass(frozen=True, slots=True)
class PolitenessConfig:
    """When the next request to a host may start (SPEC section 6)."""

    min_delay: float = _spec(1.0, minimum=0)
    max_crawl_delay: float = _spec(30.0, minimum=0)
    over_max_crawl_delay: Literal["cap", "skip"] = "cap"
    """A Crawl-delay above max_crawl_delay: crawl the host at the cap, or skip the host."""
    max_wait: float = _spec(600.0, minimum=0)
    """When every host left waits longer than this, the crawl stops and reports them."""
    per_host_concurrency: int = _spec(1, minimum=1)
    backoff_initial: float = _spec(10.0, minimum=0)
    """Wait after a 429/503 without Retry-After, or an error; doubles per repeat."""
    backoff_max: float = _spec(3_600.0, minimum=0)
    """Longest backoff, a Retry-After's included: a server asking for longer (a year, 1e12 s) is
    asked again after this long."""
    per_server: bool = False
    """Origins whose host names resolve to one IP address share a pacing group on top of each
    host's own pace: a start server_min_delay after the server's last answer, at most
    server_concurrency in flight. For many names on one server (subdomains, shared hosting)."""
    server_min_delay: float = _spec(1.0, minimum=0)
    """With per_server: least seconds from a server's last answer (or start, if later) to its
    next request start."""
    server_concurrency: int = _spec(1, minimum=1)
    """With per_server: requests in flight to one server address, across its host names."""


@dataclass(frozen=True, slots=True)
class FetchConfig:
    """The HTTP client: timeouts, size cap, redirects, retries, and where a name connects."""

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
    slow_after: float = _spec(10.0, minimum=0.001)
    """A request running longer than this no longer counts against `concurrency` (up to
    `concurrency` such requests): slow servers cannot take every slot of the crawl."""
    block_private_addresses: bool = False
    """Refuse to connect to loopback, private, link-local (cloud metadata), multicast, reserved
    and unspecified addresses, checked on the resolved address at connect time. Off for the
    command line's loopback uses; on for a service that crawls URLs its users give it."""
    from_address: str = ""
    """An e-mail address sent as the From header of every request, robots.txt's included (RFC
    9110 10.1.2): whom a site's operator can write to about the crawl. Empty: no From header."""
    resolve: tuple[str, ...] = _spec((), pairs=True)
    """Host names and the address to connect to for each, as curl's --resolve: a mapping
    (`{staging.example.org: 10.0.0.5}`) or HOST=ADDRESS strings. The URL, the Host header, TLS
    and robots.txt stay the name's; only the connection goes to the address, whatever DNS says."""

    def pinned(self) -> dict[str, str]:
        """`resolve` as a map from host name (lower case) to IP address."""
        return {
            host.strip().lower(): address.strip()
            for host, _, address in (entry.partition("=") for entry in self.resolve)
        }


@dataclass(frozen=True, slots=True)
class LimitsConfig:
    """Where the crawl stops growing, and the traps it does not walk into. null: no limit."""

    max_pages: int | None = _spec(None, minimum=0)
    max_depth: int | None = _spec(None, minimum=0)
    """Links from a seed: seeds are depth 0."""
    max_pages_per_host: int | None = _spec(100_000, minimum=0)
    """Pages fetched per host (origin): a trap (an endless calendar, a session id in every link)
    ends here. Past it, a host's URLs stay queued for a run with a greater limit."""
    max_url_length: int = _spec(2083, minimum=20)
    """Longer URLs, from links, redirects or seeds, are skips: Scrapy's and Heritrix's limit
    (and Internet Explorer's, so few real sites use longer ones)."""
    max_path_repeats: int = _spec(2, minimum=1)
    """A URL whose path has a segment, or a group of up to three, more times in a row than this
    (`/a/a/a/`, `/x/y/x/y/x/y/`) is a skip: relative links that grow a path without end."""
    max_path_segments: int = _spec(30, minimum=1)
    """A URL with more path segments than this is a skip (Heritrix's default is 20)."""


@dataclass(frozen=True, slots=True)
class ScopeConfig:
    """Which URLs belong to the crawl. By default: the seeds' hosts."""

    seed_hosts: bool = True
    """The hosts of the seeds are in scope (any scheme and port)."""
    include_subdomains: bool = False
    """Subdomains of the seeds' hosts are in scope too."""
    allow_domains: tuple[str, ...] = ()
    """More domains in scope, each with its subdomains."""
    allow: tuple[str, ...] = ()
    """Regular expressions; when any is given, a URL must match one (searched anywhere)."""
    deny: tuple[str, ...] = ()
    """Regular expressions; a URL matching any is out of scope. Deny wins over allow."""
    skip_extensions: tuple[str, ...] = SKIP_EXTENSIONS
    """Links whose path ends in one of these extensions (case aside) are not fetched: images,
    archives, media, fonts, documents and programs, not pages. Empty: every link is tried."""


@dataclass(frozen=True, slots=True)
class PageConfig:
    """What the crawl takes from a fetched page. META robots, X-Robots-Tag and in-page exclusion
    sections are always obeyed."""

    follow_rel_nofollow: bool = False
    """Follow links marked rel="nofollow", "ugc" or "sponsored"; by default they are not."""
    reader: Literal["auto", "process", "loop"] = "auto"
    """Where pages are read: in a process of the crawl's own, beside the event loop (process),
    on the loop (loop), or auto: in the process once 100 hosts or more answer within a second,
    on a machine of two cores or more (crawler.crawl.page_reader)."""


@dataclass(frozen=True, slots=True)
class SitemapsConfig:
    """Sitemaps (sitemaps.org): the URLs a site lists, read from the sitemaps its robots.txt
    names. Each is a request to its host like any other (robots.txt, politeness, scope)."""

    enabled: bool = True
    """Read the sitemaps that the robots.txt of each origin crawled names."""
    try_default: bool = False
    """Also try /sitemap.xml on an origin whose robots.txt names no sitemap."""
    max_depth: int = _spec(3, minimum=1)
    """Sitemap levels read: 1 is a sitemap robots.txt names; each sitemap index adds one. A
    sitemap listed deeper is skipped."""
    max_files: int = _spec(1000, minimum=1)
    """Sitemap files read per origin (of the robots.txt that named them) in one run; the rest
    are skipped."""
    max_urls: int = _spec(50_000, minimum=1)
    """Entries read from one sitemap file (the protocol's cap); the rest are not read."""
    max_bytes: int = _spec(50 * 1024 * 1024, minimum=1024)
    """Bytes of one sitemap file, uncompressed (the protocol's cap): a gzipped file is
    decompressed no further, and the download stops there."""


@dataclass(frozen=True, slots=True)
class RecrawlConfig:
    """Going over a crawl again (`crawl --recrawl`): pages fetched long enough ago are asked for
    again, conditionally (If-None-Match, If-Modified-Since), at the hosts' usual pace."""

    enabled: bool = False
    """Recrawl: queue again every URL fetched longer ago than `after` (the command line's
    --recrawl sets it). Needs the durable SQLite state (the default)."""
    after: float = _spec(86_400.0, minimum=0, duration=True)
    """Seconds after its last fetch a URL is due again: 86400, or 12h, 7d. A sitemap that
    lists it with a lastmod no later than that fetch keeps it from being due."""


@dataclass(frozen=True, slots=True)
class OutputConfig:
    """What the crawl writes into its data directory."""

    data_dir: str = "crawl-data"
    """Used when the command line gives no --data."""
    format: OutputFormat = "index"
    """index: DIR/index.sqlite, a full-text index for `crawl search` and `crawl export`.
    jsonl: DIR/pages.jsonl, one object per fetched URL, and DIR/skips.jsonl. both: the two."""
    progress_interval: float = _spec(10.0, minimum=0.1)
    """Seconds between progress log lines when the output is not a terminal."""
    warc: bool = False
    """Also archive every answer, robots.txt and sitemaps included, as it came over the wire in
    DIR/warc/*.warc.gz (WARC 1.1, a gzip member per record): request and response records,
    revisits for a 304 or a payload archived before, and a metadata record of our robots
    decisions per page. Needs the http1 client (fetch.client http1 or auto)."""
    warc_file_bytes: int = _spec(1_000_000_000, minimum=1_000_000)
    """A WARC file past this many (compressed) bytes is closed and the next one begun."""


@dataclass(frozen=True, slots=True)
class IndexConfig:
    """How the full-text index (DIR/index.sqlite) reads words: chosen when the index is created,
    and kept in it."""

    stemming: Stemming = "none"
    """english: English words are indexed and searched by their stem (Porter's), so `crawl
    search connect` also finds connected, connecting and connection. none: words as written
    (diacritics folded). A crawl into an index created with the other choice stops with an
    error before it writes."""


STATE_SERVER_PORT = 6379
STATE_SERVER_SCHEMES = ("redis", "valkey")


@dataclass(frozen=True, slots=True)
class ServerAddress:
    host: str
    port: int
    db: int
    username: str | None = None
    password: str | None = None

    def __str__(self) -> str:
        return f"redis://{self.host}:{self.port}/{self.db}"


def parse_server_url(url: str) -> ServerAddress:
    """The Valkey or Redis server a shared state's URL (`state.url`, `--state`) names.
    ConfigError, saying what is expected, otherwise."""
    expected = "expected redis://HOST:PORT/DB (or valkey://...)"
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as error:
        raise ConfigError(f"state URL {url!r}: {error}; {expected}") from None
    if parts.scheme not in STATE_SERVER_SCHEMES:
        raise ConfigError(f"state URL {url!r}: scheme {parts.scheme!r} is not known; {expected}")
    if not parts.hostname:
        raise ConfigError(f"state URL {url!r} names no host; {expected}")
    path = parts.path.strip("/")
    if path and not path.isdigit():
        raise ConfigError(f"state URL {url!r}: database {path!r} is not a number; {expected}")
    if parts.query or parts.fragment:
        raise ConfigError(f"state URL {url!r}: a query or fragment is not used; {expected}")
    return ServerAddress(
        host=parts.hostname,
        port=port or STATE_SERVER_PORT,
        db=int(path or 0),
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
    )


@dataclass(frozen=True, slots=True)
class StateConfig:
    """The crawl state a crawl with a data directory keeps in DIR/state.sqlite, so that it can
    stop, be killed, and resume (crawler.state)."""

    durable: bool = True
    """Keep the state in the data directory; false: in memory, gone when the crawl ends."""
    commit_interval: float = _spec(0.5, minimum=0.01)
    """Seconds between commits of the state (and flushes of the output). After a kill, the URLs
    finished within about this long before it are fetched again."""
    working_set: int = _spec(32, minimum=1)
    """URLs per host held in memory; the rest of the queue waits on disk."""
    stop_grace: float = _spec(3.0, minimum=0)
    """After a stop (Ctrl-C, SIGTERM), seconds requests in flight get to finish; then they are
    cancelled and their URLs go back to the queue."""
    backend: StateBackend = "sqlite"
    """sqlite: the crawl's own DIR/state.sqlite, one process. redis: one worker of a crawl shared
    by workers on any number of machines, its state in the Valkey or Redis server `state.url`
    names (the command line's --state URL sets both)."""
    url: str = ""
    """The shared state's server, redis://HOST:PORT/DB (or valkey://; a password as
    redis://:PASSWORD@HOST:PORT/DB); with state.backend redis."""
    key_prefix: str = "crawl:"
    """The shared crawl's keys begin with this: workers given the same server and prefix share
    one crawl; another prefix is another crawl in the same database."""
    heartbeat: float = _spec(3.0, minimum=0.5)
    """Seconds a shared crawl's worker is taken for alive after its last heartbeat (renewed
    three times as often). Past it, another worker gives its hosts and URLs back: each of its
    hosts waits one interval first."""
    claim_lease: float = _spec(300.0, minimum=1)
    """Longest seconds a worker holds a host for one request before the others may take it
    back; more than fetch.total_timeout."""


@dataclass(frozen=True, slots=True)
class Config:
    user_agent: str = DEFAULT_USER_AGENT
    concurrency: int = _spec(64, minimum=1)
    """Requests in flight across all hosts."""
    robots: RobotsConfig = field(default_factory=RobotsConfig)
    politeness: PolitenessConfig = field(default_factory=PolitenessConfig)
    fetch: FetchConfig = field(default_factory=FetchConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    scope: ScopeConfig = field(default_factory=ScopeConfig)
    page: PageConfig = field(default_factory=PageConfig)
    sitemaps: SitemapsConfig = field(default_factory=SitemapsConfig)
    recrawl: RecrawlConfig = field(default_factory=RecrawlConfig)
    output: OutputConfig = field(default_factory=OutputConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    state: StateConfig = field(default_factory=StateConfig)

    @property
    def product_token(self) -> str:
        """The token robots.txt groups are matched against: robots.token, else from user_agent."""
        if self.robots.token:
            return self.robots.token
        return product_token_from_user_agent(self.user_agent)


# --- validation ----------------------------------------------------------------------------------


def _describe(kind: object) -> str:
    if kind is bool:
        return "true or false"
    if kind is int:
        return "a whole number"
    if kind is float:
        return "a number"
    if kind is str:
        return "a string"
    return "a list of strings"


_EXPONENT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+")
# An addr-spec (RFC 5322 3.4.1) as the From header carries it: a dot-atom local part, and a host
# name of two labels or more. No display name, no quoting, nothing that could end a header line.
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_TOP_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL_ADDRESS = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@(?:{_LABEL}\.)+{_TOP_LABEL}")


def _coerce(key: str, value: object, kind: Any, spec: Mapping[str, Any]) -> object:
    """`value` as `kind`, or a ConfigError message saying what `key` expects."""
    optional = False
    if isinstance(kind, types.UnionType):
        members = [member for member in typing.get_args(kind) if member is not type(None)]
        kind, optional = members[0], True
    if value is None and optional:
        return None
    choices: tuple[str, ...] = ()
    if typing.get_origin(kind) is Literal:
        kind, choices = str, typing.get_args(kind)
    want = _describe(kind) + (" or null" if optional else "")
    minimum = spec.get("minimum")
    if minimum is not None and kind in (int, float):
        want += f" >= {minimum}" if isinstance(minimum, int) else f" >= {minimum:g}"
    if choices:
        want = " or ".join(repr(choice) for choice in choices)
    wrong = ConfigError(f"{key} must be {want}, not {value!r}")
    if kind is bool:
        if not isinstance(value, bool):
            raise wrong
    elif kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong
    elif kind is float:
        if spec.get("duration"):
            want = want.replace("a number", "seconds (or a duration like 12h or 7d)")
            wrong = ConfigError(f"{key} must be {want}, not {value!r}")
            if isinstance(value, str) and (seconds := parse_duration(value)) is not None:
                value = seconds
        if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
            value = float(value)  # YAML 1.1 reads 1e3 (no dot) as a string
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise wrong
        value = float(value)
        if not math.isfinite(value):
            raise wrong
    elif kind is str:
        if not isinstance(value, str) or (choices and value not in choices):
            raise wrong
    else:
        if spec.get("pairs"):
            want = "a mapping of host names to IP addresses, or a list of HOST=ADDRESS"
            wrong = ConfigError(f"{key} must be {want}, not {value!r}")
            if isinstance(value, Mapping):
                value = [f"{name}={address}" for name, address in value.items()]
        if isinstance(value, str):
            value = [value] if value else []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise wrong
        value = tuple(value)
    if minimum is not None and isinstance(value, int | float) and value < minimum:
        raise wrong
    return value


def _section(name: str, raw: object, cls: type[Any]) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{name} must be a mapping of keys, not {raw!r}")
    known = {f.name: f for f in fields(cls)}
    hints = typing.get_type_hints(cls)
    values: dict[str, object] = {}
    for key, value in raw.items():
        if key not in known:
            raise _unknown_key(f"{name}.{key}", (f"{name}.{k}" for k in sorted(known)))
        values[key] = _coerce(f"{name}.{key}", value, hints[key], known[key].metadata)
    return cls(**values)


_SECTIONS: dict[str, type[Any]] = {
    f.name: f.default_factory  # type: ignore[misc]
    for f in fields(Config)
    if callable(f.default_factory)
}


def _dotted_keys() -> list[str]:
    """Every config key by its dotted path (`concurrency`, `limits.max_pages`, ...)."""
    keys = [f.name for f in fields(Config) if f.name not in _SECTIONS]
    return keys + [f"{name}.{f.name}" for name, cls in _SECTIONS.items() for f in fields(cls)]


def _unknown_key(key: str, expected: Iterable[str], *, typed: str = "") -> ConfigError:
    """The error for `key`, which no config has, naming the closest key there is. `typed`: the
    whole dotted path the user wrote, when `key` is only its first part."""
    path = typed or key
    keys = _dotted_keys()
    # A key put in the wrong section (`politeness.max_depth`) is the key of that name elsewhere.
    moved = [known for known in keys if known.rpartition(".")[2] == path.rpartition(".")[2]]
    close = moved[:1] or difflib.get_close_matches(path, keys, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return ConfigError(f"unknown key {key}{hint}; expected one of {', '.join(expected)}")


def _from_mapping(raw: Mapping[str, object]) -> Config:
    scalars = {f.name: f for f in fields(Config) if f.name not in _SECTIONS}
    top = set(scalars) | set(_SECTIONS)
    unknown = sorted((key for key in raw if key not in top), key=str)
    if unknown:
        # A misspelt section (`-s limit.max_pages=5`) is matched with the key under it.
        inner = raw[unknown[0]]
        typed = f"{unknown[0]}.{next(iter(inner))}" if isinstance(inner, Mapping) and inner else ""
        raise _unknown_key(str(unknown[0]), sorted(top), typed=typed)
    user_agent = raw.get("user_agent", DEFAULT_USER_AGENT)
    if not isinstance(user_agent, str) or not user_agent.strip():
        raise ConfigError(f"user_agent must be a non-empty string, not {user_agent!r}")
    hints = typing.get_type_hints(Config)
    values: dict[str, Any] = {"user_agent": user_agent}
    for name, spec in scalars.items():
        if name in raw and name != "user_agent":
            values[name] = _coerce(name, raw[name], hints[name], spec.metadata)
    for name, cls in _SECTIONS.items():
        values[name] = _section(name, raw.get(name), cls)
    config = Config(**values)
    config.robots.options()
    validate_product_token(config.product_token)
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
    if config.recrawl.enabled and config.state.backend != "sqlite":
        raise ConfigError(
            "recrawl.enabled (--recrawl) works on the SQLite state of one process; a shared crawl "
            "(state.backend redis) cannot recrawl yet"
        )
    if config.politeness.per_server and config.state.backend != "sqlite":
        raise ConfigError(
            "politeness.per_server paces the servers of one process; a shared crawl "
            "(state.backend redis) cannot group hosts by server yet"
        )
    if config.recrawl.enabled and not config.state.durable:
        raise ConfigError(
            "recrawl.enabled (--recrawl) needs state.durable true: a recrawl reads what the "
            "crawl's state kept of every fetch"
        )
    if config.output.warc and config.fetch.client == "aiohttp":
        raise ConfigError(
            "output.warc needs fetch.client http1 or auto: only the http1 client keeps the "
            "bytes of each answer as they came, which a WARC record holds"
        )
    bundle = config.fetch.ca_bundle
    if bundle and not Path(bundle).is_file():
        raise ConfigError(f"fetch.ca_bundle: {bundle!r} is not a file (expected a PEM file)")
    _check_resolve(config.fetch.resolve)
    address = config.fetch.from_address
    if address and not (len(address) <= 254 and _EMAIL_ADDRESS.fullmatch(address)):
        raise ConfigError(
            f"fetch.from_address must be an e-mail address (like crawler-admin@example.org), "
            f"or empty for no From header; not {address!r}"
        )
    return config


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


# --- files and overrides -------------------------------------------------------------------------


MAX_CONFIG_BYTES = 1024 * 1024
"""The largest config file read: config/crawler.yaml, every key documented, is 9 KB. PyYAML reads
about a megabyte a second, so a bigger file would be a wait, not a config."""
MAX_CONFIG_DEPTH = 16
"""Deepest nesting of mappings and lists read; a config nests 3 levels (scope.allow: [...])."""


class _Refused(yaml.MarkedYAMLError):
    """YAML this loader will not read, though a YAML parser could."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)


class _ConfigLoader(yaml.SafeLoader):
    """SafeLoader without aliases: `*name` makes a few lines stand for billions of values (the
    "billion laughs"), and a config needs none. Nesting is bounded (the composer recurses per
    level), and a scalar Python cannot convert (an integer of 5,000 digits, a 13th month) is an
    error at its line, not a ValueError."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(
                f"an alias (*{event.anchor}): a config spells every value out (aliases are not "
                "read: a few of them can stand for billions of values)",
                event.start_mark,
            )
        if self._depth >= MAX_CONFIG_DEPTH:
            raise _Refused(f"nested more than {MAX_CONFIG_DEPTH} levels deep", event.start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as error:
            shown = reprlib.repr(node.value) if isinstance(node, yaml.ScalarNode) else node.tag
            raise _Refused(
                f"cannot read the value {shown}: {str(error).split(';')[0]}",
                node.start_mark,
            ) from error


def _compose(text: str) -> tuple[object, yaml.Node | None]:
    """The value of a YAML document, and its root node (for `_key_lines`)."""
    loader = _ConfigLoader(text)
    try:
        root = loader.get_single_node()
        return (loader.construct_document(root) if root is not None else None), root
    finally:
        loader.dispose()


def _key_lines(root: yaml.Node | None) -> dict[str, int]:
    """Dotted key path -> 1-based line of the key in the YAML text, for error messages."""
    lines: dict[str, int] = {}

    def walk(node: yaml.Node, prefix: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                path = f"{prefix}{key_node.value}"
                lines.setdefault(path, key_node.start_mark.line + 1)
                walk(value_node, path + ".")

    if root is not None:
        walk(root, "")
    return lines


_KEY_IN_MESSAGE = re.compile(r"(?:unknown key |^)([A-Za-z_][\w.]*)")


def _located(path: str, where: str, lines: Mapping[str, int], error: ConfigError) -> ConfigError:
    """`error` prefixed with the file and line of its key when the file set it, else `where`."""
    message = str(error)
    match = _KEY_IN_MESSAGE.search(message)
    line = lines.get(match.group(1)) if match else None
    at = f"{path} line {line}" if line is not None else where
    return type(error)(f"{at}: {message}")


def _apply_override(raw: dict[str, Any], override: str) -> None:
    key, sep, text = override.partition("=")
    if not sep or not key:
        raise ConfigError(
            f"-s {override!r}: expected key=value, e.g. robots.precedence=first-match"
        )
    try:
        value = _compose(text)[0] if text else ""
    except yaml.YAMLError:
        value = text
    if isinstance(value, dict) and not text.lstrip().startswith("{"):
        # `-s state.key_prefix=crawl:` means the text: one line cannot hold a block mapping,
        # and a mapping is written {key: value} there.
        value = text
    *parents, leaf = key.strip().split(".")
    node = raw
    for part in parents:
        child = node.get(part)
        if child is None:
            # Absent, or present with every key commented out (YAML null): a section of defaults.
            child = node[part] = {}
        if not isinstance(child, dict):
            raise ConfigError(f"-s {override!r}: {part} is not a section")
        node = child
    node[leaf] = value


def read_user_text(
    path: Path, what: str, error: type[ConfigError] = ConfigError, *, most: int | None = None
) -> str:
    """The text of a file the user named (`what`: "config file", "seeds file"); a leading UTF-8
    byte order mark is dropped. Unreadable or non-UTF-8 files, and files of more than `most`
    bytes (read no further), raise `error` naming the file."""
    try:
        with path.open("rb") as file:
            data = file.read() if most is None else file.read(most + 1)
    except OSError as failure:
        raise error(f"cannot read {what} {path}: {failure.strerror}") from failure
    if most is not None and len(data) > most:
        raise error(f"{path}: more than {most} bytes; expected a {what} of at most that")
    if b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + 1
        raise error(f"{path} line {line}: a NUL byte: a binary file, not a {what}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as failure:
        line = data.count(b"\n", 0, failure.start) + 1
        raise error(f"{path} line {line}: not UTF-8 text ({failure.reason})") from failure


def load_config(path: Path | None = None, overrides: Sequence[str] = ()) -> Config:
    """Read, override and validate a configuration; ConfigError says what is wrong and where."""
    raw: dict[str, Any] = {}
    where = "defaults"
    lines: dict[str, int] = {}
    if path is not None:
        where = str(path)
        text = read_user_text(path, "config file", most=MAX_CONFIG_BYTES)
        try:
            loaded, root = _compose(text)
        except yaml.MarkedYAMLError as error:
            mark = error.problem_mark
            line = f" line {mark.line + 1}" if mark is not None else ""
            problem = (
                error.problem if isinstance(error, _Refused) else f"not valid YAML: {error.problem}"
            )
            raise ConfigError(f"{path}{line}: {problem}") from error
        except yaml.YAMLError as error:
            raise ConfigError(f"{path}: not valid YAML: {error}") from error
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(
                f"{path}: expected a mapping of keys at the top, not {reprlib.repr(loaded)}"
            )
        raw = loaded or {}
        lines = _key_lines(root)
    for override in overrides:
        _apply_override(raw, override)
    if overrides:
        where = f"{where} with -s overrides"
        # An overridden key's line in the file no longer holds the value that failed.
        for override in overrides:
            lines.pop(override.partition("=")[0].strip(), None)
    try:
        return _from_mapping(raw)
    except ConfigError as error:
        raise _located(str(path), where, lines, error) from error
