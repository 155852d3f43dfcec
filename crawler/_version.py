"""The crawler's version: one place, read by the package, `crawl --version` and the build."""

__version__ = "0.1.0"
