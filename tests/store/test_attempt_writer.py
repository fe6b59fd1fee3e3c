"""The background attempt writer: batches, loses nothing on close, reports failures."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from aeh.errors import StoreError, StoreWriteError
from aeh.store import Store
from aeh.store._writer import MAX_BACKLOG, AttemptWriter


class GatedStore(Store):
    """Holds the first write until released, so later attempts pile up into one batch."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()
        self.batches: list[int] = []
        self.threads: set[str] = set()

    def write_attempts(self, batch: Any) -> None:
        batch = list(batch)
        self.gate.wait(10)
        self.batches.append(len(batch))
        self.threads.add(threading.current_thread().name)
        super().write_attempts(batch)


def test_queued_attempts_are_written_in_batches_off_the_callers_thread(
        db_path: Any, make_run: Any, make_attempt: Any, make_spans: Any) -> None:
    with GatedStore(db_path) as store:
        store.create_run(make_run())
        writer = AttemptWriter(store)
        for k in range(20):
            writer.submit(make_attempt(attempt=k), make_spans(attempt=k))
        store.gate.set()
        writer.close()
        assert writer.written == 20
        assert len(store.attempts_frame("run-0001")) == 20
        assert len(store.batches) < 20, "attempts that queue up share a transaction"
        assert store.threads == {"aeh-store-writer"}


def test_one_bad_attempt_does_not_lose_its_batch(
        mem_store: Store, make_run: Any, make_attempt: Any) -> None:
    mem_store.create_run(make_run())
    mem_store.write_attempt(make_attempt(attempt=0))
    writer = AttemptWriter(mem_store)
    # Attempt 0 again violates the primary key; 1 and 2 must still be stored.
    for k in (1, 0, 2):
        writer.submit(make_attempt(attempt=k))
    with pytest.raises(StoreError, match="writing attempts to :memory: failed"):
        writer.close()
    assert sorted(mem_store.attempts_frame("run-0001")["attempt"].to_list()) == [0, 1, 2]


def test_after_a_failed_write_submit_refuses_more_work(
        mem_store: Store, make_attempt: Any) -> None:
    writer = AttemptWriter(mem_store)  # no run row: the attempt's foreign key fails
    writer.submit(make_attempt())
    writer.close(raise_errors=False)
    with pytest.raises(StoreError):
        writer.submit(make_attempt(attempt=1))
    writer.close(raise_errors=False)  # closing twice is fine


class BlockedStore:
    """A RunWriter whose writes wait until released: the writer's backlog stays where it is."""

    def __init__(self, fail: bool = False) -> None:
        self.gate = threading.Event()
        self.fail = fail
        self.written = 0

    def write_attempts(self, batch: Any) -> None:
        self.gate.wait(30)
        if self.fail:
            raise StoreWriteError("disk full")
        self.written += len(list(batch))

    def write_attempt(self, attempt: Any, spans: Any = ()) -> None:
        self.write_attempts([(attempt, spans)])


def _behind(store: BlockedStore, make_attempt: Any, n: int = MAX_BACKLOG + 10) -> AttemptWriter:
    writer = AttemptWriter(store)
    for k in range(n):
        writer.submit(make_attempt(attempt=k))
    return writer


def test_waiting_for_the_writer_costs_the_event_loop_no_cpu(make_attempt: Any) -> None:
    store = BlockedStore()
    writer = _behind(store, make_attempt)

    async def main() -> float:
        waiters = [asyncio.ensure_future(writer.catch_up()) for _ in range(256)]
        await asyncio.sleep(0.05)
        cpu = time.thread_time()
        await asyncio.sleep(0.5)  # 256 workers wait for the writer, as at concurrency 256
        spent = time.thread_time() - cpu
        assert not any(w.done() for w in waiters)
        store.gate.set()
        await asyncio.wait_for(asyncio.gather(*waiters), timeout=30)
        return spent

    spent = asyncio.run(main())
    writer.close()
    # Polling a 2 ms timer per waiter cost ~0.3 s of this thread's CPU over those 0.5 s.
    assert spent < 0.05, f"the loop spent {spent:.3f} s CPU waiting"
    assert writer.backlog == 0 and store.written == MAX_BACKLOG + 10


def test_a_cancelled_waiter_leaves_the_others_waiting(make_attempt: Any) -> None:
    store = BlockedStore()
    writer = _behind(store, make_attempt)

    async def main() -> None:
        first, second = (asyncio.ensure_future(writer.catch_up()) for _ in range(2))
        await asyncio.sleep(0.05)
        first.cancel()
        await asyncio.sleep(0.05)
        assert first.cancelled() and not second.done()
        store.gate.set()
        await asyncio.wait_for(second, timeout=30)

    asyncio.run(main())
    writer.close()


def test_a_failed_write_and_a_stopped_writer_release_the_waiters(make_attempt: Any) -> None:
    store = BlockedStore(fail=True)
    writer = _behind(store, make_attempt)

    async def failed() -> None:
        waiter = asyncio.ensure_future(writer.catch_up())
        await asyncio.sleep(0.05)
        assert not waiter.done()
        store.gate.set()  # the write fails: the backlog stays, the waiters must not
        await asyncio.wait_for(waiter, timeout=30)

    asyncio.run(failed())
    assert writer.failed
    writer.close(raise_errors=False)

    async def stopped() -> None:
        await asyncio.wait_for(writer.catch_up(below=0), timeout=30)  # nothing to wait for once stopped

    asyncio.run(stopped())
