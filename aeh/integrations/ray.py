"""Scale-out on Ray: a run's attempts go to Ray workers, results come back to this process.

Each worker is a Ray actor that rebuilds the suite from its spec and the adapter from its name
and options, then builds its `AttemptSetup` with the same `build_attempt_setup` the local
scheduler uses and runs the same `run_attempt`: nothing unpicklable (clients, locks, the store)
crosses the wire, only plain specs out and `(Attempt, spans)` back. The driver is the only
writer of the store, so progress, resume, the heartbeat and Ctrl-C behave as in a local run.

A worker gets its share of the pending pairs in chunks of `concurrency` (one Ray call per
chunk, not per attempt: a call costs milliseconds) and runs each chunk's attempts concurrently
on its own event loop; a second chunk waits queued on the actor so it never idles.
Needs the `ray` extra: `pip install -e '.[ray]'` in a checkout, `pip install 'aeh-harness[ray]'` otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aeh._optional import require_extra
from aeh.adapters import make_adapter
from aeh.engine import make_work_root, release_work_root
from aeh.engine.attempt import AttemptSetup, run_attempt
from aeh.engine.runplan import build_run_options
from aeh.engine.scheduler import build_attempt_setup
from aeh.errors import AehError
from aeh.models import Attempt, RunInfo, Span, Task
from aeh.pricing import PriceTable
from aeh.suite.contract import suite_lifespan
from aeh.suite.loader import load_suite
from aeh.trace import SpanSink

__all__ = ["RayExecutor", "RayStartError", "RayWorkerError", "WorkerSpec", "price_fields", "require_ray"]

Result = tuple[Attempt, list[Span]]


class RayWorkerError(AehError):
    """A Ray worker could not build the run (suite, adapter) or died; the run stays resumable."""


class RayStartError(RayWorkerError):
    """The Ray cluster did not start (or could not be joined); nothing of it is left running."""


def require_ray() -> None:
    """MissingExtraError (exit 2, with the install command) when Ray is not installed."""
    require_extra("the Ray executor (--executor ray)", ("ray",), "ray")


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs to rebuild a run's setup: plain, picklable values only."""

    suite: str
    """The suite spec: a shipped name, entry point or directory (the same path on every node)."""
    adapter: str
    model: str | None
    adapter_options: dict[str, Any]
    run_options: dict[str, Any]
    """Keyword arguments of `build_run_options`: the run's stored spec as workers apply it (`RunSpec.for_worker`)."""
    prices: dict[str, Any]
    """The driver's price table as fields (`price_fields`): a table object holds a lock."""
    concurrency: int = 4


class AttemptWorker:
    """The Ray actor: builds the setup once, then runs chunks of (task id, attempt) pairs."""

    def __init__(self, spec: WorkerSpec, run_id: str, seed: int) -> None:
        self.spec, self.run_id, self.seed = spec, run_id, seed
        self._setup: AttemptSetup | None = None
        self._tasks: dict[str, Task] = {}
        self._stack = contextlib.AsyncExitStack()
        self._keep = False

    async def _start(self) -> AttemptSetup:
        spec = self.spec
        suite = load_suite(spec.suite)
        adapter = make_adapter(spec.adapter, model=spec.model, **spec.adapter_options)
        options = build_run_options(**spec.run_options)
        self._keep = options.keep_workspaces
        work_root = make_work_root(self.run_id, options.work_dir)
        self._stack.callback(release_work_root, work_root, self._keep)
        lifespan = suite_lifespan(suite)
        resources = await self._stack.enter_async_context(lifespan) if lifespan is not None else {}
        for owner in (adapter, options.judge):  # their HTTP clients pool connections on this loop
            aclose = getattr(owner, "aclose", None)
            if aclose is not None:
                self._stack.push_async_callback(aclose)
        warm_up = getattr(adapter, "warm_up", None)
        if callable(warm_up):
            await warm_up()
        self._tasks = {t.id: t for t in suite.tasks()}
        return build_attempt_setup(suite, adapter, PriceTable(**spec.prices), options, run_id=self.run_id,
                                   seed=self.seed, work_root=work_root, resources=dict(resources or {}))

    async def run(self, pairs: list[tuple[str, int]]) -> list[Result]:
        """Run these attempts concurrently (up to the run's concurrency); return them all."""
        if self._setup is None:
            self._setup = await self._start()
        setup = self._setup
        semaphore = asyncio.Semaphore(max(1, self.spec.concurrency))

        async def one(task_id: str, attempt: int) -> Result:
            async with semaphore:
                return await run_attempt(setup, self._tasks[task_id], attempt)

        return list(await asyncio.gather(*(one(t, i) for t, i in pairs)))

    async def close(self) -> None:
        """Close the suite's resources and the adapter's clients; remove the work root."""
        await self._stack.aclose()


@dataclass
class RayExecutor:
    """Runs a run's pending attempts on Ray actors (`RunOptions.executor`)."""

    spec: WorkerSpec
    address: str | None = None
    """`ray://host:10001`, `auto`, or None: `RAY_ADDRESS`, else a local cluster started (and stopped) here."""
    workers: int | None = None
    """Actors to start (one CPU each); None: one per CPU of the cluster."""
    sinks: list[SpanSink] = field(default_factory=list)
    """The driver's span sinks (log lines, user sinks): they see each attempt's spans as it returns."""

    async def run(self, info: RunInfo, pending: list[tuple[Task, int]],
                  deliver: Callable[[Attempt, list[Span]], None]) -> None:
        """Spread `pending` over the workers and `deliver` every attempt as its chunk returns."""
        if not pending:
            return
        require_ray()
        if not (self.address or os.environ.get("RAY_ADDRESS")):
            # A cluster started here listens on loopback only. Ray reads this when it is imported
            # (it is how Ray keeps single-machine clusters local on macOS and Windows).
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        import ray  # heavy: loaded on first use

        started_here = _connect(ray, self.address, self.workers)
        actors: list[Any] = []
        inflight: dict[asyncio.Future[Any], tuple[Any, int]] = {}
        try:
            count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]  # ray leaves cluster_resources() unannotated
            count = min(count, len(pending))
            remote: Any = ray.remote(AttemptWorker)
            # One chunk at a time per actor: the chunk's own attempts are its concurrency.
            actors = [remote.options(num_cpus=1, max_concurrency=1).remote(self.spec, info.run_id, info.seed)
                      for _ in range(count)]
            size = max(1, self.spec.concurrency)
            queues = [_chunks([(t.id, i) for t, i in pending[k::count]], size) for k in range(count)]

            def submit(k: int) -> None:
                if queues[k]:
                    ref = actors[k].run.remote(queues[k].popleft())
                    inflight[asyncio.wrap_future(ref.future())] = (ref, k)

            for k in range(count):
                submit(k)
                submit(k)  # queued on the actor, so it starts the moment the first chunk ends
            while inflight:
                ready, _ = await asyncio.wait(list(inflight), return_when=asyncio.FIRST_COMPLETED)
                for future in ready:
                    _, k = inflight.pop(future)
                    for record, spans in _result(future):
                        _replay(self.sinks, spans)
                        deliver(record, spans)
                    submit(k)
            await asyncio.wait_for(asyncio.gather(*(asyncio.wrap_future(a.close.remote().future())
                                                    for a in actors)), timeout=60)
        finally:
            for ref, _ in inflight.values():
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=False)
            for actor in actors:
                with contextlib.suppress(Exception):
                    ray.kill(actor)
            if started_here:
                ray.shutdown()


def price_fields(prices: PriceTable) -> dict[str, Any]:
    """A price table's data, to rebuild it on a worker with `PriceTable(**fields)`."""
    return {"version": prices.version, "date": prices.date, "models": dict(prices.models), "source": prices.source}


def _connect(ray: Any, address: str | None, workers: int | None) -> bool:
    """Join the cluster at `address` (or RAY_ADDRESS), or start a local one; True if started here.

    A start that fails (Ray's raylet has 30 s to register, which a loaded machine can miss) is a
    RayStartError, and every process the attempt left behind (GCS, raylet, workers) is stopped:
    Ray's own `shutdown` cannot, as its node object was never made.
    """
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
    target = address or os.environ.get("RAY_ADDRESS") or None
    quiet: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    before = _descendants()
    try:
        if target is not None:
            ray.init(address=target, **quiet)
        else:
            # A cluster of this machine only, without the dashboard's web server.
            ray.init(num_cpus=workers, include_dashboard=False, **quiet)
    except Exception as exc:  # noqa: BLE001 — Ray raises bare Exception, ConnectionError, RuntimeError …
        with contextlib.suppress(Exception):
            ray.shutdown()
        left = _stop(_descendants() - before)
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        where = f"the Ray cluster at {target}" if target else "a local Ray cluster"
        raise RayStartError(
            f"could not start {where}: {cause}"
            + (f" ({left} of its processes would not stop)" if left else "; none of its processes is left running")
            + " — retry when the machine is less loaded, start Ray yourself (`ray start --head`) and pass "
            "--ray-address auto, or run without --executor ray; the run is stored and resumes with "
            "`aeh run --resume RUN_ID`") from None
    return True


def _descendants() -> set[int]:
    """Process ids of every descendant of this process (children, their children …)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="utf-8") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    todo = [os.getpid()]
    while todo:
        for pid in children.get(todo.pop(), []):
            if pid not in out:
                out.add(pid)
                todo.append(pid)
    return out


def _stop(pids: set[int], grace_s: float = 5.0) -> int:
    """SIGTERM `pids`, then SIGKILL what still runs after `grace_s`; how many would not go.

    Ray's `Popen` objects for them are reaped through `poll()`, so they record the exit and do
    not warn "still running" when the failed node is garbage-collected.
    """
    popens = {o.pid: o for o in _popens() if o.pid in pids}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace_s
        while pids and time.monotonic() < deadline:
            for pid in list(pids):
                with contextlib.suppress(ChildProcessError, OSError):
                    if pid in popens:
                        popens[pid].poll()
                    else:
                        os.waitpid(pid, os.WNOHANG)  # reap our own children, or they stay zombies
                if not _alive(pid):
                    pids.discard(pid)
            time.sleep(0.05)
    for popen in _popens():  # Ray's short-lived helpers that had already exited
        if popen.returncode is None and not _alive(popen.pid):
            popen.poll()
    return len(pids)


def _popens() -> list[subprocess.Popen[Any]]:
    return [o for o in gc.get_objects() if isinstance(o, subprocess.Popen)]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _chunks(pairs: list[tuple[str, int]], size: int) -> deque[list[tuple[str, int]]]:
    return deque(pairs[k:k + size] for k in range(0, len(pairs), size))


def _result(future: asyncio.Future[Any]) -> list[Result]:
    try:
        return list(future.result())
    except AehError:
        raise
    except Exception as exc:  # RayTaskError, RayActorError: the worker's own traceback is in str(exc)
        raise RayWorkerError(f"a Ray worker failed: {exc}\nthe attempts that came back are stored; "
                             "fix the cause, then finish the run with `aeh run --resume RUN_ID`") from exc


def _replay(sinks: list[SpanSink], spans: list[Span]) -> None:
    """Show the driver's sinks an attempt's spans, in start order, at their tree depth."""
    if not sinks:
        return
    depth: dict[str, int] = {}
    for span in sorted(spans, key=lambda s: s.start_ts):
        depth[span.span_id] = depth.get(span.parent_span_id or "", -1) + 1
        for sink in sinks:
            sink.span_started(span, depth[span.span_id])
            sink.span_ended(span, depth[span.span_id])
