"""The tier order for one attempt: outcome graders decide, invariants refine, never overturn.

Tier 0 (every outcome grader must pass) sets `success`. Tier 1 (invariants) runs on every
trace, successes included, and only records findings. Later tiers (golden divergence, review
flag) plug in through `after_failure` hooks and likewise never touch `success`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aeh.grading._registry import GradeContext, GraderRegistry, default_graders
from aeh.grading.invariants import check_invariants
from aeh.grading.judge_grader import is_judge_unparseable
from aeh.models import GraderResult, InvariantResult
from aeh.trace import SpanRecorder

__all__ = ["GradingOutcome", "FailureHook", "grade_attempt"]


@dataclass
class GradingOutcome:
    success: bool
    grader_results: list[GraderResult] = field(default_factory=list)
    invariant_results: list[InvariantResult] = field(default_factory=list)
    needs_human_review: bool = False
    grader_crash: str | None = None
    """A deciding (tier-0) grader that could not decide: the attempt is a harness error."""
    judge_unparseable: bool = False
    """Tier 0 failed only because the judge's reply never parsed: bucket `judge_unparseable`."""
    extra: dict[str, Any] = field(default_factory=dict)


#: Runs after a tier-0 failure (tier 2 localization, tier 3 review flag). It may append results
#: and set `needs_human_review`, but it must not change `success`.
FailureHook = Callable[[GradeContext, GradingOutcome], Awaitable[None]]


async def grade_attempt(
    ctx: GradeContext,
    invariants: dict[str, Any],
    recorder: SpanRecorder,
    *,
    registry: GraderRegistry = default_graders,
    after_failure: Sequence[FailureHook] = (),
    after_grading: Sequence[FailureHook] = (),
) -> GradingOutcome:
    """Grade one finished attempt in tier order, each step recorded as a `grading` span."""
    results: list[GraderResult] = []
    with recorder.span("grading", "grading"):
        for spec in ctx.task.outcome_graders:
            with recorder.span(f"grader:{spec.kind}", "grading", tier=0, kind=spec.kind) as span:
                try:
                    result = await registry.grade(spec, ctx)
                except Exception as exc:  # a broken grader is the harness's fault, not the agent's
                    result = GraderResult(tier=0, kind=spec.kind, name=spec.kind, passed=None,
                                          error=f"{type(exc).__name__}: {exc}")
                span.set(passed=result.passed, evidence=result.evidence)
                if result.passed is not True:
                    span.fail(result.error or "failed", passed=result.passed)
            results.append(result)
        success = bool(results) and all(r.passed is True for r in results)
        # Only the graders that decide success can make an attempt a harness error; results that
        # hooks append later (tier 2, 3, the shadow judge) never do.
        outcome = GradingOutcome(success=success, grader_results=results,
                                 grader_crash=grader_error(results))
        if any(is_judge_unparseable(r) for r in results):
            outcome.needs_human_review = True  # a person decides what the judge could not
            failing = [r for r in results if r.passed is not True]
            outcome.judge_unparseable = all(is_judge_unparseable(r) for r in failing)

        with recorder.span("invariants", "grading", tier=1) as span:
            outcome.invariant_results = check_invariants(ctx.task.invariants, invariants, ctx.trace)
            broken = [r.name for r in outcome.invariant_results if not r.passed]
            span.set(checked=len(outcome.invariant_results), broken=broken)
            if broken:
                span.fail(f"invariant(s) broken: {', '.join(broken)}")

        if not success:
            for hook in after_failure:
                await hook(ctx, outcome)
        for hook in after_grading:  # every attempt, e.g. the shadow judge
            await hook(ctx, outcome)
        outcome.success = success  # hooks refine; they never overturn tier 0
    return outcome


def grader_error(results: Sequence[GraderResult]) -> str | None:
    """The first grader crash, if any: such an attempt is a harness error, not an agent failure."""
    for r in results:
        if r.passed is None and r.error and r.tier == 0:
            return f"grader {r.name} failed: {r.error}"
    return None
