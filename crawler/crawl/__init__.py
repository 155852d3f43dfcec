"""The crawl: the I/O shell that wires the pure core to the network, the state and the sinks."""

from crawler.crawl.crawler import Crawler

__all__ = ["Crawler"]
