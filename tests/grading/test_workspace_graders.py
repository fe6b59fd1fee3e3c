"""The `file` and `sql` tier-0 graders: config validation at load, verdicts and evidence."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pydantic
import pytest

import aeh.grading.workspace_graders  # noqa: F401  (registers the kinds)
from aeh.grading._registry import GradeContext, default_graders
from aeh.grading.workspace_graders import check_read_only_sql, json_path_get, parse_json_path
from aeh.models import GraderSpec, Task, TraceView


def _grade(workspace: Path, **spec):
    from aeh.api import run_sync  # works even when a loop is already running in this thread

    task = Task(id="t", prompt="p", graders=[spec])
    ctx = GradeContext(task=task, trace=TraceView(task_id="t"), workspace=workspace)
    return run_sync(default_graders.grade(GraderSpec(**spec), ctx))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text(json.dumps({"totals": {"open": 7, "rate": 0.25},
                                                              "ids": ["T1", "T2"]}))
    (tmp_path / "notes.txt").write_text("Hello, aeh!\n")
    conn = sqlite3.connect(tmp_path / "db.sqlite")
    conn.executescript("CREATE TABLE t (id TEXT, n INTEGER, x REAL);"
                       "INSERT INTO t VALUES ('a', 1, 0.5), ('b', 2, 1.25), ('c', 3, 2.0);")
    conn.commit()
    conn.close()
    return tmp_path


def test_kinds_are_registered() -> None:
    assert "file" in default_graders and "sql" in default_graders


# --- file ---------------------------------------------------------------------------------------


def test_file_equals_contains_and_evidence(ws: Path) -> None:
    r = _grade(ws, kind="file", path="notes.txt", equals="Hello, aeh!", contains=["aeh"])
    assert r.passed is True
    assert r.evidence["content"] == "Hello, aeh!\n" and r.evidence["size"] == 12
    assert [c["check"] for c in r.evidence["checks"]] == ["equals", "contains"]
    assert _grade(ws, kind="file", path="notes.txt", equals="Hello").passed is False
    assert _grade(ws, kind="file", path="notes.txt", contains="HELLO").passed is False
    assert _grade(ws, kind="file", path="notes.txt", contains="HELLO", case_sensitive=False).passed is True
    assert _grade(ws, kind="file", path="notes.txt", not_contains=["aeh"]).passed is False


def test_file_exists_and_absent(ws: Path) -> None:
    assert _grade(ws, kind="file", path="notes.txt").passed is True
    missing = _grade(ws, kind="file", path="nope.txt")
    assert missing.passed is False and "does not exist" in missing.evidence["reason"]
    assert _grade(ws, kind="file", path="nope.txt", exists=False).passed is True
    assert _grade(ws, kind="file", path="notes.txt", exists=False).passed is False


def test_file_json_fields(ws: Path) -> None:
    ok = _grade(ws, kind="file", path="out/report.json",
                json_field=[{"path": "totals.open", "equals": 7}, {"path": "ids[1]", "equals": "T2"},
                            {"path": "totals.rate", "equals": 0.2500000001, "abs_tol": 1e-6}])
    assert ok.passed is True
    bad = _grade(ws, kind="file", path="out/report.json", json_field={"path": "totals.closed", "equals": 1})
    assert bad.passed is False and "missing at closed" in bad.evidence["checks"][0]["reason"]
    not_json = _grade(ws, kind="file", path="notes.txt", json_field={"path": "a", "equals": 1})
    assert not_json.passed is False and "not valid JSON" in not_json.evidence["checks"][0]["reason"]


def test_file_sha256(ws: Path) -> None:
    digest = hashlib.sha256(b"Hello, aeh!\n").hexdigest()
    assert _grade(ws, kind="file", path="notes.txt", sha256=digest.upper()).passed is True
    assert _grade(ws, kind="file", path="notes.txt", sha256="0" * 64).passed is False


@pytest.mark.parametrize("path", ["/etc/passwd", "../x.txt", "a/../../x", "~/x", "C:\\x", "\\\\srv\\x"])
def test_file_paths_outside_the_workspace_are_refused_at_load(path: str) -> None:
    with pytest.raises(pydantic.ValidationError):
        default_graders.validate(GraderSpec(kind="file", path=path))


def test_file_symlink_escape_is_refused_at_grade_time(ws: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("secret")
    (ws / "link.txt").symlink_to(outside)
    r = _grade(ws, kind="file", path="link.txt", contains="secret")
    assert r.passed is False and "outside" in r.evidence["reason"]


def test_json_paths() -> None:
    assert parse_json_path("a.b[0].c") == ["a", "b", 0, "c"]
    assert parse_json_path("[2].id") == [2, "id"]
    assert json_path_get({"a": [{"b": 1}]}, "a[-1].b") == 1
    with pytest.raises(ValueError):
        parse_json_path("a[x")


def test_file_unknown_option_fails_loudly() -> None:
    with pytest.raises(pydantic.ValidationError):
        default_graders.validate(GraderSpec(kind="file", path="a", contain="x"))


# --- sql ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", [
    "SELECT 1", "select * from t where id = 'DROP TABLE t'", "WITH x AS (SELECT 1) SELECT * FROM x",
    "SELECT 1; ", "-- a comment\nSELECT 1",
])
def test_read_only_queries_pass(query: str) -> None:
    assert check_read_only_sql(query) == query


@pytest.mark.parametrize("query, why", [
    ("DROP TABLE t", "only read-only"),
    ("DELETE FROM t", "only read-only"),
    ("INSERT INTO t VALUES (1)", "only read-only"),
    ("SELECT 1; DROP TABLE t", "one statement"),
    ("WITH x AS (SELECT 1) DELETE FROM t", "DELETE"),
    ("PRAGMA writable_schema = 1", "only read-only"),
    ("ATTACH DATABASE 'x.db' AS x", "only read-only"),
    ("", "empty"),
])
def test_write_queries_are_refused(query: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_read_only_sql(query)


def test_sql_write_query_fails_at_load() -> None:
    with pytest.raises(pydantic.ValidationError, match="read-only"):
        default_graders.validate(GraderSpec(kind="sql", database="db.sqlite", query="DELETE FROM t", expected=[]))
    with pytest.raises(pydantic.ValidationError):
        default_graders.validate(GraderSpec(kind="sql", database="../db.sqlite", query="SELECT 1", expected=[]))


def test_sql_unordered_and_ordered(ws: Path) -> None:
    q = "SELECT id, n FROM t"
    assert _grade(ws, kind="sql", database="db.sqlite", query=q, expected=[["c", 3], ["a", 1], ["b", 2]]).passed
    assert not _grade(ws, kind="sql", database="db.sqlite", query=q, ordered=True,
                      expected=[["c", 3], ["a", 1], ["b", 2]]).passed
    assert _grade(ws, kind="sql", database="db.sqlite", query=q + " ORDER BY id", ordered=True,
                  expected=[["a", 1], ["b", 2], ["c", 3]]).passed
    r = _grade(ws, kind="sql", database="db.sqlite", query=q, expected=[["a", 1], ["b", 2]])
    assert r.passed is False and r.evidence["unexpected_rows"] == [["c", 3]]
    assert r.evidence["rows"] == [["a", 1], ["b", 2], ["c", 3]] and r.evidence["row_count"] == 3


def test_sql_numeric_tolerance_and_errors(ws: Path) -> None:
    assert _grade(ws, kind="sql", database="db.sqlite", query="SELECT SUM(x) FROM t",
                  expected=[[3.7500001]], abs_tol=1e-6).passed
    r = _grade(ws, kind="sql", database="db.sqlite", query="SELECT nope FROM t", expected=[])
    assert r.passed is False and "query failed" in r.evidence["reason"]
    r = _grade(ws, kind="sql", database="missing.db", query="SELECT 1", expected=[[1]])
    assert r.passed is False and "does not exist" in r.evidence["reason"]


def test_sql_grader_never_writes(ws: Path) -> None:
    before = (ws / "db.sqlite").read_bytes()
    _grade(ws, kind="sql", database="db.sqlite", query="SELECT * FROM t", expected=[])
    assert (ws / "db.sqlite").read_bytes() == before
    assert not (ws / "db.sqlite-journal").exists() and not (ws / "db.sqlite-wal").exists()
