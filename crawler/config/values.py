"""One value read: a duration, a YAML value coerced to its field's type (or an error saying what
the key expects), the e-mail address pattern, the shared state's server URL."""

from __future__ import annotations

import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from crawler.errors import ConfigError

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
EMAIL_ADDRESS = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@(?:{_LABEL}\.)+{_TOP_LABEL}")


def field_spec(
    default: Any,
    *,
    minimum: float | None = None,
    duration: bool = False,
    pairs: bool = False,
    port: bool = False,
    read: Callable[[str, object], object] | None = None,
) -> Any:
    """A field with its validation rules beside its default. A field's choices are its
    `Literal` type's values. `duration`: seconds, also written as 90s, 30m, 12h, 7d or 2w.
    `pairs`: a list of KEY=VALUE strings, also written as a mapping. `port`: a string that may
    be written as a bare port number (YAML reads 8080 as one). `read`: a function of the key and
    the YAML value that returns the typed value or raises ConfigError (crawler.config.users),
    for a key whose value has a shape of its own. `coerce` reads these rules."""
    return field(
        default=default,
        metadata={
            "minimum": minimum,
            "duration": duration,
            "pairs": pairs,
            "port": port,
            "read": read,
        },
    )


def coerce(key: str, value: object, kind: Any, spec: Mapping[str, Any]) -> object:
    """`value` as `kind`, or a ConfigError message saying what `key` expects."""
    reader = spec.get("read")
    if reader is not None:
        return reader(key, value)
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
        if spec.get("port") and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # YAML reads a bare port as a number
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
class ServeAddress:
    """Where the live status is served (monitor.serve, --serve)."""

    host: str
    port: int

    def url(self, port: int | None = None) -> str:
        """http://HOST:PORT/, with `port` (the one bound) for PORT; an IPv6 host in brackets."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if port is None else port}/"

    def __str__(self) -> str:
        """As --serve takes it: HOST:PORT, an IPv6 host in brackets."""
        return self.url().removeprefix("http://").rstrip("/")

    def shifted(self, offset: int) -> ServeAddress:
        """The address of the worker `offset` after the first (PORT+offset; port 0 stays 0)."""
        return ServeAddress(self.host, self.port + offset if self.port else 0)


SERVE_HOST = "127.0.0.1"
_SERVE_EXPECTED = "expected [HOST:]PORT, like 8080, 127.0.0.1:8080, 0.0.0.0:8080 or [::1]:8080"


def parse_serve_address(text: str) -> ServeAddress:
    """The address `text` ([HOST:]PORT) names; ConfigError saying what is expected otherwise.
    HOST defaults to 127.0.0.1 (loopback: the page is the operator's, not the world's)."""
    given = text.strip()
    host, port = SERVE_HOST, given
    if given.startswith("["):
        inside, bracket, rest = given[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise ConfigError(f"{text!r} is no address: {_SERVE_EXPECTED}")
        host, port = inside, rest[1:]
    elif ":" in given:
        host, _, port = given.rpartition(":")
        if ":" in host:
            raise ConfigError(f"{text!r}: an IPv6 host goes in brackets; {_SERVE_EXPECTED}")
    if not port.isascii() or not port.isdigit() or int(port) > 65_535:
        what = f"{text!r}" if port == given else f"{text!r}: {port!r}"
        raise ConfigError(f"{what} is no port (0 to 65535); {_SERVE_EXPECTED}")
    if not host or any(char.isspace() or char in "/@?#" for char in host):
        raise ConfigError(f"{text!r}: {host!r} is no host; {_SERVE_EXPECTED}")
    return ServeAddress(host, int(port))
