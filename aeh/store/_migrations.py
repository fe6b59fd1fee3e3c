"""Versioned schema migrations, registered by decorator and recorded in `schema_migrations`.

How to add a migration (e.g. for judge exchanges) from any module:

    from aeh.store import migration

    @migration(2)
    def judge_exchanges(conn: sqlite3.Connection) -> None:
        "Store every judge request/response pair."
        conn.execute("CREATE TABLE judge_exchanges (...)")

then add that module's dotted name to `MIGRATION_MODULES` below (or call
`register_migration_module("aeh.grading._judge_schema")` before opening a store), so `migrate`
imports it even when nothing else has. Rules: versions are contiguous integers starting at 1
and never change once released; a migration body runs inside the transaction `migrate` opened,
so use `conn.execute` only — never `executescript` or `commit`, which would end it early.
"""

from __future__ import annotations

import importlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

from aeh.errors import StoreError

__all__ = [
    "MIGRATION_MODULES",
    "Migration",
    "applied_versions",
    "migrate",
    "migration",
    "register_migration_module",
    "registered_migrations",
]

MigrationFn = Callable[[sqlite3.Connection], None]

#: Modules that define migrations; `migrate` imports them all before applying anything, so a
#: store opened early still gets every table. Append new modules here.
MIGRATION_MODULES: list[str] = ["aeh.store._migrations", "aeh.store._labels",
                                 "aeh.store._timing_schema"]


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    fn: MigrationFn


_REGISTRY: dict[int, Migration] = {}


def migration(version: int) -> Callable[[MigrationFn], MigrationFn]:
    """Register `fn` as schema migration `version`. Duplicate versions fail at import time."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"migration version must be an int >= 1, got {version!r}")

    def register(fn: MigrationFn) -> MigrationFn:
        name = f"{fn.__module__}.{fn.__qualname__}"
        known = _REGISTRY.get(version)
        # Re-importing the same module (importlib.reload, notebooks) re-registers the same name.
        if known is not None and known.name != name:
            raise ValueError(f"migration {version} is already registered by {known.name}")
        _REGISTRY[version] = Migration(version, name, fn)
        return fn

    return register


def register_migration_module(module: str) -> None:
    """Make `migrate` import `module` (which defines `@migration` functions) before it runs."""
    if module not in MIGRATION_MODULES:
        MIGRATION_MODULES.append(module)


def registered_migrations() -> list[Migration]:
    """Every known migration, in version order (after importing MIGRATION_MODULES)."""
    for module in list(MIGRATION_MODULES):
        importlib.import_module(module)
    found = sorted(_REGISTRY)
    if found != list(range(1, len(found) + 1)):
        raise StoreError(f"schema migrations must be numbered 1..N without gaps, got {found}")
    return [_REGISTRY[v] for v in found]


def applied_versions(conn: sqlite3.Connection) -> list[int]:
    """Versions recorded in `schema_migrations`, ascending; empty for a fresh database."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if exists is None:
        return []
    return [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]


def migrate(conn: sqlite3.Connection) -> list[int]:
    """Apply pending migrations in order, one transaction each; return the versions applied.

    `conn` must be in autocommit mode (`isolation_level=None`) so the explicit BEGIN here is
    the only transaction. Opening an up-to-date database takes no write lock; when two
    processes migrate one database at once, the version check repeats under the write lock.
    """
    known = registered_migrations()
    newest = known[-1].version if known else 0
    applied = applied_versions(conn)
    _check_not_newer(applied, newest)
    done: list[int] = []
    for m in known:
        if m.version in applied:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            if m.version not in applied_versions(conn):
                m.fn(conn)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (m.version, m.name, datetime.now(timezone.utc).isoformat()),
                )
                done.append(m.version)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return done


def _check_not_newer(applied: list[int], newest: int) -> None:
    if applied and applied[-1] > newest:
        raise StoreError(
            f"database schema is at version {applied[-1]} but this aeh knows only up to "
            f"{newest} — upgrade aeh to open it"
        )


def _run(conn: sqlite3.Connection, script: str) -> None:
    # executescript would COMMIT the surrounding transaction, so split statements ourselves.
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


@migration(1)
def initial_schema(conn: sqlite3.Connection) -> None:
    """Runs, attempts, spans and grader results."""
    _run(
        conn,
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, finished_at TEXT,
            status TEXT NOT NULL, aeh_version TEXT NOT NULL, suite TEXT NOT NULL,
            suite_hash TEXT NOT NULL, adapter TEXT NOT NULL, model TEXT, seed INTEGER NOT NULL,
            attempts INTEGER NOT NULL, concurrency INTEGER NOT NULL,
            price_table_version TEXT NOT NULL, price_table_date TEXT NOT NULL,
            judge_model TEXT, tier2_prompt_version TEXT, parent_run_id TEXT,
            fault_profile TEXT, config TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX runs_created ON runs (created_at);
        CREATE TABLE attempts (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            task_id TEXT NOT NULL, attempt INTEGER NOT NULL, seed INTEGER NOT NULL,
            success INTEGER NOT NULL, clean_success INTEGER NOT NULL, status TEXT NOT NULL,
            failure_bucket TEXT, final_output TEXT, error TEXT,
            tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL,
            cost_usd REAL,  -- NULL means unpriced, never free
            latency_s REAL NOT NULL, steps INTEGER NOT NULL, n_tool_calls INTEGER NOT NULL,
            n_injected_faults INTEGER NOT NULL, needs_human_review INTEGER NOT NULL,
            root_span_id TEXT, tool_calls TEXT NOT NULL, invariant_results TEXT NOT NULL,
            PRIMARY KEY (run_id, task_id, attempt)
        );
        CREATE TABLE spans (
            run_id TEXT NOT NULL, task_id TEXT NOT NULL, attempt INTEGER NOT NULL,
            span_id TEXT NOT NULL, parent_span_id TEXT, category TEXT NOT NULL,
            name TEXT NOT NULL, start_ts REAL NOT NULL, end_ts REAL, status TEXT NOT NULL,
            attributes TEXT NOT NULL,
            PRIMARY KEY (run_id, span_id),
            FOREIGN KEY (run_id, task_id, attempt)
                REFERENCES attempts (run_id, task_id, attempt) ON DELETE CASCADE
        );
        CREATE INDEX spans_attempt ON spans (run_id, task_id, attempt);
        CREATE TABLE grader_results (
            run_id TEXT NOT NULL, task_id TEXT NOT NULL, attempt INTEGER NOT NULL,
            tier INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
            passed INTEGER,  -- NULL: the grader could not decide
            evidence TEXT NOT NULL, error TEXT,
            FOREIGN KEY (run_id, task_id, attempt)
                REFERENCES attempts (run_id, task_id, attempt) ON DELETE CASCADE
        );
        CREATE INDEX grader_results_attempt ON grader_results (run_id, task_id, attempt)
        """,
    )
