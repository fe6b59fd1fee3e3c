"""The run store: one SQLite file (WAL) holding runs, attempts, spans and grader results."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from aeh._util.lazy import lazy_module
from aeh.errors import RunNotFoundError, StoreError, StoreWriteError
from aeh.models import Attempt, RunInfo, Span
from aeh.store import _rows as rows
from aeh.store import _totals as totals
from aeh.store._errors import AmbiguousRunIdError, explain, integrity_hint, is_busy, is_store_failure
from aeh.store._liveness import with_liveness
from aeh.store._migrations import applied_versions, migrate, registered_migrations
from aeh.store._packed import ATTRIBUTES_SQL, register_unpack
from aeh.store._redact import Redactor
from aeh.trace import compact_attributes, full_inputs

if TYPE_CHECKING:
    import polars as pl

    from aeh.store import _frames as frames
else:
    # heavy: polars loads when a frame is first read, so writing a run never imports it
    pl = lazy_module("polars")
    frames = lazy_module("aeh.store._frames")

__all__ = ["Store", "open_stores", "unclosed_stores"]

_MEMORY = ":memory:"
_BUSY_TIMEOUT_S = 30.0
_LOCK_RETRIES = 4
_MAX_BACKOFF_S = 10.0
_CHUNK_ROWS = 50_000


#: Every Store currently open, and the paths of those garbage-collected while still open.
#: Tests assert both stay empty: the library closes every store it opens.
_OPEN: weakref.WeakSet[Store] = weakref.WeakSet()
_UNCLOSED: list[str] = []


def open_stores() -> list[Store]:
    """The stores open right now (a store a caller forgot to close shows up here)."""
    return list(_OPEN)


def unclosed_stores() -> list[str]:
    """Paths of stores that were garbage-collected without being closed, since start-up."""
    return list(_UNCLOSED)


class Store:
    """Runs, attempts, spans and grader results in SQLite, redacted before they are written.

    One connection, shared across threads behind a lock: the engine writes from its event
    loop while a notebook may read from another thread. Use as a context manager or `close()`.
    """

    def __init__(self, path: str | Path = "runs.db", *, redactor: Redactor | None = None,
                 busy_timeout_s: float | None = None, lock_retries: int | None = None,
                 read_only: bool = False) -> None:
        """`busy_timeout_s` (env AEH_STORE_BUSY_TIMEOUT_S, default 30): how long one write waits
        for another process's write lock; `lock_retries` (env AEH_STORE_LOCK_RETRIES, default 4):
        how many more times it waits, with growing pauses between, before a StoreWriteError.

        `read_only`: open an existing file for reading only (SQLite `mode=ro`, `query_only`): no
        migration, no journal-mode switch, and every write is refused, so viewers cannot change
        the store's bytes. A store whose schema is older than this aeh is refused with the fix."""
        self.path = str(path)
        self.read_only = read_only
        self.redactor = redactor if redactor is not None else Redactor()
        self.busy_timeout_s = _setting(busy_timeout_s, "AEH_STORE_BUSY_TIMEOUT_S", _BUSY_TIMEOUT_S)
        self.lock_retries = int(_setting(lock_retries, "AEH_STORE_LOCK_RETRIES", _LOCK_RETRIES))
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        try:
            if read_only:
                conn = _connect_read_only(self.path, self.busy_timeout_s)
                self._conn = conn
                _check_schema_current(conn, self.path)
                _OPEN.add(self)
                return
            if self.path != _MEMORY:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            # Autocommit mode: every transaction below is an explicit BEGIN … COMMIT.
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False
            )
            self._conn = conn
            _prepare_connection(conn, self.busy_timeout_s)
            _OPEN.add(self)
        except (sqlite3.Error, OSError) as exc:
            self.close()
            raise StoreError(explain(self.path, exc)) from exc
        except BaseException:
            self.close()
            raise

    @classmethod
    def memory(cls, *, redactor: Redactor | None = None) -> Store:
        """A private in-memory store, for tests and throwaway runs."""
        return cls(_MEMORY, redactor=redactor)

    def close(self) -> None:
        """Close the connection; safe to call twice."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            _OPEN.discard(self)

    def __del__(self) -> None:
        # A store dropped while open leaked its connection until now: count it, then close.
        if getattr(self, "_conn", None) is not None:
            _UNCLOSED.append(self.path)
            self.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.path!r})"

    # -- plumbing -------------------------------------------------------------------------

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                raise StoreError(f"store {self.path} is closed — open a new Store({self.path!r})")
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise StoreError(explain(self.path, exc)) from exc

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; rolled back whole on any error.

        Lock contention is retried (`_begin`); a failure of the store itself (full disk, I/O,
        a lock never released) is a StoreWriteError carrying SQLite's own message.
        """
        if self.read_only:
            raise StoreWriteError(f"store {self.path} is open read-only — open it with Store({self.path!r}) to write")
        with self._read() as conn:
            self._begin(conn)
            try:
                yield conn
                conn.execute("COMMIT")
            except sqlite3.IntegrityError as exc:
                _rollback(conn)
                raise StoreError(integrity_hint(self.path, exc)) from exc
            except sqlite3.OperationalError as exc:
                _rollback(conn)
                if is_store_failure(exc):
                    raise StoreWriteError(explain(self.path, exc)) from exc
                raise
            except BaseException:
                _rollback(conn)
                raise

    def _begin(self, conn: sqlite3.Connection) -> None:
        """BEGIN IMMEDIATE, waiting out another writer: each try waits `busy_timeout_s` for the
        lock, then pauses (0.5 s, doubling, at most 10 s) before the next, `lock_retries` times."""
        started = time.monotonic()
        for attempt in range(self.lock_retries + 1):
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    if is_store_failure(exc):
                        raise StoreWriteError(explain(self.path, exc)) from exc
                    raise
                if attempt == self.lock_retries:
                    waited = time.monotonic() - started
                    raise StoreWriteError(
                        f"{explain(self.path, exc)} (gave up after {attempt + 1} tries over {waited:.1f} s; "
                        "AEH_STORE_BUSY_TIMEOUT_S and AEH_STORE_LOCK_RETRIES set how long to wait)"
                    ) from exc
                time.sleep(min(0.5 * 2**attempt, _MAX_BACKOFF_S))

    # -- writes ---------------------------------------------------------------------------

    def create_run(self, info: RunInfo) -> None:
        """Record a new run; a run id that already exists is an error."""
        marks = ", ".join("?" * len(rows.RUN_COLUMNS))
        with self._write() as conn:
            conn.execute(
                f"INSERT INTO runs ({', '.join(rows.RUN_COLUMNS)}) VALUES ({marks})",
                rows.run_row(info, self.redactor),
            )

    def update_run(self, run_id: str, **fields: Any) -> None:
        """Change run columns, e.g. `update_run(rid, status="finished", finished_at=ts)`."""
        bad = sorted(set(fields) - set(rows.RUN_COLUMNS[1:]))
        if bad:
            raise StoreError(f"cannot update run field(s) {bad}; valid: {rows.RUN_COLUMNS[1:]}")
        if not fields:
            return
        values = [rows.encode_run_field(c, v, self.redactor) for c, v in fields.items()]
        sets = ", ".join(f"{c} = ?" for c in fields)
        with self._write() as conn:
            cur = conn.execute(f"UPDATE runs SET {sets} WHERE run_id = ?", (*values, run_id))
            if cur.rowcount == 0:
                raise RunNotFoundError(run_id, self.path)
            if fields.get("status") == "finished":  # its per-task totals, stored for readers (_totals)
                totals.remember(conn, run_id)

    def write_attempt(self, attempt: Attempt, spans: Sequence[Span] = ()) -> None:
        """Store one attempt with its spans and grader results in one transaction."""
        self.write_attempts([(attempt, spans)])

    def write_attempts(self, batch: Iterable[tuple[Attempt, Sequence[Span]]]) -> None:
        """Store many attempts (bulk import) in one transaction."""
        a_rows: list[tuple[Any, ...]] = []
        s_rows: list[tuple[Any, ...]] = []
        g_rows: list[tuple[Any, ...]] = []
        d_rows: list[tuple[Any, ...]] = []
        for attempt, spans in batch:  # redaction happens here, before any SQL runs
            key = (attempt.run_id, attempt.task_id, attempt.attempt)
            # A growing conversation is stored once, not once per call.
            for s, attributes in zip(spans, compact_attributes(spans), strict=True):
                if (s.run_id, s.task_id, s.attempt) != key:
                    raise StoreError(
                        f"span {s.span_id} belongs to {(s.run_id, s.task_id, s.attempt)}, "
                        f"not to attempt {key} — pass each attempt only its own spans"
                    )
                s_rows.append(rows.span_row(s, self.redactor, attributes))
            a_rows.append(rows.attempt_row(attempt, self.redactor))
            g_rows.extend(rows.grader_rows(attempt, self.redactor))
            d_rows.extend((*key, d["dimension"], float(d["score"]), rows.to_json(d["evidence"], self.redactor))
                          for d in attempt.dimension_scores)
        with self._write() as conn:
            conn.executemany(_insert("attempts", rows.ATTEMPT_COLUMNS), a_rows)
            conn.executemany(_insert("spans", rows.SPAN_COLUMNS), s_rows)
            conn.executemany(_insert("grader_results", rows.GRADER_COLUMNS), g_rows)
            if d_rows:  # scored as the attempt ended: stored in the same transaction
                conn.executemany(
                    "INSERT OR REPLACE INTO dimension_scores (run_id, task_id, attempt, dimension, score, evidence) "
                    "VALUES (?, ?, ?, ?, ?, ?)", d_rows)

    def write_spans(self, spans: Sequence[Span]) -> None:
        """Add spans to attempts already stored (e.g. a judge's exchanges when scoring later)."""
        s_rows = [rows.span_row(s, self.redactor, attributes)
                  for s, attributes in zip(spans, compact_attributes(spans), strict=True)]
        with self._write() as conn:
            conn.executemany(_insert("spans", rows.SPAN_COLUMNS), s_rows)

    def write_dimension_scores(self, run_id: str, scores: Iterable[tuple[str, int, str, float, str]]) -> None:
        """Store (task_id, attempt, dimension, score, evidence JSON) rows of a run, replacing any
        earlier scores of the same attempt and dimension (re-scoring is idempotent)."""
        full = self.resolve_run_id(run_id)
        batch = [(full, t, a, d, float(s), self.redactor.redact_text(e))
                 for t, a, d, s, e in scores]
        with self._write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO dimension_scores (run_id, task_id, attempt, dimension, score, evidence) "
                "VALUES (?, ?, ?, ?, ?, ?)", batch)

    def dimension_scores_frame(self, run_id: str, task_id: str | None = None,
                               attempt: int | None = None) -> pl.DataFrame:
        """Stored dimension scores of the run (optionally of one task / attempt): task_id, attempt,
        dimension, score, evidence."""
        where, params = _attempt_filter(self.resolve_run_id(run_id), task_id, attempt)
        return self._frame(
            f"SELECT task_id, attempt, dimension, score, evidence FROM dimension_scores WHERE {where} "
            "ORDER BY task_id, attempt, dimension", params,
            {"task_id": pl.Utf8(), "attempt": pl.Int64(), "dimension": pl.Utf8(), "score": pl.Float64(),
             "evidence": pl.Utf8()},
        )

    def has_dimension_scores(self, run_id: str) -> bool:
        """Whether the run has stored dimension scores (a yes or no, no frame built)."""
        with self._read() as conn:
            found = conn.execute("SELECT 1 FROM dimension_scores WHERE run_id = ? LIMIT 1",
                                 (self.resolve_run_id(run_id),)).fetchone()
        return found is not None

    # -- run lookup -----------------------------------------------------------------------

    def resolve_run_id(self, run_id: str) -> str:
        """The full id of the run `run_id` names exactly or by a unique prefix."""
        with self._read() as conn:
            if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone():
                return run_id
            pattern = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            found: list[str] = [
                r[0]
                for r in conn.execute(
                    "SELECT run_id FROM runs WHERE run_id LIKE ? ESCAPE '\\' ORDER BY run_id "
                    "LIMIT 6",
                    (pattern,),
                )
                if r[0].startswith(run_id)  # LIKE ignores ASCII case; run ids do not
            ]
        if not run_id or not found:
            raise RunNotFoundError(run_id, self.path)
        if len(found) > 1:
            raise AmbiguousRunIdError(run_id, found, self.path)
        return found[0]

    def run_info(self, run_id: str) -> RunInfo:
        """The run's metadata; `run_id` may be a unique prefix."""
        full = self.resolve_run_id(run_id)
        cols = ", ".join(rows.RUN_COLUMNS)
        with self._read() as conn:
            row = conn.execute(f"SELECT {cols} FROM runs WHERE run_id = ?", (full,)).fetchone()
        return with_liveness(rows.run_from_row(row))

    def runs(self) -> list[RunInfo]:
        """Every stored run, newest first."""
        cols = ", ".join(rows.RUN_COLUMNS)
        with self._read() as conn:
            found = conn.execute(
                f"SELECT {cols} FROM runs ORDER BY created_at DESC, rowid DESC"
            ).fetchall()
        return [with_liveness(rows.run_from_row(r)) for r in found]

    def latest_run_id(self) -> str | None:
        """The newest run's id, or None for an empty store."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT run_id FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1"
            ).fetchone()
        return row[0] if row else None

    # -- frames ---------------------------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads inside the block see one state of the store (one read transaction), even while
        another process writes; the store is held by this thread until the block ends, so write
        nothing inside it."""
        with self._read() as conn, _snapshot(conn):
            yield

    def attempts_frame(self, run_id: str, columns: Sequence[str] | None = None, *,
                       failure_bucket: str | None = None, tasks: Sequence[str] | None = None) -> pl.DataFrame:
        """One row per attempt of the run, ordered by task and attempt (schema: ATTEMPTS_SCHEMA).

        `columns` picks a subset (readers that skip the JSON columns are much faster);
        `failure_bucket` keeps only the attempts in that bucket, `tasks` those of these tasks.
        """
        full = self.resolve_run_id(run_id)
        cols = _known(columns or rows.ATTEMPT_COLUMNS, frames.ATTEMPTS_SCHEMA, "attempt")
        where, params = _with_tasks(*_run_filter(full, failure_bucket=failure_bucket), tasks)
        return self._run_frame("attempts", full, where, params, cols, frames.ATTEMPTS_SCHEMA, "attempt")

    def task_aggregates(self, run_id: str, aggregates: Mapping[str, tuple[str, pl.DataType]], *,
                        tasks: Sequence[str] | None = None) -> pl.DataFrame:
        """One row per task of the run (of `tasks` only, if given), ordered by task_id: `task_id`,
        then one column per entry of `aggregates` (name → (SQL aggregate over the attempts
        columns, dtype)), e.g. `{"successes": ("sum(success)", pl.Int64())}`.

        SQLite aggregates the rows, so a thousand rows come back rather than every attempt. The
        expressions are the caller's code, never user input: they are pasted into the query.
        For the whole run, aggregates of `TASK_TOTALS` come from the totals stored when the run
        finished, while they still describe its attempts (`_totals`).
        """
        full = self.resolve_run_id(run_id)
        if tasks is None:
            with self._read() as conn:
                stored = totals.recall(conn, full, ((name, sql) for name, (sql, _) in aggregates.items()))
            if stored is not None:
                return self._rows_frame([stored], {"task_id": pl.String(),
                                                   **{name: dtype for name, (_, dtype) in aggregates.items()}})
        exprs = ", ".join(f"{sql} AS \"{name}\"" for name, (sql, _) in aggregates.items())
        schema = {"task_id": pl.String(), **{name: dtype for name, (_, dtype) in aggregates.items()}}
        where, params = _with_tasks("run_id = ?", (full,), tasks)
        return self._frame(
            f"SELECT task_id, {exprs} FROM attempts WHERE {where} GROUP BY task_id ORDER BY task_id",
            params, schema,
        )

    def spans_frame(self, run_id: str, task_id: str | None = None, attempt: int | None = None,
                    columns: Sequence[str] | None = None) -> pl.DataFrame:
        """Spans of the run (optionally of one task / attempt), in start order: by task, attempt,
        start_ts, then write order (SPANS_SCHEMA). `columns` picks a subset; leaving out
        `attributes` skips most of the bytes."""
        full = self.resolve_run_id(run_id)
        cols = _known(columns or rows.SPAN_COLUMNS, frames.SPANS_SCHEMA, "span")
        where, params = _attempt_filter(full, task_id, attempt)
        # The sort keys are read even when not asked for, and dropped once the rows are in order;
        # attributes need the keys that restore model spans' full inputs (rows.with_full_inputs).
        keys = ("task_id", "attempt", "start_ts") + (("span_id", "category") if "attributes" in cols else ())
        read = cols + [k for k in keys if k not in cols]
        # The index (run_id, task_id, attempt) yields this order with no sort step in SQLite;
        # start order within an attempt is restored by `_in_start_order`, usually a no-op.
        frame = self._run_frame("spans", full, where, params, read, frames.SPANS_SCHEMA, "attempt, rowid")
        frame = _in_start_order(frame)
        return (rows.with_full_inputs(frame) if "attributes" in cols else frame).select(cols)

    def grader_frame(self, run_id: str, columns: Sequence[str] | None = None, *,
                     tier: int | None = None) -> pl.DataFrame:
        """Every grader verdict of the run, by task and attempt in the order written (GRADER_SCHEMA).

        `columns` picks a subset (leaving out `evidence` skips most of the bytes); `tier` keeps
        only that tier's verdicts.
        """
        full = self.resolve_run_id(run_id)
        cols = _known(columns or rows.GRADER_COLUMNS, frames.GRADER_SCHEMA, "grader")
        where, params = _run_filter(full, tier=tier)
        return self._run_frame("grader_results", full, where, params, cols, frames.GRADER_SCHEMA, "attempt, rowid")

    def _run_frame(self, table: str, run_id: str, where: str, params: Sequence[Any], cols: Sequence[str],
                   schema: dict[str, Any], order: str) -> pl.DataFrame:
        """`cols` of `table`'s rows matching `where` (rows of run `run_id`), ordered by task_id
        then `order`.

        Every fetched value costs a Python object, which is most of a big read's time, so the
        two columns that repeat are not fetched per row: run_id is the one asked for, and
        task_id comes from a per-task count in the same snapshot, repeated.
        """
        fetched = [c for c in cols if c not in ("run_id", "task_id")]
        with self._read() as conn, _snapshot(conn):
            frame = self._frame(
                f"SELECT {', '.join(map(_read_sql, fetched)) or '0'} FROM {table} WHERE {where} "
                f"ORDER BY task_id, {order}",
                params, {c: schema[c] for c in fetched} if fetched else {"_row": pl.Int8()},
            )
            if "task_id" in cols:
                counts = self._frame(
                    f"SELECT task_id, count(*) FROM {table} WHERE {where} GROUP BY task_id ORDER BY task_id",
                    params, {"task_id": pl.String(), "n": pl.Int64()},
                )
                frame = frame.with_columns(counts["task_id"].gather(
                    pl.int_range(counts.height, eager=True).repeat_by(counts["n"]).explode()).alias("task_id"))
        if "run_id" in cols:
            frame = frame.with_columns(pl.lit(run_id, pl.String()).alias("run_id"))
        return frame.select(cols)

    def _frame(self, sql: str, params: Sequence[Any], schema: dict[str, Any]) -> pl.DataFrame:
        with self._read() as conn:
            cur = conn.execute(sql, params)
            # Chunks bound peak memory: a million spans as Python tuples would be ~1 GB.
            return self._rows_frame(iter(lambda: cur.fetchmany(_CHUNK_ROWS), []), schema)

    @staticmethod
    def _rows_frame(chunks: Iterable[list[Any]], schema: dict[str, Any]) -> pl.DataFrame:
        # SQLite hands back 0/1 for booleans: load them as Int8, then cast in one vector op.
        load = {c: (pl.Int8() if t == pl.Boolean() else t) for c, t in schema.items()}
        parts = [pl.DataFrame(chunk, schema=load, orient="row") for chunk in chunks if chunk]
        frame = pl.concat(parts, rechunk=True) if parts else pl.DataFrame(schema=load)
        return frame.cast({c: pl.Boolean() for c, t in schema.items() if t == pl.Boolean()})

    # -- records --------------------------------------------------------------------------

    def attempt_record(self, run_id: str, task_id: str, attempt: int) -> Attempt:
        """Rebuild one Attempt with its tool calls, grader and invariant results."""
        full = self.resolve_run_id(run_id)
        key = (full, task_id, attempt)
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {', '.join(rows.ATTEMPT_COLUMNS)} FROM attempts "
                "WHERE run_id = ? AND task_id = ? AND attempt = ?",
                key,
            ).fetchone()
            graders = conn.execute(
                f"SELECT {', '.join(rows.GRADER_COLUMNS)} FROM grader_results "
                "WHERE run_id = ? AND task_id = ? AND attempt = ? ORDER BY rowid",
                key,
            ).fetchall()
        if row is None:
            raise StoreError(
                f"run {full} has no attempt {attempt} of task {task_id!r} in {self.path} — "
                "see attempts_frame(run_id) for what is stored"
            )
        return rows.attempt_from_row(row, graders)

    def attempt_spans(self, run_id: str, task_id: str, attempt: int) -> list[Span]:
        """The attempt's spans as models, in start order."""
        full = self.resolve_run_id(run_id)
        where, params = _attempt_filter(full, task_id, attempt)
        with self._read() as conn:
            found = conn.execute(
                f"SELECT {', '.join(map(_read_sql, rows.SPAN_COLUMNS))} FROM spans WHERE {where} "
                "ORDER BY start_ts, rowid",
                params,
            ).fetchall()
        return full_inputs([rows.span_from_row(r) for r in found])

    def attempts_with_spans(self, run_id: str) -> list[tuple[Attempt, list[Span]]]:
        """Every attempt of the run with its spans, as `attempt_record` and `attempt_spans` give
        them, in task and attempt order: three queries over the run's index ranges, where one
        attempt at a time costs two each (a report tracing all 160 attempts of a core × 5 run:
        0.015–0.03 s less CPU, the same documents). For a whole run only: it holds every attempt's
        spans at once."""
        full = self.resolve_run_id(run_id)
        with self._read() as conn:
            found = conn.execute(f"SELECT {', '.join(rows.ATTEMPT_COLUMNS)} FROM attempts WHERE run_id = ? "
                                 "ORDER BY task_id, attempt", (full,)).fetchall()
            graders = conn.execute(f"SELECT {', '.join(rows.GRADER_COLUMNS)} FROM grader_results "
                                   "WHERE run_id = ? ORDER BY task_id, attempt, rowid", (full,)).fetchall()
            spans = conn.execute(f"SELECT {', '.join(map(_read_sql, rows.SPAN_COLUMNS))} FROM spans WHERE run_id = ? "
                                 "ORDER BY task_id, attempt, start_ts, rowid", (full,)).fetchall()
        graders_of = _rows_by_attempt(graders, rows.GRADER_COLUMNS)
        spans_of = _rows_by_attempt(spans, rows.SPAN_COLUMNS)
        task, number = rows.ATTEMPT_COLUMNS.index("task_id"), rows.ATTEMPT_COLUMNS.index("attempt")
        out = []
        for row in found:
            key = (row[task], row[number])
            out.append((rows.attempt_from_row(row, graders_of.get(key, [])),
                        full_inputs([rows.span_from_row(r) for r in spans_of.get(key, [])])))
        return out


def _rows_by_attempt(found: list[Any], columns: Sequence[str]) -> dict[tuple[str, int], list[Any]]:
    """Rows grouped by (task_id, attempt), each group in the order found."""
    task, number = columns.index("task_id"), columns.index("attempt")
    grouped: dict[tuple[str, int], list[Any]] = {}
    for r in found:
        grouped.setdefault((r[task], r[number]), []).append(r)
    return grouped


def _read_sql(column: str) -> str:
    """A column in a SELECT: span attributes may be stored compressed (`aeh.store._packed`)."""
    return f"{ATTRIBUTES_SQL} AS attributes" if column == "attributes" else column


def _setting(given: float | None, env: str, default: float) -> float:
    if given is not None:
        return float(given)
    raw = os.environ.get(env)
    if raw is None or not raw.strip():
        return default
    try:
        return float(raw)
    except ValueError:
        raise StoreError(f"{env}={raw!r} is not a number — set it to seconds or a count, e.g. {env}=30") from None


def _rollback(conn: sqlite3.Connection) -> None:
    # SQLite has already rolled back after SQLITE_FULL and some I/O errors; a second ROLLBACK
    # would raise "no transaction is active" and hide the real cause.
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def _insert(table: str, columns: Sequence[str]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def _known(columns: Sequence[str], schema: dict[str, Any], what: str) -> list[str]:
    """`columns` as a list; a name the schema does not know is a StoreError listing the known ones."""
    cols = list(columns)
    unknown = [c for c in cols if c not in schema]
    if unknown:
        raise StoreError(f"unknown {what} column(s) {unknown}; known: {list(schema)}")
    return cols


@contextmanager
def _snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction, so reads that belong together see the same rows (WAL snapshot)."""
    if conn.in_transaction:  # already inside one
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def _in_start_order(frame: pl.DataFrame) -> pl.DataFrame:
    """Spans read in (task, attempt, write) order, put in start order within each attempt.

    Spans are mostly written in start order, so one vectorised check usually finds nothing to
    do; otherwise a stable sort keeps write order among equal start times.
    """
    keys = ["task_id", "attempt"]
    same = pl.all_horizontal([pl.col(k) == pl.col(k).shift() for k in keys]).fill_null(False)
    if not frame.select((same & (pl.col("start_ts") < pl.col("start_ts").shift())).any()).item():
        return frame
    return frame.sort([*keys, "start_ts"], maintain_order=True)


def _attempt_filter(
    run_id: str, task_id: str | None, attempt: int | None
) -> tuple[str, tuple[Any, ...]]:
    return _run_filter(run_id, task_id=task_id, attempt=attempt)


def _run_filter(run_id: str, **equal: Any) -> tuple[str, tuple[Any, ...]]:
    """WHERE text and parameters for the run's rows whose named columns equal the given values
    (a None value is no condition). Column names are the caller's code, never user input."""
    given = {k: v for k, v in equal.items() if v is not None}
    return " AND ".join(["run_id = ?", *(f"{k} = ?" for k in given)]), (run_id, *given.values())


def _with_tasks(where: str, params: tuple[Any, ...], tasks: Sequence[str] | None) -> tuple[str, tuple[Any, ...]]:
    """`where` narrowed to the rows of `tasks` (None: no narrowing; empty: no row)."""
    if tasks is None:
        return where, params
    return f"{where} AND task_id IN ({', '.join('?' * len(tasks)) or 'NULL'})", (*params, *tasks)


def _connect_read_only(path: str, wait_s: float) -> sqlite3.Connection:
    """A connection that cannot write the file: `mode=ro` (the file must exist) plus `query_only`."""
    if path == _MEMORY:
        raise StoreError("an in-memory store cannot be opened read-only — it would be empty")
    if not Path(path).is_file():
        raise StoreError(f"no run store at {path} — a read-only open never creates one; pass the path "
                         "of an existing runs.db")
    uri = Path(path).absolute().as_uri() + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=wait_s, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA query_only=ON")
    register_unpack(conn)
    return conn


def _check_schema_current(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a store with migrations pending: a read-only connection cannot apply them."""
    applied = set(applied_versions(conn))
    pending = [m.version for m in registered_migrations() if m.version not in applied]
    if pending:
        raise StoreError(f"store {path} predates this aeh (schema migrations {pending} not applied) and is open "
                         f"read-only — bring it up to date once with `aeh runs --db {path}`, then open it again")


def _prepare_connection(conn: sqlite3.Connection, wait_s: float) -> None:
    """WAL, pragmas and migrations, retried while another connection holds the lock. SQLite does
    not call its busy handler for every lock a fresh file's journal-mode switch or first
    migration needs, so stores opening one new file at once (shards, notebooks) can see
    "database is locked" at once: wait it out as a write would, up to `wait_s`."""
    register_unpack(conn)
    deadline = time.monotonic() + wait_s
    pause = 0.01
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # readers never block the writer
            conn.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; fsync only at checkpoints
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA cache_size=-65536")  # 64 MiB: whole-run reads stay in memory
            migrate(conn)
            return
        except sqlite3.OperationalError as exc:
            locked = "locked" in str(exc) or "busy" in str(exc)
            if not locked or time.monotonic() + pause > deadline:
                raise
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            time.sleep(pause)
            pause = min(pause * 2, 0.25)
