"""Evaluation spend: what the harness paid models to grade a run (judge graders, tier-2
localization, judged dimensions), kept beside — never inside — the agent's cost.

Every judge exchange is a `grading` span carrying `gen_ai.usage.*` tokens and `cost_usd`
(None when the judge model is missing from the price table). `EvaluationSpend` adds them up as
attempts finish; the run stores the total as `RunConfig.live_checks.evaluation_spend`, and
`aeh score --judge-model` adds its judged-dimension spend to the same figure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from aeh.models import Span

__all__ = ["EvaluationSpend", "merged_spend"]


def _purpose(name: str) -> str:
    """`judge:grader` → judge grader, `judge:tier2` → localization, `judge:dimension:x` → dimensions."""
    if name.startswith("judge:dimension"):
        return "judged dimensions"
    if name.startswith("judge:tier2"):
        return "tier-2 localization"
    return "judge grader" if name.startswith("judge:") else name


@dataclass
class EvaluationSpend:
    """Judge calls, their tokens and their dollars; `usd` is None once any call is unpriced."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    usd: float | None = 0.0
    unpriced_calls: int = 0
    by_purpose: Counter[str] = field(default_factory=Counter)

    def add_spans(self, spans: Iterable[Span]) -> None:
        for span in spans:
            a = span.attributes
            if span.category != "grading" or "gen_ai.usage.input_tokens" not in a:
                continue
            self.calls += 1
            self.tokens_in += int(a.get("gen_ai.usage.input_tokens") or 0)
            self.tokens_out += int(a.get("gen_ai.usage.output_tokens") or 0)
            self.by_purpose[_purpose(span.name)] += 1
            cost = a.get("cost_usd")
            if cost is None:
                self.unpriced_calls += 1
                self.usd = None
            elif self.usd is not None:
                self.usd += float(cost)

    def summary(self) -> dict[str, Any]:
        return {"calls": self.calls, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "usd": round(self.usd, 8) if self.usd is not None else None,
                "unpriced_calls": self.unpriced_calls, "by_purpose": dict(self.by_purpose)}


def merged_spend(before: dict[str, Any] | None, more: dict[str, Any]) -> dict[str, Any]:
    """Two spend summaries as one (a run's grading, then `aeh score`'s judged dimensions)."""
    if not before:
        return dict(more)
    usd = None if before.get("usd") is None or more.get("usd") is None else before["usd"] + more["usd"]
    purposes = Counter(before.get("by_purpose") or {}) + Counter(more.get("by_purpose") or {})
    return {key: (before.get(key) or 0) + (more.get(key) or 0)
            for key in ("calls", "tokens_in", "tokens_out", "unpriced_calls")} | {
        "usd": round(usd, 8) if usd is not None else None, "by_purpose": dict(purposes)}
