"""One Inspect sample (one epoch of one dataset sample) as one aeh attempt and its spans.

- task = the sample id (as a string), attempt = `offset + epoch − 1`;
- success = the chosen scorer's value read as a number ≥ the threshold (`_inspect_score.py`);
- `sample.error` → status and bucket `harness_error`: the attempt leaves n, it is not a failure.
  A sample the chosen scorer did not score is a harness error too (no verdict to count);
- `sample.limit` (message, token, time … limit hit) → status `budget_exhausted`; success still
  follows the score;
- latency = Inspect's `working_time` (the sample's time less its waits for rate limits and
  connections), queue = `total_time − working_time`; nothing is re-run, so no budget cuts it;
- tokens and cost from `sample.model_usage` less what its scorers' model calls used
  (`_inspect_usage.py`): a model-graded scorer's judge is evaluation spend, kept on its
  `grading` spans, never the agent's cost; spans from the events (`_inspect_spans.py`).

Imported only once the `inspect` extra is known to be installed (`_inspect.py` checks it).
"""

from __future__ import annotations

from inspect_ai.log import EvalSample

from aeh.grading.classify import classify_failure
from aeh.importers._common import iso_to_epoch
from aeh.importers._inspect_score import ScorePolicy, score_number
from aeh.importers._inspect_spans import events_to_spans
from aeh.importers._inspect_usage import agent_usage, usage_cost, usage_tokens
from aeh.models import AgentStatus, Attempt, FailureBucket, GraderResult, Span
from aeh.pricing import PriceTable

__all__ = ["sample_to_attempt"]


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:500] if text.strip() else "error"


def sample_to_attempt(sample: EvalSample, run_id: str, attempt: int, policy: ScorePolicy,
                      prices: PriceTable) -> tuple[Attempt, list[Span]]:
    """The (Attempt, spans) pair `Store.write_attempts` takes for one sample."""
    task_id = str(sample.id)
    prefix = f"{task_id}-{attempt}"
    root_id = f"{prefix}-root"
    spans, calls, scorer_usage = events_to_spans(sample.events, (run_id, task_id, attempt), root_id, prices)
    score = (sample.scores or {}).get(policy.scorer)
    number = score_number(score.value) if score is not None else None
    final_output = sample.output.completion or None
    status: AgentStatus = "budget_exhausted" if sample.limit is not None else "answered"
    error: str | None = f"{sample.limit.type} limit reached" if sample.limit is not None else None
    success = False
    bucket: FailureBucket | None
    if sample.error is not None:
        status, bucket, error = "harness_error", FailureBucket.harness_error, _first_line(sample.error.message)
    elif number is None:
        status, bucket = "harness_error", FailureBucket.harness_error
        error = f"no score from scorer {policy.scorer!r}: no verdict to count"
    else:
        success = policy.passed(number)
        bucket = classify_failure(success=success, status=status, tool_calls=calls, final_output=final_output)
    tokens_in = tokens_out = 0
    usage = agent_usage(sample.model_usage, scorer_usage)
    for one in usage.values():
        tin, tout = usage_tokens(one)
        tokens_in, tokens_out = tokens_in + tin, tokens_out + tout
    cost, cost_source = usage_cost(usage, prices)
    start = iso_to_epoch(sample.started_at) or min((s.start_ts for s in spans), default=0.0)
    end = iso_to_epoch(sample.completed_at) or (start + sample.total_time if sample.total_time is not None else None)
    latency = sample.working_time if sample.working_time is not None else sample.total_time
    queue = (max(0.0, sample.total_time - sample.working_time)
             if sample.total_time is not None and sample.working_time is not None else None)
    evidence = {"value": score.value if score is not None else None, "number": number,
                "threshold": policy.threshold, "answer": score.answer if score is not None else None,
                "explanation": score.explanation if score is not None else None, "target": sample.target}
    root = Span(run_id=run_id, task_id=task_id, attempt=attempt, span_id=root_id, category="scheduler",
                name="attempt", start_ts=start, end_ts=end, status="ok" if success else "error",
                attributes={"task_id": task_id, "attempt": attempt, "inspect.sample.id": sample.id,
                            "inspect.epoch": sample.epoch, "inspect.sample.uuid": sample.uuid,
                            "success": success, "status": status, "cost_source": cost_source,
                            "failure_bucket": bucket.value if bucket else None,
                            **({"error": error} if error else {})})
    grader = GraderResult(tier=0, kind="imported_reward", name=f"inspect:{policy.scorer}",
                          passed=success if bucket != FailureBucket.harness_error else None,
                          evidence=evidence, error=error if bucket == FailureBucket.harness_error else None)
    record = Attempt(run_id=run_id, task_id=task_id, attempt=attempt, seed=0, success=success, status=status,
                     failure_bucket=bucket, final_output=final_output, error=error, tokens_in=tokens_in,
                     tokens_out=tokens_out, cost_usd=cost, latency_s=latency or 0.0, agent_s=latency,
                     queue_s=queue, steps=len(calls), tool_calls=calls, grader_results=[grader],
                     root_span_id=root_id)
    return record, [root, *spans]
