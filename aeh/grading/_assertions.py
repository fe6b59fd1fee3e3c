"""Tier-0 graders for every assertion agent-eval-harness suites declare: `terminal_state`,
`artifact_exists`, `metric_present`, `output_contains`, `tool_called` and `tool_not_called`.

They read what a recording kept on the attempt's `terminal_state` span (the terminal state as
recorded, `artifacts`, `metrics`; see `aeh.trajectory.harness`). A live attempt has no such
span: its terminal state is read from aeh's status, and an artifact is a file in its workspace.
A tool counts as called, as that harness counts it, when a tool call or any recorded step names
it (a `retry` or `plan` step with a `tool_name`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from aeh.grading._registry import GradeContext, GraderConfig, result_name
from aeh.models import GraderResult, Span, TraceView

__all__ = ["STATUS_STATE", "ArtifactExistsConfig", "MetricPresentConfig", "OutputContainsConfig", "TerminalStateConfig",
           "ToolCalledConfig", "artifact_exists", "metric_present", "output_contains", "recorded_terminal_state",
           "terminal_state", "tool_called", "tool_not_called", "tools_named"]

TerminalState = Literal["completed", "failed", "escalated", "timeout", "budget_exceeded"]

#: aeh status → the terminal state it stands for, when no terminal state was recorded
STATUS_STATE: dict[str, str] = {"answered": "completed", "declined": "escalated", "gave_up": "failed",
                 "budget_exhausted": "budget_exceeded", "harness_error": "failed"}


def _recorded_in(spans: Sequence[Span]) -> dict[str, Any] | None:
    for span in reversed(spans):
        if span.name == "step:terminal_state" and "terminal_state" in span.attributes:
            return span.attributes
    return None


def _recorded(trace: TraceView) -> dict[str, Any] | None:
    """The attributes of the recording's `terminal_state` span, or None for a live attempt."""
    return _recorded_in(trace.spans)


def _result(kind: str, cfg: GraderConfig, passed: bool, **evidence: Any) -> GraderResult:
    return GraderResult(tier=0, kind=kind, name=result_name(kind, cfg), passed=passed, evidence=evidence)


def recorded_terminal_state(spans: Sequence[Span], status: str) -> tuple[str, str]:
    """(the attempt's terminal state in that harness's terms, "recorded" or "status"): as the
    recording kept it, else the state aeh's status stands for."""
    recorded = _recorded_in(spans)
    if recorded is not None:
        return str(recorded["terminal_state"]), "recorded"
    return STATUS_STATE.get(status, status), "status"


class TerminalStateConfig(GraderConfig):
    expected: TerminalState | list[TerminalState]
    """The terminal state the attempt must end in, or a list of states any of which will do."""


def terminal_state(cfg: TerminalStateConfig, ctx: GradeContext) -> GraderResult:
    """Passes when the attempt ended in `expected` (or one of them), as recorded, else from aeh's status."""
    state, source = recorded_terminal_state(ctx.trace.spans, ctx.trace.status)
    accepted = cfg.expected if isinstance(cfg.expected, list) else [cfg.expected]
    return _result("terminal_state", cfg, state in accepted, expected=cfg.expected, got=state, source=source)


class ArtifactExistsConfig(GraderConfig):
    path: str
    """A name the recorded artifacts must contain (as a substring), else a file in the workspace."""


def artifact_exists(cfg: ArtifactExistsConfig, ctx: GradeContext) -> GraderResult:
    """Passes when a recorded artifact names `path`, or (live) the workspace holds that file."""
    recorded = _recorded(ctx.trace)
    if recorded is not None:
        artifacts = [str(a) for a in recorded.get("artifacts") or []]
        return _result("artifact_exists", cfg, any(cfg.path in a for a in artifacts), path=cfg.path,
                       artifacts=artifacts)
    exists = (ctx.workspace / cfg.path).exists()
    return _result("artifact_exists", cfg, exists, path=cfg.path, source="workspace")


class MetricPresentConfig(GraderConfig):
    metric: str
    """The metric the recording must report (a key of its `metrics`)."""


def metric_present(cfg: MetricPresentConfig, ctx: GradeContext) -> GraderResult:
    """Passes when the recorded metrics hold `metric`."""
    recorded = _recorded(ctx.trace) or {}
    metrics = recorded.get("metrics") or {}
    present = isinstance(metrics, dict) and cfg.metric in metrics
    return _result("metric_present", cfg, present, metric=cfg.metric,
                   metrics=sorted(metrics) if isinstance(metrics, dict) else [])


class OutputContainsConfig(GraderConfig):
    text: str
    """A substring the final output must contain, compared case-insensitively."""


def output_contains(cfg: OutputContainsConfig, ctx: GradeContext) -> GraderResult:
    """Passes when the final output contains `text`, ignoring case (no output contains nothing)."""
    output = ctx.trace.final_output or ""
    return _result("output_contains", cfg, cfg.text.lower() in output.lower(), text=cfg.text,
                   output=output[:200])


def tools_named(trace: TraceView) -> list[str]:
    """Every tool the attempt named, in order: its tool calls, then the recorded steps that name a tool."""
    names = [c.name for c in trace.tool_calls]
    names += [str(s.attributes["tool_name"]) for s in trace.spans
              if s.name.startswith("step:") and s.attributes.get("tool_name")]
    return names


class ToolCalledConfig(GraderConfig):
    tool: str
    """The tool's name."""


def tool_called(cfg: ToolCalledConfig, ctx: GradeContext) -> GraderResult:
    """Passes when the attempt called `tool` (a call, or a recorded step naming it)."""
    used = tools_named(ctx.trace)
    return _result("tool_called", cfg, cfg.tool in used, tool=cfg.tool, used=sorted(set(used)))


def tool_not_called(cfg: ToolCalledConfig, ctx: GradeContext) -> GraderResult:
    """Passes when the attempt never called `tool` (no call, no recorded step naming it)."""
    used = tools_named(ctx.trace)
    return _result("tool_not_called", cfg, cfg.tool not in used, tool=cfg.tool, used=sorted(set(used)))
