"""Paged reads for viewers: one page of runs or attempts at a time, never a whole run.

A viewer over a store of 100k attempts must answer a click in a fraction of a second: every
query here is bounded by LIMIT/OFFSET (the attempts' primary key gives their order without a
sort), and what a page needs beside its rows (per-task counts, dimension scores) is read for
that page's keys only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aeh.models import RunInfo
from aeh.store import _rows as rows
from aeh.store._liveness import with_liveness
from aeh.store._store import Store

__all__ = ["AttemptFilter", "AttemptPage", "AttemptRow", "RunPage", "RunSummary", "TaskCount",
           "attempt_page", "dimension_means", "dimension_overall", "run_choices", "run_page"]

_HARNESS = "failure_bucket IS 'harness_error'"
_VALID = "failure_bucket IS NOT 'harness_error'"  # IS NOT: a NULL bucket (a success) is valid
_ANSWER_CHARS = 300


@dataclass(frozen=True)
class TaskCount:
    """One task of a run: valid attempts (n), their successes, harness errors."""

    task_id: str
    n: int
    successes: int
    harness_errors: int


@dataclass(frozen=True)
class RunSummary:
    """A run of the index with its totals (`cost_usd` is None when an attempt is unpriced)."""

    info: RunInfo
    attempts: int
    harness_errors: int
    cost_usd: float | None
    tasks: list[TaskCount] = field(default_factory=list)


@dataclass(frozen=True)
class RunPage:
    """One page of the run index, newest first; `total` counts every run the filter keeps."""

    runs: list[RunSummary]
    total: int
    offset: int
    limit: int


@dataclass(frozen=True)
class AttemptFilter:
    """Which attempts of a run to list (None / False: no condition)."""

    task_id: str | None = None
    failure_bucket: str | None = None
    failed_only: bool = False
    #: only attempts a trajectory dimension's evidence cites steps of (stored `evidence.steps`)
    cited_only: bool = False
    #: text the task id, answer or error contains (case-insensitive), or that `text_tasks` matched
    text: str | None = None
    #: tasks whose input or target (which live in the spans) contain `text`: the caller found them
    text_tasks: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttemptRow:
    """One attempt as a list shows it; `answer` is cut to a few hundred characters."""

    task_id: str
    attempt: int
    success: bool
    status: str
    failure_bucket: str | None
    answer: str | None
    error: str | None
    cost_usd: float | None
    latency_s: float
    steps: int
    tool_calls: int
    #: dimension → score (stored scores only)
    dimensions: dict[str, float]
    #: dimension → the step indices its evidence cites
    cited_steps: dict[str, list[int]]


@dataclass(frozen=True)
class AttemptPage:
    """One page of a run's attempts in task and attempt order; `total` counts every match."""

    rows: list[AttemptRow]
    total: int
    offset: int
    limit: int


def run_choices(store: Store) -> dict[str, list[str]]:
    """The distinct suites, adapters and statuses of the stored runs (the index's filter options)."""
    out: dict[str, list[str]] = {}
    with store._read() as conn:
        for column in ("suite", "adapter", "status"):
            found = conn.execute(f"SELECT DISTINCT {column} FROM runs WHERE {column} IS NOT NULL ORDER BY 1")
            out[column] = [str(r[0]) for r in found]
    return out


def run_page(store: Store, *, suite: str | None = None, adapter: str | None = None, status: str | None = None,
             limit: int = 25, offset: int = 0) -> RunPage:
    """Runs newest first, `limit` from `offset`, with totals and per-task counts of those runs only."""
    given = {k: v for k, v in (("suite", suite), ("adapter", adapter), ("status", status)) if v}
    where = " AND ".join(f"{k} = ?" for k in given) or "1"
    params = tuple(given.values())
    with store._read() as conn:
        total = int(conn.execute(f"SELECT count(*) FROM runs WHERE {where}", params).fetchone()[0])
        found = conn.execute(
            f"SELECT {', '.join(rows.RUN_COLUMNS)} FROM runs WHERE {where} "
            "ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?", (*params, limit, offset)).fetchall()
        infos = [with_liveness(rows.run_from_row(r)) for r in found]
        summaries = [_summary(conn, info) for info in infos]
    return RunPage(runs=summaries, total=total, offset=offset, limit=limit)


def _summary(conn: Any, info: RunInfo) -> RunSummary:
    found = conn.execute(
        f"SELECT task_id, count(*) FILTER (WHERE {_VALID}), count(*) FILTER (WHERE success AND {_VALID}), "
        f"count(*) FILTER (WHERE {_HARNESS}), total(cost_usd), count(cost_usd) < count(*) "
        "FROM attempts WHERE run_id = ? GROUP BY task_id ORDER BY task_id", (info.run_id,)).fetchall()
    tasks = [TaskCount(str(t), int(n), int(k), int(h)) for t, n, k, h, _, _ in found]
    unpriced = any(bool(r[5]) for r in found)
    cost = None if unpriced or not found else float(sum(r[4] for r in found))
    return RunSummary(info=info, attempts=sum(t.n + t.harness_errors for t in tasks),
                      harness_errors=sum(t.harness_errors for t in tasks), cost_usd=cost, tasks=tasks)


def _attempt_where(run_id: str, f: AttemptFilter) -> tuple[str, list[Any]]:
    clauses, params = ["a.run_id = ?"], [run_id]
    if f.task_id:
        clauses.append("a.task_id = ?")
        params.append(f.task_id)
    if f.failure_bucket:
        clauses.append("a.failure_bucket = ?")
        params.append(f.failure_bucket)
    if f.failed_only:
        clauses.append("NOT a.success")
    if f.cited_only:
        clauses.append("EXISTS (SELECT 1 FROM dimension_scores d WHERE d.run_id = a.run_id "
                       "AND d.task_id = a.task_id AND d.attempt = a.attempt AND json_valid(d.evidence) "
                       "AND json_type(d.evidence, '$.steps') = 'array' "
                       "AND json_array_length(d.evidence, '$.steps') > 0)")
    if f.text:
        like = "%" + f.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        said = " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in ("a.task_id", "a.final_output", "a.error"))
        tasks = f" OR a.task_id IN ({', '.join('?' * len(f.text_tasks))})" if f.text_tasks else ""
        clauses.append(f"({said}{tasks})")
        params.extend([like, like, like, *f.text_tasks])
    return " AND ".join(clauses), params


def attempt_page(store: Store, run_id: str, where: AttemptFilter | None = None, *, limit: int = 50,
                 offset: int = 0) -> AttemptPage:
    """The run's attempts that match `where`, `limit` from `offset`, with their stored dimension scores."""
    full = store.resolve_run_id(run_id)
    clause, params = _attempt_where(full, where or AttemptFilter())
    with store._read() as conn:
        total = int(conn.execute(f"SELECT count(*) FROM attempts a WHERE {clause}", params).fetchone()[0])
        found = conn.execute(
            "SELECT a.task_id, a.attempt, a.success, a.status, a.failure_bucket, "
            f"substr(a.final_output, 1, {_ANSWER_CHARS}), substr(a.error, 1, {_ANSWER_CHARS}), a.cost_usd, "
            f"a.latency_s, a.steps, a.n_tool_calls FROM attempts a WHERE {clause} "
            "ORDER BY a.task_id, a.attempt LIMIT ? OFFSET ?", (*params, limit, offset)).fetchall()
        scores = _page_scores(conn, full, [(r[0], r[1]) for r in found])
    out = []
    for t, a, ok, status, bucket, answer, error, cost, latency, steps, calls in found:
        dims, cited = scores.get((t, a), ({}, {}))
        out.append(AttemptRow(task_id=t, attempt=int(a), success=bool(ok), status=status, failure_bucket=bucket,
                              answer=answer, error=error, cost_usd=cost, latency_s=float(latency), steps=int(steps),
                              tool_calls=int(calls), dimensions=dims, cited_steps=cited))
    return AttemptPage(rows=out, total=total, offset=offset, limit=limit)


def _page_scores(conn: Any, run_id: str, keys: list[tuple[str, int]]
                 ) -> dict[tuple[str, int], tuple[dict[str, float], dict[str, list[int]]]]:
    if not keys:
        return {}
    values = ", ".join("(?, ?)" for _ in keys)
    flat = [v for key in keys for v in key]
    found = conn.execute(
        "SELECT task_id, attempt, dimension, score, evidence FROM dimension_scores "
        f"WHERE run_id = ? AND (task_id, attempt) IN (VALUES {values})", (run_id, *flat)).fetchall()
    out: dict[tuple[str, int], tuple[dict[str, float], dict[str, list[int]]]] = {}
    for t, a, dim, score, evidence in found:
        dims, cited = out.setdefault((t, int(a)), ({}, {}))
        dims[dim] = float(score)
        steps = _cited(evidence)
        if steps:
            cited[dim] = steps
    return out


def _cited(evidence: str | None) -> list[int]:
    try:
        steps = json.loads(evidence or "{}").get("steps") or []
    except (ValueError, AttributeError):
        return []
    return [s for s in steps if isinstance(s, int)]


def dimension_means(store: Store, run_id: str, tasks: list[str] | None = None) -> list[tuple[str, str, float, int]]:
    """(task_id, dimension, mean score, attempts scored) of the run's stored scores (of `tasks` only,
    if given), aggregated by SQLite."""
    full = store.resolve_run_id(run_id)
    only = "" if tasks is None else f" AND task_id IN ({', '.join('?' * len(tasks)) or 'NULL'})"
    with store._read() as conn:
        found = conn.execute(
            f"SELECT task_id, dimension, avg(score), count(*) FROM dimension_scores WHERE run_id = ?{only} "
            "GROUP BY task_id, dimension ORDER BY task_id, dimension", (full, *(tasks or ()))).fetchall()
    return [(str(t), str(d), float(m), int(n)) for t, d, m, n in found]


def dimension_overall(store: Store, run_id: str) -> dict[str, tuple[float, int]]:
    """dimension → (mean score over every scored attempt of the run, attempts scored)."""
    full = store.resolve_run_id(run_id)
    with store._read() as conn:
        found = conn.execute("SELECT dimension, avg(score), count(*) FROM dimension_scores WHERE run_id = ? "
                             "GROUP BY dimension ORDER BY dimension", (full,)).fetchall()
    return {str(d): (float(m), int(n)) for d, m, n in found}
