"""Store(read_only=True): nothing can be written, the file's bytes stay as they were, old schemas are refused."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from aeh.errors import StoreError, StoreWriteError
from aeh.store import Store, open_store


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_read_only_reads_and_refuses_writes(mock_db):
    db, run_a, _ = mock_db
    before = _digest(db)
    with Store(db, read_only=True) as store:
        assert store.run_info(run_a).run_id == run_a
        assert store.attempts_frame(run_a).height > 0
        with pytest.raises(StoreWriteError, match="read-only"):
            store.update_run(run_a, status="failed")
        with pytest.raises(sqlite3.OperationalError):  # query_only: even raw SQL cannot write
            store._conn.execute("DELETE FROM runs")  # type: ignore[union-attr]
    assert _digest(db) == before


def test_read_only_never_creates_a_file(tmp_path):
    missing = tmp_path / "none" / "runs.db"
    with pytest.raises(StoreError, match="never creates"):
        Store(missing, read_only=True)
    with pytest.raises(StoreError, match="no run store"):
        open_store(missing, read_only=True)
    assert not missing.parent.exists()


def test_a_store_with_pending_migrations_is_refused_with_the_fix(tmp_path):
    path = tmp_path / "old.db"
    with Store(path):
        pass
    conn = sqlite3.connect(path)
    newest = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
    conn.execute("DELETE FROM schema_migrations WHERE version = ?", (newest,))
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=r"aeh runs --db"):
        Store(path, read_only=True)
