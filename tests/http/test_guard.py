"""crawler.http.addresses' `address_refusal` and crawler.http.guard's `AddressGuard`: which
addresses the crawl may connect to. Tables and a fake look-up; no server, no network."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from crawler.config import FetchConfig
from crawler.http.addresses import IPNetwork, address_refusal, parse_networks
from crawler.http.guard import AddressGuard

LOOPBACK = parse_networks(["127.0.0.0/8"])
TEN = parse_networks(["10.0.0.0/8", "::1"])


@pytest.mark.parametrize(
    ("address", "seed", "block", "allowed", "refused"),
    [
        # Public: always.
        ("93.184.215.14", False, False, (), None),
        ("93.184.215.14", False, True, (), None),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", False, True, (), None),
        # Not public: a seed's, or listed.
        ("127.0.1.2", True, False, (), None),
        ("127.0.1.2", False, False, (), "not one a seed names"),
        ("10.1.2.3", False, False, (), "a private address, not one a seed names"),
        ("10.1.2.3", False, False, TEN, None),
        ("::1", False, False, TEN, None),
        ("::ffff:127.0.0.1", False, False, LOOPBACK, None),  # judged by the IPv4 it carries
        ("fe80::1%eth0", False, False, (), "a link-local address"),
        # fetch.block_private_addresses: the seeds' too, but what is listed.
        ("127.0.1.2", True, True, (), "(fetch.block_private_addresses)"),
        ("10.1.2.3", True, True, TEN, None),
        # A cloud metadata address: a seed's alone, never listed, never with block.
        ("169.254.169.254", False, False, (), "a cloud metadata service's address"),
        ("169.254.169.254", False, False, parse_networks(["169.254.0.0/16"]), "metadata"),
        ("169.254.169.254", True, False, (), None),
        ("169.254.169.254", True, True, (), "metadata"),
        ("fd00:ec2::254", False, False, parse_networks(["fd00::/8"]), "metadata"),
        ("::ffff:169.254.169.254", False, False, (), "metadata"),
        ("169.254.10.10", False, False, parse_networks(["169.254.0.0/16"]), None),
    ],
)
def test_address_refusal(
    address: str, seed: bool, block: bool, allowed: tuple[IPNetwork, ...], refused: str | None
) -> None:
    why = address_refusal(address, seed=seed, block_private=block, allowed=allowed)
    if refused is None:
        assert why is None
    else:
        assert why is not None and refused in why


def test_networks_are_read_as_written_and_a_bad_one_is_named() -> None:
    assert [str(net) for net in parse_networks(["10.0.0.0/8", " 192.168.1.5 ", "::1"])] == [
        "10.0.0.0/8",
        "192.168.1.5/32",
        "::1/128",
    ]
    with pytest.raises(ValueError, match=r"'10\.0\.0\.0/33' is no IP address or network"):
        parse_networks(["10.0.0.0/33"])


def guard(lookups: dict[str, list[str]], asked: list[str], **fetch: object) -> AddressGuard:
    async def lookup(name: str) -> list[str]:
        asked.append(name)
        await asyncio.sleep(0)
        if name not in lookups:
            raise OSError("no such name")
        return lookups[name]

    return AddressGuard(replace(FetchConfig(), **fetch), seeds_only=True, lookup=lookup)


async def test_a_seeds_literal_address_and_its_names_addresses_are_let_in() -> None:
    asked: list[str] = []
    crawl = guard({"intranet.test": ["10.0.0.7"]}, asked)
    crawl.seeds(["http://127.0.1.1:8080/", "http://intranet.test/start"])
    assert await crawl.refusal("127.0.1.1", "127.0.1.1") is None
    assert asked == []
    refused = await crawl.refusal("127.0.1.2", "127.0.1.2")
    assert refused is not None and refused.startswith("127.0.1.2 is at 127.0.1.2, a loopback")
    assert asked == ["intranet.test"]  # looked up once, before refusing: it might have been it
    assert await crawl.refusal("other.test", "10.0.0.7") is None  # what intranet.test resolves to
    assert await crawl.refusal("other.test", "10.0.0.9") is not None
    # Connecting to a seed's host: whatever it resolves to now is the user's, without a look-up.
    assert await crawl.refusal("intranet.test", "10.0.0.9") is None
    assert await crawl.refusal("other.test", "10.0.0.9") is None
    assert asked == ["intranet.test"]


async def test_a_redirect_that_comes_before_the_seeds_connect_is_judged_by_their_look_up() -> None:
    asked: list[str] = []
    crawl = guard({"localhost": ["127.0.0.1", "::1"], "gone.test": []}, asked)
    crawl.seeds(["http://localhost:8080/", "http://gone.test/", "http://nowhere.test/"])
    # Two redirects at once to what a seed's name resolves to: one look-up of each name.
    found = await asyncio.gather(
        crawl.refusal("127.0.0.1", "127.0.0.1"), crawl.refusal("ip6.test", "::1")
    )
    assert found == [None, None]
    assert sorted(asked) == ["gone.test", "localhost", "nowhere.test"]


async def test_pinned_and_listed_addresses_are_let_in_and_a_metadata_one_is_not() -> None:
    crawl = guard(
        {},
        [],
        resolve=("staging.test=10.0.0.5", "meta.test=169.254.169.254"),
        allow_addresses=("192.168.0.0/16",),
    )
    crawl.seeds(["https://example.org/"])
    assert await crawl.refusal("staging.test", "10.0.0.5") is None
    assert await crawl.refusal("printer.lan", "192.168.1.9") is None
    metadata = await crawl.refusal("meta.test", "169.254.169.254")
    assert metadata is not None and "cloud metadata" in metadata
    crawl.seeds(["https://example.org/", "http://169.254.169.254/latest/"])
    assert await crawl.refusal("169.254.169.254", "169.254.169.254") is None


async def test_a_lone_client_refuses_only_what_block_private_addresses_does() -> None:
    lone = AddressGuard(FetchConfig())
    assert await lone.refusal("127.0.1.2", "127.0.1.2") is None
    assert await lone.refusal("169.254.169.254", "169.254.169.254") is None
    blocking = AddressGuard(replace(FetchConfig(), block_private_addresses=True))
    refused = await blocking.refusal("127.0.1.2", "127.0.1.2")
    assert refused is not None and "(fetch.block_private_addresses)" in refused
