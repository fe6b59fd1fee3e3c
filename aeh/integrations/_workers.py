"""What runs a run's attempts in another process: shared by the local process pool and Ray.

A worker (a spawned process of this machine, `aeh.integrations.processes`, or a Ray actor,
`aeh.integrations.ray`) gets a `WorkerSpec` of plain values, rebuilds the suite from its spec
and the adapter from its name and options, builds its `AttemptSetup` with the scheduler's own
`build_attempt_setup` and runs the scheduler's own `run_attempt`. Nothing unpicklable (clients,
locks, the store) crosses the wire: specs out, `(Attempt, spans)` back. The driver stays the
store's only writer: it shows its span sinks each attempt's spans (`replay`) and hands the
attempt to the run's collector, as a local run does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass, replace
from typing import Any

from aeh.adapters import make_adapter
from aeh.engine import HarnessHealth, make_work_root, release_work_root
from aeh.engine.attempt import AttemptSetup, attempt_seed, run_attempt
from aeh.engine.runplan import plan_run
from aeh.engine.scheduler import build_attempt_setup
from aeh.models import Attempt, FailureBucket, RunInfo, Span, Task
from aeh.pricing import PriceTable
from aeh.suite.contract import suite_lifespan
from aeh.suite.loader import load_suite
from aeh.trace import SpanRecorder, SpanSink

__all__ = ["CONNECTION_LIMITS", "Result", "RunKey", "RunWorker", "WorkerSpec", "chunks", "lost_attempt", "most_workers",
           "price_fields", "replay", "shares", "worker_parts"]

Result = tuple[Attempt, list[Span]]


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs to rebuild a run's setup: plain, picklable values only."""

    suite: str
    """The suite spec: a shipped name, entry point or directory (the same path on every node)."""
    adapter: str
    model: str | None
    adapter_options: dict[str, Any]
    run_options: dict[str, Any]
    """Keyword arguments of `RunSpec.build`: the run's stored spec as workers apply it (`RunSpec.for_worker`)."""
    prices: dict[str, Any]
    """The driver's price table as fields (`price_fields`): a table object holds a lock."""
    concurrency: int
    """Attempts in flight on this worker: the run's `RunSpec.concurrency`, or this worker's share of it."""


RunKey = tuple[WorkerSpec, str, int]
"""A run as a worker knows it: its spec, run id and seed."""


class RunWorker:
    """Runs attempts of one run at a time, in a worker process, reused by the runs that follow.

    The first attempt of a new run (another run id or seed) closes the previous run's setup, if
    any, and builds this one's; at most `WorkerSpec.concurrency` attempts run at once.
    """

    def __init__(self) -> None:
        self._key: tuple[str, int] | None = None
        self._setup: AttemptSetup | None = None
        self._tasks: dict[str, Task] = {}
        self._stack = contextlib.AsyncExitStack()
        self._slots = asyncio.Semaphore(1)

    async def _start(self, spec: WorkerSpec, run_id: str, seed: int) -> AttemptSetup:
        suite = load_suite(spec.suite)
        adapter = make_adapter(spec.adapter, model=spec.model, **spec.adapter_options)
        run_spec, wiring = plan_run(**spec.run_options)
        work_root = make_work_root(run_id, run_spec.retained_work_dir())
        self._stack.callback(release_work_root, work_root, run_spec.keeps_workspaces)
        lifespan = suite_lifespan(suite)
        resources = await self._stack.enter_async_context(lifespan) if lifespan is not None else {}
        for owner in (adapter, wiring.judge):  # their HTTP clients pool connections on this loop
            aclose = getattr(owner, "aclose", None)
            if aclose is not None:
                self._stack.push_async_callback(aclose)
        warm_up = getattr(adapter, "warm_up", None)
        if callable(warm_up):
            await warm_up()
        self._tasks = {t.id: t for t in suite.tasks()}
        self._slots = asyncio.Semaphore(max(1, spec.concurrency))
        setup = build_attempt_setup(suite, adapter, PriceTable(**spec.prices), run_spec, wiring, run_id=run_id,
                                    seed=seed, work_root=work_root, resources=dict(resources or {}))
        # This loop's own stalls (machine load) are not the agent's time, as in a local run.
        health = HarnessHealth().start()
        self._stack.push_async_callback(health.stop)
        setup.health = health
        return setup

    async def prepare(self, run: RunKey) -> AttemptSetup:
        """The setup of `run`, built on its first use here (closing the previous run's)."""
        spec, run_id, seed = run
        if self._setup is None or self._key != (run_id, seed):
            await self.close()
            self._setup = await self._start(spec, run_id, seed)
            self._key = (run_id, seed)
        return self._setup

    async def attempt(self, run: RunKey, task_id: str, attempt: int) -> Result:
        """Run one attempt of `run` when a slot is free (slots are taken first come, first served)."""
        setup = await self.prepare(run)
        async with self._slots:
            return await run_attempt(setup, self._tasks[task_id], attempt)

    async def run(self, run: RunKey, pairs: list[tuple[str, int]]) -> list[Result]:
        """Run these attempts of `run` concurrently; return them all."""
        await self.prepare(run)
        return list(await asyncio.gather(*(self.attempt(run, t, i) for t, i in pairs)))

    async def close(self) -> dict[str, Any] | None:
        """Close the run's suite resources and adapter clients, remove its work root; the worker stays.

        Returns the health of this worker's loop while it ran the run (`HarnessHealth.summary()`),
        for the driver to add to the run's own; None when no run was set up here.
        """
        health = self._setup.health if self._setup is not None else None
        self._setup, self._key, self._tasks = None, None, {}
        stack, self._stack = self._stack, contextlib.AsyncExitStack()
        await stack.aclose()  # stops the health ticker too
        return health.summary() if health is not None else None


#: The run's limits on open connections: each worker gets its share, so together they keep the cap.
CONNECTION_LIMITS = ("max_connections", "judge_max_connections")


def worker_parts(spec: WorkerSpec, count: int, *, share_concurrency: bool = True) -> list[WorkerSpec]:
    """Each of `count` workers' spec: its share of the run's connection limits and, with
    `share_concurrency`, of its attempts in flight (Ray's actors each run `--concurrency`)."""
    options = spec.run_options
    limits = {name: shares(options[name], count) for name in CONNECTION_LIMITS if options.get(name)}
    flights = shares(spec.concurrency, count) if share_concurrency else [spec.concurrency] * count
    return [replace(spec, concurrency=flight,
                    run_options={**options, "concurrency": flight,
                                 **{name: max(1, split[k]) for name, split in limits.items()}})
            for k, flight in enumerate(flights)]


def most_workers(spec: WorkerSpec) -> int | None:
    """The most workers the run's connection limits can be shared by (one connection each), or None."""
    caps = [int(spec.run_options[name]) for name in CONNECTION_LIMITS if spec.run_options.get(name)]
    return min(caps) if caps else None


def price_fields(prices: PriceTable) -> dict[str, Any]:
    """A price table's data, to rebuild it on a worker with `PriceTable(**fields)`."""
    return {"version": prices.version, "date": prices.date, "models": dict(prices.models), "source": prices.source}


def shares(total: int, parts: int) -> list[int]:
    """`total` split into `parts` near-equal shares, the larger first (each at least 1 when total ≥ parts)."""
    return [total // parts + (k < total % parts) for k in range(parts)]


def chunks(pairs: list[tuple[str, int]], size: int) -> deque[list[tuple[str, int]]]:
    return deque(pairs[k:k + size] for k in range(0, len(pairs), size))


def replay(sinks: list[SpanSink], spans: list[Span]) -> None:
    """Show the driver's sinks an attempt's spans, in start order, at their tree depth."""
    if not sinks:
        return
    depth: dict[str, int] = {}
    for span in sorted(spans, key=lambda s: s.start_ts):
        depth[span.span_id] = depth.get(span.parent_span_id or "", -1) + 1
        for sink in sinks:
            sink.span_started(span, depth[span.span_id])
            sink.span_ended(span, depth[span.span_id])


def lost_attempt(info: RunInfo, task_id: str, attempt: int, why: str) -> Result:
    """The record of an attempt its worker could not finish (the process died under it): a
    harness error with the cause, its seed as it would have run, and a failed root span."""
    recorder = SpanRecorder(info.run_id, task_id, attempt, [])
    seed = attempt_seed(info.seed, task_id, attempt)
    with recorder.span("attempt", "scheduler", task_id=task_id, attempt=attempt, seed=seed) as root:
        root.set(success=False, status="harness_error", failure_bucket=FailureBucket.harness_error.value)
        root.fail(why)
    record = Attempt(run_id=info.run_id, task_id=task_id, attempt=attempt, seed=seed, success=False,
                     status="harness_error", failure_bucket=FailureBucket.harness_error, error=why,
                     root_span_id=root.span_id)
    return record, list(recorder.spans)
