"""The placeholder User-Agent: which crawls are told to name themselves (crawler.identity, pure),
and `crawl` telling them once, on stderr, before the crawl starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from crawler.config import DEFAULT_USER_AGENT, Config, ScopeConfig, load_config
from crawler.identity import is_loopback_host, placeholder_user_agent_notice

OWN = "MyBot/1.0 (+https://mysite.example/bot)"
LIMIT = ("-s", "limits.max_pages=0")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.1.7", True),
        ("127.255.255.254", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("app.localhost", True),
        ("128.0.0.1", False),
        ("10.0.0.1", False),  # the local network is somebody's server
        ("192.168.1.1", False),
        ("::2", False),
        ("localhost.example.org", False),
        ("mylocalhost", False),
        ("example.org", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


@pytest.mark.parametrize(
    ("user_agent", "seeds", "allow_domains", "told"),
    [
        (DEFAULT_USER_AGENT, ["https://example.com/"], (), True),
        (DEFAULT_USER_AGENT, ["http://127.0.0.1:8080/", "https://en.wikipedia.org/"], (), True),
        (
            DEFAULT_USER_AGENT,
            ["http://127.0.1.1:8080/", "http://localhost/", "http://[::1]/"],
            (),
            False,
        ),
        # Loopback seeds, but the scope lets the crawl out.
        (DEFAULT_USER_AGENT, ["http://127.0.0.1/"], ("example.net",), True),
        (DEFAULT_USER_AGENT, [], (), False),
        (DEFAULT_USER_AGENT, ["not a url", "http://[bad/"], (), False),
        (f"  {DEFAULT_USER_AGENT} ", ["https://example.com/"], (), True),
        (OWN, ["https://example.com/"], (), False),
        ("PoliteBot/0.2 (+https://crawler.mysite.example/)", ["https://example.com/"], (), False),
    ],
)
def test_the_placeholder_is_named_when_the_crawl_leaves_this_machine(
    user_agent: str, seeds: list[str], allow_domains: tuple[str, ...], told: bool
) -> None:
    config = Config(user_agent=user_agent, scope=ScopeConfig(allow_domains=allow_domains))
    notice = placeholder_user_agent_notice(config, seeds)
    assert (notice is not None) is told
    if notice is not None:
        assert DEFAULT_USER_AGENT in notice
        for way in ("--user-agent", "-s 'user_agent=", "user_agent: in the YAML config"):
            assert way in notice


def test_the_notice_names_a_few_hosts_and_counts_the_rest() -> None:
    seeds = [f"https://site{number}.example/" for number in range(5)] * 2
    notice = placeholder_user_agent_notice(Config(), seeds)
    assert notice is not None
    assert "site0.example, site1.example, site2.example and 2 more" in notice


def test_the_config_default_is_the_placeholder() -> None:
    assert load_config().user_agent == DEFAULT_USER_AGENT


def _crawl(tmp_path: Path, seed: str, *options: str) -> subprocess.CompletedProcess[str]:
    """`crawl` on one seed with limits.max_pages=0: it starts, sends nothing, and sums up."""
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(seed + "\n", "utf-8")
    data = tmp_path / "data"
    return subprocess.run(
        [sys.executable, "-m", "crawler", str(seeds), "--data", str(data), *LIMIT, *options],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.loopback
def test_crawl_warns_once_on_stderr_before_the_crawl(tmp_path: Path) -> None:
    # 192.0.2.0/24 is for documentation (RFC 5737); with max_pages 0 nothing is sent to it.
    done = _crawl(tmp_path, "http://192.0.2.1/")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("placeholder User-Agent") == 1
    assert "crawl: warning: this crawl goes to 192.0.2.1 as" in done.stderr
    assert (
        "crawl stopped at limits.max_pages" in done.stdout
    )  # the summary: the crawl ran after the warning
    again = _crawl(tmp_path, "http://192.0.2.1/")  # resumed: still the placeholder
    assert again.stderr.count("placeholder User-Agent") == 1
    assert again.stderr.index("resuming the crawl") < again.stderr.index("placeholder")


@pytest.mark.loopback
@pytest.mark.parametrize(
    ("seed", "options"),
    [
        ("http://127.0.0.1:9/", ()),
        ("http://192.0.2.1/", ("-s", f"user_agent={OWN}")),
    ],
)
def test_crawl_says_nothing_on_loopback_or_under_a_name_of_its_own(
    tmp_path: Path, seed: str, options: tuple[str, ...]
) -> None:
    done = _crawl(tmp_path, seed, *options)
    assert done.returncode == 0, done.stderr
    assert "placeholder" not in done.stderr
