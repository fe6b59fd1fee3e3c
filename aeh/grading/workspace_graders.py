"""Tier-0 graders over what an attempt left in its own workspace: `file` and `sql`.

Both read only inside the attempt's workspace (a path that is absolute or climbs out with `..`
is refused when the task loads), never write, and return evidence of what they read.

    - kind: file
      path: reports/summary.json
      json_field: {path: "totals.open", equals: 7}
    - kind: sql
      database: support.db
      query: "SELECT status FROM tickets WHERE ticket_id = 'T1007'"
      expected: [["solved"]]
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aeh.grading._registry import GradeContext, GraderConfig, result_name
from aeh.models import GraderResult
from aeh.tools import path_escape, resolve_in_workspace

__all__ = [
    "FileConfig",
    "JsonFieldCheck",
    "SqlConfig",
    "check_read_only_sql",
    "json_path_get",
    "parse_json_path",
    "QueryTooSlow",
    "SQL_MAX_SECONDS",
    "connect_read_only",
    "run_read_only",
]

_EVIDENCE_CHARS = 500
_MAX_READ_BYTES = 2_000_000
_MAX_ROWS_SHOWN = 50
_MISSING = object()


def _relative_path(v: str, what: str) -> str:
    problem = path_escape(v or "")
    if problem:
        raise ValueError(f"{what} {v!r} {problem}")
    return v


def _inside(workspace: Path, rel: str) -> Path:
    """Resolve in the workspace by the tools' rule; refuse a symlink that lands outside it."""
    return resolve_in_workspace(workspace, rel)


def _result(kind: str, cfg: GraderConfig, passed: bool, **evidence: Any) -> GraderResult:
    return GraderResult(tier=0, kind=kind, name=result_name(kind, cfg), passed=passed, evidence=evidence)


# --- JSON paths ------------------------------------------------------------------------------

_TOKEN = re.compile(r"\.?([^.\[\]]+)|\[(-?\d+)\]")


def parse_json_path(path: str) -> list[str | int]:
    """`a.b[0].c` → ["a", "b", 0, "c"]; `[2].id` → [2, "id"]. ValueError on junk."""
    parts: list[str | int] = []
    pos = 0
    path = path.strip()
    if not path:
        raise ValueError("json path is empty")
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"cannot parse json path {path!r} at character {pos + 1}")
        parts.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    return parts


def json_path_get(data: Any, path: str) -> Any:
    """The value at `path`, or raise KeyError naming the first step that is missing."""
    value = data
    for part in parse_json_path(path):
        if isinstance(part, int):
            if not isinstance(value, list) or not -len(value) <= part < len(value):
                raise KeyError(f"[{part}]")
            value = value[part]
        else:
            if not isinstance(value, dict) or part not in value:
                raise KeyError(part)
            value = value[part]
    return value


def _same(a: Any, b: Any, abs_tol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=abs_tol)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, abs_tol) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], abs_tol) for k in a)
    return bool(a == b)


# --- file ------------------------------------------------------------------------------------


class JsonFieldCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    """Where in the JSON document, e.g. `totals.open` or `tickets[0].id`."""
    equals: Any = None
    """The value expected there (numbers compare within `abs_tol`)."""
    abs_tol: float = Field(1e-9, ge=0)

    @field_validator("path")
    @classmethod
    def _parses(cls, v: str) -> str:
        parse_json_path(v)
        return v


class FileConfig(GraderConfig):
    path: str
    """File relative to the attempt workspace (absolute paths and `..` are refused)."""
    exists: bool = True
    """False: pass only when the file is absent (every other check is then ignored)."""
    equals: str | None = None
    """The whole content (compared after stripping surrounding whitespace when `strip`)."""
    strip: bool = True
    contains: str | list[str] | None = None
    """Text (or texts) that must all appear."""
    not_contains: list[str] = Field(default_factory=list)
    """Texts that must not appear (e.g. a redacted email)."""
    case_sensitive: bool = True
    json_field: JsonFieldCheck | list[JsonFieldCheck] | None = None
    """Parse the file as JSON and check one field (or several)."""
    sha256: str | None = None
    """Hex digest of the raw bytes."""

    @field_validator("path")
    @classmethod
    def _relative(cls, v: str) -> str:
        return _relative_path(v, "path")

    @field_validator("sha256")
    @classmethod
    def _hex(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", v):
            raise ValueError("sha256 must be 64 hex digits")
        return v.lower() if v else v


def file_grader(cfg: FileConfig, ctx: GradeContext) -> GraderResult:
    try:
        target = _inside(ctx.workspace, cfg.path)
    except PermissionError as exc:
        return _result("file", cfg, False, path=cfg.path, reason=str(exc))
    present = target.is_file()
    if not cfg.exists:
        return _result("file", cfg, not present, path=cfg.path, exists=present, expected_exists=False)
    if not present:
        return _result("file", cfg, False, path=cfg.path, exists=False,
                       reason="the file does not exist in the attempt workspace")
    raw = target.read_bytes()[:_MAX_READ_BYTES]
    text = raw.decode("utf-8", errors="replace")
    checks: list[dict[str, Any]] = []
    if cfg.equals is not None:
        got, want = (text.strip(), cfg.equals.strip()) if cfg.strip else (text, cfg.equals)
        checks.append({"check": "equals", "passed": got == want, "expected": cfg.equals[:_EVIDENCE_CHARS]})
    fold = (lambda s: s) if cfg.case_sensitive else str.casefold
    wanted = [cfg.contains] if isinstance(cfg.contains, str) else list(cfg.contains or [])
    if wanted:
        missing = [s for s in wanted if fold(s) not in fold(text)]
        checks.append({"check": "contains", "passed": not missing, "missing": missing})
    if cfg.not_contains:
        found = [s for s in cfg.not_contains if fold(s) in fold(text)]
        checks.append({"check": "not_contains", "passed": not found, "found": found})
    fields = [cfg.json_field] if isinstance(cfg.json_field, JsonFieldCheck) else list(cfg.json_field or [])
    if fields:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            checks.append({"check": "json_field", "passed": False, "reason": f"not valid JSON: {exc}"})
        else:
            for f in fields:
                try:
                    value = json_path_get(doc, f.path)
                except KeyError as exc:
                    checks.append({"check": "json_field", "path": f.path, "passed": False,
                                   "reason": f"missing at {exc.args[0]}"})
                    continue
                checks.append({"check": "json_field", "path": f.path, "passed": _same(value, f.equals, f.abs_tol),
                               "expected": f.equals, "got": value})
    if cfg.sha256 is not None:
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        checks.append({"check": "sha256", "passed": digest == cfg.sha256, "expected": cfg.sha256, "got": digest})
    passed = all(c["passed"] for c in checks)  # no checks: existing is enough
    return _result("file", cfg, passed, path=cfg.path, exists=True, size=len(raw),
                   content=text[:_EVIDENCE_CHARS], checks=checks)


# --- sql -------------------------------------------------------------------------------------

_WRITE_WORDS = {
    "INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT", "DROP", "ALTER", "CREATE", "ATTACH", "DETACH",
    "PRAGMA", "VACUUM", "REINDEX", "TRUNCATE", "GRANT", "REVOKE", "BEGIN", "COMMIT", "ROLLBACK",
    "SAVEPOINT", "RELEASE", "ANALYZE",
}
_LITERALS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`[^`]*`|\[[^\]]*\]")
_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


def check_read_only_sql(query: str) -> str:
    """Return `query` if it is one read-only statement (SELECT, WITH … SELECT, VALUES); else ValueError.

    A lexical check (string literals and comments removed first; a word followed by `(` is a
    function call, so `replace(…)` passes while `REPLACE INTO` does not). It is the loud,
    load-time half of the defence: `connect_read_only` opens the file read-only and its
    authorizer lets SQLite itself refuse anything but reads, whatever the text looked like.
    """
    bare = _COMMENTS.sub(" ", _LITERALS.sub("''", query)).strip()
    if not bare:
        raise ValueError("the query is empty")
    if ";" in bare.rstrip(";").rstrip():
        raise ValueError("only one statement is allowed (found ';' between statements)")
    words = re.findall(r"[A-Za-z_][A-Za-z_0-9]*(?!\s*\()", bare)
    first = (re.findall(r"[A-Za-z_]+", bare) or [""])[0].upper()
    if first not in ("SELECT", "WITH", "VALUES"):
        raise ValueError(f"only read-only SELECT / WITH queries are allowed, not {first or bare[:20]!r}")
    writes = sorted({w.upper() for w in words} & _WRITE_WORDS)
    if writes:
        raise ValueError(f"the query must be read-only; it contains {', '.join(writes)}")
    return query


_READ_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                 getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
#: Pragmas that only describe the schema; their table-valued forms (`pragma_table_info('t')`) are reads.
_READ_PRAGMAS = {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
                 "foreign_key_list", "collation_list", "function_list", "database_list"}
_SCHEMA_TABLES = {"sqlite_master", "sqlite_schema", "sqlite_temp_master"}
#: How long one read-only query may run: a recursive CTE with no end would otherwise spin forever
#: in a thread nobody can kill.
SQL_MAX_SECONDS = 5.0


def _read_only_authorizer(action: int, arg1: str | None, *_: Any) -> int:
    if action in _READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    # SQLite reports reading the schema for a table-valued pragma as an UPDATE of sqlite_master;
    # the connection is read-only (mode=ro), so no write can happen through it either way.
    if action == sqlite3.SQLITE_UPDATE and (arg1 or "").lower() in _SCHEMA_TABLES:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class QueryTooSlow(sqlite3.OperationalError):
    """A read-only query stopped after SQL_MAX_SECONDS."""


def connect_read_only(path: Path, max_seconds: float = SQL_MAX_SECONDS) -> sqlite3.Connection:
    """Open a SQLite file read-only (URI mode=ro) with an authorizer that denies any write, and a
    progress handler that interrupts any statement still running `max_seconds` after connecting."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    conn.set_authorizer(_read_only_authorizer)
    deadline = time.monotonic() + max_seconds
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    return conn


def run_read_only(conn: sqlite3.Connection, query: str, max_rows: int | None = None,
                  max_seconds: float = SQL_MAX_SECONDS) -> tuple[list[str], list[list[Any]]]:
    """(columns, rows) of `query` on a `connect_read_only` connection; QueryTooSlow past the deadline."""
    try:
        cursor = conn.execute(query)
        found = cursor.fetchall() if max_rows is None else cursor.fetchmany(max_rows)
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            raise QueryTooSlow(f"the query ran longer than {max_seconds:g}s and was stopped "
                               "(a recursive CTE with no end?)") from None
        raise
    return [d[0] for d in cursor.description or []], [list(r) for r in found]


class SqlConfig(GraderConfig):
    database: str
    """SQLite file relative to the attempt workspace."""
    query: str
    """One read-only SELECT / WITH query."""
    expected: list[list[Any]]
    """The rows the query must return."""
    ordered: bool = False
    """Compare rows in order (otherwise as a multiset)."""
    abs_tol: float = Field(1e-9, ge=0)
    """Tolerance for numeric cells."""

    @field_validator("database")
    @classmethod
    def _relative(cls, v: str) -> str:
        return _relative_path(v, "database")

    @field_validator("query")
    @classmethod
    def _read_only(cls, v: str) -> str:
        return check_read_only_sql(v)


def _rows_match(got: list[list[Any]], want: list[list[Any]], ordered: bool,
                tol: float) -> tuple[bool, list[list[Any]], list[list[Any]]]:
    """(match, expected rows not found, returned rows not expected)."""
    if ordered:
        ok = len(got) == len(want) and all(_same(g, w, tol) for g, w in zip(got, want, strict=False))
        return ok, ([] if ok else want), ([] if ok else got)
    unused = list(got)
    missing = []
    for row in want:
        hit = next((i for i, g in enumerate(unused) if _same(g, row, tol)), None)
        if hit is None:
            missing.append(row)
        else:
            unused.pop(hit)
    return not missing and not unused, missing, unused


def sql_grader(cfg: SqlConfig, ctx: GradeContext) -> GraderResult:
    evidence: dict[str, Any] = {"database": cfg.database, "query": cfg.query, "expected": cfg.expected,
                                "ordered": cfg.ordered}
    try:
        target = _inside(ctx.workspace, cfg.database)
    except PermissionError as exc:
        return _result("sql", cfg, False, **evidence, reason=str(exc))
    if not target.is_file():
        return _result("sql", cfg, False, **evidence, reason="the database does not exist in the workspace")
    try:
        conn = connect_read_only(target)
        try:
            _, rows = run_read_only(conn, cfg.query)
        finally:
            conn.close()
    except QueryTooSlow:
        raise  # the task's own query: a grader error (harness), not the agent's failure
    except sqlite3.Error as exc:
        return _result("sql", cfg, False, **evidence, reason=f"query failed: {type(exc).__name__}: {exc}")
    ok, missing, unexpected = _rows_match(rows, cfg.expected, cfg.ordered, cfg.abs_tol)
    return _result("sql", cfg, ok, **evidence, rows=rows[:_MAX_ROWS_SHOWN], row_count=len(rows),
                   missing_rows=missing[:_MAX_ROWS_SHOWN], unexpected_rows=unexpected[:_MAX_ROWS_SHOWN])
