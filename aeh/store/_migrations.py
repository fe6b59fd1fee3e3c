"""Versioned schema migrations: one `Migrations` object owns the ordered set, recorded in
`schema_migrations` (the shape of sqlite-utils' `Migrations`).

How to add a migration (e.g. for judge exchanges):

    from aeh.store import migration

    @migration(3)
    def judge_exchanges(conn: sqlite3.Connection) -> None:
        "Store every judge request/response pair."
        conn.execute("CREATE TABLE judge_exchanges (...)")

aeh's own migrations are listed in one table at the end of this module, so a store can never
open with half the schema known. Rules: versions are contiguous integers starting at 1 and
never change once released; a migration body runs inside the transaction `apply` opened,
so use `conn.execute` only — never `executescript` or `commit`, which would end it early.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from aeh.errors import StoreError
from aeh.store._config_schema import typed_run_config
from aeh.store._labels_schema import human_labels
from aeh.store._owner_schema import run_owner
from aeh.store._packed import packed_span_attributes
from aeh.store._scores_schema import dimension_score_index, dimension_scores
from aeh.store._timing_schema import attempt_time_split
from aeh.store._totals import task_totals_cache

__all__ = [
    "Migration",
    "Migrations",
    "applied_versions",
    "migrate",
    "migration",
    "registered_migrations",
    "schema",
]

MigrationFn = Callable[[sqlite3.Connection], None]


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    fn: MigrationFn


class Migrations:
    """An ordered set of schema migrations, registered by decorator and applied in order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._by_version: dict[int, Migration] = {}

    def __call__(self, version: int) -> Callable[[MigrationFn], MigrationFn]:
        """Register `fn` as migration `version`. Duplicate versions fail at import time."""
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValueError(f"migration version must be an int >= 1, got {version!r}")

        def register(fn: MigrationFn) -> MigrationFn:
            name = f"{fn.__module__}.{fn.__qualname__}"
            known = self._by_version.get(version)
            # Re-importing the same module (importlib.reload, notebooks) re-registers the same name.
            if known is not None and known.name != name:
                raise ValueError(f"migration {version} is already registered by {known.name}")
            self._by_version[version] = Migration(version, name, fn)
            return fn

        return register

    def ordered(self) -> list[Migration]:
        """Every migration in version order; a gap in the numbering is a StoreError."""
        found = sorted(self._by_version)
        if found != list(range(1, len(found) + 1)):
            raise StoreError(f"schema migrations must be numbered 1..N without gaps, got {found}")
        return [self._by_version[v] for v in found]

    def copy(self, up_to: int) -> Migrations:
        """A new set holding this one's migrations up to version `up_to` (tests build on it)."""
        fresh = Migrations(self.name)
        fresh._by_version = {v: m for v, m in self._by_version.items() if v <= up_to}
        return fresh

    def apply(self, conn: sqlite3.Connection) -> list[int]:
        """Apply pending migrations in order, one transaction each; return the versions applied.

        `conn` must be in autocommit mode (`isolation_level=None`) so the explicit BEGIN here is
        the only transaction. Opening an up-to-date database takes no write lock; when two
        processes migrate one database at once, the version check repeats under the write lock.
        """
        known = self.ordered()
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
                        (m.version, m.name, datetime.now(UTC).isoformat()),
                    )
                    done.append(m.version)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return done


#: aeh's store schema.
schema = Migrations("aeh")


def migration(version: int) -> Callable[[MigrationFn], MigrationFn]:
    """Register a migration on the store schema (`schema`)."""
    return schema(version)


def registered_migrations() -> list[Migration]:
    """The store schema's migrations, in version order."""
    return schema.ordered()


def migrate(conn: sqlite3.Connection) -> list[int]:
    """Apply the store schema's pending migrations; return the versions applied."""
    return schema.apply(conn)


def applied_versions(conn: sqlite3.Connection) -> list[int]:
    """Versions recorded in `schema_migrations`, ascending; empty for a fresh database."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if exists is None:
        return []
    return [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]


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


# Every migration of aeh's own schema, in one visible place: version → function.
for _version, _fn in {
    1: initial_schema,
    2: human_labels,
    3: attempt_time_split,
    4: dimension_scores,
    5: run_owner,
    6: packed_span_attributes,
    7: typed_run_config,
    8: task_totals_cache,
    9: dimension_score_index,
}.items():
    schema(_version)(_fn)
