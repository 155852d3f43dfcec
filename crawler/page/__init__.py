"""The page step: bytes and headers in, a `Page` out. Pure (SPEC section 7)."""

from crawler.page.read import Page, PageRules, read_page

__all__ = ["Page", "PageRules", "read_page"]
