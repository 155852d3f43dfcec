"""crawler.frontier: per-origin queues and the seen set. Nothing pushed is lost; within an origin,
first in first out, except that a URL put back with push_front is next."""

from __future__ import annotations

from collections import deque

from hypothesis import given
from hypothesis import strategies as st

from crawler.frontier import MemoryFrontier, MemorySeenSet, QueuedUrl

A = "http://a.test"
B = "https://b.test:8443"


def item(path: str, origin: str = A) -> QueuedUrl:
    return QueuedUrl(f"{origin}/{path}")


def drain(frontier: MemoryFrontier, origin: str) -> list[str]:
    urls = []
    while (queued := frontier.pop(origin)) is not None:
        urls.append(queued.url)
    return urls


# --- MemoryFrontier ------------------------------------------------------------------------------


def test_urls_of_one_origin_come_out_in_the_order_they_went_in() -> None:
    frontier = MemoryFrontier()
    for path in ("1", "2", "3"):
        frontier.push(A, item(path))
    assert drain(frontier, A) == [f"{A}/1", f"{A}/2", f"{A}/3"]


def test_push_front_comes_out_next() -> None:
    frontier = MemoryFrontier()
    frontier.push(A, item("1"))
    frontier.push(A, item("2"))
    first = frontier.pop(A)
    assert first is not None
    frontier.push_front(A, first.retried())
    again = frontier.pop(A)
    assert again == QueuedUrl(f"{A}/1", attempts=1)
    assert drain(frontier, A) == [f"{A}/2"]


def test_push_front_on_an_empty_origin_creates_it() -> None:
    frontier = MemoryFrontier()
    frontier.push_front(B, item("x", B))
    assert list(frontier.origins()) == [B]
    assert frontier.pending(B) == 1
    assert len(frontier) == 1


def test_origins_are_kept_apart() -> None:
    frontier = MemoryFrontier()
    frontier.push(A, item("1"))
    frontier.push(B, item("1", B))
    frontier.push(A, item("2"))
    assert frontier.pending(A) == 2
    assert frontier.pending(B) == 1
    assert len(frontier) == 3
    assert set(frontier.origins()) == {A, B}
    assert drain(frontier, B) == [f"{B}/1"]
    assert drain(frontier, A) == [f"{A}/1", f"{A}/2"]


def test_an_emptied_origin_disappears() -> None:
    frontier = MemoryFrontier()
    frontier.push(A, item("1"))
    frontier.push(B, item("1", B))
    assert frontier.pop(A) is not None
    assert list(frontier.origins()) == [B]
    assert frontier.pending(A) == 0
    assert len(frontier) == 1


def test_pop_of_an_unknown_origin_is_none() -> None:
    frontier = MemoryFrontier()
    assert frontier.pop(A) is None
    assert frontier.pending(A) == 0
    assert len(frontier) == 0
    assert list(frontier.origins()) == []


def test_origins_may_be_iterated_while_popping() -> None:
    frontier = MemoryFrontier()
    for origin in (A, B, "http://c.test"):
        frontier.push(origin, item("1", origin))
    popped = [frontier.pop(origin) for origin in frontier.origins()]
    assert all(queued is not None for queued in popped)
    assert len(frontier) == 0


def test_repr_shows_size_and_origins() -> None:
    frontier = MemoryFrontier()
    frontier.push(A, item("1"))
    frontier.push(A, item("2"))
    frontier.push(B, item("1", B))
    assert repr(frontier) == "MemoryFrontier(3 URLs in 2 origins, 0 leased)"


ORIGINS = st.sampled_from([A, B, "http://c.test"])
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("push"), ORIGINS),
        st.tuples(st.just("push_front"), ORIGINS),
        st.tuples(st.just("pop"), ORIGINS),
    ),
    max_size=60,
)


@given(OPERATIONS)
def test_frontier_behaves_like_a_deque_per_origin_and_loses_nothing(
    operations: list[tuple[str, str]],
) -> None:
    frontier = MemoryFrontier()
    model: dict[str, deque[QueuedUrl]] = {}
    for number, (operation, origin) in enumerate(operations):
        new = QueuedUrl(f"{origin}/{number}", depth=number % 3)
        if operation == "push":
            frontier.push(origin, new)
            model.setdefault(origin, deque()).append(new)
        elif operation == "push_front":
            frontier.push_front(origin, new)
            model.setdefault(origin, deque()).appendleft(new)
        else:
            expected = model[origin].popleft() if model.get(origin) else None
            assert frontier.pop(origin) == expected
        model = {key: queue for key, queue in model.items() if queue}
        assert len(frontier) == sum(len(queue) for queue in model.values())
        assert set(frontier.origins()) == set(model)
        for key in (A, B, "http://c.test"):
            assert frontier.pending(key) == len(model.get(key, ()))
    for origin, queue in model.items():
        assert drain(frontier, origin) == [queued.url for queued in queue]
    assert len(frontier) == 0


# --- MemorySeenSet -------------------------------------------------------------------------------


def test_seen_set_add_is_true_only_the_first_time() -> None:
    seen = MemorySeenSet()
    assert f"{A}/x" not in seen
    assert seen.add(f"{A}/x") is True
    assert seen.add(f"{A}/x") is False
    assert seen.add(f"{A}/y") is True
    assert f"{A}/x" in seen
    assert len(seen) == 2


@given(st.lists(st.sampled_from([f"{A}/{n}" for n in range(8)])))
def test_seen_set_admits_each_url_once(urls: list[str]) -> None:
    seen = MemorySeenSet()
    admitted = [url for url in urls if seen.add(url)]
    assert admitted == list(dict.fromkeys(urls))
    assert len(seen) == len(set(urls))


# --- QueuedUrl -----------------------------------------------------------------------------------


def test_first_url_is_the_url_itself_without_redirects() -> None:
    assert QueuedUrl(f"{A}/x").first_url == f"{A}/x"


def test_first_url_is_the_start_of_the_redirect_chain() -> None:
    queued = QueuedUrl(f"{B}/c", depth=2, redirected_from=(f"{A}/a", f"{A}/b"))
    assert queued.first_url == f"{A}/a"


def test_retried_counts_an_attempt_and_keeps_the_rest() -> None:
    queued = QueuedUrl(f"{A}/x", depth=3, redirected_from=(f"{A}/r",), redirect_status=301)
    again = queued.retried().retried()
    assert again.attempts == 2
    assert again.url == queued.url
    assert again.depth == 3
    assert again.redirected_from == (f"{A}/r",)
    assert again.redirect_status == 301
    assert queued.attempts == 0
