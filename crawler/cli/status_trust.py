"""`crawl status`'s lines on each host's sitemap lastmod trust (crawler.freshness.trust), read
from DIR/state.sqlite: whether a recrawl lets its lastmod spare requests, and why."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, cast

from crawler.freshness import LastmodPolicy, LastmodTrust, TrustLevel
from crawler.state import STATE_NAME

__all__ = ["lastmod_trust_lines", "lastmod_trusts", "trust_document"]


def lastmod_trusts(data_dir: Path) -> dict[str, LastmodTrust]:
    """Every host judged, read-only; none when the state holds no such table (or no state)."""
    path = data_dir / STATE_NAME
    if not path.is_file():
        return {}
    wal = path.with_name(path.name + "-wal")
    options = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?{options}", uri=True)
    except sqlite3.Error:
        return {}
    try:
        rows = connection.execute(
            "SELECT origin, level, right, since, reason FROM lastmod_trust ORDER BY origin"
        ).fetchall()
    except sqlite3.Error:
        return {}  # a state of an older schema: no host judged yet
    finally:
        connection.close()
    return {
        origin: LastmodTrust(cast(TrustLevel, level), right, since, reason)
        for origin, level, right, since, reason in rows
    }


def lastmod_trust_lines(trusts: dict[str, LastmodTrust], policy: LastmodPolicy) -> list[str]:
    if not trusts:
        return []
    return [f"lastmod {origin}: {trust.describe(policy)}" for origin, trust in trusts.items()]


def trust_document(trusts: dict[str, LastmodTrust]) -> dict[str, dict[str, Any]]:
    return {
        origin: {
            "level": trust.level,
            "right": trust.right,
            "since": trust.since,
            "reason": trust.reason,
        }
        for origin, trust in trusts.items()
    }
