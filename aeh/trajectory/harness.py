"""The agent-eval-harness trajectory JSON, read as it is and turned into aeh trajectories.

That harness records one run as `{run_id, task_id, agent_version, model, started_at, ended_at,
steps: [{index, agent_name, step_type, tool_name, tool_input, tool_output, error, tokens,
latency_ms, timestamp}], final_output, terminal_state, total_tokens, total_cost,
wall_clock_seconds (or total_wall), metadata: {artifacts, metrics}}`. What becomes what:

- a `tool_call` step is a tool step (`tool_input` → args, `tool_output` → result, `error`); the
  `tool_result` step that follows it for the same tool fills in its result, error, tokens and
  latency, so one call is one tool span (a `tool_result` with no call before it is a call itself);
- `plan`, `llm_message`, `retry` and `escalation` steps are plain steps (spans) named after
  their type, not tool calls — that harness's step count is tool calls only, as aeh's is;
- each step's `index`, `agent_name`, `tokens` and `latency_ms` stay on its span as attributes;
  step times are its `timestamp` (else laid end to end from `started_at`) plus `latency_ms`;
- `total_tokens` and `total_cost` are one recorded model step (`recorded_totals`), so the
  attempt's tokens and cost are the recorded ones, not re-priced; `wall_clock_seconds` is the
  attempt's latency;
- `terminal_state` maps to aeh's status (completed → answered, escalated → declined, failed →
  gave_up, timeout and budget_exceeded → budget_exhausted) and is kept as recorded, with
  `metadata.artifacts` and `metadata.metrics`, on a last `terminal_state` step the
  `terminal_state`, `artifact_exists` and `metric_present` graders read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

__all__ = ["FORMAT_NAME", "TERMINAL_STATUS", "HarnessTrajectory", "is_harness_trajectory", "to_aeh_trajectory"]

FORMAT_NAME = "agent-eval-harness"

TerminalState = Literal["completed", "failed", "escalated", "timeout", "budget_exceeded"]

#: terminal_state → aeh AgentStatus
TERMINAL_STATUS: dict[str, str] = {
    "completed": "answered", "escalated": "declined", "failed": "gave_up",
    "timeout": "budget_exhausted", "budget_exceeded": "budget_exhausted",
}

# Spellings that harness's own importer accepts for its terminal states.
_TERMINAL_ALIASES = {
    "success": "completed", "ok": "completed", "done": "completed", "error": "failed", "failure": "failed",
    "human": "escalated", "awaiting_human": "escalated", "timed_out": "timeout", "over_budget": "budget_exceeded",
}

StepType = Literal["plan", "tool_call", "tool_result", "llm_message", "retry", "escalation"]


def _timestamp(value: Any) -> float | None:
    if value is None or isinstance(value, int | float):
        return None if value is None else float(value)
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


class HarnessStep(BaseModel):
    """One step as that harness records it; unknown keys are kept as span attributes."""

    model_config = ConfigDict(extra="allow")

    index: int | None = None
    agent_name: str = ""
    step_type: StepType
    tool_name: str | None = None
    tool_input: Any = None
    tool_output: Any = None
    error: str | None = None
    tokens: int = Field(0, ge=0)
    latency_ms: float = Field(0, ge=0, allow_inf_nan=False)
    timestamp: float | None = None

    @field_validator("timestamp", mode="before")
    @classmethod
    def _epoch(cls, value: Any) -> float | None:
        return _timestamp(value)


class HarnessTrajectory(BaseModel):
    """One run as that harness records it; unknown keys are kept in the trajectory's metadata."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    run_id: str = ""
    task_id: str = Field(min_length=1)
    agent_version: str = ""
    model: str = ""
    started_at: float | None = None
    ended_at: float | None = None
    steps: list[HarnessStep] = Field(default_factory=list)
    final_output: str | None = ""
    terminal_state: TerminalState = "failed"
    total_tokens: int = Field(0, ge=0)
    total_cost: float = Field(0.0, ge=0, allow_inf_nan=False)
    wall_clock_seconds: float = Field(0.0, ge=0, allow_inf_nan=False,
                                      validation_alias=AliasChoices("wall_clock_seconds", "total_wall"))
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("started_at", "ended_at", mode="before")
    @classmethod
    def _epoch(cls, value: Any) -> float | None:
        return _timestamp(value)

    @field_validator("terminal_state", mode="before")
    @classmethod
    def _alias(cls, value: Any) -> Any:
        return _TERMINAL_ALIASES.get(str(value).lower(), str(value).lower()) if isinstance(value, str) else value


def is_harness_trajectory(item: Any) -> bool:
    """True for a JSON object in that harness's trajectory shape."""
    if not isinstance(item, dict) or item.get("format") is not None or not isinstance(item.get("steps"), list):
        return False
    if "agent_version" in item or "terminal_state" in item or "total_cost" in item:
        return True
    return any(isinstance(s, dict) and "step_type" in s for s in item["steps"])


def _step_attributes(step: HarnessStep, position: int) -> dict[str, Any]:
    attrs: dict[str, Any] = {"index": step.index if step.index is not None else position,
                             "step_type": step.step_type, "tokens": step.tokens, "latency_ms": step.latency_ms}
    if step.agent_name:
        attrs["agent_name"] = step.agent_name
    return {**attrs, **(step.model_extra or {})}


def _args(tool_input: Any) -> dict[str, Any]:
    # that harness wraps a non-object input the same way
    if tool_input is None:
        return {}
    return tool_input if isinstance(tool_input, dict) else {"input": tool_input}


def _steps(source: HarnessTrajectory) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    # Without a timestamp a step starts where the one before it ended; with no clock at all
    # (no started_at, no timestamps) steps carry no times, their latency_ms stays an attribute.
    clock = source.started_at
    open_call: dict[str, Any] | None = None
    for position, step in enumerate(source.steps):
        start = step.timestamp if step.timestamp is not None else clock
        end = None if start is None else start + step.latency_ms / 1000.0
        clock = end if clock is None or (end is not None and end > clock) else clock
        attrs = _step_attributes(step, position)
        pairs = open_call is not None and step.tool_name in (None, open_call["name"])
        if step.step_type == "tool_result" and open_call is not None and pairs:
            open_call.update(result=step.tool_output, error=step.error or open_call["error"], end_ts=end)
            open_call["attributes"]["result_index"] = attrs["index"]
            open_call["attributes"]["tokens"] += step.tokens
            open_call["attributes"]["latency_ms"] += step.latency_ms
            open_call = None
            continue
        if step.step_type in ("tool_call", "tool_result") and step.tool_name:
            open_call = {"kind": "tool", "name": step.tool_name, "args": _args(step.tool_input),
                         "result": step.tool_output, "error": step.error, "start_ts": start, "end_ts": end,
                         "attributes": attrs}
            out.append(open_call)
            if step.step_type == "tool_result" or step.tool_output is not None or step.error:
                open_call = None  # the call carries its own result
            continue
        open_call = None
        if step.tool_name:
            attrs["tool_name"] = step.tool_name
        if step.tool_input is not None:
            attrs["tool_input"] = step.tool_input
        if step.tool_output is not None:
            attrs["tool_output"] = step.tool_output
        out.append({"kind": "step", "name": step.step_type, "error": step.error, "start_ts": start,
                    "end_ts": end, "attributes": attrs})
    return out


def to_aeh_trajectory(source: HarnessTrajectory) -> dict[str, Any]:
    """The aeh trajectory document (`aeh.trajectory.Trajectory` fields) of one harness run."""
    steps = _steps(source)
    times = [s["end_ts"] for s in steps if s["end_ts"] is not None]
    end = source.ended_at if source.ended_at is not None else (max(times) if times else source.started_at)
    tokens = source.total_tokens or sum(s.tokens for s in source.steps)
    steps.append({"kind": "model", "name": "recorded_totals", "model": source.model or None, "tokens_in": tokens,
                  "tokens_out": 0, "cost_usd": source.total_cost, "start_ts": end, "end_ts": end,
                  "attributes": {"total_tokens": tokens, "total_cost": source.total_cost}})
    artifacts, metrics = source.metadata.get("artifacts"), source.metadata.get("metrics")
    steps.append({"kind": "step", "name": "terminal_state", "start_ts": end, "end_ts": end,
                  "attributes": {"terminal_state": source.terminal_state,
                                 **({"artifacts": artifacts} if artifacts is not None else {}),
                                 **({"metrics": metrics} if metrics is not None else {})}})
    metadata = {"source_format": FORMAT_NAME, "run_id": source.run_id, "agent_version": source.agent_version,
                "terminal_state": source.terminal_state, **source.metadata, **(source.model_extra or {})}
    return {
        "task_id": source.task_id, "final_output": source.final_output,
        "status": TERMINAL_STATUS[source.terminal_state], "agent": source.agent_version or None,
        "model": source.model or None, "start_ts": source.started_at,
        "end_ts": end if source.started_at is not None else None, "latency_s": source.wall_clock_seconds or None,
        "steps": steps, "metadata": metadata,
    }
