"""crawler: a polite asynchronous web crawler."""

from crawler.config import Config, load_config
from crawler.errors import CrawlerError
from crawler.robots import Explanation, RobotsOptions, RobotsTxt

__all__ = ["Config", "CrawlerError", "Explanation", "RobotsOptions", "RobotsTxt", "load_config"]
