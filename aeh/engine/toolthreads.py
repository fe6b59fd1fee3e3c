"""Run synchronous tool functions off the event loop, so one blocking tool stalls nobody else.

A sync tool that blocks on the loop would freeze every attempt in flight: their timeouts could
not fire and their wall-clock budgets would be charged for another attempt's wait. So sync tools
run in worker threads and the loop only awaits their result, under the tool's `timeout_s`.

A Python thread cannot be killed. A tool that overruns its timeout is abandoned: the attempt
sees a tool timeout at once, but the tool keeps its worker thread until it returns. Workers are
daemon threads, so an abandoned one never keeps a finished run (or the process) from exiting,
and fresh workers are started as needed, so abandoned ones never make other calls queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["WorkerTiming", "run_in_worker", "start_in_worker"]

_IDLE_EXIT_S = 30.0
_MAX_IDLE = 16

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context,
             Callable[..., Any], tuple[Any, ...], "WorkerTiming | None"]


class WorkerTiming:
    """When a call was handed to a worker, when the worker started it, and its thread's CPU time.

    Lets the engine tell a tool that was slow from one that waited for a thread or for the CPU.
    """

    __slots__ = ("submitted", "started", "cpu_s", "_clock", "_cpu_start", "_tid", "_runq_start")

    def __init__(self) -> None:
        self.submitted = time.monotonic()
        self.started: float | None = None
        self.cpu_s: float | None = None
        self._clock: int | None = None
        self._cpu_start = 0.0
        self._tid: int | None = None
        self._runq_start: float | None = None

    @property
    def queue_s(self) -> float:
        """Seconds between the hand-off and the worker starting the call (so far, if not started)."""
        return (self.started if self.started is not None else time.monotonic()) - self.submitted

    def begin(self) -> None:
        """Called by the worker thread as it starts the call."""
        self.started = time.monotonic()
        with contextlib.suppress(AttributeError, OSError):  # no per-thread CPU clock on this platform
            self._clock = time.pthread_getcpuclockid(threading.get_ident())
        self._cpu_start = time.thread_time()
        self._tid = threading.get_native_id()
        self._runq_start = _runqueue_wait_s(self._tid)

    def end(self) -> None:
        """Called by the worker thread as the call returns."""
        self.cpu_s = time.thread_time() - self._cpu_start

    def runqueue_wait_s(self) -> float:
        """Seconds the call's thread has waited for a CPU since it started the call: time the
        machine took, not the tool (Linux schedstat; 0 where the kernel does not say)."""
        if self._tid is None or self._runq_start is None:
            return 0.0
        now = _runqueue_wait_s(self._tid)
        return max(0.0, now - self._runq_start) if now is not None else 0.0

    def cpu_so_far(self) -> float | None:
        """CPU seconds the call has used, also while it still runs (read from its thread's clock)."""
        if self.cpu_s is not None or self._clock is None:
            return self.cpu_s
        try:
            return time.clock_gettime(self._clock) - self._cpu_start
        except OSError:
            return None


def _runqueue_wait_s(tid: int) -> float | None:
    """A thread's total time waiting on a run queue (seconds), from /proc/self/task/TID/schedstat."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class _Pool:
    """Daemon workers, reused while idle; a call never waits for a busy (or stuck) worker."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []

    def submit(self, job: _Job) -> None:
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self)
            worker.start()
        worker.inbox.put(job)

    def park(self, worker: _Worker) -> bool:
        """Offer an idle worker for reuse; False tells it to exit (enough are idle)."""
        with self._lock:
            if len(self._idle) >= _MAX_IDLE:
                return False
            self._idle.append(worker)
            return True

    def retire(self, worker: _Worker) -> bool:
        """True when an idle worker may exit: nobody has taken it for a job meanwhile."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


class _Worker(threading.Thread):
    def __init__(self, pool: _Pool) -> None:
        super().__init__(name="aeh-tool", daemon=True)
        self.pool = pool
        self.inbox: queue.SimpleQueue[_Job] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            try:
                job = self.inbox.get(timeout=_IDLE_EXIT_S)
            except queue.Empty:
                if self.pool.retire(self):
                    return
                continue  # taken for a job just now: its job is on the way
            _execute(job)
            del job  # drop references to the tool's arguments and result while idle
            if not self.pool.park(self):
                return


def _execute(job: _Job) -> None:
    loop, future, ctx, fn, args, timing = job
    error: BaseException | None
    if timing is not None:
        timing.begin()
    try:
        result, error = ctx.run(fn, *args), None
    except SystemExit as exc:  # a future must not carry SystemExit: the loop would re-raise it and stop
        result, error = None, RuntimeError(f"the tool called sys.exit({exc.code!r})")
    except BaseException as exc:  # noqa: BLE001 — handed to the awaiting attempt, which classifies it
        result, error = None, exc
    if timing is not None:
        timing.end()
    try:
        loop.call_soon_threadsafe(_settle, future, result, error)
    except RuntimeError:
        pass  # the run's loop is closed: an abandoned tool returned after the run ended


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the awaiting attempt timed out or was cancelled: nobody wants this
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


_POOL = _Pool()


async def run_in_worker(fn: Callable[..., Any], *args: Any, timing: WorkerTiming | None = None) -> Any:
    """`fn(*args)` in a worker thread (with the caller's context variables); awaits its result.

    Cancelling the await (a timeout) abandons the call; the thread finishes it in the background.
    `timing`, when given, is filled in as the call is started and ends.
    """
    return await start_in_worker(fn, *args, timing=timing)


def start_in_worker(fn: Callable[..., Any], *args: Any, timing: WorkerTiming | None = None) -> asyncio.Future[Any]:
    """Like `run_in_worker`, but returns the call's future, so a caller can wait on it more than once
    (a timeout extended by a measured stall) and abandon it by cancelling."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    _POOL.submit((loop, future, contextvars.copy_context(), fn, args, timing))
    return future
