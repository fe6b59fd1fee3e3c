"""Attempts on worker processes of this machine: one event loop each, this process the store's writer.

One event loop runs out of CPU long before a fast model server runs out of answers: every
attempt costs a few milliseconds of engine CPU (building requests, recording spans, grading,
scoring), so at a few hundred attempts in flight the loop, not the server, sets the pace.
`workers=N` (`--workers N`) spreads a run's attempts over N spawned processes, each with its
own loop and its share of `--concurrency`; this process only receives their results and
writes them (the store keeps one writer), so progress, resume, the heartbeat and the digest of
what is stored are those of a run in this process. The mechanism is Ray's (`_workers`): the same
`WorkerSpec`, the same `RunWorker` rebuilding the suite and adapter and running `run_attempt`.

Messages go over one pipe per worker: `("run", key)` once a run, then `("pairs", pairs)` out;
`("done", (attempt, spans))`,
`("error", task, attempt, traceback)` or `("failed", traceback)` (the run could not be built
there) back. At the end of a run `("close",)` is answered by `("closed", health)`: the worker
loop's stalls during the run (`HarnessHealth.summary()`), which the run's stored health adds to
its own. A worker that dies (killed, out of memory, a crash in native code) is the harness's
failure, never the agent's: its unfinished attempts run again on a new worker, and an
attempt whose worker died twice is stored as a harness error saying so. Workers ignore Ctrl-C
(the terminal sends it to the whole process group): this process stops them, and a worker
whose pipe closes (this process was killed) stops itself.

Starting a worker (a new interpreter importing aeh, the suite and the adapter) costs about a
second of CPU, so workers outlive a run: they go back to a pool of this process for its next
run, and stop when it exits, or with `stop_workers()`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from aeh.errors import AehError
from aeh.integrations._workers import RunKey, RunWorker, WorkerSpec, lost_attempt, replay, worker_parts
from aeh.models import Attempt, RunInfo, Span, Task
from aeh.trace import SpanSink

__all__ = ["ProcessExecutor", "WorkerProcessError", "idle_workers", "stop_workers"]

#: Attempts handed to a worker beyond its share of in-flight slots (at least; an eighth of its
#: slots when more), so a slot that frees up starts the next attempt at once instead of waiting
#: for this process to send one, and pairs go out in batches.
PREFETCH = 2
#: A worker whose parent went away and that has not stopped by then exits regardless.
ORPHAN_GRACE_S = 10.0
#: How long a stopping worker has to close its run before it is terminated.
STOP_GRACE_S = 5.0
#: An attempt whose worker died under it this many times is stored as a harness error.
MAX_DEATHS = 2


class WorkerProcessError(AehError):
    """A worker process could not build the run, or an attempt raised there; the run stays resumable."""


# ---------------------------------------------------------------------------------------------
# In the worker process


def serve(conn: Connection) -> None:
    """A worker's main: run the attempts this process is sent until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    asyncio.run(_serve(conn))


async def _serve(conn: Connection) -> None:
    await _Server(conn).serve()


class _Server:
    """A worker's loop: runs what the driver sends, sends back each attempt as it finishes."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.worker = RunWorker()
        self.running: set[asyncio.Task[None]] = set()
        self.inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self.run: RunKey | None = None

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, args=(loop,), name="aeh-worker-inbox", daemon=True).start()
        while True:
            message = await self.inbox.get()
            if message[0] == "run":
                await self._prepare(message[1])
            elif message[0] == "pairs" and self.run is not None:
                self._start(self.run, message[1])
            elif message[0] == "close":  # the run is over: free its setup, stay for the next one
                await asyncio.gather(*self.running, return_exceptions=True)
                self._send(("closed", await self.worker.close()))
            elif message[0] == "stop":
                for job in self.running:
                    job.cancel()
                await asyncio.gather(*self.running, return_exceptions=True)
                await self.worker.close()
                return

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):  # the driver is gone: stop, and surely within the grace
                loop.call_soon_threadsafe(self.inbox.put_nowait, ("stop",))
                time.sleep(ORPHAN_GRACE_S)
                os._exit(1)
            loop.call_soon_threadsafe(self.inbox.put_nowait, message)
            if message[0] == "stop":
                return

    async def _prepare(self, run: RunKey) -> None:
        self.run = None
        try:
            await self.worker.prepare(run)
        except Exception:  # noqa: BLE001 — the suite or adapter cannot be built here
            self._send(("failed", traceback.format_exc()))
            return
        self.run = run

    def _start(self, run: RunKey, pairs: list[tuple[str, int]]) -> None:
        # Started in the order sent, and the slots are first come first served: the attempts
        # running here are always the oldest unfinished ones (what the driver holds a death against).
        for task_id, attempt in pairs:
            job = asyncio.ensure_future(self._one(run, task_id, attempt))
            self.running.add(job)
            job.add_done_callback(self.running.discard)

    async def _one(self, run: RunKey, task_id: str, attempt: int) -> None:
        try:
            result = await self.worker.attempt(run, task_id, attempt)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 — run_attempt raises only for the harness's own trouble
            self._send(("error", task_id, attempt, traceback.format_exc()))
            return
        try:
            self.conn.send(("done", result))
        except (EOFError, OSError):
            pass  # the driver is gone; the reader stops this process
        except Exception as exc:  # noqa: BLE001 — a result that does not pickle: say so
            self._send(("error", task_id, attempt,
                        f"its result could not be sent to the driver: {type(exc).__name__}: {exc}"))

    def _send(self, message: tuple[Any, ...]) -> None:
        with contextlib.suppress(EOFError, OSError):
            self.conn.send(message)


# ---------------------------------------------------------------------------------------------
# In the driver


#: What a worker process runs: the driver's import path first (a checkout, a test's root), then
#: this module's `serve` on the socket it was handed. Not multiprocessing's spawn, which also
#: runs the driver's main script again in the worker: a script calling `aeh.run(workers=2)`
#: without an `if __name__ == "__main__":` guard would start workers from every worker.
_BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[2]); "
         "from aeh.integrations.processes import serve_fd; serve_fd(int(sys.argv[1]))")


def serve_fd(fd: int) -> None:
    """A worker's main, on the inherited socket `fd`."""
    serve(Connection(fd))


@dataclass(eq=False)
class _Worker:
    """A worker process, its end of the socket, and the thread that reads what it sends."""

    process: subprocess.Popen[bytes]
    conn: Connection
    target: Callable[[tuple[Any, ...]], None] | None = None
    """Where its messages go (the running run's handler); None while it is idle."""
    gone: bool = False

    @classmethod
    def start(cls) -> _Worker:
        # A fresh interpreter (never a fork of this process, whose threads would be copied mid-step).
        ours, theirs = socket.socketpair()
        with ours, theirs:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(theirs.fileno()), json.dumps(sys.path)],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, close_fds=True)
            # Only the worker holds its end now: its exit closes the socket here.
            worker = cls(process, Connection(ours.detach()))
        threading.Thread(target=worker._read, name=f"aeh-worker-{process.pid}", daemon=True).start()
        return worker

    def _read(self) -> None:
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):
                message = ("gone",)
            except Exception as exc:  # noqa: BLE001 — a message that does not unpickle here
                message = ("failed", f"a message from worker process {self.process.pid} could not be read: "
                           f"{type(exc).__name__}: {exc}")
            target = self.target
            if message[0] == "gone":
                self.gone = True
            if target is not None:
                target(message)
            if message[0] == "gone":
                return

    def send(self, message: tuple[Any, ...]) -> bool:
        try:
            self.conn.send(message)
            return True
        except (OSError, ValueError):
            return False

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait(self, timeout_s: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=max(0.0, timeout_s))

    def exit_cause(self) -> str:
        self.wait(2)
        code = self.process.returncode
        if code is None:
            return "stopped answering"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"was killed by {signal.Signals(-code).name}"
        return f"exited with code {code}"


@dataclass
class _Pool:
    idle: list[_Worker] = field(default_factory=list)


_pool = _Pool()


def _lease(count: int) -> list[_Worker]:
    """`count` workers: idle live ones first, new ones for the rest."""
    live = [w for w in _pool.idle if not w.gone and w.alive()]
    _stop([w for w in _pool.idle if w not in live])
    taken, _pool.idle = live[:count], live[count:]
    return taken + [_Worker.start() for _ in range(count - len(taken))]


def idle_workers() -> list[int]:
    """Process ids of the idle worker processes this process keeps for its next runs."""
    return [w.process.pid for w in _pool.idle if not w.gone]


def stop_workers() -> None:
    """Stop the idle worker processes (they stop anyway when this process exits)."""
    workers, _pool.idle = _pool.idle, []
    _stop(workers)


atexit.register(stop_workers)


def _stop(workers: list[_Worker], grace_s: float = STOP_GRACE_S) -> None:
    """Ask each worker to stop, then terminate, then kill those still running; reap them all."""
    for worker in workers:
        worker.target = None
        worker.send(("stop",))
    deadline = time.monotonic() + grace_s
    for worker in workers:
        worker.wait(deadline - time.monotonic())
    for stop in ("terminate", "kill"):
        left = [w for w in workers if w.alive()]
        for worker in left:
            with contextlib.suppress(OSError):
                getattr(worker.process, stop)()
        for worker in left:
            worker.wait(2)
    for worker in workers:
        with contextlib.suppress(OSError):
            worker.conn.close()


@dataclass
class ProcessExecutor:
    """Runs a run's pending attempts on `workers` local processes (`RunWiring.executor`)."""

    spec: WorkerSpec
    workers: int
    sinks: list[SpanSink] = field(default_factory=list)
    """The driver's span sinks (log lines, user sinks): they see each attempt's spans as it returns."""
    _health: list[dict[str, Any]] = field(default_factory=list, init=False, repr=False)

    def worker_health(self) -> list[dict[str, Any]]:
        """Each worker loop's health in the last run, as the worker closed it (a worker that died
        or did not close in time has none)."""
        return list(self._health)

    async def run(self, info: RunInfo, pending: list[tuple[Task, int]],
                  deliver: Callable[[Attempt, list[Span]], None]) -> None:
        """Spread `pending` over the workers, `deliver` every attempt as it returns."""
        self._health = []
        if not pending:
            return
        count = max(1, min(self.workers, len(pending), self.spec.concurrency))

        def delivered(record: Attempt, spans: list[Span]) -> None:
            replay(self.sinks, spans)
            deliver(record, spans)

        dispatch = _Dispatch(info, worker_parts(self.spec, count), pending, delivered)
        clean = False
        try:
            await dispatch.run()
            clean = True
        finally:
            self._health = list(dispatch.health)
            if clean:
                for worker in dispatch.workers:
                    worker.target = None
                _pool.idle.extend(w for w in dispatch.workers if not w.gone)
            else:  # interrupted or failed: attempts may still be running on them
                await asyncio.to_thread(_stop, dispatch.workers)


class _Dispatch:
    """One run on the workers: hands out pairs, takes back results, replaces a worker that dies."""

    def __init__(self, info: RunInfo, parts: list[WorkerSpec], pending: list[tuple[Task, int]],
                 deliver: Callable[[Attempt, list[Span]], None]) -> None:
        self.info, self.deliver = info, deliver
        self.runs: list[RunKey] = [(part, info.run_id, info.seed) for part in parts]
        self.todo = deque((t.id, i) for t, i in pending)
        self.assigned: list[dict[tuple[str, int], None]] = [{} for _ in parts]
        """Per worker, the pairs it was sent and not yet returned, oldest first."""
        self.deaths: Counter[tuple[str, int]] = Counter()
        self.workers: list[_Worker] = []
        self.events: asyncio.Queue[tuple[int, tuple[Any, ...]]] = asyncio.Queue()
        self.health: list[dict[str, Any]] = []
        """Each worker loop's health, as it closed the run."""

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self.workers.extend(_lease(len(self.runs)))
        for k, worker in enumerate(self.workers):
            self._listen(loop, k, worker)
            worker.send(("run", self.runs[k]))
            self._feed(k)
        while any(self.assigned):
            k, message = await self.events.get()
            kind = message[0]
            if kind == "done":
                record, spans = message[1]
                self.assigned[k].pop((record.task_id, record.attempt), None)
                self.deliver(record, spans)
                self._feed(k)
            elif kind == "gone":
                self._replace(k)
                self._listen(loop, k, self.workers[k])
                self.workers[k].send(("run", self.runs[k]))
                self._feed(k)
            elif kind in ("error", "failed"):
                what = (f"attempt {message[2]} of task {message[1]!r} failed in a worker process:\n{message[3]}"
                        if kind == "error" else f"a worker process could not build the run:\n{message[1]}")
                raise WorkerProcessError(f"{what}\nthe attempts that came back are stored; fix the cause, then "
                                         f"finish the run with `aeh run --resume {self.info.run_id}`")
        await self._close()

    def _listen(self, loop: asyncio.AbstractEventLoop, k: int, worker: _Worker) -> None:
        def target(message: tuple[Any, ...]) -> None:
            with contextlib.suppress(RuntimeError):  # the run's loop has closed
                loop.call_soon_threadsafe(self.events.put_nowait, (k, message))

        worker.target = target
        if worker.gone:  # died before it was listened to: its "gone" went unheard
            self.events.put_nowait((k, ("gone",)))

    def _feed(self, k: int) -> None:
        slots = self.runs[k][0].concurrency
        prefetch = max(PREFETCH, slots // 8)
        room = slots + prefetch - len(self.assigned[k])
        if room < min(prefetch, len(self.todo)) or not self.todo:
            return  # send in batches: a message per attempt would cost this process more than it saves
        batch = [self.todo.popleft() for _ in range(min(room, len(self.todo)))]
        self.assigned[k].update(dict.fromkeys(batch))
        self.workers[k].send(("pairs", batch))  # to a dead worker: its "gone" follows

    def _replace(self, k: int) -> None:
        """A dead worker's unfinished attempts: run again, or (their second worker died) harness errors."""
        dead = self.workers[k]
        cause = dead.exit_cause()
        _stop([dead], grace_s=0)
        lost, self.assigned[k] = list(self.assigned[k]), {}
        running = set(lost[:self.runs[k][0].concurrency])  # the oldest unfinished: those it was running
        for pair in reversed(lost):
            self.deaths[pair] += pair in running  # one only queued there is not held against
            if self.deaths[pair] < MAX_DEATHS:
                self.todo.appendleft(pair)
                continue
            why = (f"harness error: the worker process running this attempt {cause} "
                   f"({self.deaths[pair]} workers died running it); not the agent's failure — "
                   "rerun it without --workers to see the cause")
            self.deliver(*lost_attempt(self.info, pair[0], pair[1], why))
        self.workers[k] = _Worker.start()

    async def _close(self) -> None:
        """Have every worker close the run's setup (its suite resources, clients, work root); one
        that does not within a minute is stopped rather than kept."""
        workers = self.workers
        waiting = {k for k, worker in enumerate(workers) if not worker.gone and worker.send(("close",))}
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(60):
                while waiting:
                    k, message = await self.events.get()
                    if message[0] in ("closed", "gone"):
                        waiting.discard(k)
                    if message[0] == "closed" and len(message) > 1 and message[1]:
                        self.health.append(message[1])
        for k in waiting:
            workers[k].gone = True  # not back in the pool
        await asyncio.to_thread(_stop, [workers[k] for k in waiting])


