"""How a shared crawl's workers merge their cookie jars (crawler.state.shared.cookies), without a
server: the changes an answer makes are noted (set and deleted), sent once, sent again when the
sending failed; the others' changes are taken in, but not a worker's own, nor one over a change
of its own still to be sent. (The round trip through Valkey: tests/crawl/test_shared_cookies.py.)"""

from __future__ import annotations

import json
from typing import Any

from crawler.http.cookies import CookieJar
from crawler.state.shared.cookies import SharedCookies

URL = "https://www.shop.test/"


def sent(command: list[object] | None) -> dict[str, dict[str, Any] | None]:
    """What a put command sends: key -> row (None: deleted)."""
    assert command is not None and command[:5] == ["FCALL", "crawler_cookies_put", 0, "p:", "w1"]
    args = command[5:]
    return {
        str(key): json.loads(str(row)) if row else None
        for key, row in zip(args[::2], args[1::2], strict=True)
    }


def reply(last: int, *changes: tuple[str, str, dict[str, Any] | None]) -> list[object]:
    """A crawler_cookies_since reply: (key, writer, row) each."""
    out: list[object] = [last]
    for key, writer, row in changes:
        out += [key.encode(), f"{writer}\n{json.dumps(row) if row else ''}".encode()]
    return out


def test_an_answers_cookies_are_noted_set_and_deleted_and_sent_once() -> None:
    jar = CookieJar()
    shared = SharedCookies(jar, "w1")
    jar.store(URL, ["sid=1; Path=/", "pref=dark; Path=/"])
    first = sent(shared.put("p:"))
    assert sorted(row["name"] for row in first.values() if row) == ["pref", "sid"]
    assert shared.put("p:") is None  # nothing new
    jar.store(URL, ["sid=gone; Path=/; Max-Age=0"])  # a logout
    (key,) = sent(shared.put("p:"))
    assert json.loads(key) == ["www.shop.test", "/", "sid"]
    assert shared.put("p:") is None


def test_a_put_that_failed_goes_again_under_the_newer_changes() -> None:
    jar = CookieJar()
    shared = SharedCookies(jar, "w1")
    jar.store(URL, ["sid=1; Path=/", "a=1; Path=/"])
    shared.put("p:")
    jar.store(URL, ["sid=2; Path=/"])
    shared.unsent()  # the round trip failed
    again = sent(shared.put("p:"))
    assert {row["name"]: row["value"] for row in again.values() if row} == {"sid": "2", "a": "1"}


def test_the_others_changes_are_taken_but_not_its_own_nor_over_its_unsent() -> None:
    jar = CookieJar()
    shared = SharedCookies(jar, "w1")
    jar.store(URL, ["mine=1; Path=/"])
    shared.put("p:")
    other = CookieJar()
    other.store(URL, ["theirs=7; Path=/", "mine=0; Path=/"])
    rows = {json.dumps([row["domain"], row["path"], row["name"]]): row for row in other.dump()}
    mine_key = json.dumps(["www.shop.test", "/", "mine"])
    theirs_key = json.dumps(["www.shop.test", "/", "theirs"])
    jar.store(URL, ["mine=2; Path=/"])  # newer than anything sent: it will win
    taken = shared.take(
        reply(5, (theirs_key, "w2", rows[theirs_key]), (mine_key, "w2", rows[mine_key]))
    )
    assert taken == 1
    assert shared.seen == 5
    assert jar.header(URL) == "mine=2; theirs=7"
    # Its own write read back changes nothing; another's deletion deletes.
    assert shared.take(reply(7, (mine_key, "w1", rows[mine_key]), (theirs_key, "w3", None))) == 1
    assert jar.header(URL) == "mine=2"
    assert shared.read("p:") == ["FCALL", "crawler_cookies_since", 0, "p:", 7]
