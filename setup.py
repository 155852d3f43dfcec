"""Build step for the one compiled part: crawler/page/_pagescan.c, the page step's walk over a
parsed page (crawler/page/compiled.py loads, checks and chooses it). Everything else is in
pyproject.toml.

The extension is optional: where it does not build (no C compiler), the install goes on and the
crawl runs the same walk in Python, slower; `crawl --version` says which runs.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "crawler.page._pagescan",
            ["crawler/page/_pagescan.c"],
            optional=True,
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
        )
    ]
)
