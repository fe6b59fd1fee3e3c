"""Schema migrations: recorded, idempotent, ordered, transactional."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from aeh.errors import StoreError
from aeh.store import Store, _migrations, applied_versions, migrate, migration, registered_migrations


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> _migrations.Migrations:
    """A private set holding only the initial schema, so test migrations do not leak and
    the shipped later migrations do not take the version numbers these tests use."""
    private = _migrations.schema.copy(up_to=1)
    monkeypatch.setattr(_migrations, "schema", private)
    return private


def _conn(path: Path | str = ":memory:") -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_fresh_db_has_all_tables_and_version_1(db_path: Path) -> None:
    Store(db_path).close()
    conn = _conn(db_path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"runs", "attempts", "spans", "grader_results", "schema_migrations"} <= tables
    rows = conn.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
    assert [r[0] for r in rows] == [m.version for m in registered_migrations()]
    assert rows[0][1].endswith("initial_schema") and rows[0][2]


def test_opening_twice_does_not_reapply(db_path: Path) -> None:
    Store(db_path).close()
    before = _conn(db_path).execute("SELECT * FROM schema_migrations").fetchall()
    Store(db_path).close()
    assert _conn(db_path).execute("SELECT * FROM schema_migrations").fetchall() == before
    assert migrate(_conn(db_path)) == []


def test_wal_mode_on_file_db(file_store: Store, db_path: Path) -> None:
    assert _conn(db_path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_spans_index_exists(file_store: Store, db_path: Path) -> None:
    plan = _conn(db_path).execute(
        "EXPLAIN QUERY PLAN SELECT * FROM spans WHERE run_id=? AND task_id=? AND attempt=?",
        ("r", "t", 0),
    ).fetchall()
    assert "spans_attempt" in str(plan) or "sqlite_autoindex_spans" in str(plan)


def test_a_runs_mean_score_per_dimension_reads_only_an_index(file_store: Store, db_path: Path) -> None:
    plan = _conn(db_path).execute(
        "EXPLAIN QUERY PLAN SELECT dimension, avg(score), count(*) FROM dimension_scores WHERE run_id = ? "
        "GROUP BY dimension ORDER BY dimension", ("r",)).fetchall()
    assert "COVERING INDEX dimension_scores_overall" in str(plan) and "TEMP B-TREE" not in str(plan)


def test_new_migration_applies_in_order_and_once(registry: _migrations.Migrations) -> None:
    conn = _conn()
    assert migrate(conn) == [1]

    @migration(2)
    def add_judge(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE judge_exchanges (id INTEGER PRIMARY KEY)")

    assert migrate(conn) == [2]
    assert applied_versions(conn) == [1, 2]
    assert migrate(conn) == []
    conn.execute("INSERT INTO judge_exchanges DEFAULT VALUES")


def test_failing_migration_rolls_back(registry: _migrations.Migrations) -> None:
    conn = _conn()
    migrate(conn)

    @migration(2)
    def half_done(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE half (x)")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        migrate(conn)
    assert applied_versions(conn) == [1]
    assert conn.execute("SELECT name FROM sqlite_master WHERE name='half'").fetchone() is None


def test_duplicate_version_is_rejected(registry: _migrations.Migrations) -> None:
    with pytest.raises(ValueError, match="already registered"):

        @migration(1)
        def other(c: sqlite3.Connection) -> None: ...


def test_gap_in_versions_is_rejected(registry: _migrations.Migrations) -> None:
    @migration(3)
    def skipped_two(c: sqlite3.Connection) -> None: ...

    with pytest.raises(StoreError, match="without gaps"):
        migrate(_conn())


def test_db_newer_than_code_is_refused(db_path: Path) -> None:
    Store(db_path).close()
    _conn(db_path).execute("INSERT INTO schema_migrations VALUES (99, 'future', 'now')")
    with pytest.raises(StoreError, match="upgrade aeh"):
        Store(db_path)


def test_migrations_apply_in_version_order_whatever_the_registration_order() -> None:
    ordered = _migrations.Migrations("test")

    @ordered(2)
    def second(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE b (x REFERENCES a (x))")

    @ordered(1)
    def first(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE a (x PRIMARY KEY)")

    assert [m.version for m in ordered.ordered()] == [1, 2]
    assert ordered.apply(_conn()) == [1, 2]


def test_every_store_migration_is_known_without_importing_anything_else() -> None:
    assert [m.version for m in registered_migrations()] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
