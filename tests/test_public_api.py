"""The package's public face: `__all__` is sorted, complete and importable."""

from __future__ import annotations

import importlib
import types

import pytest

import crawler

FACES = (
    "crawler",
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


def test_the_documented_imports_work() -> None:
    from crawler import Config, Crawler, load_config
    from crawler.cli import main
    from crawler.robots import RobotsTxt

    assert callable(main) and callable(load_config)
    assert RobotsTxt.parse("User-agent: *\nDisallow: /x\n").can_fetch("/x", "Bot") is False
    assert Crawler(Config()).stats.outcome == "running"
