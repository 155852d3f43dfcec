"""Configuration: loaded and validated once, errors that name the file, the key and the want."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crawler.config import (
    MAX_CONFIG_BYTES,
    Config,
    FetchConfig,
    LimitsConfig,
    OutputConfig,
    PolitenessConfig,
    RobotsConfig,
    ScopeConfig,
    load_config,
    parse_duration,
)
from crawler.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "crawler.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_documented_file_holds_exactly_the_defaults(repo: Path) -> None:
    assert load_config(repo / "config" / "crawler.yaml") == Config()


def test_no_file_gives_defaults_and_the_token_comes_from_the_user_agent() -> None:
    config = load_config()
    assert config == Config()
    assert config.product_token == "PoliteBot"


def test_values_and_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, "user_agent: FooBot/2 (+x)\nrobots:\n  precedence: first-match\n")
    config = load_config(path, ["robots.split_values=true", "robots.token=Bar-Bot"])
    assert config.robots == RobotsConfig(
        token="Bar-Bot", precedence="first-match", split_values=True
    )
    assert config.product_token == "Bar-Bot"
    assert config.robots.options().precedence == "first-match"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("robots:\n  precedense: first-match\n", "unknown key robots.precedense"),
        ("robot:\n  token: X\n", "unknown key robot"),
        ("robots:\n  split_values: yes please\n", "robots.split_values must be true or false"),
        ("robots:\n  precedence: last\n", "precedence must be 'longest-match' or 'first-match'"),
        ("robots:\n  token: MJ12bot\n", "product token 'MJ12bot' is not valid"),
        ("user_agent: ''\n", "user_agent must be a non-empty string"),
        ("robots: [1, 2]\n", "robots must be a mapping"),
        ("- a list\n", "expected a mapping of keys at the top"),
        ("robots:\n  token: [unclosed\n", "line 3: not valid YAML"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read config file .*absent\.yaml"):
        load_config(tmp_path / "absent.yaml")


def test_malformed_override_says_what_is_expected() -> None:
    with pytest.raises(ConfigError, match="expected key=value"):
        load_config(None, ["robots.token"])
    with pytest.raises(ConfigError, match=r"unknown key robots\.nope"):
        load_config(None, ["robots.nope=1"])


# --- the crawl sections: politeness, fetch, limits, scope, output, concurrency -------------------

FULL_CONFIG = """\
concurrency: 16
robots:
  cache_ttl: 3600
  retry_initial: 5.5
  retry_max: 600
politeness:
  min_delay: 0.5
  max_crawl_delay: 20
  over_max_crawl_delay: skip
  max_wait: 120
  per_host_concurrency: 2
  backoff_initial: 1
  backoff_max: 60
fetch:
  connect_timeout: 2.5
  read_timeout: 10
  max_body_bytes: 1048576
  max_redirects: 0
  max_retries: 1
limits:
  max_pages: 1000
  max_depth: 0
  max_pages_per_host: null
scope:
  seed_hosts: false
  include_subdomains: true
  allow_domains: [a.test, b.test]
  allow:
    - /docs/
  deny: ['\\.pdf$', '[?&]session=']
output:
  data_dir: out
  format: jsonl
  progress_interval: 0.5
"""


def test_every_crawl_section_is_read_into_its_typed_slice(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, FULL_CONFIG))
    assert config.concurrency == 16
    assert config.robots == RobotsConfig(cache_ttl=3600.0, retry_initial=5.5, retry_max=600.0)
    assert config.politeness == PolitenessConfig(
        min_delay=0.5,
        max_crawl_delay=20.0,
        over_max_crawl_delay="skip",
        max_wait=120.0,
        per_host_concurrency=2,
        backoff_initial=1.0,
        backoff_max=60.0,
    )
    assert config.fetch == FetchConfig(
        connect_timeout=2.5,
        read_timeout=10.0,
        max_body_bytes=1_048_576,
        max_redirects=0,
        max_retries=1,
    )
    assert config.limits == LimitsConfig(max_pages=1000, max_depth=0, max_pages_per_host=None)
    assert config.scope == ScopeConfig(
        seed_hosts=False,
        include_subdomains=True,
        allow_domains=("a.test", "b.test"),
        allow=("/docs/",),
        deny=(r"\.pdf$", "[?&]session="),
    )
    assert config.output == OutputConfig(data_dir="out", format="jsonl", progress_interval=0.5)


def test_whole_numbers_are_accepted_where_a_number_is_expected(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "politeness:\n  min_delay: 2\n"))
    assert config.politeness.min_delay == 2.0
    assert isinstance(config.politeness.min_delay, float)


def test_an_empty_section_means_its_defaults(tmp_path: Path) -> None:
    text = "politeness:\nfetch:\nlimits:\n  # max_pages: 10\nscope:\noutput:\n"
    assert load_config(write(tmp_path, text)) == Config()


def test_a_single_string_is_read_as_a_one_item_list(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "scope:\n  allow_domains: a.test\n  deny: /tmp/\n"))
    assert config.scope.allow_domains == ("a.test",)
    assert config.scope.deny == ("/tmp/",)


@pytest.mark.parametrize("key", ["max_pages", "max_depth", "max_pages_per_host"])
def test_limits_take_null_for_no_limit_and_zero(tmp_path: Path, key: str) -> None:
    assert getattr(load_config(write(tmp_path, f"limits:\n  {key}: null\n")).limits, key) is None
    assert getattr(load_config(write(tmp_path, f"limits:\n  {key}: 0\n")).limits, key) == 0


BAD_SECTION_CASES = [
    # (id, yaml, line, message after "FILE line N: ")
    (
        "not-a-number",
        "user_agent: A/1\npoliteness:\n  min_delay: x\n",
        3,
        "politeness.min_delay must be a number >= 0, not 'x'",
    ),
    (
        "negative",
        "politeness:\n  min_delay: -1\n",
        2,
        "politeness.min_delay must be a number >= 0, not -1",
    ),
    (
        "bool-for-number",
        "politeness:\n  max_wait: true\n",
        2,
        "politeness.max_wait must be a number >= 0, not True",
    ),
    (
        "nan",
        "politeness:\n  max_crawl_delay: .nan\n",
        2,
        "politeness.max_crawl_delay must be a number >= 0, not nan",
    ),
    (
        "infinite",
        "politeness:\n  backoff_max: .inf\n",
        2,
        "politeness.backoff_max must be a number >= 0, not inf",
    ),
    (
        "null-not-allowed",
        "politeness:\n  max_wait: null\n",
        2,
        "politeness.max_wait must be a number >= 0, not None",
    ),
    (
        "concurrency-zero",
        "politeness:\n  per_host_concurrency: 0\n",
        2,
        "politeness.per_host_concurrency must be a whole number >= 1, not 0",
    ),
    (
        "fraction-for-whole",
        "politeness:\n  per_host_concurrency: 1.5\n",
        2,
        "politeness.per_host_concurrency must be a whole number >= 1, not 1.5",
    ),
    (
        "choice",
        "politeness:\n  over_max_crawl_delay: drop\n",
        2,
        "politeness.over_max_crawl_delay must be 'cap' or 'skip', not 'drop'",
    ),
    (
        "unknown-key",
        "\npoliteness:\n  min_dealy: 3\n",
        3,
        "unknown key politeness.min_dealy (did you mean politeness.min_delay?); "
        "expected one of politeness.backoff_initial,",
    ),
    ("section-not-mapping", "fetch: 3\n", 1, "fetch must be a mapping of keys, not 3"),
    (
        "timeout-minimum",
        "fetch:\n  connect_timeout: 0\n",
        2,
        "fetch.connect_timeout must be a number >= 0.001, not 0",
    ),
    (
        "body-minimum",
        "fetch:\n  max_body_bytes: 0\n",
        2,
        "fetch.max_body_bytes must be a whole number >= 1, not 0",
    ),
    (
        "redirects-negative",
        "fetch:\n  max_redirects: -1\n",
        2,
        "fetch.max_redirects must be a whole number >= 0, not -1",
    ),
    (
        "retries-string",
        "fetch:\n  max_retries: three\n",
        2,
        "fetch.max_retries must be a whole number >= 0, not 'three'",
    ),
    (
        "limit-negative",
        "limits:\n  max_pages: null\n  max_depth: -1\n",
        3,
        "limits.max_depth must be a whole number or null >= 0, not -1",
    ),
    (
        "limit-string",
        "limits:\n  max_pages: ten\n",
        2,
        "limits.max_pages must be a whole number or null >= 0, not 'ten'",
    ),
    (
        "limit-fraction",
        "limits:\n  max_pages_per_host: 2.5\n",
        2,
        "limits.max_pages_per_host must be a whole number or null >= 0, not 2.5",
    ),
    (
        "bool-for-bool",
        "scope:\n  include_subdomains: maybe\n",
        2,
        "scope.include_subdomains must be true or false, not 'maybe'",
    ),
    (
        "page-bool",
        "page:\n  follow_rel_nofollow: sometimes\n",
        2,
        "page.follow_rel_nofollow must be true or false, not 'sometimes'",
    ),
    (
        "list-with-number",
        "scope:\n  allow_domains: [a.test, 3]\n",
        2,
        "scope.allow_domains must be a list of strings, not ['a.test', 3]",
    ),
    (
        "list-as-mapping",
        "scope:\n  deny: {a: b}\n",
        2,
        "scope.deny must be a list of strings, not {'a': 'b'}",
    ),
    (
        "bad-deny-regex",
        "scope:\n  deny:\n    - '(unclosed'\n",
        2,
        "scope.deny: '(unclosed' is not a valid regular expression (missing ), unterminated",
    ),
    (
        "bad-allow-regex",
        "scope:\n  allow: [ok, '[bad']\n",
        2,
        "scope.allow: '[bad' is not a valid regular expression (unterminated character set",
    ),
    (
        "format-choice",
        "output:\n  format: csv\n",
        2,
        "output.format must be 'index' or 'jsonl' or 'both', not 'csv'",
    ),
    (
        "progress-minimum",
        "output:\n  progress_interval: 0.05\n",
        2,
        "output.progress_interval must be a number >= 0.1, not 0.05",
    ),
    (
        "data-dir-string",
        "output:\n  data_dir: [a]\n",
        2,
        "output.data_dir must be a string, not ['a']",
    ),
    (
        "concurrency",
        "user_agent: A/1\nconcurrency: 0\n",
        2,
        "concurrency must be a whole number >= 1, not 0",
    ),
    (
        "cache-ttl",
        "robots:\n  cache_ttl: -1\n",
        2,
        "robots.cache_ttl must be a number >= 0, not -1",
    ),
    (
        "retry-initial",
        "robots:\n  retry_initial: soon\n",
        2,
        "robots.retry_initial must be a number >= 0, not 'soon'",
    ),
    (
        "retry-max",
        "robots:\n  token: X\n  retry_max: -0.5\n",
        3,
        "robots.retry_max must be a number >= 0, not -0.5",
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [case[1:] for case in BAD_SECTION_CASES],
    ids=[case[0] for case in BAD_SECTION_CASES],
)
def test_bad_crawl_key_names_file_line_and_key(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path} line {line}: {message}")


def test_key_line_is_found_in_flow_style_mappings(tmp_path: Path) -> None:
    path = write(tmp_path, "robots: {}\n\nfetch: {read_timeout: 0}\n")
    with pytest.raises(ConfigError, match=r"crawler\.yaml line 3: fetch\.read_timeout must be"):
        load_config(path)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("1e3", 1000.0), ("2.5E-1", 0.25), ("1e+2", 100.0), ("1.0e3", 1000.0)],
)
def test_a_number_in_exponent_form_is_a_number(tmp_path: Path, value: str, seconds: float) -> None:
    # YAML 1.1 (PyYAML) reads an exponent without a dot as a string.
    config = load_config(write(tmp_path, f"fetch:\n  read_timeout: {value}\n"))
    assert config.fetch.read_timeout == seconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("politeness:\n  min_delay: -1e3\n", "politeness.min_delay must be a number >= 0"),
        ("politeness:\n  min_delay: 1e999\n", "politeness.min_delay must be a number >= 0"),
        ("fetch:\n  max_body_bytes: 1e6\n", "fetch.max_body_bytes must be a whole number >= 1"),
    ],
)
def test_an_exponent_number_is_still_checked(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path} line 2: {message}")


# --- -s overrides of the crawl keys --------------------------------------------------------------

OVERRIDE_CASES = [
    # (id, override, section, key, value)
    ("limit", "limits.max_pages=10", "limits", "max_pages", 10),
    ("limit-null", "limits.max_depth=null", "limits", "max_depth", None),
    ("list", "scope.allow_domains=[a.com]", "scope", "allow_domains", ("a.com",)),
    ("list-of-two", "scope.deny=[/tmp/, '\\.pdf$']", "scope", "deny", ("/tmp/", r"\.pdf$")),
    ("single-string-as-list", "scope.allow_domains=a.com", "scope", "allow_domains", ("a.com",)),
    ("bool", "scope.include_subdomains=true", "scope", "include_subdomains", True),
    ("number", "politeness.min_delay=0.25", "politeness", "min_delay", 0.25),
    ("whole-to-number", "politeness.min_delay=2", "politeness", "min_delay", 2.0),
    (
        "choice",
        "politeness.over_max_crawl_delay=skip",
        "politeness",
        "over_max_crawl_delay",
        "skip",
    ),
    ("fetch", "fetch.max_redirects=0", "fetch", "max_redirects", 0),
    ("output", "output.data_dir=somewhere", "output", "data_dir", "somewhere"),
    ("robots-ttl", "robots.cache_ttl=60", "robots", "cache_ttl", 60.0),
    ("spaces-around-key", " limits.max_pages =5", "limits", "max_pages", 5),
]


@pytest.mark.parametrize(
    ("override", "section", "key", "value"),
    [case[1:] for case in OVERRIDE_CASES],
    ids=[case[0] for case in OVERRIDE_CASES],
)
def test_override_of_a_crawl_key(override: str, section: str, key: str, value: object) -> None:
    config = load_config(None, [override])
    assert getattr(getattr(config, section), key) == value


def test_override_of_a_top_level_key() -> None:
    assert load_config(None, ["concurrency=8"]).concurrency == 8


def test_overrides_win_over_the_file_and_keep_its_other_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "limits:\n  max_pages: 100\n  max_depth: 3\n")
    config = load_config(
        path, ["limits.max_pages=10", "limits.max_pages=20", "fetch.max_retries=0"]
    )
    assert config.limits == LimitsConfig(max_pages=20, max_depth=3)
    assert config.fetch.max_retries == 0


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("politeness.min_delay=x", "politeness.min_delay must be a number >= 0, not 'x'"),
        ("limits.max_pages=-1", "limits.max_pages must be a whole number or null >= 0, not -1"),
        ("scope.deny=(x", "scope.deny: '(x' is not a valid regular expression"),
        ("scope.allow_domains=[a, [b]]", "scope.allow_domains must be a list of strings"),
        ("politeness.nope=1", "unknown key politeness.nope"),
        ("limits=3", "limits must be a mapping of keys, not 3"),
        ("state.durable=maybe", "state.durable must be true or false, not 'maybe'"),
        ("state.commit_interval=0", "state.commit_interval must be a number >= 0.01, not 0"),
        ("state.working_set=0", "state.working_set must be a whole number >= 1, not 0"),
        ("state.stop_grace=-1", "state.stop_grace must be a number >= 0, not -1"),
    ],
)
def test_bad_override_of_a_crawl_key_names_the_key(override: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(None, [override])
    assert str(caught.value).startswith(f"defaults with -s overrides: {message}")


def test_a_bad_overridden_key_names_no_file_line(tmp_path: Path) -> None:
    # The file's line for the key no longer holds the value that failed.
    path = write(tmp_path, "politeness:\n  min_delay: 2\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, ["politeness.min_delay=x"])
    message = str(caught.value)
    assert message.startswith(f"{path} with -s overrides: politeness.min_delay must be")
    assert "line" not in message


def test_a_bad_file_key_beside_overrides_keeps_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "politeness:\n  min_delay: 2\n  max_wait: x\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, ["politeness.min_delay=3"])
    message = str(caught.value)
    assert str(path) in message
    assert "line 3" in message
    assert "politeness.max_wait must be a number >= 0, not 'x'" in message


def test_override_into_a_section_left_empty_in_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "limits:\n  # max_pages: 100\n")
    assert load_config(path, ["limits.max_pages=10"]).limits.max_pages == 10


def test_a_ca_bundle_that_is_no_file_names_the_key(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ca.pem"
    with pytest.raises(ConfigError, match=r"fetch\.ca_bundle: .*no-such-ca\.pem.* is not a file"):
        load_config(None, [f"fetch.ca_bundle={missing}"])
    assert load_config(None, ["fetch.verify_tls=false"]).fetch.verify_tls is False


def test_skip_extensions_must_be_extensions() -> None:
    with pytest.raises(ConfigError, match=r"scope\.skip_extensions: 'a/b' is not a file name"):
        load_config(None, ["scope.skip_extensions=[pdf, a/b]"])
    assert load_config(None, ["scope.skip_extensions=[]"]).scope.skip_extensions == ()


# --- hostile files (issue 17) ---------------------------------------------------------------------

BILLION_LAUGHS = "".join(
    f"{name}: &{name} {{{', '.join(f'k{n}: *{previous}' for n in range(9))}}}\n"
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
)
"""Mappings of mappings: 9**8 values from 9 lines; walked for key lines, they never end."""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &a 1\n" + BILLION_LAUGHS, "line 2: an alias (*a): a config spells every value out"),
        ("politeness: &p {min_delay: 2}\nrobots: *p\n", "line 2: an alias (*p)"),
        ("scope:\n  allow: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested more than 16 levels"),
        ("concurrency: " + "7" * 5000 + "\n", "line 1: cannot read the value '777"),
        ("limits: {max_pages: 2020-13-01}\n", "line 1: cannot read the value '2020-13-01'"),
    ],
    ids=["billion-laughs", "alias", "deep", "huge-integer", "bad-date"],
)
def test_yaml_a_config_does_not_need_is_refused_at_its_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path} ")
    assert message in str(caught.value)


def test_a_config_over_the_size_bound_is_not_read(tmp_path: Path) -> None:
    # Comments only, so that without the bound it would load (slowly) and pass.
    path = tmp_path / "crawler.yaml"
    path.write_text("# filler\n" * (MAX_CONFIG_BYTES // 9 + 1), encoding="utf-8")
    with pytest.raises(ConfigError, match=f"more than {MAX_CONFIG_BYTES} bytes; expected a config"):
        load_config(path)


def test_a_config_that_is_not_a_mapping_is_quoted_briefly(tmp_path: Path) -> None:
    path = write(tmp_path, "- " + "\n- ".join(f"item {n} " + "x" * 100 for n in range(5000)))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: expected a mapping of keys at the top, not [")
    assert len(message) < len(str(path)) + 300  # not the 550 KB of the list


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"robots:\n  token: PoliteBot\n\x00\x01\x02\n", "line 3: a NUL byte: a binary file"),
        (b"concurrency: 4\nuser_agent: caf\xe9\n", "line 2: not UTF-8 text"),
    ],
    ids=["nul", "latin-1"],
)
def test_a_binary_config_is_an_error_naming_its_line(
    tmp_path: Path, data: bytes, message: str
) -> None:
    path = tmp_path / "crawler.yaml"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path} {message}")


def test_an_override_of_a_huge_integer_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="concurrency"):
        load_config(None, ["concurrency=" + "9" * 5000])


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["state.backend=redis"], "state.url: a server is needed with state.backend redis"),
        (["state.backend=redis", "state.url=http://h/0"], "state.url: state URL 'http://h/0'"),
        (["state.url=redis://h/0"], "set state.backend to redis"),
        (["state.backend=postgres"], "state.backend"),
        (["state.key_prefix=a b"], "state.key_prefix must be a non-empty string without spaces"),
        (["state.heartbeat=0.1"], "state.heartbeat"),
    ],
)
def test_a_shared_state_that_cannot_be_used_says_which_key(
    overrides: list[str], message: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(None, overrides)


def test_a_shared_state_is_read_whole() -> None:
    state = load_config(
        None, ["state.backend=redis", "state.url=redis://:pw@h:7000/2", "state.key_prefix=news/"]
    ).state
    assert (state.backend, state.url, state.key_prefix) == (
        "redis",
        "redis://:pw@h:7000/2",
        "news/",
    )


def test_an_override_ending_in_a_colon_is_text_not_a_mapping() -> None:
    config = load_config(None, ["state.key_prefix=crawl:"])
    assert config.state.key_prefix == "crawl:"
    with pytest.raises(ConfigError, match="key_prefix"):
        load_config(None, ["state.key_prefix={a: 1}"])  # a flow mapping is one, and refused


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90.0),
        ("30m", 1800.0),
        ("12h", 43_200.0),
        ("7d", 604_800.0),
        ("2w", 1_209_600.0),
        ("1d12h", 129_600.0),
        ("1.5h", 5400.0),
        (" 7D ", 604_800.0),
    ],
)
def test_a_duration_reads_as_seconds(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds
    assert load_config(None, [f"recrawl.after={text}"]).recrawl.after == seconds


@pytest.mark.parametrize("text", ["", "7", "d", "7x", "7d 3", "-1d", "soon", "1e3h"])
def test_what_is_no_duration(text: str) -> None:
    assert parse_duration(text) is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["recrawl.enabled=true", "state.durable=false"], "needs state.durable true"),
        (
            ["politeness.per_server=true", "state.backend=redis", "state.url=redis://h:1/0"],
            "cannot group hosts by server yet",
        ),
        (
            ["output.warc=true", "fetch.client=aiohttp"],
            r"output\.warc needs fetch\.client http1 or auto",
        ),
        (["output.warc_file_bytes=1000"], "output.warc_file_bytes"),
        (
            ["fetch.page_requisites=true"],
            r"fetch\.page_requisites \(--page-requisites\) .* needs output\.warc true \(--warc\)",
        ),
        (["fetch.page_requisites=yes please"], "fetch.page_requisites"),
        (
            [
                "fetch.page_requisites=true",
                "output.warc=true",
                "state.backend=redis",
                "state.url=redis://h:1/0",
            ],
            r"a shared crawl \(state.backend redis\) cannot fetch them yet",
        ),
        (["fetch.max_requisites_per_page=0"], "fetch.max_requisites_per_page"),
        (["fetch.max_requisite_bytes=-1"], "fetch.max_requisite_bytes"),
    ],
)
def test_what_a_crawl_cannot_do_yet_is_refused_at_load(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)


def test_a_shared_crawl_may_recrawl_and_be_kept_fresh() -> None:
    config = load_config(
        None,
        [
            "recrawl.keep_fresh=true",
            "recrawl.enabled=true",
            "state.backend=redis",
            "state.url=redis://127.0.0.1:1/0",
        ],
    )
    assert config.recrawl.keep_fresh and config.state.backend == "redis"


def test_a_refusal_recovery_of_one_or_more_is_refused_with_its_key() -> None:
    with pytest.raises(ConfigError, match=r"politeness\.refusal_recovery .* below 1"):
        load_config(None, ["politeness.refusal_recovery=1"])
    assert load_config(None, ["politeness.refusal_recovery=0.9"]).politeness.refusal_recovery == 0.9


def test_the_revisit_bounds_and_the_lastmod_keys_are_checked() -> None:
    config = load_config(None, ["recrawl.min_interval=2h", "recrawl.max_interval=2w"])
    assert (config.recrawl.min_interval, config.recrawl.max_interval) == (7_200.0, 1_209_600.0)
    with pytest.raises(ConfigError, match=r"recrawl\.min_interval .* longer than"):
        load_config(None, ["recrawl.min_interval=3d", "recrawl.max_interval=1d"])
    with pytest.raises(ConfigError, match=r"recrawl\.lastmod_sample .* from 0 to 1"):
        load_config(None, ["recrawl.lastmod_sample=1.5"])
    with pytest.raises(ConfigError, match=r"recrawl\.lastmod_trust"):
        load_config(None, ["recrawl.lastmod_trust=sometimes"])
    with pytest.raises(ConfigError, match=r"recrawl\.schedule"):
        load_config(None, ["recrawl.schedule=hourly"])
    with pytest.raises(ConfigError, match=r"recrawl\.lastmod_confirmations"):
        load_config(None, ["recrawl.lastmod_confirmations=0"])
