"""`Turns`: one CPU-heavy step per event-loop iteration, first come first served."""

from __future__ import annotations

import asyncio
import functools
import itertools
import threading
import time

import pytest
from support.iterations import start_iteration_counter

from crawler import runtime as tuning
from crawler.crawl.turns import Turns


async def test_turns_are_granted_in_order_one_per_iteration() -> None:
    turns = Turns()
    iteration = start_iteration_counter(asyncio.get_running_loop())
    taken: list[tuple[int, int]] = []

    async def step(number: int) -> None:
        await turns.take()
        taken.append((number, iteration()))

    await asyncio.gather(*(step(number) for number in range(20)))

    assert [number for number, _ in taken] == list(range(20))
    iterations = [at for _, at in taken]
    assert all(later > earlier for earlier, later in itertools.pairwise(iterations))
    assert len(turns) == 0


async def test_the_loop_polls_between_turns() -> None:
    """A callback made ready by I/O (here: a timer due now) runs between two turns, not after
    the whole queue: the point of taking turns."""
    turns = Turns()
    loop = asyncio.get_running_loop()
    events: list[str] = []

    async def step(number: int) -> None:
        await turns.take()
        events.append(f"turn {number}")
        if number == 0:
            loop.call_later(0, events.append, "timer")

    await asyncio.gather(*(step(number) for number in range(50)))

    assert events.index("timer") < 5


async def test_a_waiter_cancelled_before_its_turn_gives_it_up() -> None:
    turns = Turns()
    taken: list[int] = []

    async def step(number: int) -> None:
        await turns.take()
        taken.append(number)

    tasks = [asyncio.create_task(step(number)) for number in range(5)]
    await asyncio.sleep(0)  # every task is waiting now
    tasks[1].cancel()
    tasks[3].cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)

    assert taken == [0, 2, 4]
    assert sum(isinstance(result, asyncio.CancelledError) for result in results) == 2
    assert len(turns) == 0


async def test_turns_start_again_after_the_queue_ran_dry() -> None:
    turns = Turns()
    await turns.take()
    await asyncio.sleep(0)
    await asyncio.wait_for(turns.take(), timeout=5)
    assert "0 waiting" in repr(turns)


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_one_turn_per_iteration_on_each_event_loop_the_crawl_runs_on(
    loop_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uvloop runs ready callbacks in its own way: the rule must hold there too."""
    if loop_name == "uvloop":
        pytest.importorskip("uvloop")
    monkeypatch.setenv("CRAWLER_EVENT_LOOP", loop_name)
    assert tuning.event_loop_name() == loop_name
    tuning.run(test_turns_are_granted_in_order_one_per_iteration())
    tuning.run(test_the_loop_polls_between_turns())


async def test_a_step_off_the_loop_runs_on_the_worker_while_the_loop_goes_on() -> None:
    """The loop keeps iterating while a step runs on the worker thread (a big page's parse,
    which lets go of the GIL: here a sleep), and the step counts as waiting until it is done."""
    turns = Turns()
    iteration = start_iteration_counter(asyncio.get_running_loop())
    threads: list[int] = []

    def step() -> int:
        threads.append(threading.get_ident())
        time.sleep(0.2)
        return 7

    running = asyncio.ensure_future(turns.off_loop(step))
    await asyncio.sleep(0.05)
    assert len(turns) == 1
    before = iteration()
    assert await running == 7
    assert iteration() - before > 10
    assert threads and threads[0] != threading.get_ident()
    assert len(turns) == 0
    turns.close()


async def test_steps_off_the_loop_run_one_after_another_in_order() -> None:
    turns = Turns()
    running = 0
    most = 0
    done: list[int] = []

    def step(number: int) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        time.sleep(0.01)
        done.append(number)
        running -= 1

    await asyncio.gather(*(turns.off_loop(functools.partial(step, n)) for n in range(8)))

    assert done == list(range(8)) and most == 1
    turns.close()
    await turns.off_loop(functools.partial(step, 8))  # a worker again after close
    assert done[-1] == 8
    turns.close()


async def test_a_step_off_the_loop_whose_caller_is_cancelled_stops_counting() -> None:
    turns = Turns()
    release = threading.Event()
    task = asyncio.ensure_future(turns.off_loop(release.wait))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(turns) == 0
    release.set()
    turns.close()
