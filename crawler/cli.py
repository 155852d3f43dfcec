"""`crawl`: the command line. Parses arguments, runs, maps outcomes to exit status.

Exit status: 0 success, 2 bad input (arguments, files, config), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from crawler.config import load_config
from crawler.errors import ConfigError
from crawler.robots import RobotsTxt

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

DESCRIPTION = """\
crawl: a polite web crawler.

The crawl itself is being built (seeds file, YAML config, index); what works today is the
robots.txt engine every part of the crawl stands on. Try:

  crawl robots path/to/robots.txt https://example.com/some/page --agent PoliteBot
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crawl", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    robots = commands.add_parser(
        "robots",
        help="explain what a robots.txt file allows, URL by URL",
        description="Read a robots.txt file and say, for each URL, whether the agent may fetch "
        "it and which line decides. Also shows the agent's Crawl-delay, Request-rate and "
        "Visit-time.",
    )
    robots.add_argument("file", type=Path, help="a robots.txt file")
    robots.add_argument("urls", nargs="+", metavar="URL", help="full URLs or paths with query")
    robots.add_argument("-c", "--config", type=Path, help="YAML config (see config/crawler.yaml)")
    robots.add_argument(
        "-s",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key by its dotted path, e.g. -s robots.precedence=first-match",
    )
    robots.add_argument("--agent", help="product token; same as -s robots.token=TOKEN")
    robots.add_argument("--agent-match", choices=("rfc", "substring"))
    robots.add_argument("--precedence", choices=("longest-match", "first-match"))
    robots.add_argument("--case-insensitive-paths", action="store_true")
    robots.add_argument("--split-values", action="store_true")
    robots.add_argument("--json", action="store_true", help="one JSON object per URL")
    return parser


def _robots_overrides(args: argparse.Namespace) -> list[str]:
    """The shortcut flags, as the -s overrides they stand for (after the explicit ones)."""
    overrides = list(args.overrides)
    if args.agent is not None:
        overrides.append(f"robots.token={args.agent}")
    if args.agent_match is not None:
        overrides.append(f"robots.agent_match={args.agent_match}")
    if args.precedence is not None:
        overrides.append(f"robots.precedence={args.precedence}")
    if args.case_insensitive_paths:
        overrides.append("robots.case_insensitive_paths=true")
    if args.split_values:
        overrides.append("robots.split_values=true")
    return overrides


def _robots(args: argparse.Namespace) -> int:
    config = load_config(args.config, _robots_overrides(args))
    agent = config.product_token
    try:
        body = args.file.read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read robots.txt file {args.file}: {error.strerror}") from error
    robots = RobotsTxt.parse(body, **asdict(config.robots.options()))
    for url in args.urls:
        verdict = robots.explain(url, agent)
        if args.json:
            print(
                json.dumps(
                    {
                        "url": url,
                        "allowed": verdict.allowed,
                        "reason": verdict.reason,
                        "line": verdict.line,
                        "text": verdict.text,
                        "message": verdict.message,
                    }
                )
            )
        else:
            print(
                f"{'allowed   ' if verdict.allowed else 'disallowed'}  {url}\n    {verdict.message}"
            )
    if not args.json:
        delay = robots.crawl_delay(agent)
        rates = ", ".join(str(rate) for rate in robots.request_rates(agent)) or "none"
        windows = ", ".join(str(window) for window in robots.visit_time(agent)) or "any time"
        print(
            f"{agent}: Crawl-delay {delay if delay is not None else 'none'}; "
            f"Request-rate {rates}; Visit-time {windows}"
        )
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "robots":
            return _robots(args)
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    except ConfigError as error:
        print(f"crawl: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
