"""`crawl` as a user runs it: exit statuses and what it prints."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

import crawler
from crawler.cli.command import main
from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_OK
from crawler.config import FetchConfig
from crawler.http.fetcher import Fetcher
from crawler.page import compiled
from crawler.runtime import event_loop_name

ROBOTS = b"""User-agent: *
Disallow: /private/
Allow: /private/ok
Crawl-delay: 2
Request-rate: 1/5 0600-0845
Visit-time: 2200-0400
"""


@pytest.fixture
def robots_file(tmp_path: Path) -> Path:
    path = tmp_path / "robots.txt"
    path.write_bytes(ROBOTS)
    return path


def test_robots_names_the_deciding_line(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["robots", str(robots_file), "https://example.org/private/x", "/private/ok"])
    out = capsys.readouterr().out
    assert status == EXIT_OK
    assert "disallowed  https://example.org/private/x" in out
    assert "line 2 'Disallow: /private/'" in out
    assert "line 3 'Allow: /private/ok'" in out
    assert "Crawl-delay 2.0" in out
    assert "Request-rate 1/5s 06:00-08:45 UTC" in out
    assert "Visit-time 22:00-04:00 UTC" in out


def test_robots_json_is_one_object_per_url(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["robots", str(robots_file), "/private/x", "/elsewhere", "--json"]) == EXIT_OK
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(row["url"], row["allowed"], row["line"]) for row in rows] == [
        ("/private/x", False, 2),
        ("/elsewhere", True, None),
    ]


def test_legacy_options_reach_the_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /tmp /spool\n")
    main(["robots", str(path), "/tmp/x", "--json"])
    assert json.loads(capsys.readouterr().out)["allowed"] is True
    main(["robots", str(path), "/tmp/x", "--json", "--split-values"])
    assert json.loads(capsys.readouterr().out)["allowed"] is False


def test_invalid_token_exits_2_with_a_clear_message(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["robots", str(robots_file), "/x", "--agent", "MJ12bot"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "'MJ12bot' is not valid" in err
    assert "read as 'MJ'" in err


def test_missing_file_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "absent.txt"
    assert main(["robots", str(missing), "/x"]) == EXIT_BAD_INPUT
    assert str(missing) in capsys.readouterr().err


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == EXIT_BAD_INPUT
    assert "crawl robots" in capsys.readouterr().err


def test_config_file_and_overrides_reach_the_engine(
    robots_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "crawler.yaml"
    config.write_text("robots:\n  precedence: first-match\n", encoding="utf-8")
    robots_file.write_bytes(b"User-agent: *\nDisallow: /\nAllow: /public\n")
    main(["robots", str(robots_file), "/public/x", "--json", "-c", str(config)])
    assert json.loads(capsys.readouterr().out)["allowed"] is False
    main(
        ["robots", str(robots_file), "/public/x", "--json", "-s", "robots.precedence=longest-match"]
    )
    assert json.loads(capsys.readouterr().out)["allowed"] is True


def test_bad_config_exits_2_naming_file_and_key(
    robots_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "crawler.yaml"
    config.write_text("robots:\n  precedense: first-match\n", encoding="utf-8")
    assert main(["robots", str(robots_file), "/x", "-c", str(config)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert str(config) in err
    assert "robots.precedense" in err


def test_version_says_what_a_crawl_runs_on(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    first, runs_on, packages = capsys.readouterr().out.splitlines()
    assert first == f"crawl {crawler.__version__}"
    assert runs_on == (
        f"runs on: page walk {compiled.WALK}, HTTP client {Fetcher(FetchConfig(), '').client_name}"
        f", event loop {event_loop_name()}"
    )
    assert packages.startswith("Python ") and "selectolax " in packages


def test_the_version_is_the_installed_distributions() -> None:
    assert crawler.__version__ == importlib.metadata.version("crawler")


@pytest.mark.loopback
def test_python_dash_m_crawler_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "crawler", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == EXIT_OK
    assert done.stdout.startswith(f"crawl {crawler.__version__}\n")
