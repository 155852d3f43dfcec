"""HTTP: one GET in, a `Response` or a `FetchFailure` out; never raises, follows no redirect."""

from crawler.http.answer import FetchFailure, Response
from crawler.http.fetcher import Fetcher

__all__ = ["FetchFailure", "Fetcher", "Response"]
