"""Traces graded as they arrive (`aeh serve otlp`): an OTLP/HTTP receiver feeding ONE stored run.

Each request's spans are mapped exactly as `aeh import otel` maps a file (`_flat`,
`otlp_to_trajectories`); a trace becomes an attempt when its root span arrives (SDK exporters
send a span when it ends, so the root comes last) or, for traces still open, when the run stops.
The run is an ordinary engine run whose executor is this receiver: attempts are played through
`TrajectoryAdapter` and graded by the suite, so the stored run reads like any other. The queue
between the HTTP threads and the grader is bounded; when it is full the client is told to retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from aeh._util.sync import run_sync
from aeh.adapters import TrajectoryAdapter
from aeh.engine import make_work_root, over_budget_summary, release_work_root
from aeh.engine.attempt import run_attempt
from aeh.engine.runplan import plan_run
from aeh.engine.runspec import RunSpec
from aeh.engine.scheduler import build_attempt_setup, execute_run
from aeh.engine.wiring import RunWiring
from aeh.errors import ValidationError
from aeh.importers._otel import _attrs, _flat, _kv, attribute_config, otlp_to_trajectories
from aeh.importers._otel_shape import otlp_problems
from aeh.importers._otlp_http import IntakeFull, OtlpReceiver
from aeh.models import Attempt, RunInfo, Span, Task
from aeh.pricing import PriceTable, load_price_table
from aeh.store import RunStore, StoreLike, redaction_record, using_store
from aeh.suite import suite_location
from aeh.suite.contract import EvalSuite, suite_lifespan
from aeh.suite.loader import load_suite
from aeh.trajectory import Trajectory

__all__ = ["LiveTraces", "serve_otlp"]

_Pair = tuple[dict[str, Any], dict[str, Any]]  # (span, its resource's attributes)
_POLL_S = 0.1


class LiveTraces:
    """The receiver's intake and the run's executor: spans in, graded attempts out.

    `accept` runs on the HTTP threads; `run` on the engine's event loop; they share only the
    bounded queue, the stop flag and the set of refused traces.
    """

    def __init__(self, suite: EvalSuite, *, task_attribute: str = "aeh.task_id",
                 attempt_attribute: str = "aeh.attempt", queue_size: int = 64, max_attempts: int | None = None,
                 idle_timeout: float | None = None, warn: Callable[[str], None] | None = None) -> None:
        self.suite = suite
        self.tasks = {t.id: t for t in suite.tasks()}
        self.task_attribute, self.attempt_attribute = task_attribute, attempt_attribute
        self.queue: queue.Queue[list[_Pair]] = queue.Queue(maxsize=max(1, queue_size))
        self.max_attempts, self.idle_timeout = max_attempts, idle_timeout
        self.stopping = threading.Event()
        self.reports: list[str] = []
        self._warn = warn or (lambda line: print(f"warning: {line}", file=sys.stderr, flush=True))
        self._refused: set[str] = set()
        self._lock = threading.Lock()
        self._open: dict[str, list[_Pair]] = {}
        self._graded_traces: set[str] = set()
        self.adapter = TrajectoryAdapter([], name="otel")
        self.graded: list[tuple[str, int]] = []
        self.trajectories: list[Trajectory] = []
        self._last_request = time.monotonic()
        # Set by `serve_otlp` before the run starts: what `run` builds its attempt setup from.
        self.prices: PriceTable | None = None
        self.plan: tuple[RunSpec, RunWiring] | None = None
        self.close_intake: Callable[[], None] = lambda: None

    # -- the HTTP side ---------------------------------------------------------------------------
    def accept(self, document: dict[str, Any]) -> tuple[int, str]:
        """Queue a request's spans; spans of traces naming a task the suite lacks are refused."""
        if self.stopping.is_set():
            raise IntakeFull("the receiver is stopping: the run takes no more traces")
        shape = otlp_problems("request body", document)  # as a file is checked: types, integers, spans
        if shape:
            raise ValidationError(shape, "OTLP request")
        pairs = _flat(document, "request body")
        unknown: dict[str, set[str]] = {}
        for span, resource in pairs:
            task = _attrs(span).get(self.task_attribute) or resource.get(self.task_attribute)
            if task is not None and str(task) not in self.tasks:
                unknown.setdefault(str(task), set()).add(str(span.get("traceId", "")))
        with self._lock:
            for traces in unknown.values():
                self._refused.update(traces)
            kept = [(s, r) for s, r in pairs if str(s.get("traceId", "")) not in self._refused]
        if kept:
            try:
                self.queue.put_nowait(kept)
            except queue.Full:
                raise IntakeFull(f"{self.queue.maxsize} requests are waiting to be graded: retry later") from None
        self._last_request = time.monotonic()
        message = ""
        if unknown:
            message = "; ".join(f"task {task!r} is not in suite {self.suite.name!r}" for task in sorted(unknown))
            self._report(f"refused {len(pairs) - len(kept)} span(s): {message}")
        return len(pairs) - len(kept), message

    def request_stop(self) -> None:
        self.stopping.set()

    # -- the engine side (a RunExecutor) ---------------------------------------------------------
    async def run(self, info: RunInfo, pending: list[tuple[Task, int]],
                  deliver: Callable[[Attempt, list[Span]], None]) -> None:
        """Grade traces as they complete until the stop, then every trace still queued or open."""
        assert self.prices is not None and self.plan is not None, "serve_otlp sets them"
        spec, wiring = self.plan
        work_root = make_work_root(f"{info.run_id}-otlp", spec.retained_work_dir())
        lifespan = suite_lifespan(self.suite)
        try:
            async with lifespan if lifespan is not None else contextlib.nullcontext({}) as resources:
                setup = build_attempt_setup(self.suite, self.adapter, self.prices, spec, wiring, run_id=info.run_id,
                                            seed=info.seed, work_root=work_root, resources=dict(resources or {}),
                                            sinks=[self.adapter])

                async def grade(pairs: list[_Pair]) -> None:
                    for task, attempt in self._attempts(pairs):
                        record, spans = await run_attempt(setup, task, attempt)
                        deliver(record, spans)

                await self._serve(grade)
                await asyncio.to_thread(self.close_intake)
                while True:  # what was accepted before the stop is graded, not dropped
                    try:
                        await self._add(self.queue.get_nowait(), grade)
                    except queue.Empty:
                        break
                for trace in list(self._open):  # traces whose root never came
                    pairs = self._open.pop(trace)
                    with self._lock:
                        refused = trace in self._refused
                    if not refused:
                        await grade(pairs)
        finally:
            release_work_root(work_root, keep=False)
        info.config.tasks = sorted({task for task, _ in self.graded})

    async def _serve(self, grade: Callable[[list[_Pair]], Any]) -> None:
        while not self.stopping.is_set():
            try:
                batch = await asyncio.to_thread(self.queue.get, True, _POLL_S)
            except queue.Empty:
                if self.idle_timeout is not None and time.monotonic() - self._last_request > self.idle_timeout:
                    return
                continue
            await self._add(batch, grade)
            if self.max_attempts is not None and len(self.graded) >= self.max_attempts:
                return

    async def _add(self, batch: list[_Pair], grade: Callable[[list[_Pair]], Any]) -> None:
        """Add spans to their traces; grade each trace whose root span is among them."""
        complete: list[str] = []
        for span, resource in batch:
            trace = str(span.get("traceId", ""))
            with self._lock:
                refused = trace in self._refused
            if refused:
                self._open.pop(trace, None)
                continue
            if trace in self._graded_traces:
                self._report(f"span {span.get('spanId')} of trace {trace} came after its root span: "
                             "its attempt was graded without it")
                continue
            self._open.setdefault(trace, []).append((span, resource))
            if not span.get("parentSpanId") and trace not in complete:
                complete.append(trace)
        for trace in complete:
            self._graded_traces.add(trace)
            await grade(self._open.pop(trace))

    def _attempts(self, pairs: list[_Pair]) -> list[tuple[Task, int]]:
        """The (task, attempt) pairs a finished trace is played as, its trajectory registered with the adapter."""
        document = {"resourceSpans": [{"resource": {"attributes": _kv(resource)}, "scopeSpans": [{"spans": [span]}]}
                                      for span, resource in pairs]}
        try:
            found = otlp_to_trajectories(document, where="OTLP/HTTP", task_attribute=self.task_attribute,
                                         attempt_attribute=self.attempt_attribute)
        except ValidationError as exc:
            for p in exc.problems:
                self._report(str(p))
            return []
        out: list[tuple[Task, int]] = []
        for trajectory in found:
            task = self.tasks.get(trajectory.task_id)
            if task is None:
                self._report(f"task {trajectory.task_id!r} is not in suite {self.suite.name!r}: trace not graded")
                continue
            attempt = trajectory.attempt
            if attempt is None:
                attempt = next(n for n in range(len(self.graded) + 1) if (task.id, n) not in self.adapter.by_attempt)
            elif (task.id, attempt) in self.adapter.by_attempt:
                self._report(f"task {task.id!r} attempt {attempt} was already graded: the later trace is not")
                continue
            self.adapter.by_attempt[(task.id, attempt)] = trajectory
            self.graded.append((task.id, attempt))
            self.trajectories.append(trajectory)
            out.append((task, attempt))
        return out

    def _report(self, line: str) -> None:
        with self._lock:
            self.reports.append(line)
        self._warn(line)


def serve_otlp(suite: str | Path | EvalSuite, db: StoreLike = None, *, host: str = "127.0.0.1", port: int = 4318,
               run_id: str | None = None, task_attribute: str = "aeh.task_id", attempt_attribute: str = "aeh.attempt",
               max_attempts: int | None = None, idle_timeout: float | None = None, queue_size: int = 64,
               secrets: Sequence[str] = (), price_table: str | Path | None = None,
               ready: Callable[[str, int], None] | None = None, stop: threading.Event | None = None,
               warn: Callable[[str], None] | None = None) -> str:
    """Receive OTLP/HTTP traces on `host:port` and grade them against `suite` into one stored run
    until `stop` is set, a `POST /v1/stop`, `max_attempts` graded or `idle_timeout` seconds
    without a request; returns the run's id. `ready(host, port)` is called once it listens."""
    loaded = load_suite(suite)
    live = LiveTraces(loaded, task_attribute=task_attribute, attempt_attribute=attempt_attribute,
                      queue_size=queue_size, max_attempts=max_attempts, idle_timeout=idle_timeout, warn=warn)
    if stop is not None:
        live.stopping = stop
    receiver = OtlpReceiver(live, host, port)
    live.prices = load_price_table(price_table)
    where = "{}:{}".format(*receiver.address)
    config: dict[str, Any] = {"recorded_from": f"OTLP/HTTP {where}", "tool_replay": "recorded",
                              **attribute_config(task_attribute, attempt_attribute),
                              **({"price_table": str(price_table)} if price_table is not None else {}),
                              **({"suite_spec": suite_location(suite)} if isinstance(suite, str | Path) else {})}
    spec, wiring = plan_run(attempts=1, concurrency=1, seed=0, run_id=run_id, config=config)
    wiring.executor = live
    live.plan = spec, wiring
    live.close_intake = receiver.close
    suite_secrets = list(getattr(loaded, "secrets", lambda: [])()) + list(secrets)
    try:
        with using_store(db, secrets=suite_secrets, must_exist=False) as store:
            wiring.facts["redaction"] = redaction_record(store.redactor)
            receiver.start()
            if ready is not None:
                ready(*receiver.address)
            info = run_sync(_execute(loaded, live, store))
            numbered = dict(zip(live.graded, live.trajectories, strict=True))
            recorded = info.config
            recorded.add({"trajectories": len(live.trajectories), "otlp_reports": live.reports,
                          "recorded_over_budget": over_budget_summary(numbered, live.tasks, live.prices)})
            store.update_run(info.run_id, attempts=1 + max((n for _, n in live.graded), default=0),
                             config=recorded)
    finally:
        receiver.close()
    return info.run_id


async def _execute(suite: EvalSuite, live: LiveTraces, store: RunStore) -> RunInfo:
    assert live.prices is not None and live.plan is not None
    spec, wiring = live.plan
    return await execute_run(suite, live.adapter, store, live.prices, spec, wiring, sinks=[live.adapter])
