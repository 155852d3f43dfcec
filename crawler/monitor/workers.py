"""Where a shared crawl's workers serve their live status: each worker says it in its heartbeat
(the `info` the server keeps beside its id, crawler.state.shared), and `crawl status --state`
reads it back. Pure."""

from __future__ import annotations

import json

from crawler.config import ServeAddress

__all__ = ["served_at", "worker_address", "worker_info"]


def worker_address(address: ServeAddress, number: int) -> ServeAddress:
    """Where worker `number` (1, 2, ...) of `crawl --workers N --serve [HOST:]PORT` serves:
    PORT, PORT+1, ... (port 0: each any free port)."""
    return address.shifted(number - 1)


def worker_info(url: str) -> str:
    """The heartbeat's info of a worker serving its status at `url`."""
    return json.dumps({"serve": url}, separators=(",", ":"))


def served_at(info: str) -> str | None:
    """Where the worker whose heartbeat says `info` serves its status; None when it does not
    (or is of a version that did not say)."""
    try:
        document = json.loads(info)
    except ValueError:
        return None
    url = document.get("serve") if isinstance(document, dict) else None
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None
