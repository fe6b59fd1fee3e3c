"""The background attempt writer: batches, loses nothing on close, reports failures."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from aeh.errors import StoreError
from aeh.store import Store
from aeh.store._writer import AttemptWriter


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
