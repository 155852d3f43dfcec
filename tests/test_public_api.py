"""The package's public face: `__all__` is sorted, complete and importable."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

import crawler
import crawler.config

FACES = (
    "crawler",
    "crawler.config",
    "crawler.robots",
    "crawler.page",
    "crawler.http",
    "crawler.output",
    "crawler.state",
    "crawler.crawl",
    "crawler.crawl.decide",
    "crawler.cli",
)


def test_all_is_sorted_and_importable() -> None:
    assert list(crawler.__all__) == sorted(crawler.__all__)
    for name in crawler.__all__:
        assert getattr(crawler, name) is not None


def test_all_names_every_public_attribute() -> None:
    public = {
        name
        for name, value in vars(crawler).items()
        if not name.startswith("_") and not isinstance(value, type(crawler))
    }
    assert public == set(crawler.__all__)


@pytest.mark.parametrize("name", FACES)
def test_every_package_face_exports_what_it_names_and_names_what_it_exports(name: str) -> None:
    face = importlib.import_module(name)
    exported = list(face.__all__)
    assert exported == sorted(exported, key=lambda item: (not item.isupper(), item))
    for item in exported:
        assert getattr(face, item) is not None
    public = {
        key
        for key, value in vars(face).items()
        if not key.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(exported)


def test_config_exports_every_name_the_repository_imports_from_it() -> None:
    """crawler.config is a package of modules now; every `from crawler.config import X` in the
    package, the tests, the scripts and the benchmarks names one of its exports, not a module's."""
    root = Path(__file__).resolve().parents[1]
    imported = {
        alias.name
        for folder in ("crawler", "tests", "scripts", "benchmarks")
        for path in (root / folder).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == "crawler.config"
        for alias in node.names
    }
    assert "Config" in imported
    assert imported <= set(crawler.config.__all__)


def test_the_documented_imports_work() -> None:
    from crawler import Config, Crawler, load_config
    from crawler.cli import main
    from crawler.robots import RobotsTxt

    assert callable(main) and callable(load_config)
    assert RobotsTxt.parse("User-agent: *\nDisallow: /x\n").can_fetch("/x", "Bot") is False
    assert Crawler(Config()).stats.outcome == "running"
