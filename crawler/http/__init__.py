"""HTTP: one GET in, a `Response` or a `FetchFailure` out; never raises, follows no redirect."""

from crawler.http.fetcher import Fetcher, FetchFailure, Response

__all__ = ["FetchFailure", "Fetcher", "Response"]
