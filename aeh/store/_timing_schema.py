"""Schema migration 3: the split of an attempt's time (agent, queue, grading).

Older stores gain three nullable columns; their attempts read back with None there (and their
`latency_s` is the old whole wall-clock, grading included).
"""

from __future__ import annotations

import sqlite3

TIMING_COLUMNS = ("agent_s", "queue_s", "grading_s")


def attempt_time_split(conn: sqlite3.Connection) -> None:
    """attempts.agent_s, queue_s, grading_s (NULL for attempts stored before)."""
    for column in TIMING_COLUMNS:
        conn.execute(f"ALTER TABLE attempts ADD COLUMN {column} REAL")
