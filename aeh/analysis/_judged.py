"""Judged trajectory dimensions of a stored run (`aeh score RUN --judge-model M`), no re-run.

Each attempt's trajectory goes to the judge once per dimension (`aeh.grading.judged_scorers`);
the scores are stored beside the deterministic ones, and every exchange (prompt, raw reply,
parsed verdict, tokens, the judge's cost) is added to the attempt's spans under a
`judge:dimensions` span, so the trace view shows what the judge saw and said.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aeh._util.figure import UNPRICED, money
from aeh._util.sync import run_sync
from aeh.analysis._dimensions import _input, _load_suite_for, _records
from aeh.engine import EvaluationSpend, merged_spend
from aeh.grading.judge import JudgeClient
from aeh.grading.judged_scorers import JUDGED_DIMENSIONS, score_judged
from aeh.grading.scorers import DEFAULT_LOOP_N
from aeh.models import Attempt, LiveChecks, Span
from aeh.store import Store, StoreLike, using_store
from aeh.suite.contract import EvalSuite
from aeh.trace import SpanRecorder

__all__ = ["JudgedRunSummary", "judge_run", "judge_run_async"]


@dataclass
class JudgedRunSummary:
    """What judging a run produced, and what it could not (never silently)."""

    run_id: str
    judge_model: str
    dimensions: list[str]
    scored: int = 0
    dropped_steps: int = 0
    """Invented (or failed) step citations removed from the judge's evidence."""
    rejected: int = 0
    """Replies scoring below 1.0 with no valid evidence: not stored."""
    errors: int = 0
    """Attempt × dimension pairs the judge could not score (provider, malformed reply)."""
    error_examples: list[str] = field(default_factory=list)
    judge_cost_usd: float | None = 0.0

    def lines(self) -> list[str]:
        cost = money(self.judge_cost_usd, none=UNPRICED)
        out = [f"judged {', '.join(self.dimensions)} with {self.judge_model}: {self.scored} scores stored, "
               f"judge cost {cost} (the harness's, not the agent's)"]
        if self.dropped_steps:
            out.append(f"{self.dropped_steps} cited step(s) the trajectories do not have were dropped from the "
                       "judge's evidence")
        if self.rejected:
            out.append(f"{self.rejected} score(s) below 1.0 without valid evidence were rejected (not stored)")
        if self.errors:
            out.append(f"{self.errors} attempt × dimension pair(s) could not be judged, e.g. {self.error_examples[0]}")
        return out


async def _judge_one(judge: JudgeClient, run_id: str, a: Attempt, inp: Any,
                     dimensions: Sequence[str], summary: JudgedRunSummary, gate: asyncio.Semaphore
                     ) -> tuple[list[tuple[str, int, str, float, str]], list[Span]]:
    recorder = SpanRecorder(run_id, a.task_id, a.attempt)
    async with gate:
        with recorder.span("judge:dimensions", "grading", dimensions=list(dimensions), judge_model=judge.model):
            outcome = await score_judged(judge, inp, dimensions, recorder=recorder)
    summary.dropped_steps += outcome.dropped_steps
    summary.rejected += len(outcome.rejected)
    summary.errors += len(outcome.errors)
    summary.error_examples.extend(f"{a.task_id}#{a.attempt} {d}: {e}" for d, e in outcome.errors.items())
    for span in recorder.spans:
        cost = span.attributes.get("cost_usd")
        if span.name.startswith("judge:dimension:") and "raw_response" in span.attributes:
            if cost is None:
                summary.judge_cost_usd = None
            elif summary.judge_cost_usd is not None:
                summary.judge_cost_usd += cost
    spans = [s.model_copy(update={"parent_span_id": a.root_span_id}) if s.parent_span_id is None else s
             for s in recorder.spans]
    rows = [(a.task_id, a.attempt, s.dimension, s.score, json.dumps(s.evidence.model_dump()))
            for s in outcome.scores]
    summary.scored += len(rows)
    return rows, spans


async def judge_run_async(run_id: str, db: StoreLike = None, *, judge: JudgeClient | str,
                          dimensions: Sequence[str] = JUDGED_DIMENSIONS, suite: str | Path | EvalSuite | None = None,
                          concurrency: int = 4, base_url: str | None = None) -> JudgedRunSummary:
    """Judge every attempt of a stored run on `dimensions` and store the scores; see the module."""
    client = JudgeClient(judge, base_url=base_url) if isinstance(judge, str) else judge
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        tasks, goldens = _load_suite_for(store, full, suite)
        summary = JudgedRunSummary(run_id=full, judge_model=client.model, dimensions=list(dimensions))
        attempts = [a for a in _records(store, full) if not a.is_harness_error]
        gate = asyncio.Semaphore(max(1, concurrency))
        try:
            results = await asyncio.gather(*(
                _judge_one(client, full, a, _input(a, tasks.get(a.task_id), goldens, None, DEFAULT_LOOP_N),
                           dimensions, summary, gate) for a in attempts))
        finally:
            if isinstance(judge, str):
                await client.aclose()
        spans = [s for _, attempt_spans in results for s in attempt_spans]
        store.write_spans(spans)
        store.write_dimension_scores(full, [r for rows, _ in results for r in rows])
        _add_evaluation_spend(store, full, spans)
    return summary


def _add_evaluation_spend(store: Store, run_id: str, spans: list[Span]) -> None:
    """The judged dimensions' spend joins the run's evaluation spend (its totals, report, attrs)."""
    spend = EvaluationSpend()
    spend.add_spans(spans)
    if not spend.calls:
        return
    config = store.run_info(run_id).config
    checks = config.live_checks or LiveChecks()
    checks.evaluation_spend = merged_spend(checks.evaluation_spend or None, spend.summary())
    config.live_checks = checks
    store.update_run(run_id, config=config)


def judge_run(run_id: str, db: StoreLike = None, **options: Any) -> JudgedRunSummary:
    """Sync twin of `judge_run_async` (also inside Jupyter's running loop)."""
    return run_sync(judge_run_async(run_id, db, **options))
