"""Runs tasks × attempts on one event loop with bounded concurrency, writing each to the store.

Finished attempts go to the store through a background writer thread (`AttemptWriter`), so
redaction and SQLite commits never hold up the attempts still running on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import random
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeh._version import __version__
from aeh.engine._health import HarnessHealth
from aeh.engine._heartbeat import Heartbeat
from aeh.engine._retention import prune_workspaces
from aeh.engine._spend import merged_spend
from aeh.engine._workspaces import clean_stale_workspaces, make_work_root, release_work_root
from aeh.engine.adapter import Adapter
from aeh.engine.attempt import AttemptSetup, run_attempt
from aeh.engine.connections import ConnectionLimits
from aeh.engine.fidelity import RunFidelity
from aeh.engine.run_id import new_run_id
from aeh.engine.runspec import RunSpec
from aeh.engine.wiring import RunExecutor, RunProgress, RunWiring
from aeh.errors import StoreError, StoreWriteError
from aeh.grading.judge import Judge, PooledJudge
from aeh.llm import endpoint_of
from aeh.models import Attempt, LiveChecks, RunConfig, RunInfo, Span, Task
from aeh.models import HarnessHealth as StoredHealth
from aeh.pricing import PriceTable
from aeh.store import MAX_BACKLOG, AttemptWriter, executing, host_name, outside_shard, parse_shard, plan_run_id
from aeh.suite.contract import EvalSuite, suite_lifespan, suite_root
from aeh.suite.loader import suite_hash
from aeh.trace import SpanSink

if TYPE_CHECKING:
    from aeh.store import RunStore

__all__ = ["RunExecutor", "RunProgress", "build_attempt_setup", "execute_run", "new_run_id", "run_config"]


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


async def execute_run(
    suite: EvalSuite,
    adapter: Adapter,
    store: RunStore,
    prices: PriceTable,
    spec: RunSpec,
    wiring: RunWiring | None = None,
    *,
    sinks: list[SpanSink] | None = None,
    progress: RunProgress | None = None,
) -> RunInfo:
    """Execute every (task, attempt) of a validated suite; returns the stored run's info.

    The options are the frozen `spec`; `wiring` (judge, hooks, faults, executor) is what
    `wire_run(spec)` builds, or none of it. With `wiring.resume`, continue that stored run
    instead: pairs already stored are skipped. A store that stops taking writes ends the run
    with a StoreWriteError saying how to resume.
    """
    wiring = wiring if wiring is not None else RunWiring()
    tasks = suite.tasks()
    done: set[tuple[str, int]] = set()
    if wiring.resume is not None:
        info, tasks, done = _resumed(wiring.resume, tasks, store)
    else:
        if spec.tasks:
            wanted = set(spec.tasks)
            tasks = [t for t in tasks if t.id in wanted]
        seed = spec.seed if spec.seed is not None else random.SystemRandom().randrange(2**31)
        info = _new_run_info(suite, adapter, prices, spec, wiring, tasks, seed)
    continue_run = getattr(adapter, "continue_run", None)  # an adapter that keeps what the run learned
    if callable(continue_run):
        continue_run(info.config, distributed=wiring.executor is not None)
    # A shard runs only its part of the plan: the rest is skipped as if stored, so resuming a
    # shard (its provenance keeps the shard) runs exactly its own missing pairs.
    shard = info.config.provenance.shard
    outside = outside_shard(info.config.tasks or [], info.attempts, shard) if shard else set()
    info.owner_pid, info.owner_host, info.heartbeat_at = os.getpid(), host_name(), _now()
    work_dir = spec.retained_work_dir()
    clean_stale_workspaces(work_dir)  # those of runs killed before they could clean up
    work_root = make_work_root(info.run_id, work_dir)
    if spec.keeps_workspaces:
        info.config.workspace_root = str(work_root)  # `aeh trace` points at the kept workspace
    with executing(info.run_id):  # readers in this process see it running from the first write
        try:
            if wiring.resume is not None:
                store.update_run(info.run_id, status="running", finished_at=None, config=info.config,
                                 owner_pid=info.owner_pid, owner_host=info.owner_host,
                                 heartbeat_at=info.heartbeat_at)
            else:
                store.create_run(info)
        except BaseException:
            release_work_root(work_root, keep=False)
            raise
        return await _execute(suite, adapter, store, prices, spec, wiring, info, tasks, done, work_root,
                              outside=outside, sinks=sinks, progress=progress)


async def _execute(suite: EvalSuite, adapter: Adapter, store: RunStore, prices: PriceTable, spec: RunSpec,
                   wiring: RunWiring, info: RunInfo, tasks: list[Task], done: set[tuple[str, int]], work_root: Path, *,
                   outside: set[tuple[str, int]], sinks: list[SpanSink] | None,
                   progress: RunProgress | None) -> RunInfo:
    seed = info.seed
    heartbeat = Heartbeat(store, info.run_id, wiring.heartbeat_s).start()
    progress = progress or RunProgress()
    progress.run_started(info, tasks)
    writer = AttemptWriter(store)
    fidelity = RunFidelity(wiring.fault_profile)
    skip = done | outside
    collector = _Collector(store, info, writer, progress, fidelity, tasks, done, skip)
    health = HarnessHealth().start()  # the loop's own stalls: machine load is not the agent's time
    earlier = (info.config.live_checks, info.config.health)
    workers: list[dict[str, Any]] = []  # the health of the workers' own loops, as they closed the run
    status = "failed"
    try:
        if wiring.executor is not None:
            # Workers build their own setup from the suite spec and adapter name; this process only
            # collects their results and writes them.
            await wiring.executor.run(info, _pending(tasks, info.attempts, skip), collector.add)
            workers = _worker_health(wiring.executor)
        else:
            lifespan = suite_lifespan(suite)
            async with lifespan if lifespan is not None else contextlib.nullcontext({}) as resources:
                setup = build_attempt_setup(suite, adapter, prices, spec, wiring, run_id=info.run_id, seed=seed,
                                            work_root=work_root, resources=dict(resources or {}), sinks=sinks)
                setup.health = health
                await _run_local(setup, _pending(tasks, info.attempts, skip), spec.concurrency, collector)
        await health.stop()
        with contextlib.suppress(Exception):  # a summary is never worth losing the run over
            _store_checks(info, fidelity, health, earlier, workers)
            _learned(adapter, info)
            store.update_run(info.run_id, config=info.config)
        # Flush off the loop: the suite's resources are closed, but a caller's loop may not be idle.
        await asyncio.to_thread(writer.close)
        status = "finished"
    except (asyncio.CancelledError, KeyboardInterrupt):
        status = "interrupted"
        raise
    except StoreWriteError as exc:
        writer.close(raise_errors=False)
        stored = len(done) + writer.written
        planned = len(tasks) * info.attempts - len(outside)
        raise StoreWriteError(
            f"{exc}\nrun {info.run_id} stopped with {stored} of {planned} attempts "
            f"stored; once the store takes writes again, finish it with `aeh run --resume {info.run_id}`"
        ) from exc
    finally:
        health.cancel()
        # Interrupted or failed: still store every attempt that finished (nothing lost on Ctrl-C).
        writer.close(raise_errors=False)
        heartbeat.stop()
        info.status = status  # type: ignore[assignment]
        info.finished_at = _now()
        unfinished: dict[str, Any] = {}
        if status != "finished":  # what the finished part spent and suffered, for the resumed run to add to
            with contextlib.suppress(Exception):
                _store_checks(info, fidelity, health, earlier, workers)
                _learned(adapter, info)
                unfinished = {"config": info.config}
        try:
            store.update_run(info.run_id, status=status, finished_at=info.finished_at, **unfinished)
        except StoreError:
            if status == "finished":
                raise
            # Already failing: the run reads back as stale (its owner is gone) and stays resumable.
        for owner in (adapter, wiring.judge):  # their HTTP clients pool loopback connections
            aclose = getattr(owner, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()
        release_work_root(work_root, keep=spec.keeps_workspaces)
        if spec.keeps_workspaces and spec.workspace_retention is not None:
            prune_workspaces(work_root.parent, spec.workspace_retention)
    progress.run_finished(info)
    return info


def _store_checks(info: RunInfo, fidelity: RunFidelity, health: HarnessHealth,
                  earlier: tuple[LiveChecks | None, StoredHealth | None],
                  workers: list[dict[str, Any]] | None = None) -> None:
    """Put the run's live checks and harness health into its config; a resumed run adds its
    evaluation spend, never-answered attempts and stalls to `earlier` (the stored part's checks
    and health, as they were when this part started). `workers`: the health of each worker's
    loop (`--workers`, Ray), added to this process's own."""
    before, before_health = earlier
    checks = fidelity.summary()
    if before is not None:
        checks["evaluation_spend"] = merged_spend(before.evaluation_spend or None, checks["evaluation_spend"])
        checks["first_reply_exhausted"] += before.first_reply_exhausted
    info.config.live_checks = LiveChecks.model_validate(checks)
    now = _with_workers(health.summary(), workers or [])
    merged = _merged_health(before_health.model_dump() if before_health is not None else None, now)
    info.config.health = StoredHealth.model_validate(merged)


def _merged_health(before: dict[str, Any] | None, now: dict[str, Any]) -> dict[str, Any]:
    """A resumed run keeps the stalls of its earlier part: counts add up, maxima stay maxima."""
    if not before:
        return now
    out = dict(now)
    for key in ("stall_s", "stalls", "extended_tool_timeouts", "stall_tool_timeouts", "worker_loops"):
        out[key] = round((before.get(key) or 0) + (now.get(key) or 0), 3)
    for key in ("max_loop_lag_s", "worker_queue_max_s", "load_average_max"):
        values = [v for v in (before.get(key), now.get(key)) if v is not None]
        out[key] = max(values) if values else None
    out["stalled"] = bool(before.get("stalled") or now.get("stalled"))
    return out


def _with_workers(own: dict[str, Any], workers: list[dict[str, Any]]) -> dict[str, Any]:
    """This process's loop health with its workers' loops added: stalls, their seconds and the
    tool timeouts they extended or failed add up, maxima (the longest lag, the slowest worker
    thread start, the load) stay maxima, and the run stalled if any loop did. The run's time,
    the stall threshold and the load at its start stay this process's; `worker_loops` counts
    the loops added."""
    out = dict(own)
    for worker in workers:
        out = _merged_health(worker, out)
    out["worker_loops"] = (own.get("worker_loops") or 0) + len(workers)
    return out


def _worker_health(executor: RunExecutor) -> list[dict[str, Any]]:
    """The health of the executor's worker loops in the run it just ran (none without workers)."""
    report = getattr(executor, "worker_health", None)
    if not callable(report):
        return []
    return [dict(h) for h in report() or () if h]


def build_attempt_setup(suite: EvalSuite, adapter: Adapter, prices: PriceTable, spec: RunSpec, wiring: RunWiring,
                        *, run_id: str, seed: int, work_root: Path, resources: dict[str, Any],
                        sinks: list[SpanSink] | None = None) -> AttemptSetup:
    """What every attempt of a run shares, built the same way in this process and on a Ray worker.

    `resources` are those the suite's lifespan yielded; the run's own (`run_resources`) come first.
    """
    connections = ConnectionLimits(spec.max_connections)
    _attach_judge_limits(wiring.judge, adapter, connections, spec.judge_max_connections)
    return AttemptSetup(
        run_id=run_id, run_seed=seed, adapter=adapter,
        registry=suite.tool_registry(), invariants=suite.invariants(),
        goldens=suite.golden_traces(), prices=prices, work_root=work_root,
        suite_root=suite_root(suite), resources={**run_resources(spec), **resources},
        secrets=list(getattr(suite, "secrets", lambda: [])()), sinks=list(sinks or []),
        fault_factory=wiring.fault_factory, judge=wiring.judge, connections=connections,
        after_failure=list(wiring.after_failure),
        after_grading=list(wiring.after_grading),
        prepare=getattr(suite, "prepare_workspace", None),
        eager_workspaces=spec.keeps_workspaces,
    )


def _learned(adapter: Adapter, info: RunInfo) -> None:
    """Record what the adapter learned while the run went (the command adapter: the currency its
    solver's usage files report), so a resumed run continues with it."""
    final = getattr(adapter, "final_config", None)
    if callable(final):
        info.config.add(final())


def run_resources(spec: RunSpec) -> dict[str, Any]:
    """Run-level values graders and adapters see in `resources`: graded code runs with the
    network denied and jailed unless turned off (recorded on the run either way; a run where no
    jail works refuses to start)."""
    return {"grading_sandbox": spec.grading_sandbox, "grading_confinement": spec.grading_confinement}


def run_config(spec: RunSpec, wiring: RunWiring) -> RunConfig:
    """What a new run records of its options and wiring (before the suite's and adapter's facts):
    the caller's `config` facts, then the typed parts."""
    config = RunConfig(spec=spec.stored())
    config.add(dict(spec.config or {}))
    if spec.shard is not None:
        config.provenance.shard = "{}/{}".format(*parse_shard(spec.shard))
    config.judge_all = bool(spec.judge_all and wiring.judge is not None)
    config.add(wiring.facts)
    return config


def _new_run_info(suite: EvalSuite, adapter: Adapter, prices: PriceTable, spec: RunSpec, wiring: RunWiring,
                  tasks: list[Task], seed: int) -> RunInfo:
    suite_run_config = getattr(suite, "run_config", None)  # suite facts a run records (coding: sandbox, hashes)
    suite_config = suite_run_config(run_resources(spec)) if callable(suite_run_config) else {}
    adapter_config = getattr(adapter, "run_config", None)  # e.g. the command adapter's solver label
    suite_config.update(adapter_config() if callable(adapter_config) else {})
    weights = {t.id: t.weight for t in tasks if t.weight is not None}
    if weights:  # the weighted overall trajectory score reads them from the run
        suite_config["task_weights"] = weights
    return RunInfo(
        run_id=spec.run_id or _shard_run_id(suite, adapter, spec, tasks, seed), created_at=_now(),
        aeh_version=__version__,
        suite=suite.name, suite_hash=suite_hash(suite), adapter=adapter.name, model=adapter.model,
        seed=seed, attempts=spec.attempts, concurrency=spec.concurrency,
        price_table_version=prices.version, price_table_date=prices.date,
        judge_model=spec.judge_model if wiring.judge is not None else None,
        tier2_prompt_version=wiring.tier2_prompt_version,
        fault_profile=wiring.fault_profile, parent_run_id=spec.parent_run_id,
        config=_with_suite(run_config(spec, wiring), suite_config, suite, tasks),
    )


def _with_suite(config: RunConfig, suite_config: dict[str, Any], suite: EvalSuite, tasks: list[Task]) -> RunConfig:
    """The run's config with the suite's and adapter's facts, its plan and the suite's hash."""
    config.add(suite_config)
    config.tasks = [t.id for t in tasks]
    config.suite = config.suite.model_copy(update={"hash": suite_hash(suite)})
    return config


def _shard_run_id(suite: EvalSuite, adapter: Adapter, spec: RunSpec, tasks: list[Task], seed: int) -> str:
    """A fresh id, or for a shard the id every shard of the same plan derives (so they merge)."""
    if not spec.shard:
        return new_run_id()
    return plan_run_id(suite.name, suite_hash(suite), seed, spec.attempts, [t.id for t in tasks],
                       adapter.name, adapter.model)


def _resumed(stored: RunInfo, tasks: list[Task], store: RunStore) -> tuple[RunInfo, list[Task], set[tuple[str, int]]]:
    """The stored run to continue, its tasks, and the (task, attempt) pairs already stored."""
    wanted = stored.config.tasks
    if wanted is not None:
        tasks = [t for t in tasks if t.id in set(wanted)]
    frame = store.attempts_frame(stored.run_id, columns=["task_id", "attempt"])
    done = set(zip(frame["task_id"].to_list(), frame["attempt"].to_list(), strict=True))
    info = stored.model_copy(update={"status": "running", "finished_at": None}, deep=True)
    return info, tasks, done


def _attach_judge_limits(judge: Judge | None, adapter: Adapter, connections: ConnectionLimits,
                         judge_limit: int | None) -> None:
    """Give the judge its own request slots: the agent's when both use one endpoint (so judge
    traffic waits client-side, measured, instead of queueing the agent at the server)."""
    if not isinstance(judge, PooledJudge):
        return
    judge_endpoint = judge.endpoint()
    agent_client = getattr(adapter, "_client", None)
    agent_endpoint = endpoint_of(agent_client) if agent_client is not None else None
    if agent_endpoint is None:
        endpoint_fn = getattr(adapter, "endpoint", None)
        agent_endpoint = endpoint_fn() if callable(endpoint_fn) else None
    shared = judge_endpoint is not None and judge_endpoint == agent_endpoint
    judge.limiter = connections.for_endpoint(
        judge_endpoint, None if shared else judge_limit)


def _pending(tasks: list[Task], attempts: int, skip: set[tuple[str, int]]) -> list[tuple[Task, int]]:
    """The pairs still to run. Tasks interleave so early progress lines cover many tasks."""
    return [(task, i) for i in range(attempts) for task in tasks if (task.id, i) not in skip]


class _Collector:
    """Takes each finished attempt, wherever it ran: to the store writer, live checks and progress."""

    def __init__(self, store: RunStore, info: RunInfo, writer: AttemptWriter, progress: RunProgress,
                 fidelity: RunFidelity, tasks: list[Task], done: set[tuple[str, int]],
                 skip: set[tuple[str, int]]) -> None:
        self.store, self.info, self.writer, self.progress, self.fidelity = store, info, writer, progress, fidelity
        self.done = done
        self.finished: dict[str, list[tuple[Any, ...]]] = {t.id: [] for t in tasks}
        self.earlier = Counter(task_id for task_id, _ in done)
        # How many attempts make a task complete here: a shard owns only some of each task's.
        outside = skip - done
        self.expected = {t.id: sum((t.id, i) not in outside for i in range(info.attempts)) for t in tasks}

    def add(self, record: Attempt, spans: list[Span]) -> None:
        """Write one attempt (through the writer thread) and report it."""
        self.fidelity.add(record, spans)
        self.writer.submit(record, spans)
        self.progress.attempt_finished(record)
        task_id = record.task_id
        self.finished[task_id].append(_summary(record))
        if len(self.finished[task_id]) + self.earlier[task_id] == self.expected[task_id]:
            before = [self.store.attempt_record(self.info.run_id, task_id, i)
                      for t, i in sorted(self.done) if t == task_id]
            now = [_from_summary(summary) for summary in self.finished[task_id]]
            self.finished[task_id] = []
            self.progress.task_finished(task_id, sorted(before + now, key=lambda a: a.attempt))


_SUMMARY_FIELDS = ("run_id", "task_id", "attempt", "seed", "success", "status", "failure_bucket", "tokens_in",
                   "tokens_out", "cost_usd", "latency_s", "agent_s", "queue_s", "grading_s", "steps",
                   "needs_human_review", "root_span_id")


def _summary(record: Attempt) -> tuple[Any, ...]:
    """What a finished attempt is kept as until its task completes: a long run keeps every task
    open until its last round, so full records (tool calls, evidence, outputs) would pile up."""
    return tuple(getattr(record, f) for f in _SUMMARY_FIELDS)


def _from_summary(summary: tuple[Any, ...]) -> Attempt:
    # Validated, not model_construct: pydantic's construct inspects each default factory's
    # signature on every call (~0.5 ms), where validating these fields takes ~4 µs.
    return Attempt(**dict(zip(_SUMMARY_FIELDS, summary, strict=True)))


async def _run_local(setup: AttemptSetup, pending: list[tuple[Task, int]], concurrency: int,
                     collector: _Collector) -> None:
    queue = iter(pending)

    async def worker() -> None:
        # `concurrency` workers taking pairs in order (as a semaphore would admit them), rather than
        # one waiting task per pair: 100,000 parked coroutines cost hundreds of MB.
        for task, index in queue:
            collector.writer.raise_error()  # the store stopped taking writes: start nothing more
            record, spans = await run_attempt(setup, task, index)
            collector.add(record, spans)
            del record, spans
            if collector.writer.backlog >= MAX_BACKLOG:  # a loop that never waits starves the writer
                await collector.writer.catch_up()

    jobs = [asyncio.ensure_future(worker()) for _ in range(min(max(1, concurrency), len(pending)))]
    try:
        await asyncio.gather(*jobs)
    except BaseException:
        # One attempt's failure (the store went away) stops the rest instead of leaving them running.
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        raise
