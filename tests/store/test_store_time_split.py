"""Migration 3 adds the attempt time split; a store written before it stays readable."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aeh.analysis import run_table
from aeh.store import Store, applied_versions
from aeh.store._migrations import registered_migrations


def _old_store(path: Path) -> None:
    """A store at schema version 2 (before the time split) holding one attempt."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                 "applied_at TEXT NOT NULL)")
    for m in registered_migrations()[:2]:
        conn.execute("BEGIN")
        m.fn(conn)
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 'then')", (m.version, m.name))
        conn.execute("COMMIT")
    conn.execute(
        "INSERT INTO runs (run_id, created_at, status, aeh_version, suite, suite_hash, adapter, seed, "
        "attempts, concurrency, price_table_version, price_table_date, config) VALUES "
        "('old-run', '2026-01-01', 'finished', '0.1', 'toy', 'h', 'mock', 1, 1, 1, 'v', 'd', '{}')")
    conn.execute(
        "INSERT INTO attempts (run_id, task_id, attempt, seed, success, clean_success, status, "
        "tokens_in, tokens_out, cost_usd, latency_s, steps, n_tool_calls, n_injected_faults, "
        "needs_human_review, tool_calls, invariant_results) VALUES "
        "('old-run', 't', 0, 1, 1, 1, 'answered', 1, 1, 0.0, 2.5, 0, 0, 0, 0, '[]', '[]')")
    conn.close()


def test_an_old_store_is_migrated_and_reads_back_without_the_split(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _old_store(path)
    store = Store(path)
    assert 3 in applied_versions(store._conn)
    a = store.attempt_record("old-run", "t", 0)
    assert a.latency_s == 2.5 and (a.agent_s, a.queue_s, a.grading_s) == (None, None, None)
    table = run_table("old-run", store)
    assert table.table.loc[0, "latency_p50_s"] == 2.5 and table.warnings == []
    store.close()
