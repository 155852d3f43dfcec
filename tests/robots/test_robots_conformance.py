"""The shared robots.txt conformance vectors, one test each (ids: the vector id, e.g. R001).

Kinds:
- "match": `robots` (text) or `robots_b64` (base64 bytes), `agent` (a token or a list of tokens),
  `url`, `expected_allowed`; checked through `RobotsTxt.can_fetch`.
- "product_token_validity": `agent`, `valid`; checked through `validate_product_token`.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from crawler.errors import InvalidProductTokenError
from crawler.robots.txt import RobotsTxt, validate_product_token

TESTS = Path(__file__).resolve().parents[1]
VENDORED = TESTS / "data" / "robots_cases.jsonl"
# The source of the vendored copy, beside the repository root when the shared tree is checked out.
SHARED = TESTS.parent.parent / "shared" / "conformance" / "robots_cases.jsonl"


def _load() -> list[dict[str, Any]]:
    with VENDORED.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


VECTORS = _load()


def _body(vector: dict[str, Any]) -> bytes | str:
    if "robots_b64" in vector:
        return base64.b64decode(vector["robots_b64"])
    return str(vector["robots"])


def _describe(vector: dict[str, Any]) -> str:
    return f"{vector['id']} ({vector.get('basis', vector['kind'])}): {vector['why']}"


@pytest.mark.parametrize("vector", VECTORS, ids=[vector["id"] for vector in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    if vector["kind"] == "match":
        agent = vector["agent"]
        robots = RobotsTxt.parse(_body(vector))
        got = robots.can_fetch(vector["url"], agent if isinstance(agent, str) else tuple(agent))
        assert got is vector["expected_allowed"], (
            f"{_describe(vector)}\nexplain(): {robots.explain(vector['url'], agent)}"
        )
    elif vector["kind"] == "product_token_validity":
        try:
            validate_product_token(vector["agent"])
        except InvalidProductTokenError:
            valid = False
        else:
            valid = True
        assert valid is vector["valid"], _describe(vector)
    else:
        pytest.fail(f"{vector['id']}: unknown kind {vector['kind']!r}")


def test_vectors_are_all_read() -> None:
    ids = [vector["id"] for vector in VECTORS]
    assert len(ids) == len(set(ids)), "duplicate vector ids"
    assert {vector["kind"] for vector in VECTORS} == {"match", "product_token_validity"}


def test_vendored_copy_matches_shared() -> None:
    if not SHARED.exists():
        pytest.skip(f"no shared conformance file at {SHARED}")
    assert VENDORED.read_bytes() == SHARED.read_bytes(), (
        f"{VENDORED} differs from {SHARED}: copy the shared file again"
    )
