"""Per-task totals of a finished run, kept in the store (schema migration 8).

A run's per-task totals (counts, buckets, token, cost and time sums) are one `GROUP BY task_id`
over its attempts: ~0.05 s CPU on 100k attempts, several times that on a loaded machine, and
the viewer needs them on every click that opens a run or compares two. A finished run's totals
do not change, so they are computed when the run is marked finished (`Store.update_run`, a
merge, this migration for runs finished before it) and stored as one row of
`task_totals_cache`; `Store.task_aggregates` answers from it when every aggregate asked for is
one of `TASK_TOTALS`.

An entry is served only while it describes the attempts the run has now: it carries the run's
attempt count and largest attempts rowid at the time it was computed. Attempts are only ever
inserted (a resume, a merge into the run), and every insert raises the largest rowid, so a run
that gained attempts since misses the entry and is aggregated afresh. An entry also carries a
digest of `TASK_TOTALS`: one written by an aeh with other expressions is never read.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from aeh.models import FAILURE_PRIORITY

__all__ = ["AGENT_BUCKETS", "HARNESS_BUCKET", "TASK_TOTALS", "recall", "remember", "task_totals_cache"]

HARNESS_BUCKET = "harness_error"
AGENT_BUCKETS = [b for b in FAILURE_PRIORITY if b != HARNESS_BUCKET]

_HARNESS = f"failure_bucket = '{HARNESS_BUCKET}'"
_VALID = f"failure_bucket IS NOT '{HARNESS_BUCKET}'"  # IS NOT: a NULL bucket (a success) is valid


def _count(where: str) -> str:
    # FILTER skips the aggregate step for other rows: a third faster than sum(<condition>).
    return f"count(*) FILTER (WHERE {where})"


#: name → SQL aggregate over a task's attempts: everything of the per-task table but latency
#: (whose quantiles SQLite cannot take), in the order of its columns.
TASK_TOTALS: dict[str, str] = {
    "attempts": "count(*)",
    "n": _count(_VALID),
    "successes": _count(f"success AND {_VALID}"),
    "clean_successes": _count(f"clean_success AND success AND {_VALID}"),
    "successes_breaking_invariants": _count(f"success AND NOT clean_success AND {_VALID}"),
    "harness_errors": _count(_HARNESS),
    # An agent bucket is never a harness error, so no validity test is needed.
    **{f"fail_{b}": _count(f"failure_bucket = '{b}'") for b in AGENT_BUCKETS},
    "tokens_in": "sum(tokens_in)",
    "tokens_out": "sum(tokens_out)",
    "_unpriced": "count(cost_usd) < count(*)",
    "cost_usd": "total(cost_usd)",
    "injected_faults": "sum(n_injected_faults)",
    "tool_calls": "sum(n_tool_calls)",
    # total(): 0.0 when every value is NULL (a run stored before the time split).
    "queue_s": "total(queue_s)",
    "grading_s": "total(grading_s)",
    "needs_review": _count("needs_human_review"),
}

_DIGEST = hashlib.sha256(json.dumps(list(TASK_TOTALS.items())).encode()).hexdigest()[:16]
_NAMES = list(TASK_TOTALS)


def task_totals_cache(conn: sqlite3.Connection) -> None:
    """task_totals_cache: per run, its per-task totals as JSON rows, with the attempt count and
    largest attempts rowid they describe; filled for every run already finished."""
    conn.execute(
        "CREATE TABLE task_totals_cache ("
        " run_id TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,"
        " digest TEXT NOT NULL, attempts INTEGER NOT NULL, max_rowid INTEGER NOT NULL,"
        " columns TEXT NOT NULL, rows TEXT NOT NULL)"
    )
    for (run_id,) in conn.execute("SELECT run_id FROM runs WHERE status = 'finished'").fetchall():
        remember(conn, run_id)


def _key(conn: sqlite3.Connection, run_id: str) -> tuple[int, int]:
    """The run's attempt count and largest attempts rowid (one pass over the primary-key index)."""
    count, top = conn.execute("SELECT count(*), coalesce(max(rowid), 0) FROM attempts WHERE run_id = ?",
                              (run_id,)).fetchone()
    return int(count), int(top)


def remember(conn: sqlite3.Connection, run_id: str) -> None:
    """Compute run `run_id`'s per-task totals and store them (inside the caller's transaction)."""
    exprs = ", ".join(TASK_TOTALS.values())
    rows = conn.execute(f"SELECT task_id, {exprs} FROM attempts WHERE run_id = ? GROUP BY task_id ORDER BY task_id",
                        (run_id,)).fetchall()
    count, top = _key(conn, run_id)
    conn.execute("INSERT OR REPLACE INTO task_totals_cache (run_id, digest, attempts, max_rowid, columns, rows) "
                 "VALUES (?, ?, ?, ?, ?, ?)",
                 (run_id, _DIGEST, count, top, json.dumps(_NAMES), json.dumps([tuple(r) for r in rows])))


def recall(conn: sqlite3.Connection, run_id: str, names: Iterable[tuple[str, str]]) -> list[tuple[Any, ...]] | None:
    """The stored totals of run `run_id` as rows (task_id, then the aggregates `names`, each
    (name, SQL)), ordered by task_id; None when there is no entry that still describes the
    run's attempts, or an aggregate asked for is not one of `TASK_TOTALS`."""
    wanted = list(names)
    if any(TASK_TOTALS.get(name) != sql for name, sql in wanted):
        return None
    entry = conn.execute("SELECT attempts, max_rowid, columns, rows FROM task_totals_cache "
                         "WHERE run_id = ? AND digest = ?", (run_id, _DIGEST)).fetchone()
    if entry is None or (entry[0], entry[1]) != _key(conn, run_id):
        return None
    columns = json.loads(entry[2])
    at = [0] + [1 + columns.index(name) for name, _ in wanted]
    return [tuple(row[i] for i in at) for row in json.loads(entry[3])]
