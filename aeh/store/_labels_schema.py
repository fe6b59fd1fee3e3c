"""Schema migration 2: human labels, one per attempt, imported from `aeh review` exports."""

from __future__ import annotations

import sqlite3

__all__ = ["human_labels"]


def human_labels(conn: sqlite3.Connection) -> None:
    """Human verdicts on attempts, imported from `aeh review` exports."""
    conn.execute(
        "CREATE TABLE human_labels ("
        " run_id TEXT NOT NULL, task_id TEXT NOT NULL, attempt INTEGER NOT NULL,"
        " label INTEGER NOT NULL, reviewer TEXT, note TEXT, created_at TEXT NOT NULL,"
        " PRIMARY KEY (run_id, task_id, attempt),"
        " FOREIGN KEY (run_id, task_id, attempt)"
        "  REFERENCES attempts (run_id, task_id, attempt) ON DELETE CASCADE)"
    )
