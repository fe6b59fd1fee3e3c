"""One attempt of one task: prepare an isolated workspace, run the adapter, grade, classify."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import shutil
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from aeh.engine._agent_view import (
    AnswerKey,
    agent_resources,
    agent_task,
    private_paths,
    routed,
    uses_answer_key,
)
from aeh.engine._health import HarnessHealth
from aeh.engine.adapter import Adapter
from aeh.engine.budget import BudgetExceeded, BudgetTracker
from aeh.engine.connections import ConnectionLimits
from aeh.engine.context import AttemptContext, FaultSource
from aeh.grading import GradeContext
from aeh.grading.classify import classify_failure
from aeh.grading.judge import Judge
from aeh.grading.pipeline import FailureHook, grade_attempt
from aeh.grading.scorers import ScoreInput, score_attempt
from aeh.models import AgentOutcome, Attempt, GoldenTrace, Span, Task, TraceView
from aeh.pricing import PriceTable
from aeh.tools import ToolRegistry
from aeh.tools.workspace import LazyWorkspace
from aeh.trace import SpanRecorder, SpanSink

__all__ = ["AttemptSetup", "attempt_seed", "run_attempt"]

T = TypeVar("T")


def attempt_seed(run_seed: int, task_id: str, attempt: int, stream: str = "agent") -> int:
    """A stable seed per (run seed, task, attempt, stream), independent of scheduling order."""
    digest = hashlib.sha256(f"{run_seed}:{task_id}:{attempt}:{stream}".encode()).hexdigest()
    return int(digest[:15], 16)


@dataclass
class AttemptSetup:
    """What is shared by every attempt of a run."""

    run_id: str
    run_seed: int
    adapter: Adapter
    registry: ToolRegistry
    invariants: dict[str, Any]
    goldens: dict[str, GoldenTrace]
    prices: PriceTable
    work_root: Path
    suite_root: Path | None = None
    resources: dict[str, Any] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    sinks: list[SpanSink] = field(default_factory=list)
    fault_factory: Callable[[Task, int], FaultSource | None] | None = None
    """Callable (task, attempt_seed) -> FaultSource | None, when faults are injected."""
    judge: Judge | None = None
    connections: ConnectionLimits | None = None
    """The run's `ConnectionLimits` (per-endpoint model-request slots), or None."""
    after_failure: list[FailureHook] = field(default_factory=list)
    after_grading: list[FailureHook] = field(default_factory=list)
    prepare: Callable[[Task, Path], object] | None = None
    """Callable (task, workspace) the suite uses to lay out a workspace (coding fixtures)."""
    eager_workspaces: bool = False
    """Make every attempt's workspace up front (kept workspaces: one directory per attempt to look at)."""
    health: HarnessHealth | None = None
    """The run's `HarnessHealth` (event-loop stalls), or None when nothing watches the loop."""


def _prepare_workspace(setup: AttemptSetup, task: Task, attempt: int) -> LazyWorkspace:
    """The attempt's workspace: laid out now when the task has fixtures or a prepare hook,
    otherwise made on first use (many attempts never touch a file)."""
    workspace = LazyWorkspace(setup.work_root / task.id / str(attempt))
    if not task.fixtures and setup.prepare is None and not setup.eager_workspaces:
        return workspace
    root = workspace.get()
    for fixture in task.fixtures:
        source = (setup.suite_root or Path(".")) / fixture
        target = root / Path(fixture).name
        # A fresh copy per attempt: nothing one attempt writes can leak into another.
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
    if setup.prepare is not None:
        setup.prepare(task, root)
    return workspace


def _agent_context(setup: AttemptSetup, task: Task, attempt: int, seed: int, workspace: LazyWorkspace,
                   recorder: SpanRecorder, budget: BudgetTracker, faults: FaultSource | None) -> AttemptContext:
    """The adapter's context: its task without grading material, unless it plays answers back."""
    key = None
    if uses_answer_key(setup.adapter):
        key = AnswerKey(task=task, golden=setup.goldens.get(task.golden) if task.golden else None,
                        suite_root=setup.suite_root, resources=dict(setup.resources))
    return AttemptContext(
        task=task if key is not None else agent_task(task), attempt=attempt, seed=seed, workspace=workspace,
        registry=setup.registry, recorder=recorder, budget=budget, prices=setup.prices,
        resources=agent_resources(setup.resources), faults=faults, connections=setup.connections,
        answer_key=key, private_paths=functools.partial(private_paths, setup.suite_root, setup.work_root),
        health=setup.health,
    )


async def run_attempt(setup: AttemptSetup, task: Task, attempt: int) -> tuple[Attempt, list[Span]]:
    """Run, grade and classify one attempt. Never raises for agent or adapter trouble."""
    with routed(setup.sinks) as sinks:
        return await _run_attempt(setup, task, attempt, sinks)


async def _run_attempt(setup: AttemptSetup, task: Task, attempt: int,
                       sinks: list[SpanSink]) -> tuple[Attempt, list[Span]]:
    seed = attempt_seed(setup.run_seed, task.id, attempt)
    recorder = SpanRecorder(setup.run_id, task.id, attempt, sinks)
    budget = BudgetTracker(task.budget)
    budget.health = setup.health  # the loop's stalls are not the agent's time
    started = time.monotonic()
    outcome = AgentOutcome(status="harness_error", error="attempt did not start")
    faults: FaultSource | None = None
    with recorder.span("attempt", "scheduler", task_id=task.id, attempt=attempt, seed=seed) as root:
        try:
            workspace = _prepare_workspace(setup, task, attempt)
            if setup.fault_factory is not None:
                faults = setup.fault_factory(task, attempt_seed(setup.run_seed, task.id, attempt, "faults"))
            ctx = _agent_context(setup, task, attempt, seed, workspace, recorder, budget, faults)
            outcome = await _run_agent(setup.adapter, ctx.task, ctx, recorder)
        except Exception as exc:  # workspace or fixture trouble is the harness's, not the agent's
            outcome = AgentOutcome(status="harness_error", error=_describe(exc))
            workspace = LazyWorkspace(setup.work_root / task.id / str(attempt))
            ctx = None
        tool_calls = ctx.tool_calls if ctx is not None else []
        trace = TraceView(
            task_id=task.id, final_output=outcome.final_output, status=outcome.status,
            tool_calls=tool_calls, spans=list(recorder.spans), allowed_tools=list(task.tools),
            secrets=list(setup.secrets),
        )
        agent_s, queue_s = budget.agent_s, budget.queue_s  # before grading: not the agent's time
        stall_s = budget.harness_s()
        grading_started = time.monotonic()
        grade_ctx = GradeContext(task=task, trace=trace, workspace=workspace.path,
                                 resources=setup.resources, suite_root=setup.suite_root,
                                 judge=setup.judge, recorder=recorder,
                                 golden=setup.goldens.get(task.golden) if task.golden else None)
        graded = await grade_attempt(grade_ctx, setup.invariants, recorder,
                                     after_failure=setup.after_failure,
                                     after_grading=setup.after_grading)
        grading_s = time.monotonic() - grading_started
        status, error = outcome.status, outcome.error
        if graded.grader_crash and status != "harness_error":
            status, error = "harness_error", graded.grader_crash
        success = graded.success and status != "harness_error"
        if not success and status != "harness_error" and (stalled := _stalled_tool_call(tool_calls)):
            status, error = "harness_error", stalled  # the harness's stall, not the agent's failure
        bucket = classify_failure(success=success, status=status, tool_calls=tool_calls,
                                  final_output=outcome.final_output, judge_unparseable=graded.judge_unparseable)
        original = _stored_verdict(setup.adapter, task.id, attempt) if status != "harness_error" else None
        if original is not None:
            success, bucket = original.success, original.failure_bucket
            graded.grader_results = ([g for g in original.grader_results if g.tier == 0]
                                     + [g for g in graded.grader_results if g.tier != 0])
            recorder.event("stored_verdict", "grading", success=success,
                           reason="the recorded answer was redacted on write; the original verdict stands")
        recorder.event("cost", "cost", tokens_in=budget.tokens_in, tokens_out=budget.tokens_out,
                       cost_usd=budget.cost_usd, unpriced_models=sorted(budget.unpriced_models))
        root.set(success=success, status=status, failure_bucket=bucket.value if bucket else None,
                 **{"aeh.time.agent_s": round(agent_s, 6), "aeh.time.queue_s": round(queue_s, 6),
                    "aeh.time.grading_s": round(grading_s, 6),
                    "aeh.time.stall_s": round(stall_s, 6),
                    "aeh.time.wall_s": round(time.monotonic() - started, 6)})
        if not success:
            root.fail(error or (bucket.value if bucket else "failed"))
    record = Attempt(
        run_id=setup.run_id, task_id=task.id, attempt=attempt, seed=seed, success=success,
        status=status, failure_bucket=bucket, final_output=outcome.final_output, error=error,
        tokens_in=budget.tokens_in, tokens_out=budget.tokens_out, cost_usd=budget.cost_usd,
        latency_s=agent_s, agent_s=agent_s, queue_s=queue_s, grading_s=grading_s, steps=budget.steps,
        tool_calls=tool_calls,
        grader_results=graded.grader_results, invariant_results=graded.invariant_results,
        needs_human_review=graded.needs_human_review, root_span_id=root.span_id,
    )
    if status != "harness_error":  # a broken harness says nothing about the trajectory
        record.dimension_scores = _score(record, task, setup, recorder)
    return record, list(recorder.spans)


def _stalled_tool_call(tool_calls: list[Any]) -> str | None:
    """The cause of a failed attempt when one of its tool calls timed out during a harness stall."""
    for call in tool_calls:
        if call.error_kind == "harness_stall":
            return f"tool {call.name}: {call.error}"
    return None


def _score(record: Attempt, task: Task, setup: AttemptSetup, recorder: SpanRecorder) -> list[dict[str, Any]]:
    """The trajectory dimensions of the finished attempt, scored now so they are stored with it."""
    inp = ScoreInput.of_attempt(record, task, setup.goldens.get(task.golden) if task.golden else None)

    def lost(name: str, exc: Exception) -> None:
        recorder.event(f"score:{name}", "grading", status="error", error=f"{type(exc).__name__}: {exc}")

    return [{"dimension": s.dimension, "score": s.score, "evidence": s.evidence.model_dump()}
            for s in score_attempt(inp, on_error=lost)]


def _stored_verdict(adapter: Adapter, task_id: str, attempt: int) -> Attempt | None:
    """A replayed attempt whose recorded answer was redacted: graders would compare against a
    `[REDACTED:…]` marker, not what the agent wrote, so the original verdict is kept."""
    stored = getattr(adapter, "stored_verdict", None)
    return stored(task_id, attempt) if callable(stored) else None


async def _run_agent(adapter: Adapter, task: Task, ctx: AttemptContext, recorder: SpanRecorder) -> AgentOutcome:
    with recorder.span("agent", "scheduler", adapter=adapter.name, model=adapter.model) as span:
        ctx.budget.restart_clock()
        try:
            outcome = await run_on_agent_clock(adapter.run(task, ctx), ctx.budget, task.budget.timeout_s)
        except BudgetExceeded as exc:
            outcome = AgentOutcome(status="budget_exhausted", error=_exhausted(exc.reason, ctx.budget))
        except TimeoutError:
            if ctx.budget.provider_failing is not None:  # the time went on retrying a failing provider
                failing = f"{PROVIDER_FAILING}: {ctx.budget.provider_failing}"
                outcome = AgentOutcome(status="harness_error", error=failing)
            else:
                ctx.budget.exhausted = f"timeout_s={task.budget.timeout_s} exceeded"
                outcome = AgentOutcome(status="budget_exhausted",
                                       error=_exhausted(ctx.budget.exhausted, ctx.budget))
        except Exception as exc:  # an adapter crash must not kill the run
            outcome = AgentOutcome(status="harness_error", error=_describe(exc))
        span.set(status=outcome.status, final_output=outcome.final_output)
        if outcome.status == "budget_exhausted" and ctx.budget.before_first_reply:
            span.set(**{"aeh.budget.before_first_reply": True})
        if outcome.status in ("budget_exhausted", "harness_error"):
            span.fail(outcome.error or outcome.status)
    return outcome


#: How the stored error of an attempt whose time ran out while a failing provider was retried begins.
PROVIDER_FAILING = "model provider failing when the attempt's time ran out (retrying it)"


#: How the stored error of an attempt cut off before the model server ever answered it ends.
BEFORE_FIRST_REPLY = "waiting for the model server's first reply (it never answered this attempt)"


def _exhausted(reason: str, budget: BudgetTracker) -> str:
    """The budget reason, naming a server that never answered (not the agent's slowness)."""
    return f"{reason} {BEFORE_FIRST_REPLY}" if budget.before_first_reply else reason


async def run_on_agent_clock(coro: Awaitable[T], budget: BudgetTracker, timeout_s: float) -> T:
    """Await `coro` until the agent's clock (`budget.elapsed_s`: wall time minus time queued for
    the model server) reaches `timeout_s`; then cancel it — which closes an in-flight HTTP
    request's connection — and raise TimeoutError.
    """
    task = asyncio.ensure_future(coro)
    try:
        while not task.done():
            remaining = timeout_s - budget.elapsed_s
            if remaining <= 0:
                break
            await asyncio.wait({task}, timeout=remaining + 0.005)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if task.done():
        return task.result()
    task.cancel()
    try:
        await task
    except (asyncio.CancelledError, Exception):
        pass
    raise TimeoutError(f"timeout_s={timeout_s} exceeded")


def _describe(exc: BaseException) -> str:
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-3)
    return f"{type(exc).__name__}: {exc}\n{''.join(tb)}"
