"""Tier 2 — golden divergence: name the earliest decision that put a failed run on a wrong path.

Runs only after a tier-0 failure on a task with a golden trace, and only localizes: it appends
one `GraderResult(tier=2, kind="golden_divergence", passed=None)` and never touches success.
The judge sees the task, the golden trace and the failed trace, and is told to ignore order,
phrasing and tool sequencing that do not affect correctness — most tasks have several correct
trajectories, so divergence from the golden is not itself a failure.

Steps of the failed trace are its tool calls `0..n-1` plus step `n`, the final answer (a run
whose tool calls were all right can still go wrong when it answers). The reply is strict JSON
`{"step_index", "decision", "confidence"}`; an index outside `0..n` is malformed. Malformed
twice, or the provider down, marks the result errored — tier 3 then flags it for review.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationInfo, field_validator

from aeh.grading._registry import GradeContext
from aeh.grading.judge import DATA_NOT_INSTRUCTIONS, TIER2_PROMPT_VERSION, Judge, fence, new_boundary
from aeh.grading.judge_grader import trace_excerpt
from aeh.grading.pipeline import GradingOutcome
from aeh.models import GoldenTrace, GraderResult

__all__ = ["DivergenceVerdict", "GoldenDivergenceHook", "LOW_CONFIDENCE", "tier2_messages"]

LOW_CONFIDENCE = 0.5
"""Below this the localization is not trusted and the attempt is flagged for human review."""
_TRACE_CHARS = 30_000


class DivergenceVerdict(BaseModel):
    """What the tier-2 judge must reply, as strict JSON."""

    model_config = ConfigDict(extra="forbid")

    step_index: StrictInt
    """Index of the earliest wrong step of the FAILED trace (tool calls 0..n-1, n = final answer)."""
    decision: str = Field(min_length=1)
    """The wrong decision, in one sentence."""
    confidence: float = Field(ge=0.0, le=1.0)
    """0..1: how sure the judge is that this is the root decision."""

    @field_validator("step_index")
    @classmethod
    def _step_exists(cls, value: int, info: ValidationInfo) -> int:
        n_steps = (info.context or {}).get("n_steps")
        if n_steps is not None and not 0 <= value < n_steps:
            raise ValueError(f"step_index {value} does not exist; the failed trace has steps 0..{n_steps - 1}")
        return value


def _golden_steps(golden: GoldenTrace) -> list[dict[str, Any]]:
    steps = [{"index": i, "tool": s.tool, "args": s.args, "result": s.result}
             for i, s in enumerate(golden.steps)]
    steps.append({"index": len(golden.steps), "final_answer": golden.final_output})
    return steps


def tier2_messages(ctx: GradeContext, outcome: GradingOutcome, golden: GoldenTrace) -> list[dict[str, str]]:
    token = new_boundary()
    n = len(ctx.trace.tool_calls)
    system = (
        "You localize failures of an AI agent. You get a task, a known-good (golden) trajectory "
        "and a FAILED trajectory of the same task. Name the EARLIEST decision in the failed "
        "trajectory that put the run on a wrong path. Most tasks have several correct "
        "trajectories: ignore differences of order, phrasing and tool sequencing that do not "
        "affect correctness — divergence from the golden is not by itself a mistake. "
        + DATA_NOT_INSTRUCTIONS.format(label="FAILED_RUN", token=token)
        + f" Steps of the failed trajectory are its tool calls 0..{n - 1} and step {n}, its final "
        "answer. Reply with ONLY a JSON object: "
        '{"step_index": <int>, "decision": "<the wrong decision, one sentence>", '
        '"confidence": <0.0-1.0>}.'
    )
    failed_steps = trace_excerpt(ctx.trace)
    failed_steps.append({"index": n, "final_answer": ctx.trace.final_output, "status": ctx.trace.status})
    verdicts = [{"grader": r.name, "kind": r.kind, "passed": r.passed, "evidence": r.evidence}
                for r in outcome.grader_results if r.tier == 0]
    failed = json.dumps({"steps": failed_steps, "outcome_graders": verdicts},
                        ensure_ascii=False, indent=1, default=str)
    if len(failed) > _TRACE_CHARS:
        failed = failed[:_TRACE_CHARS] + "\n… [trace cut]"
    user = "\n\n".join([
        f"Task:\n{ctx.task.prompt}",
        "Golden trajectory (known good):\n" + json.dumps(_golden_steps(golden), ensure_ascii=False,
                                                          indent=1, default=str),
        "Failed trajectory and the outcome graders that failed it:\n" + fence("FAILED_RUN", failed, token),
        "Which step of the failed trajectory is the earliest wrong decision? JSON only.",
    ])
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class GoldenDivergenceHook:
    """The tier-2 after-failure hook: localize with the judge when the task has a golden."""

    tier = 2

    def __init__(self, judge: Judge | None, low_confidence: float = LOW_CONFIDENCE) -> None:
        self.judge = judge
        self.low_confidence = low_confidence

    def __repr__(self) -> str:
        return f"GoldenDivergenceHook({self.judge!r})"

    async def __call__(self, ctx: GradeContext, outcome: GradingOutcome) -> None:
        if ctx.golden is None or self.judge is None or ctx.trace.status == "harness_error":
            return  # nothing to localize (the harness broke, not the agent); tier 3 says why
        recorder = ctx.recorder
        base = {"judge_model": self.judge.model, "prompt_version": TIER2_PROMPT_VERSION}
        n_steps = len(ctx.trace.tool_calls) + 1
        try:
            verdict, error = await self.judge.verdict(
                tier2_messages(ctx, outcome, ctx.golden), DivergenceVerdict, recorder=recorder,
                span_name="judge:tier2", context={"n_steps": n_steps})
        except Exception as exc:  # a hook that raised would take the whole run down
            verdict, error = None, f"tier-2 localization crashed: {type(exc).__name__}: {exc}"
        if verdict is None:
            result = GraderResult(tier=2, kind="golden_divergence", name="golden_divergence",
                                  passed=None, evidence=base, error=error)
        else:
            calls = ctx.trace.tool_calls
            on_call = verdict.step_index < len(calls)
            result = GraderResult(
                tier=2, kind="golden_divergence", name="golden_divergence", passed=None,
                evidence={
                    **base, "step_index": verdict.step_index,
                    "step_kind": "tool_call" if on_call else "final_answer",
                    "tool": calls[verdict.step_index].name if on_call else None,
                    "span_id": calls[verdict.step_index].span_id if on_call else None,
                    "decision": verdict.decision, "confidence": verdict.confidence,
                    "low_confidence": verdict.confidence < self.low_confidence,
                })
        outcome.grader_results.append(result)
