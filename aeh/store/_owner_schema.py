"""Schema migration 5: who is running a run, and when it last showed a sign of life.

A run killed with SIGKILL never writes its final status; these columns let readers tell a
live `running` run from a dead one (see `aeh.store._liveness`). Older runs read back None.
"""

from __future__ import annotations

import sqlite3

OWNER_COLUMNS = (("owner_pid", "INTEGER"), ("owner_host", "TEXT"), ("heartbeat_at", "TEXT"))


def run_owner(conn: sqlite3.Connection) -> None:
    """runs.owner_pid, owner_host, heartbeat_at (NULL for runs stored before)."""
    for column, kind in OWNER_COLUMNS:
        conn.execute(f"ALTER TABLE runs ADD COLUMN {column} {kind}")
