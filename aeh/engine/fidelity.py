"""Is this run measuring the agent? Per-run checks of what a live run actually did.

Collected as attempts finish (`RunFidelity.add`) and stored on the run as
`config["live_checks"]`; `aeh.run_table` turns them into `attrs["warnings"]`, which the CLI run
table prints and the report shows in its header. The checks:

- **tools not offered**: model turns that offered tools but whose server-reported prompt tokens
  could not contain the schemas (`aeh.tools_dropped_suspect`, see `aeh.adapters._fidelity`),
  and a run where tools were offered on every turn and the agent made no tool call at all;
- **faults that never fired**: a fault rate > 0 with no fault injected (nothing to inject into
  when the agent calls no tool);
- **judge verdicts**: how many were attempted, valid, failed (by reason) or automatic (no judge
  call, e.g. an empty final output);
- **time**: the attempt time split into agent, queue and grading seconds.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from aeh.engine._spend import EvaluationSpend
from aeh.grading.judge import judge_error_kind
from aeh.models import Attempt, Span
from aeh.tools.faults import FaultProfile

__all__ = ["JUDGE_KINDS", "RunFidelity", "judge_verdict_status", "warnings_from"]

JUDGE_KINDS = ("judge", "judge_shadow")


def judge_verdict_status(passed: bool | None, evidence: dict[str, Any], error: str | None) -> str:
    """`valid`, `automatic` (decided without a judge call), `unparseable` (the judge's reply never
    parsed: counted as not passed) or `failed:<reason>`."""
    if evidence.get("automatic"):
        return "automatic"
    if evidence.get("judge_unparseable"):
        return "unparseable"
    if passed is not None:
        return "valid"
    return f"failed:{evidence.get('judge_error_kind') or judge_error_kind(error)}"


class RunFidelity:
    def __init__(self, fault_profile: dict[str, Any] | None = None) -> None:
        self.planned_rate = _planned_rate(fault_profile)
        self.attempts = 0
        self.model_turns = 0
        self.turns_with_tools = 0
        self.turns_with_task_tools = 0
        """Turns that offered a task tool (not only the `decline` pseudo-tool, as single_shot does)."""
        self.suspect_turns = 0
        self.tool_choices: Counter[str] = Counter()
        self.tool_calls = 0
        self.faults_injected = 0
        self.judge: Counter[str] = Counter()
        self.agent_s = 0.0
        self.queue_s = 0.0
        self.grading_s = 0.0
        self.spend = EvaluationSpend()
        self.first_reply_exhausted = 0
        """Attempts whose budget ran out before the model server ever answered them."""

    def add(self, attempt: Attempt, spans: list[Span]) -> None:
        self.attempts += 1
        self.tool_calls += len(attempt.tool_calls)
        self.faults_injected += sum(c.injected_fault is not None for c in attempt.tool_calls)
        self.agent_s += attempt.agent_s or 0.0
        self.queue_s += attempt.queue_s or 0.0
        self.grading_s += attempt.grading_s or 0.0
        self.spend.add_spans(spans)
        for span in spans:
            if span.name == "agent" and span.attributes.get("aeh.budget.before_first_reply"):
                self.first_reply_exhausted += 1
            if span.category != "model" or span.name != "model:call":
                continue
            a = span.attributes
            self.model_turns += 1
            if a.get("aeh.request.tools_offered"):
                self.turns_with_tools += 1
                self.tool_choices[str(a.get("aeh.request.tool_choice"))] += 1
                if a.get("aeh.tools_dropped_suspect"):
                    self.suspect_turns += 1
                if any(n != "decline" for n in a.get("gen_ai.request.tool_names") or []):
                    self.turns_with_task_tools += 1
        for g in attempt.grader_results:
            if g.kind in JUDGE_KINDS:
                self.judge[judge_verdict_status(g.passed, g.evidence, g.error)] += 1

    def summary(self) -> dict[str, Any]:
        failed = {k.split(":", 1)[1]: v for k, v in sorted(self.judge.items()) if k.startswith("failed:")}
        out: dict[str, Any] = {
            "attempts": self.attempts,
            "model_turns": self.model_turns,
            "turns_with_tools": self.turns_with_tools,
            "turns_with_task_tools": self.turns_with_task_tools,
            "tools_dropped_suspect_turns": self.suspect_turns,
            "tool_choice": dict(self.tool_choices),
            "tool_calls": self.tool_calls,
            "faults_planned_rate": self.planned_rate,
            "faults_injected": self.faults_injected,
            "judge_verdicts": {
                "attempted": sum(self.judge.values()) - self.judge.get("automatic", 0),
                "valid": self.judge.get("valid", 0),
                "failed": sum(failed.values()),
                "failed_by_reason": failed,
                "unparseable": self.judge.get("unparseable", 0),
                "automatic": self.judge.get("automatic", 0),
            },
            "time_s": {"agent": round(self.agent_s, 3), "queue": round(self.queue_s, 3),
                       "grading": round(self.grading_s, 3)},
            "evaluation_spend": self.spend.summary(),
            "first_reply_exhausted": self.first_reply_exhausted,
        }
        out["warnings"] = warnings_from(out)
        return out


def _planned_rate(profile: dict[str, Any] | None) -> float | None:
    if not profile:
        return None
    try:
        return FaultProfile.model_validate(profile).total_rate
    except Exception:  # an imported or older profile shape: no planned rate to check against
        return None


def warnings_from(checks: dict[str, Any]) -> list[str]:
    """The loud one-line warnings a run table and report print."""
    out: list[str] = []
    probe = checks.get("tools_probe") or {}
    if probe.get("dropped"):
        out.append(
            f"TOOLS DROPPED BY THE SERVER (preflight): a request with a tool reported "
            f"{probe.get('prompt_tokens_with')} prompt tokens, the same request without it "
            f"{probe.get('prompt_tokens_without')} (tool_choice {probe.get('tool_choice')}) — set "
            "--adapter-option tool_choice=auto or required")
    turns = checks.get("turns_with_tools") or 0
    suspect = checks.get("tools_dropped_suspect_turns") or 0
    choice = ", ".join(f"{k}" for k in (checks.get("tool_choice") or {})) or "unset"
    if suspect:
        out.append(
            f"TOOLS PROBABLY NOT SEEN BY THE MODEL: {suspect} of {turns} model turns offered tools but "
            "the server reported too few prompt tokens to contain them (tool_choice "
            f"{choice}) — some servers drop tools when tool_choice is unset; try "
            "--adapter-option tool_choice=auto or required")
    task_turns = checks.get("turns_with_task_tools", turns) or 0
    if task_turns and not checks.get("tool_calls") and task_turns == checks.get("model_turns"):
        out.append(f"NO TOOL CALLS: tools were offered on all {task_turns} model turns and the agent made "
                   f"no tool call in {checks.get('attempts')} attempts (tool_choice {choice})")
    rate = checks.get("faults_planned_rate")
    if rate and not checks.get("faults_injected"):
        out.append(f"NO FAULT INJECTED: fault rate {rate:g} planned, 0 faults injected over "
                   f"{checks.get('tool_calls', 0)} tool calls — the agent made "
                   + ("no tool call to inject into" if not checks.get("tool_calls") else "too few tool calls"))
    judge = checks.get("judge_verdicts") or {}
    if judge.get("unparseable"):
        out.append(f"JUDGE COULD NOT PARSE ITS VERDICT on {judge['unparseable']} attempt(s): the agent's "
                   "answer derailed it; counted as not passed (bucket judge_unparseable) and flagged "
                   "for review — see `aeh review`")
    if judge.get("failed"):
        reasons = ", ".join(f"{k} {v}" for k, v in (judge.get("failed_by_reason") or {}).items())
        out.append(f"JUDGE VERDICTS FAILED: {judge['failed']} of {judge.get('attempted', 0)} judge calls "
                   f"gave no verdict ({reasons}); {judge.get('valid', 0)} valid, "
                   f"{judge.get('automatic', 0)} automatic (no judge call)")
    return out
