"""/.well-known/tdmrep.json read and matched (crawler.usage.tdmrep): the first matching rule, as
TDMRep section 6.1 says; malformed, huge or hostile files bounded and read as no reservation."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from crawler.usage.tdmrep import MAX_RULES, MAX_TDMREP_BYTES, TdmRep, read_tdmrep

SPEC_EXAMPLE = json.dumps(
    [
        {"location": "/directory-a/", "tdm-reservation": 1},
        {
            "location": "/directory-b/html/",
            "tdm-reservation": 1,
            "tdm-policy": "https://provider.com/policies/policy.json",
        },
        {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0},
    ]
).encode()


def value_for(tdmrep: TdmRep, path: str) -> str | None:
    signal = tdmrep.signal_for("https://a.test" + path)
    return None if signal is None else signal.value


def test_the_specs_example() -> None:
    tdmrep = read_tdmrep(SPEC_EXAMPLE, "status 200")
    assert tdmrep.problems == ()
    assert value_for(tdmrep, "/directory-a/x.html") == "1"
    signal = tdmrep.signal_for("https://a.test/directory-b/html/page")
    assert signal is not None and signal.policy == "https://provider.com/policies/policy.json"
    assert signal.source == "tdmrep.json rule 2 (/directory-b/html/)"
    assert value_for(tdmrep, "/directory-b/images/cat.jpg") == "0"
    assert value_for(tdmrep, "/directory-c/") is None


def test_the_first_matching_rule_wins_not_the_longest() -> None:
    tdmrep = read_tdmrep(
        b'[{"location": "/", "tdm-reservation": 0}, {"location": "/a/", "tdm-reservation": 1}]',
        "status 200",
    )
    assert value_for(tdmrep, "/a/b") == "0"


def test_patterns_match_as_robots_txt_paths() -> None:
    tdmrep = read_tdmrep(
        b'[{"location": "/*.pdf$", "tdm-reservation": 1},'
        b' {"location": "/caf%C3%A9/", "tdm-reservation": 1},'
        b' {"location": "/Case/", "tdm-reservation": 1}]',
        "status 200",
    )
    assert value_for(tdmrep, "/x/a.pdf") == "1"
    assert value_for(tdmrep, "/x/a.pdf?page=2") is None
    assert value_for(tdmrep, "/café/menu") == "1"
    assert value_for(tdmrep, "/case/") is None  # case-sensitive (section 6.1)


def test_a_bad_rule_is_skipped_and_said_others_still_count() -> None:
    tdmrep = read_tdmrep(
        b'[7, {"tdm-reservation": 1}, {"location": "/a/", "tdm-reservation": true},'
        b' {"location": "/b/", "tdm-reservation": 1, "tdm-policy": 3}]',
        "status 200",
    )
    assert tdmrep.problems == (
        "rule 1: not an object, skipped",
        "rule 2: no location that is a path, skipped",
        "rule 3: tdm-reservation true: expected 0 or 1, unset",
        "rule 4: tdm-policy is not a URL, ignored",
    )
    assert value_for(tdmrep, "/a/x") == "true"  # matched, read as unset
    assert value_for(tdmrep, "/b/x") == "1"


def test_malformed_huge_and_hostile_files_are_no_reservation_and_said() -> None:
    cases = {
        b"{not json": "not JSON",
        b'{"location": "/"}': "not a JSON array of rules",
        b"[" * 100_000 + b"]" * 100_000: "over 65,536 bytes",
        b"[" * 50_000: "not JSON",
        b"\xff\xfe[]": "not JSON",
        b"[" + b"1" * 5000 + b"]": "not JSON",  # a number of 5,000 digits
    }
    for body, said in cases.items():
        tdmrep = read_tdmrep(body[: MAX_TDMREP_BYTES * 2], "status 200")
        assert tdmrep.problems and tdmrep.problems[0].startswith(said), body[:20]
        assert value_for(tdmrep, "/") is None


def test_rules_are_bounded() -> None:
    body = json.dumps([{"location": f"/{n}/", "tdm-reservation": 1} for n in range(1500)])
    tdmrep = read_tdmrep(body.encode()[:MAX_TDMREP_BYTES], "status 200")
    assert len(tdmrep.rules) <= MAX_RULES


def test_a_reading_keeps_through_json() -> None:
    tdmrep = read_tdmrep(SPEC_EXAMPLE, "status 200")
    assert TdmRep.from_json(json.loads(json.dumps(tdmrep.to_json()))) == tdmrep
    assert TdmRep.from_json("nonsense") is None


@given(st.binary(max_size=2000))
def test_no_body_makes_it_raise(body: bytes) -> None:
    tdmrep = read_tdmrep(body, "status 200")
    tdmrep.signal_for("https://a.test/x")
