"""The package's public face: `__all__` is sorted, complete and importable."""

from __future__ import annotations

import crawler


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
