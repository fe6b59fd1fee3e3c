"""Play recorded trajectories (`aeh.trajectory.Trajectory`) through the engine, to grade them.

For each (task, attempt) the adapter re-records the trajectory's steps as the attempt's spans:
model steps as `model` spans (their tokens priced as in a live run), other steps as `scheduler`
spans with their children nested, tool steps as `tools` spans and `ToolCall`s. The suite's
graders, invariants and failure classification then run as for any attempt.

`tools="recorded"` (default) keeps each tool call's recorded result: nothing is executed, so
graders that inspect the workspace see only the task's fixtures. `tools="rerun"` re-executes
each recorded call through the suite's tools (`ctx.call_tool`), rebuilding the workspace — for
agents that ran against the suite's own tools.

The recording's facts are kept: its clock (`recorded_latency`) is the attempt's latency and the
measure of the wall-clock budget, spans keep their recorded start and end times, a model step's
recorded `cost_usd` is kept as recorded (its tokens are priced only where no cost was recorded),
and the task's budget never cuts a recording short. A recording that exceeded a limit is kept
whole and ends `budget_exhausted`, with the limits it ran over (from the recorded numbers) on
a `budget:exceeded` span as `aeh.budget.exceeded`; success still follows the graders, as for the
Terminal-Bench import's recorded timeouts.

An attempt with no recorded trajectory is a harness error (it leaves the rate's n).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

from aeh.engine import recorded_latency, recorded_overruns
from aeh.engine.context import AttemptContext
from aeh.models import AgentOutcome, InjectedFault, Span, Task, ToolCall, ToolErrorKind
from aeh.trace import SpanHandle
from aeh.trajectory import Step, Trajectory

__all__ = ["TrajectoryAdapter", "number_attempts"]

_ERROR_KINDS = set(get_args(ToolErrorKind))
_FAULTS = set(get_args(InjectedFault))


def number_attempts(trajectories: Sequence[Trajectory]) -> dict[tuple[str, int], Trajectory]:
    """(task_id, attempt) → trajectory; unnumbered ones take the next free number of their task."""
    out: dict[tuple[str, int], Trajectory] = {}
    for t in trajectories:
        if t.attempt is not None:
            out[(t.task_id, t.attempt)] = t
    for t in trajectories:
        if t.attempt is None:
            n = 0
            while (t.task_id, n) in out:
                n += 1
            out[(t.task_id, n)] = t
    return out


class TrajectoryAdapter:
    """Replays `trajectories` as the agent's attempts; see the module docstring."""

    def __init__(self, trajectories: Sequence[Trajectory], *, name: str = "recorded",
                 model: str | None = None, tools: Literal["recorded", "rerun"] = "recorded",
                 model_free: bool = False) -> None:
        self.by_attempt = number_attempts(trajectories)
        self.name = name
        self.model = model or next((t.model for t in trajectories if t.model), None)
        self.tools = tools
        self.model_free = model_free

    # -- as a span sink (`execute_run(..., sinks=[adapter])`) -----------------------------------
    def span_started(self, span: Span, depth: int) -> None:
        pass

    def span_ended(self, span: Span, depth: int) -> None:
        """The attempt's `agent` span takes the recording's own start and end, as its steps do."""
        if span.name != "agent" or span.category != "scheduler":
            return
        trajectory = self.by_attempt.get((span.task_id, span.attempt))
        if trajectory is not None and trajectory.start_ts is not None and trajectory.end_ts is not None:
            span.start_ts, span.end_ts = trajectory.start_ts, trajectory.end_ts

    async def run(self, task: Task, ctx: AttemptContext) -> AgentOutcome:
        trajectory = self.by_attempt.get((task.id, ctx.attempt))
        if trajectory is None:
            return AgentOutcome(status="harness_error",
                                error=f"no recorded trajectory for task {task.id!r} attempt {ctx.attempt}")
        if not self.model_free and not any(s.kind == "model" for s in trajectory.walk()):
            ctx.budget.usage_not_reported()  # no model step recorded: the cost is unknown, not $0
        ctx.budget.enforced = False  # the recording is played whole; its overruns are reported below
        ctx.budget.recorded_s = recorded_latency(trajectory)
        for step in trajectory.steps:
            await self._play(step, ctx)
        over = recorded_overruns(trajectory, task.budget, ctx.prices)
        if over:
            ctx.recorder.event("budget:exceeded", "scheduler", status="error", **{
                "aeh.budget.exceeded": over, "aeh.recorded_status": trajectory.status})
        if trajectory.status == "budget_exhausted":
            # Returned, not raised: what the agent answered before its budget ran out is graded as recorded.
            reason = trajectory.error if (trajectory.error or "").startswith("recorded") else (
                f"recorded: {trajectory.error or 'budget exhausted'}")
        elif over:
            reason = "recorded trajectory exceeded " + "; ".join(over)
        else:
            return AgentOutcome(final_output=trajectory.final_output, status=trajectory.status,
                                error=trajectory.error)
        ctx.budget.exhausted = reason
        return AgentOutcome(final_output=trajectory.final_output, status="budget_exhausted", error=reason)

    async def _play(self, step: Step, ctx: AttemptContext) -> None:
        recorded = {k: v for k, v in {"recorded_start_ts": step.start_ts, "recorded_end_ts": step.end_ts}.items()
                    if v is not None}
        if step.kind == "tool":
            await self._tool(step, ctx, recorded)
        elif step.kind == "model":
            attrs = dict(step.attributes)
            messages, tools = attrs.pop("gen_ai.input.messages", None), attrs.pop("gen_ai.tool.definitions", None)
            with ctx.model_call(step.model or self.model, messages=messages, tools=tools,
                                **{"aeh.step": step.name, **recorded, **attrs}) as span:
                if step.tokens_in is not None or step.tokens_out is not None or step.cost_usd is not None:
                    ctx.record_usage(span, step.model or self.model, step.tokens_in or 0, step.tokens_out or 0,
                                     recorded_cost_usd=step.cost_usd)
                elif not self.model_free:
                    ctx.budget.usage_not_reported()
                if step.error:
                    span.fail(step.error)
                for child in step.steps:
                    await self._play(child, ctx)
            _keep_recorded_times(span.span, step)
        else:
            with ctx.recorder.span(f"step:{step.name}", "scheduler", **{"aeh.step": step.name}, **recorded,
                                   **step.attributes) as span:
                if step.error:
                    span.fail(step.error)
                for child in step.steps:
                    await self._play(child, ctx)
            _keep_recorded_times(span.span, step)

    async def _tool(self, step: Step, ctx: AttemptContext, recorded: dict[str, Any]) -> None:
        args = step.args if step.args is not None else {}
        if self.tools == "rerun":
            await ctx.call_tool(step.name, args)
            return
        ctx.budget.check_time()
        ctx.budget.take_step()
        latency = (step.end_ts - step.start_ts) if step.start_ts is not None and step.end_ts is not None else 0.0
        allowed = step.name in ctx.task.tools
        error_kind: Any = None
        error = step.error
        injected: Any = None
        if error:
            kind = step.attributes.get("error_kind")
            error_kind = kind if kind in _ERROR_KINDS else "exception"
            fault = step.attributes.get("injected_fault")
            injected = fault if fault in _FAULTS else None
        elif not allowed:
            error_kind, error = "unknown_tool", f"tool {step.name!r} is not in the task's allowlist"
        if injected is not None:  # as a live run shows it: the fault event, then the failed call
            event = ctx.recorder.event(f"fault:{injected}", "faults", status="error", tool=step.name,
                                       error_kind=injected)
            if step.start_ts is not None:
                event.start_ts = event.end_ts = step.start_ts
        span: SpanHandle
        with ctx.recorder.span(f"tool:{step.name}", "tools", **{"gen_ai.tool.name": step.name}) as span:
            call = ToolCall(name=step.name, args=args, result=step.result, error=error, error_kind=error_kind,
                            injected_fault=injected, span_id=span.span_id, latency_s=max(latency, 0.0))
            span.set(args=args, result=step.result, latency_s=call.latency_s, **recorded,
                     **{k: v for k, v in step.attributes.items() if k not in ("error_kind", "injected_fault")})
            if error_kind:
                span.fail(error or error_kind, error_kind=error_kind, injected_fault=injected)
            for child in step.steps:
                await self._play(child, ctx)
        _keep_recorded_times(span.span, step)
        ctx.tool_calls.append(call)


def _keep_recorded_times(span: Span, step: Step) -> None:
    """The span of a replayed step keeps the times the source recorded, not the replay's."""
    if step.start_ts is not None:
        span.start_ts = step.start_ts
    if step.end_ts is not None:
        span.end_ts = step.end_ts
