"""Configuration: typed, frozen, validated once at load.

`load_config(path, overrides)` reads a YAML file (config/crawler.yaml documents every key),
applies `-s key=value` overrides by dotted path, and returns a `Config`, or raises ConfigError
naming the file, the line where it can, the key and what was expected. Each component receives its
own slice (`config.robots`, `config.politeness`, ...), never the whole bag.

Every key is a dataclass field; its type annotation (a `Literal` lists the choices) and `_spec(...)`
metadata (bounds) are the whole schema, so the loader, the documentation test and the components
cannot disagree.

    extensions.py  SKIP_EXTENSIONS, the links not fetched by default: data
    values.py      one value read: durations, coercion to a field's type, the server URL, the
                   address the live status is served on
    users.py       what users bring: extract's fields, fetch's headers, credentials, proxy
    fetch.py       the fetch section (the HTTP client's keys)
    schema.py      the sections and `Config`: each key's type, default, bounds and documentation
    checks.py      checks on a built Config: keys against each other, values of a form
    mapping.py     a mapping to a Config: sections, dotted keys, did-you-mean for unknown keys
    files.py       YAML text to a mapping with lines, -s overrides, load_config: the only I/O

Each module imports only those above it in this list.
"""

from crawler.config.extensions import SKIP_EXTENSIONS
from crawler.config.fetch import FetchConfig
from crawler.config.files import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, load_config, read_user_text
from crawler.config.schema import (
    DEFAULT_USER_AGENT,
    Config,
    IndexConfig,
    IndexWriter,
    LimitsConfig,
    MonitorConfig,
    OutputConfig,
    OutputFormat,
    PageConfig,
    PolitenessConfig,
    RecrawlConfig,
    RobotsConfig,
    ScopeConfig,
    SitemapsConfig,
    StateBackend,
    StateConfig,
    Stemming,
    UsageConfig,
)
from crawler.config.users import AuthEntry
from crawler.config.values import (
    STATE_SERVER_PORT,
    STATE_SERVER_SCHEMES,
    ServeAddress,
    ServerAddress,
    parse_duration,
    parse_serve_address,
    parse_server_url,
)

__all__ = [
    "DEFAULT_USER_AGENT",
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_DEPTH",
    "SKIP_EXTENSIONS",
    "STATE_SERVER_PORT",
    "STATE_SERVER_SCHEMES",
    "AuthEntry",
    "Config",
    "FetchConfig",
    "IndexConfig",
    "IndexWriter",
    "LimitsConfig",
    "MonitorConfig",
    "OutputConfig",
    "OutputFormat",
    "PageConfig",
    "PolitenessConfig",
    "RecrawlConfig",
    "RobotsConfig",
    "ScopeConfig",
    "ServeAddress",
    "ServerAddress",
    "SitemapsConfig",
    "StateBackend",
    "StateConfig",
    "Stemming",
    "UsageConfig",
    "load_config",
    "parse_duration",
    "parse_serve_address",
    "parse_server_url",
    "read_user_text",
]
