"""A package's interface imported when first used (PEP 562): each name from the module it lives
in, on the first access, then kept in the package. So a process of the crawl's own
(crawler.child: the page reader, the index writer) imports a package's part without the rest."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of `package` (its `__name__`, called from its
    `__init__`), whose names `homes` maps to the modules they live in."""
    namespace = vars(sys.modules[package])

    def attribute(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *homes})

    return attribute, names
