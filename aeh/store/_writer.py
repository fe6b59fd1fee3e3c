"""Background writes of finished attempts, so redaction and SQLite never block the event loop.

The engine hands each finished attempt to an `AttemptWriter`; one thread takes them off a queue
and writes whatever has piled up as one transaction (fewer commits when attempts finish
together). `close()` writes everything still queued — the engine calls it at run end and on
cancellation, so a Ctrl-C loses no finished attempt.

When the store itself fails (a lock never released, a full disk: `StoreWriteError`), the writer
stops writing: the first error is reported by `submit`/`close`, the attempts it could not write
are counted in `unwritten`, and the run can be resumed to redo them.

The thread writes through the Store's own connection (it is opened for cross-thread use and
guarded by the Store's lock) rather than a second connection: a `:memory:` store has no second
connection to the same database, and one writer needs no more.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Sequence
from typing import Any

from aeh.errors import StoreError, StoreWriteError
from aeh.models import Attempt, Span
from aeh.store._seams import RunWriter

__all__ = ["AttemptWriter"]

_STOP = object()
_MAX_BATCH = 64
#: Attempts queued before the engine waits for the writer. A run whose agent never waits (a fast
#: local model, a mock with no latency) keeps the GIL on the event loop; the writer thread then
#: gets it back only every switch interval and falls ever further behind, holding every queued
#: attempt and its spans in memory.
MAX_BACKLOG = 256


class AttemptWriter:
    """Writes attempts to `store` from one background thread, batching those that queue up."""

    def __init__(self, store: RunWriter, *, max_batch: int = _MAX_BATCH) -> None:
        self.store = store
        self.max_batch = max(1, max_batch)
        self.written = 0
        self.unwritten = 0
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._closed = False
        # A catch_up in progress: its loop, the future its callers await, the backlog it waits under.
        self._waiting: tuple[asyncio.AbstractEventLoop, asyncio.Future[None], int] | None = None
        self._waiting_lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="aeh-store-writer", daemon=True)
        self._thread.start()

    def submit(self, attempt: Attempt, spans: Sequence[Span] = ()) -> None:
        """Queue one attempt; raises at once if an earlier write failed (stop spending on a run
        that cannot be stored)."""
        self.raise_error()
        if self._closed:
            raise StoreError("the attempt writer is closed")
        self._queue.put((attempt, list(spans)))

    def close(self, *, raise_errors: bool = True) -> None:
        """Write everything queued, stop the thread, and raise the first write error (if any).

        Safe to call twice; the second call only reports.
        """
        if not self._closed:
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join()  # also when a first close() was interrupted mid-flush
        if raise_errors:
            self.raise_error()

    @property
    def backlog(self) -> int:
        """Attempts submitted and not yet written."""
        return self._queue.qsize()

    async def catch_up(self, below: int | None = None) -> None:
        """On the event loop: wait (without blocking it) until the backlog is under `below`
        (default: half of MAX_BACKLOG), the writer has stopped, or a write has failed.

        Every caller awaits one future that the writer thread resolves after the batch that
        brings the backlog under: an idle loop waits in its selector, which releases the GIL to
        the writer. (Each of 256 workers polling a timer every 2 ms kept the loop busy enough to
        starve the very thread it waited for.)
        """
        below = MAX_BACKLOG // 2 if below is None else below
        loop = asyncio.get_running_loop()
        while True:
            with self._waiting_lock:
                if not self._behind(below):
                    return
                waiting = self._waiting
                if waiting is None or waiting[0] is not loop or waiting[1].done():
                    waiting = self._waiting = (loop, loop.create_future(), below)
            # A caller cancelled while waiting must not cancel the others' future.
            await asyncio.shield(waiting[1])

    def _behind(self, below: int) -> bool:
        return self._queue.qsize() >= below and self._thread.is_alive() and self._error is None

    def _wake(self, *, stopping: bool = False) -> None:
        """From the writer thread: resolve the waiting future once its backlog is reached (or at stop)."""
        with self._waiting_lock:
            waiting = self._waiting
            if waiting is None or (not stopping and self._behind(waiting[2])):  # this thread is alive
                return
            self._waiting = None
        loop, future, _ = waiting
        with contextlib.suppress(RuntimeError):  # its loop has closed: nobody waits any more
            loop.call_soon_threadsafe(_resolve, future)

    @property
    def failed(self) -> bool:
        """True once a write has failed."""
        return self._error is not None

    def raise_error(self) -> None:
        """Raise the first write error, if any: a StoreWriteError when the store itself failed."""
        error = self._error
        if error is None:
            return
        kind = StoreWriteError if isinstance(error, StoreWriteError) else StoreError
        raise kind(f"writing attempts to {self._where()} failed: {error}") from error

    def _where(self) -> str:
        return str(getattr(self.store, "path", "the store"))

    def _drain(self) -> None:
        try:
            self._drain_queue()
        finally:
            self._wake(stopping=True)

    def _drain_queue(self) -> None:
        stopping = False
        while not stopping:
            batch: list[tuple[Attempt, list[Span]]] = []
            item = self._queue.get()
            while True:
                if item is _STOP:
                    stopping = True
                    break
                batch.append(item)
                if len(batch) >= self.max_batch:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                self._write(batch)
                self._wake()

    def _write(self, batch: list[tuple[Attempt, list[Span]]]) -> None:
        if isinstance(self._error, StoreWriteError):
            self.unwritten += len(batch)  # the store is down: each write would only wait and fail
            return
        bulk = getattr(self.store, "write_attempts", None)
        if bulk is not None and len(batch) > 1:
            try:
                bulk(batch)
                self.written += len(batch)
                return
            except StoreWriteError as exc:
                self._error = self._error or exc
                self.unwritten += len(batch)
                return
            except Exception:  # noqa: BLE001 — the one-by-one retry below reports the real error
                pass
        # One bad attempt rolls back its whole batch: write them one by one to keep the rest.
        for attempt, spans in batch:
            if isinstance(self._error, StoreWriteError):
                self.unwritten += 1
                continue
            try:
                self.store.write_attempt(attempt, spans)
                self.written += 1
            except Exception as exc:  # noqa: BLE001 — reported by submit/close on the loop's side
                self._error = self._error or exc
                self.unwritten += 1


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
