"""Tier-0 graders for the assertions agent-eval-harness suites declare: `terminal_state`,
`artifact_exists` and `metric_present`.

They read what a recording kept on the attempt's `terminal_state` span (the terminal state as
recorded, `artifacts`, `metrics`; see `aeh._harness_trajectory`). A live attempt has no such
span: its terminal state is read from aeh's status, and an artifact is a file in its workspace.
"""

from __future__ import annotations

from typing import Any, Literal

from aeh.grading._registry import GradeContext, GraderConfig, result_name
from aeh.models import GraderResult, TraceView

__all__ = ["ArtifactExistsConfig", "MetricPresentConfig", "TerminalStateConfig", "artifact_exists",
           "metric_present", "terminal_state"]

TerminalState = Literal["completed", "failed", "escalated", "timeout", "budget_exceeded"]

#: aeh status → the terminal state it stands for, when no terminal state was recorded
_STATUS_STATE = {"answered": "completed", "declined": "escalated", "gave_up": "failed",
                 "budget_exhausted": "budget_exceeded", "harness_error": "failed"}


def _recorded(trace: TraceView) -> dict[str, Any] | None:
    """The attributes of the recording's `terminal_state` span, or None for a live attempt."""
    for span in reversed(trace.spans):
        if span.name == "step:terminal_state" and "terminal_state" in span.attributes:
            return span.attributes
    return None


def _result(kind: str, cfg: GraderConfig, passed: bool, **evidence: Any) -> GraderResult:
    return GraderResult(tier=0, kind=kind, name=result_name(kind, cfg), passed=passed, evidence=evidence)


class TerminalStateConfig(GraderConfig):
    expected: TerminalState
    """The terminal state the attempt must end in."""


def terminal_state(cfg: TerminalStateConfig, ctx: GradeContext) -> GraderResult:
    """Passes when the attempt ended in `expected` (as recorded, else from aeh's status)."""
    recorded = _recorded(ctx.trace)
    state = recorded["terminal_state"] if recorded else _STATUS_STATE.get(ctx.trace.status, ctx.trace.status)
    return _result("terminal_state", cfg, state == cfg.expected, expected=cfg.expected, got=state,
                   source="recorded" if recorded else "status")


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
