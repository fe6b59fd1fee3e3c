"""The polars schemas of the store's frames: imported by readers only, so a run writes without polars."""

from __future__ import annotations

import polars as pl

__all__ = ["ATTEMPTS_SCHEMA", "GRADER_SCHEMA", "SPANS_SCHEMA"]

#: Frame schemas are explicit so dtypes are stable even for an empty run. JSON columns
#: (tool_calls, invariant_results, attributes, evidence) are JSON strings.
ATTEMPTS_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(), "task_id": pl.String(), "attempt": pl.Int64(), "seed": pl.Int64(),
    "success": pl.Boolean(), "clean_success": pl.Boolean(), "status": pl.String(),
    "failure_bucket": pl.String(), "final_output": pl.String(), "error": pl.String(),
    "tokens_in": pl.Int64(), "tokens_out": pl.Int64(), "cost_usd": pl.Float64(),
    "latency_s": pl.Float64(), "steps": pl.Int64(), "n_tool_calls": pl.Int64(),
    "n_injected_faults": pl.Int64(), "needs_human_review": pl.Boolean(),
    "root_span_id": pl.String(), "tool_calls": pl.String(), "invariant_results": pl.String(),
    "agent_s": pl.Float64(), "queue_s": pl.Float64(), "grading_s": pl.Float64(),
}  # fmt: skip

SPANS_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(), "task_id": pl.String(), "attempt": pl.Int64(),
    "span_id": pl.String(), "parent_span_id": pl.String(), "category": pl.String(),
    "name": pl.String(), "start_ts": pl.Float64(), "end_ts": pl.Float64(),
    "status": pl.String(), "attributes": pl.String(),
}  # fmt: skip

GRADER_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(), "task_id": pl.String(), "attempt": pl.Int64(), "tier": pl.Int64(),
    "kind": pl.String(), "name": pl.String(), "passed": pl.Boolean(),
    "evidence": pl.String(), "error": pl.String(),
}  # fmt: skip
