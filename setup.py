"""Build step for the compiled parts: crawler/page/_pagescan.c, the page step's walk over a
parsed page (crawler/page/compiled.py loads, checks and chooses it), and crawler/output/_cjkmark.c,
the index's marking of CJK text (crawler/output/cjk.py). Everything else is in pyproject.toml.

The extensions are optional: where they do not build (no C compiler), the install goes on and the
crawl runs the same code in Python, slower; `crawl --version` says which walk runs.
"""

from setuptools import Extension, setup

COMPILE_ARGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"]

setup(
    ext_modules=[
        Extension(
            "crawler.page._pagescan",
            ["crawler/page/_pagescan.c"],
            depends=["crawler/page/_maincontent.c", "crawler/page/_linkmarks.c"],
            optional=True,
            extra_compile_args=COMPILE_ARGS,
        ),
        Extension(
            "crawler.output._cjkmark",
            ["crawler/output/_cjkmark.c"],
            optional=True,
            extra_compile_args=COMPILE_ARGS,
        ),
    ]
)
