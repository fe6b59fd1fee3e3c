"""Conversion between aeh models and SQLite rows, and each table's columns in frame order.

Every text or JSON field goes through the redactor here, while the row is built, so the
store's SQL never sees unredacted data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from aeh._util.lazy import lazy_module
from aeh.errors import StoreError
from aeh.models import Attempt, GraderResult, InvariantResult, RunConfig, RunInfo, Span, ToolCall
from aeh.store._packed import pack_bytes
from aeh.store._redact import Redactor, with_rules_of
from aeh.trace import NEW_MESSAGES, TOOLS_FROM, expand_attributes

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # heavy: only the frame readers use it

__all__ = [
    "ATTEMPT_COLUMNS",
    "GRADER_COLUMNS",
    "RUN_COLUMNS",
    "SPAN_COLUMNS",
    "attempt_from_row",
    "attempt_row",
    "grader_rows",
    "run_from_row",
    "run_row",
    "span_from_row",
    "span_row",
    "with_full_inputs",
]

RUN_COLUMNS: tuple[str, ...] = (
    "run_id", "created_at", "finished_at", "status", "aeh_version", "suite", "suite_hash",
    "adapter", "model", "seed", "attempts", "concurrency", "price_table_version",
    "price_table_date", "judge_model", "tier2_prompt_version", "parent_run_id",
    "fault_profile", "config", "owner_pid", "owner_host", "heartbeat_at",
)  # fmt: skip
_RUN_JSON = frozenset({"fault_profile", "config"})

#: Stored columns of each table in frame order; the readers' polars dtypes for them are in
#: `aeh.store._frames` (writers never load polars).
ATTEMPT_COLUMNS: tuple[str, ...] = (
    "run_id", "task_id", "attempt", "seed", "success", "clean_success", "status",
    "failure_bucket", "final_output", "error", "tokens_in", "tokens_out", "cost_usd",
    "latency_s", "steps", "n_tool_calls", "n_injected_faults", "needs_human_review",
    "root_span_id", "tool_calls", "invariant_results", "agent_s", "queue_s", "grading_s",
)  # fmt: skip
SPAN_COLUMNS: tuple[str, ...] = (
    "run_id", "task_id", "attempt", "span_id", "parent_span_id", "category", "name",
    "start_ts", "end_ts", "status", "attributes",
)  # fmt: skip
GRADER_COLUMNS: tuple[str, ...] = (
    "run_id", "task_id", "attempt", "tier", "kind", "name", "passed", "evidence", "error",
)  # fmt: skip


def to_json(obj: Any, redactor: Redactor) -> str:
    """Redacted JSON text of `obj`. Odd values are made plain first so their text is redacted."""
    return redactor.dumps(obj)


def _text(s: str | None, redactor: Redactor) -> str | None:
    return None if s is None else redactor.redact_text(s)


def run_row(info: RunInfo, redactor: Redactor) -> tuple[Any, ...]:
    data = info.model_dump()
    return tuple(encode_run_field(c, data[c], redactor) for c in RUN_COLUMNS)


def encode_run_field(column: str, value: Any, redactor: Redactor) -> Any:
    """The stored value of one `runs` column; JSON columns are encoded and redacted."""
    if column == "fault_profile" and value is None:
        return None
    if column == "config":
        # Stored in the typed shape, whatever the caller passed (a flat mapping is nested).
        config = value if isinstance(value, RunConfig) else RunConfig.model_validate(value or {})
        # the redaction rules it names are only those this store writes with
        return to_json(with_rules_of(config, redactor).model_dump(mode="json"), redactor)
    return to_json(value, redactor) if column in _RUN_JSON else value


#: What a row that no longer decodes raises while it is read (JSONDecodeError and pydantic's are ValueErrors).
_UNDECODABLE = (ValueError, TypeError, KeyError)


def _corrupt(table: str, where: str, exc: Exception) -> StoreError:
    """The error for a row that no longer decodes (edited or damaged store), naming the run and row."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StoreError(f"a stored {table} row is corrupt ({where}): {first[:300]} — the store was "
                      "changed outside aeh; restore it from a copy, or delete that run and record it again")


@contextmanager
def _decoding(table: str, where: str) -> Iterator[None]:
    """A row that no longer decodes inside is a StoreError naming the run and row (`_corrupt`)."""
    try:
        yield
    except _UNDECODABLE as exc:
        raise _corrupt(table, where, exc) from None


def run_from_row(row: tuple[Any, ...]) -> RunInfo:
    data = dict(zip(RUN_COLUMNS, row, strict=True))
    with _decoding("runs", f"run {data.get('run_id')}"):
        data["fault_profile"] = json.loads(data["fault_profile"]) if data["fault_profile"] else None
        data["config"] = json.loads(data["config"] or "{}")
        return RunInfo.model_validate(data)


def attempt_row(a: Attempt, redactor: Redactor) -> tuple[Any, ...]:
    calls = [tc.model_dump() for tc in a.tool_calls]
    return (
        a.run_id, a.task_id, a.attempt, a.seed, int(a.success), int(a.clean_success), a.status,
        a.failure_bucket.value if a.failure_bucket is not None else None,
        _text(a.final_output, redactor), _text(a.error, redactor),
        a.tokens_in, a.tokens_out, a.cost_usd, a.latency_s, a.steps, len(a.tool_calls),
        sum(tc.injected_fault is not None for tc in a.tool_calls), int(a.needs_human_review),
        a.root_span_id, to_json(calls, redactor),
        to_json([r.model_dump() for r in a.invariant_results], redactor),
        a.agent_s, a.queue_s, a.grading_s,
    )  # fmt: skip


def grader_rows(a: Attempt, redactor: Redactor) -> list[tuple[Any, ...]]:
    return [
        (
            a.run_id, a.task_id, a.attempt, g.tier, g.kind, g.name,
            None if g.passed is None else int(g.passed),
            to_json(g.evidence, redactor), _text(g.error, redactor),
        )  # fmt: skip
        for g in a.grader_results
    ]


def span_row(s: Span, redactor: Redactor, attributes: dict[str, Any] | None = None) -> tuple[Any, ...]:
    """`s` as a row; `attributes` stored in place of its own (the compact form of its input)."""
    return (
        s.run_id, s.task_id, s.attempt, s.span_id, s.parent_span_id, s.category, s.name,
        s.start_ts, s.end_ts, s.status,
        pack_bytes(redactor.dumps_bytes(s.attributes if attributes is None else attributes)),
    )  # fmt: skip


def span_from_row(row: tuple[Any, ...]) -> Span:
    data = dict(zip(SPAN_COLUMNS, row, strict=True))
    # no context manager and no message built per row: a report reads thousands of spans
    try:
        data["attributes"] = json.loads(data["attributes"])  # read as text (`_packed.ATTRIBUTES_SQL`)
        return Span.model_validate(data)
    except _UNDECODABLE as exc:
        where = (f"run {data.get('run_id')}, task {data.get('task_id')!r}, attempt {data.get('attempt')}, "
                 f"span {data.get('span_id')}")
        raise _corrupt("spans", where, exc) from None


def attempt_from_row(row: tuple[Any, ...], graders: list[tuple[Any, ...]]) -> Attempt:
    """Rebuild an Attempt from its `attempts` row and its `grader_results` rows (in order)."""
    d = dict(zip(ATTEMPT_COLUMNS, row, strict=True))
    with _decoding("attempts", f"run {d.get('run_id')}, task {d.get('task_id')!r}, attempt {d.get('attempt')}"):
        return _attempt(d, graders)


def _attempt(d: dict[str, Any], graders: list[tuple[Any, ...]]) -> Attempt:
    results = []
    for g in graders:
        gd = dict(zip(GRADER_COLUMNS, g, strict=True))
        passed = None if gd["passed"] is None else bool(gd["passed"])
        results.append(
            GraderResult(
                tier=gd["tier"], kind=gd["kind"], name=gd["name"], passed=passed,
                evidence=json.loads(gd["evidence"]), error=gd["error"],
            )  # fmt: skip
        )
    return Attempt(
        run_id=d["run_id"], task_id=d["task_id"], attempt=d["attempt"], seed=d["seed"],
        success=bool(d["success"]), status=d["status"], failure_bucket=d["failure_bucket"],
        final_output=d["final_output"], error=d["error"], tokens_in=d["tokens_in"],
        tokens_out=d["tokens_out"], cost_usd=d["cost_usd"], latency_s=d["latency_s"],
        agent_s=d.get("agent_s"), queue_s=d.get("queue_s"), grading_s=d.get("grading_s"),
        steps=d["steps"], needs_human_review=bool(d["needs_human_review"]),
        root_span_id=d["root_span_id"],
        tool_calls=[ToolCall.model_validate(c) for c in json.loads(d["tool_calls"])],
        invariant_results=[
            InvariantResult.model_validate(r) for r in json.loads(d["invariant_results"])
        ],
        grader_results=results,
    )  # fmt: skip


def with_full_inputs(frame: pl.DataFrame) -> pl.DataFrame:
    """A spans frame (with span_id, category, task_id, attempt, attributes) whose model spans
    carry their whole input again (`aeh.trace.full_inputs`); only attempts stored compact are parsed."""
    compact = pl.col("attributes").str.contains(f'"{NEW_MESSAGES}"', literal=True) | \
        pl.col("attributes").str.contains(f'"{TOOLS_FROM}"', literal=True)
    model = frame.with_row_index("_row").filter(pl.col("category") == "model")
    touched = model.filter(compact).select("task_id", "attempt").unique()
    if touched.is_empty():
        return frame
    rows_of = model.join(touched, on=["task_id", "attempt"], how="semi")
    replaced: dict[int, str] = {}
    for (_task, _attempt), group in rows_of.group_by(["task_id", "attempt"]):
        index = {sid: (row, json.loads(text)) for row, sid, text in
                 group.select("_row", "span_id", "attributes").iter_rows()}
        changed = expand_attributes({sid: attrs for sid, (_, attrs) in index.items()})
        for sid, attrs in changed.items():
            replaced[index[sid][0]] = json.dumps(attrs, ensure_ascii=False, separators=(",", ":"))
    texts = frame["attributes"].to_list()
    for row, text in replaced.items():
        texts[row] = text
    return frame.with_columns(pl.Series("attributes", texts, dtype=pl.String()))
