"""Tier 3 — human review is a flag, not a gate.

After a tier-0 failure the attempt is flagged (`needs_human_review = True`) when the pipeline
cannot say confidently where it went wrong:

- the task has no golden trace (nothing to localize against);
- it has one but no judge is configured for tier 2;
- tier 2 errored (provider down, malformed JSON twice) or was low-confidence;
- the tier-0 judge never gave a parseable verdict on the agent's answer (`judge_unparseable`).

The flag stores a review packet as `GraderResult(tier=3, kind="review_flag", passed=None)` —
task, final output, status, tier-0 verdicts, invariant findings, a clipped trace excerpt and the
tier-2 result or the reason there is none. The store redacts it on write. The flag never
blocks the run and never changes success; `aeh review` exports packets for a person to label.
"""

from __future__ import annotations

import os
from typing import Any, Protocol

from aeh.errors import ConfigError
from aeh.grading._registry import GradeContext
from aeh.grading.judge import TIER2_PROMPT_VERSION, Judge, JudgeClient
from aeh.grading.judge_grader import is_judge_unparseable, trace_excerpt
from aeh.grading.localize import GoldenDivergenceHook
from aeh.grading.pipeline import FailureHook, GradingOutcome
from aeh.models import GraderResult

__all__ = ["JudgeOptions", "ReviewFlagHook", "build_packet", "configure_judge", "default_after_failure_hooks",
           "is_tiered_hook", "review_reason"]

_OUTPUT_CHARS = 4_000
_EXCERPT_FIELD_CHARS = 500
_EXCERPT_CALLS = 40


def review_reason(ctx: GradeContext, outcome: GradingOutcome) -> str | None:
    """Why this failed attempt needs a person, or None when tier 2 localized it confidently."""
    if ctx.trace.status == "harness_error":
        return "the harness errored during the attempt; tier 2 was skipped"
    if any(is_judge_unparseable(r) for r in outcome.grader_results):
        return "the judge gave no parseable verdict on the agent's answer (judge_unparseable): a person decides"
    if ctx.golden is None:
        return "tier 0 failed and the task has no golden trace"
    tier2 = _tier2(outcome)
    if tier2 is None:
        return "no judge configured for tier 2"
    if tier2.error:
        return f"tier-2 localization errored: {tier2.error}"
    confidence = tier2.evidence.get("confidence")
    if tier2.evidence.get("low_confidence") or confidence is None:
        return f"tier-2 localization is low-confidence ({confidence})"
    return None


def _tier2(outcome: GradingOutcome) -> GraderResult | None:
    found = [r for r in outcome.grader_results if r.tier == 2 and r.kind == "golden_divergence"]
    return found[-1] if found else None


def build_packet(ctx: GradeContext, outcome: GradingOutcome, reason: str) -> dict[str, Any]:
    """Everything a reviewer needs to label one attempt, without opening the trace viewer."""
    output = ctx.trace.final_output
    if output is not None and len(output) > _OUTPUT_CHARS:
        output = output[:_OUTPUT_CHARS] + f"… [{len(output) - _OUTPUT_CHARS} chars cut]"
    excerpt = trace_excerpt(ctx.trace, _EXCERPT_FIELD_CHARS)
    cut = max(0, len(excerpt) - _EXCERPT_CALLS)
    tier2 = _tier2(outcome)
    return {
        "reason": reason,
        "task": {"id": ctx.task.id, "prompt": ctx.task.prompt},
        "final_output": output,
        "status": ctx.trace.status,
        "grader_results": [r.model_dump(mode="json") for r in outcome.grader_results if r.tier == 0],
        "invariant_results": [r.model_dump(mode="json") for r in outcome.invariant_results],
        "trace_excerpt": excerpt[:_EXCERPT_CALLS],
        "trace_calls_cut": cut,
        "has_golden": ctx.golden is not None,
        "tier2": tier2.model_dump(mode="json") if tier2 is not None else None,
    }


class ReviewFlagHook:
    """The tier-3 after-failure hook; runs with or without a judge, always after tier 2."""

    tier = 3

    def __repr__(self) -> str:
        return "ReviewFlagHook()"

    async def __call__(self, ctx: GradeContext, outcome: GradingOutcome) -> None:
        reason = review_reason(ctx, outcome)
        if reason is None:
            return
        outcome.needs_human_review = True
        try:
            packet = build_packet(ctx, outcome, reason)
        except Exception as exc:  # the flag matters more than a complete packet
            packet = {"reason": reason, "task": {"id": ctx.task.id},
                      "packet_error": f"{type(exc).__name__}: {exc}"}
        outcome.grader_results.append(GraderResult(
            tier=3, kind="review_flag", name="needs_human_review", passed=None, evidence=packet))
        if ctx.recorder is not None:
            ctx.recorder.event("review_flag", "grading", tier=3, reason=reason)


def is_tiered_hook(hook: Any) -> bool:
    """True for the tier-2/3 hooks this module and `localize` provide."""
    return getattr(hook, "tier", None) in (2, 3)


class JudgeOptions(Protocol):
    """What `configure_judge` fills in (`aeh.engine.wiring.RunWiring` is one); the judge model
    itself is the run's option (`RunSpec.judge_model`)."""

    judge: Judge | None
    tier2_prompt_version: str | None
    after_failure: list[FailureHook]


def default_after_failure_hooks(judge: Judge | None = None) -> list[FailureHook]:
    """Tier 2 (only with a judge) then tier 3; install on every run, judge or not."""
    hooks: list[FailureHook] = []
    if judge is not None:
        hooks.append(GoldenDivergenceHook(judge))
    hooks.append(ReviewFlagHook())
    return hooks


def configure_judge(options: JudgeOptions, judge_model: str, *, base_url: str | None = None,
                    api_key: str | None = None, timeout_s: float = 30.0, retries: int = 2) -> JudgeClient:
    """Give a run a judge: the client the `judge` grader reads, the model and tier-2 prompt
    version stamped on the run, and the tier-2 + tier-3 after-failure hooks.

    Any tier-2/3 hooks already installed (the judge-less defaults) are replaced, so the review
    flag runs exactly once and after tier 2.
    """
    if not (api_key or os.environ.get("OPENAI_API_KEY") or base_url or os.environ.get("OPENAI_BASE_URL")):
        raise ConfigError(
            f"--judge-model {judge_model} needs a provider: export OPENAI_API_KEY, or point "
            "OPENAI_BASE_URL at an OpenAI-compatible server"
        )
    judge = JudgeClient(judge_model, base_url=base_url, api_key=api_key, timeout_s=timeout_s,
                        retries=retries)
    options.judge = judge
    options.tier2_prompt_version = TIER2_PROMPT_VERSION
    kept = [h for h in options.after_failure if not is_tiered_hook(h)]
    options.after_failure = kept + default_after_failure_hooks(judge)
    return judge
