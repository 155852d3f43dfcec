"""The schema: each config key a field of a frozen dataclass, one class per section, `Config`
holding them all. A field's type annotation, `_spec` bounds and docstring are all there is to know
about a key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from crawler.config.extensions import SKIP_EXTENSIONS
from crawler.config.fetch import FetchConfig
from crawler.config.users import read_extract
from crawler.config.values import ServeAddress, parse_serve_address
from crawler.config.values import field_spec as _spec
from crawler.robots.agent import AgentToken, agent_token_of
from crawler.robots.rules import AgentMatch, Precedence
from crawler.robots.txt import RobotsOptions
from crawler.selectors import FieldSelector
from crawler.usage.purposes import Purpose

OutputFormat: TypeAlias = Literal["index", "jsonl", "both"]
Stemming: TypeAlias = Literal["auto", "none", "english"]
IndexWriter: TypeAlias = Literal["auto", "thread", "process"]
StateBackend: TypeAlias = Literal["sqlite", "redis"]
RevisitSchedule: TypeAlias = Literal["adaptive", "uniform"]
TrustMode: TypeAlias = Literal["earned", "always", "never"]

DEFAULT_USER_AGENT = "PoliteBot/0.1 (+https://example.org/bot)"


@dataclass(frozen=True, slots=True)
class RobotsConfig:
    """How robots.txt files are read, cached, and what their fetch outcomes mean."""

    token: str = ""
    """Product token matched against User-agent lines (and META robots, X-Robots-Tag); empty:
    the one user_agent names: its first product, or after a browser's prefix, the product after
    `compatible;` (`Mozilla/5.0 (compatible; YourBot/1.0; +https://...)` gives YourBot)."""
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
    """Wait after a 5xx (503 aside) or a network error; doubles per repeat."""
    backoff_max: float = _spec(3_600.0, minimum=0)
    """Longest backoff and learned interval, a Retry-After's included: a server asking for longer
    (a year, 1e12 s) is asked again after this long."""
    response_factor: float = _spec(4.0, minimum=0)
    """A host's interval is at least this many times its answer time (the median of its last 5
    times to first byte), counted from the answer: at most 1/(1 + this) of a one-worker server's
    time. 0: off."""
    max_response_delay: float = _spec(30.0, minimum=0)
    """Cap on the interval a host's answer time gives."""
    refusal_factor: float = _spec(3.0, minimum=1)
    """A 429 or 503 multiplies the host's learned interval by this (of the longer of the interval
    in force and the gap refused); the next request waits it, at least the Retry-After."""
    refusal_recovery: float = _spec(0.5, minimum=0)
    """Each accepted answer takes this fraction (below 1) of the way from the learned interval
    down to its floor: refusal_headroom times the longest gap the host refused."""
    refusal_headroom: float = _spec(1.25, minimum=1)
    forgive_after: float = _spec(1_800.0, minimum=0, duration=True)
    """Seconds without a refusal after which the refused gap is forgotten."""
    max_refusals: int = _spec(10, minimum=0)
    """Refusals in a row from a host that a URL may meet without spending fetch.max_retries:
    past them, each refusal counts as a failure."""
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
    main_content: bool = True
    """Read each page's main content (main_text, markdown; crawler.page.main_content); false
    leaves them empty and the page step as fast as before it read them."""
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
    --recrawl sets it). Needs a state that keeps every fetch: the durable SQLite state (the
    default), or a shared crawl's (state.backend redis), whose workers share its passes."""
    keep_fresh: bool = False
    """Never end: once a pass has asked for everything due, wait for the next page to come due
    and begin another (the command line's --keep-fresh sets it, and recrawl.enabled)."""
    after: float = _spec(86_400.0, minimum=0, duration=True)
    """Seconds after its last fetch a URL is due again when nothing is known of how often it
    changes (sitemaps always; every page with recrawl.schedule uniform): 86400, or 12h, 7d."""
    schedule: RevisitSchedule = "adaptive"
    """adaptive: each page is due again after the interval its change rate earns: the rate
    estimated from what its revisits found (changed or not; its sitemap's changefreq until
    then), each host's budget spread to keep the most pages fresh (pages changing faster than
    the budget can follow get less, not more). uniform: every page after recrawl.after."""
    min_interval: float = _spec(3_600.0, minimum=0, duration=True)
    """The shortest revisit interval of the adaptive schedule (recrawl.after, if shorter)."""
    max_interval: float = _spec(30 * 86_400.0, minimum=1, duration=True)
    """The longest revisit interval of the adaptive schedule (recrawl.after, if longer): a
    page never seen changing is still asked for this often."""
    budget_per_host_per_day: float = _spec(0.0, minimum=0)
    """Revisits a day the adaptive schedule spreads over a host's pages; 0: as many as
    recrawl.after would spend (the host's pages, once every recrawl.after)."""
    lastmod_trust: TrustMode = "earned"
    """Whether a sitemap's lastmod no later than a page's last fetch spares its request.
    earned: per host, once its lastmod proved right recrawl.lastmod_confirmations times in a row
    (until then the page is asked for conditionally: a 304 costs the server little, and each
    answer is evidence); a trusted host is still checked on recrawl.lastmod_sample of them; one
    proved wrong is not trusted until it proves right again. always: every host's (before issue
    42). never: no host's."""
    lastmod_confirmations: int = _spec(5, minimum=1)
    lastmod_sample: float = _spec(0.1, minimum=0)
    """The share (0 to 1) of a trusted host's pages claimed unchanged asked for all the same."""


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
    min_free_space: int = _spec(100_000_000, minimum=0)
    """Bytes free in the data directory's filesystem below which a crawl refuses to start (0:
    no check), rather than meeting a full disk an hour in."""
    disk_reserve: int = _spec(32_000_000, minimum=0)
    """Bytes a crawl holds in DIR/disk-reserve while it runs and gives back as it stops, so that
    what it holds in memory when the disk fills (3/4 for the sinks' last records, then the
    state's last commit and summary.json) still has room. 0: none."""


@dataclass(frozen=True, slots=True)
class IndexConfig:
    """How the full-text index (DIR/index.sqlite) reads words: chosen when the index is created,
    and kept in it."""

    stemming: Stemming = "auto"
    """english: English words are indexed and searched by their stem (Porter's), so `crawl
    search connect` also finds connected, connecting and connection, and `list comprehension`
    the section headed List Comprehensions. none: words as written (diacritics folded). auto:
    as the index in the data directory was created, english for a new one (the default; before
    issue 38 a new index was none, and an index keeps what it was created with). A crawl asking
    for english or none into an index created with the other stops with an error before it
    writes."""
    writer: IndexWriter = "auto"
    """Where the index is written: thread: a thread of the crawl's process; process: a process
    of its own, beside the crawl's, so that its work never waits for the event loop's GIL nor
    holds the loop back; auto (the default): the thread, and the process once 1,000 records are
    stored, on a machine of two cores or more; the process starts with the crawl, so it is ready
    by then, and a shorter crawl ends it unused (crawler.output.index)."""


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
class UsageConfig:
    """What the crawl is for, and so which pages' owners refuse it their content
    (crawler.usage; the README's table of signals): Content-Signal and Content-Usage in robots.txt
    and headers, noai and noimageai, TDMRep. A refused page is fetched and followed as robots.txt
    allows, and its text is neither indexed nor exported for this purpose."""

    purpose: Purpose = "search"
    """search: a search index whose results link to the pages. ai-input: pages given to an AI
    model as input when it answers (retrieval, grounding). ai-train: training or fine-tuning AI
    models."""
    tdmrep: Literal["auto", "always", "never"] = "auto"
    """When to ask each origin for /.well-known/tdmrep.json (TDMRep) after its robots.txt, at its
    pace, kept as long as the robots.txt: auto, when the purpose is one it speaks of (ai-input,
    ai-train; a search crawl makes no request for it); always (its rules are then in every
    page's record, for a later export for another purpose); never."""

    def asks_tdmrep(self) -> bool:
        if self.tdmrep == "auto":
            return self.purpose != "search"
        return self.tdmrep == "always"


@dataclass(frozen=True, slots=True)
class MonitorConfig:
    """Watching a crawl while it runs (crawler.monitor): a live status page, Prometheus metrics
    and the live summary, served over HTTP by the crawl's own process, read-only."""

    serve: str = _spec("", port=True)
    """[HOST:]PORT to serve on (the command line's --serve): 8080, 0.0.0.0:8080, [::1]:8080;
    HOST defaults to 127.0.0.1, port 0 takes any free one. Empty: nothing is served. A shared
    crawl's --workers N serve on PORT, PORT+1, ... PORT+N-1."""
    metrics_hosts: int = _spec(20, minimum=0)
    """Hosts with series of their own in /metrics: the busiest this many by requests (a label
    per host for every host would grow without bound)."""

    def address(self) -> ServeAddress | None:
        """Where to serve; None for nowhere. Checked at load (crawler.config.checks)."""
        return parse_serve_address(self.serve) if self.serve else None


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
    usage: UsageConfig = field(default_factory=UsageConfig)
    monitor: MonitorConfig = field(default_factory=MonitorConfig)
    extract: tuple[FieldSelector, ...] = _spec((), read=read_extract)
    """The user's fields, read from each page whose text is read: a mapping of field names to
    CSS selectors in parsel's dialect (`h1::text`, `meta[itemprop=sku]::attr(content)`), each
    the first match, or `{css: ..., all: true}` for the list of every match
    (crawler.page.fields)."""

    @property
    def agent_token(self) -> AgentToken:
        """The token robots.txt groups, META robots and X-Robots-Tag are matched with, and where
        it was read: robots.token, else the one user_agent names (crawler.robots.agent)."""
        if self.robots.token:
            return AgentToken(self.robots.token, "robots.token")
        return agent_token_of(self.user_agent)

    @property
    def product_token(self) -> str:
        return self.agent_token.token
