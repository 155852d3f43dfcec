"""crawler: a polite asynchronous web crawler."""

from crawler.errors import CrawlerError
from crawler.robots import Explanation, RobotsOptions, RobotsTxt

__all__ = ["CrawlerError", "Explanation", "RobotsOptions", "RobotsTxt"]
