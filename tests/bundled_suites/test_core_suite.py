"""suites/core: shape, tools, the fixture server's lifetime, isolation, and an end-to-end spread."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import socket
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.api import run_sync
from aeh.cli import main
from aeh.suite.loader import DirectorySuite, load_suite
from aeh.tools._tools import ToolEnv, ToolInputError

CORE = Path(__file__).resolve().parents[2] / "suites" / "core"
EXPECTED = {"file_manipulation": 9, "multi_tool": 6, "retrieval": 5, "long_horizon": 4, "broken_tool": 4,
            "refusal": 3, "sql_analytics": 1}


@pytest.fixture(scope="module")
def suite() -> DirectorySuite:
    return load_suite(CORE)  # type: ignore[return-value]


@pytest.fixture(scope="module")
def mod(suite: DirectorySuite) -> Any:
    return suite._module


def _env(tmp_path: Path, *fixtures: str, **resources: Any) -> ToolEnv:
    import shutil

    for f in fixtures:
        src = CORE / "fixtures" / f
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, tmp_path / f)
    return ToolEnv(workspace=tmp_path, resources=resources)


def _port_closed(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) != 0


# --- shape ----------------------------------------------------------------------------------------


def test_category_counts_are_exact(suite: DirectorySuite) -> None:
    assert len(suite.tasks()) == 32
    assert Counter(t.category for t in suite.tasks()) == EXPECTED


def test_validate_cli_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "validate", "--suite", str(CORE)]) == 0
    assert "32 tasks valid" in capsys.readouterr().out


def test_dry_run_validates_and_estimates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", str(CORE), "--adapter", "mock", "--dry-run",
                 "--fault-profile", str(CORE / "faults.yaml")]) == 0
    out = capsys.readouterr().out
    assert "32 tasks valid" in out and "ESTIMATE whole run" in out


def test_every_task_is_complete(suite: DirectorySuite) -> None:
    goldens = suite.golden_traces()
    for t in suite.tasks():
        assert t.outcome_graders and t.invariants and t.reference_answer, t.id
        assert t.golden in goldens, t.id
        assert "tools_within_allowlist" in t.invariants, t.id
        steps = goldens[t.golden].steps
        if t.category == "long_horizon":
            assert len(steps) >= 10, t.id
        if t.category == "multi_tool":
            assert len({s.tool for s in steps}) >= 2, t.id
        if t.category == "retrieval":
            assert steps and all(s.tool == "http_get" for s in steps), t.id
        if t.category == "broken_tool":
            assert steps[0].tool == "broken_tool" and len(steps) >= 2, t.id
            assert all(s.tool != "broken_tool" for s in steps[1:]), t.id
        if t.category == "sql_analytics":
            assert [s.tool for s in steps] == ["sql_query"], t.id


def test_refusal_tasks_pass_only_by_declining(suite: DirectorySuite) -> None:
    refusals = [t for t in suite.tasks() if t.category == "refusal"]
    for t in refusals:
        assert t.expect_decline
        kinds = [g.kind for g in t.outcome_graders]
        assert kinds == ["declined"] and t.outcome_graders[0].options["forbid_tools"], t.id
        assert {"no_secret_leak", "no_destructive_sql"} & set(t.invariants), t.id
    assert any("DROP TABLE" in t.prompt for t in refusals)
    assert any("TOKEN" in t.prompt for t in refusals)


def test_committed_database_matches_the_build_script(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("core_build_fixtures", CORE / "build_fixtures.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)  # type: ignore[union-attr]
    conn = sqlite3.connect(f"file:{CORE / 'fixtures' / 'support.db'}?mode=ro", uri=True)
    try:
        for table, rows in build.expected_rows().items():
            assert conn.execute(f"SELECT * FROM {table}").fetchall() == rows, table
    finally:
        conn.close()
    rebuilt = build.build(tmp_path / "support.db")
    assert rebuilt.stat().st_size < 64_000


def test_secret_is_planted_and_declared(mod: Any, suite: DirectorySuite) -> None:
    assert suite.secrets() == [mod.API_TOKEN]
    assert mod.API_TOKEN in (CORE / "fixtures" / "integrations.env").read_text()


# --- tools ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../suite.py", "/etc/passwd", "a/../../x", "~/x", "inbox/../../x", "C:/x"])
def test_file_tools_refuse_path_traversal(mod: Any, tmp_path: Path, path: str) -> None:
    env = ToolEnv(workspace=tmp_path)
    for call in (lambda: mod.read_file(mod.PathArgs(path=path), env),
                 lambda: mod.write_file(mod.WriteArgs(path=path, content="x"), env),
                 lambda: mod.append_file(mod.WriteArgs(path=path, content="x"), env),
                 lambda: mod.list_files(mod.ListArgs(path=path), env)):
        with pytest.raises(PermissionError):
            call()


def test_file_tools_refuse_symlink_escape(mod: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "outside.txt").write_text("nope")
    (ws / "link.txt").symlink_to(tmp_path / "outside.txt")
    with pytest.raises(PermissionError):
        mod.read_file(mod.PathArgs(path="link.txt"), ToolEnv(workspace=ws))


def test_file_tools_work_inside_the_workspace(mod: Any, tmp_path: Path) -> None:
    env = _env(tmp_path, "shift_log.md")
    mod.write_file(mod.WriteArgs(path="sub/a.txt", content="hi"), env)
    mod.append_file(mod.WriteArgs(path="sub/a.txt", content="!"), env)
    assert mod.read_file(mod.PathArgs(path="sub/a.txt"), env) == "hi!"
    assert mod.list_files(mod.ListArgs(), env) == ["shift_log.md", "sub/a.txt"]


@pytest.mark.parametrize("query", [
    "DROP TABLE tickets", "DELETE FROM tickets", "UPDATE tickets SET status = 'open'",
    "INSERT INTO agents VALUES ('x', 'y', 'z')", "SELECT 1; DROP TABLE tickets",
    "WITH x AS (SELECT 1) DELETE FROM tickets", "PRAGMA journal_mode = DELETE",
    "ATTACH DATABASE 'evil.db' AS evil",
])
def test_sql_tool_refuses_writes(mod: Any, tmp_path: Path, query: str) -> None:
    env = _env(tmp_path, "support.db")
    before = hashlib.sha256((tmp_path / "support.db").read_bytes()).hexdigest()
    # A refused query is the agent's malformed argument (invalid_args), not the tool failing.
    with pytest.raises(ToolInputError, match="refused"):
        mod.sql_query(mod.SqlArgs(query=query), env)
    assert hashlib.sha256((tmp_path / "support.db").read_bytes()).hexdigest() == before


@pytest.mark.parametrize("query", [
    "SELECT replace(subject, 'a', 'b') FROM tickets LIMIT 1",
    "SELECT name FROM pragma_table_info('tickets')",
    "SELECT update_count FROM (SELECT 1 AS update_count)",
    "VALUES (1)",
])
def test_sql_tool_allows_read_only_queries_that_look_like_writes(mod: Any, tmp_path: Path, query: str) -> None:
    env = _env(tmp_path, "support.db")
    assert mod.sql_query(mod.SqlArgs(query=query), env)["rows"]


def test_sql_tool_stops_a_query_that_never_ends(mod: Any, tmp_path: Path) -> None:
    env = _env(tmp_path, "support.db")
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
    with pytest.raises(TimeoutError, match="ran longer than"):
        mod.sql_query(mod.SqlArgs(query=endless), env)


def test_sql_tool_syntax_error_is_the_agents_bad_argument(mod: Any, tmp_path: Path) -> None:
    env = _env(tmp_path, "support.db")
    with pytest.raises(ToolInputError, match="no such table"):
        mod.sql_query(mod.SqlArgs(query="SELECT * FROM nope"), env)


def test_sql_tool_reads_and_the_connection_is_read_only(mod: Any, tmp_path: Path) -> None:
    env = _env(tmp_path, "support.db")
    out = mod.sql_query(mod.SqlArgs(query="SELECT COUNT(*) AS n FROM tickets"), env)
    assert out == {"columns": ["n"], "rows": [[24]], "truncated": False}
    conn = mod.connect_read_only(tmp_path / "support.db")  # the second layer, under the lexical check
    with pytest.raises(sqlite3.DatabaseError):
        conn.execute("DELETE FROM tickets")
    conn.close()


def test_update_ticket_is_the_narrow_write_api(mod: Any, tmp_path: Path) -> None:
    env = _env(tmp_path, "support.db")
    out = mod.update_ticket(mod.UpdateTicketArgs(ticket_id="T1007", status="solved"), env)
    assert out["status"] == "solved"
    with pytest.raises(ValueError):
        mod.update_ticket(mod.UpdateTicketArgs(ticket_id="T1007", assignee="mallory"), env)
    with pytest.raises(KeyError):
        mod.update_ticket(mod.UpdateTicketArgs(ticket_id="T9999", status="open"), env)


def test_broken_tool_is_unavailable(mod: Any, tmp_path: Path) -> None:
    with pytest.raises(aeh.ToolUnavailable):
        mod.broken_tool(mod.CrmArgs(query="C007"), ToolEnv(workspace=tmp_path))


def test_email_invariant(mod: Any) -> None:
    from aeh.models import ToolCall, TraceView

    ok = TraceView(task_id="t", tool_calls=[ToolCall(name="send_email", args={"to": "alan@enigma.example"})])
    bad = TraceView(task_id="t", tool_calls=[ToolCall(name="send_email", args={"to": "x@freemail.example"})])
    assert mod.emails_to_known_recipients(ok) is True
    assert mod.emails_to_known_recipients(bad)[0] is False


# --- the fixture server ---------------------------------------------------------------------------


@pytest.mark.local_http
def test_lifespan_serves_on_loopback_and_stops(mod: Any, tmp_path: Path) -> None:
    run_sync(_serve_and_stop(mod, tmp_path))


async def _serve_and_stop(mod: Any, tmp_path: Path) -> None:
    async with mod.lifespan() as resources:
        port = resources["http_port"]
        assert resources["http_base_url"] == f"http://127.0.0.1:{port}"
        env = ToolEnv(workspace=tmp_path, resources=resources)
        status = await mod.http_get(mod.HttpGetArgs(path="/status"), env)
        assert status["components"][2] == {"name": "billing", "status": "degraded"}
        assert await mod.http_get(mod.HttpGetArgs(path="kb/articles?tag=billing"), env) == [
            {"id": "kb-104", "title": "Refund policy", "tags": ["billing"]}]
        with pytest.raises(LookupError, match="404"):
            await mod.http_get(mod.HttpGetArgs(path="/nope"), env)
        with pytest.raises(PermissionError):
            await mod.http_get(mod.HttpGetArgs(path="http://example.com/status"), env)
    assert _port_closed(port)


@pytest.mark.local_http
def test_lifespan_stops_the_server_when_the_run_is_cancelled(mod: Any) -> None:
    run_sync(_cancel_while_serving(mod))


async def _cancel_while_serving(mod: Any) -> None:
    started: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def hold() -> None:
        async with mod.lifespan() as resources:
            started.set_result(resources["http_port"])
            await asyncio.sleep(3600)

    task = asyncio.create_task(hold())
    port = await started
    assert not _port_closed(port)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _port_closed(port)


class _Spy:
    """The core suite, remembering the resources its lifespan handed out."""

    def __init__(self, inner: DirectorySuite) -> None:
        self.inner, self.name, self.root, self.seen = inner, inner.name, inner.root, {}

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    def tasks(self):  # noqa: ANN201
        return self.inner.tasks()

    def tool_registry(self):  # noqa: ANN201
        return self.inner.tool_registry()

    def invariants(self):  # noqa: ANN201
        return self.inner.invariants()

    def golden_traces(self):  # noqa: ANN201
        return self.inner.golden_traces()

    def lifespan(self):  # noqa: ANN201
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def spy():
            async with self.inner.lifespan() as resources:
                self.seen.update(resources)
                yield resources

        return spy()


@pytest.mark.local_http
def test_server_is_up_during_a_run_and_gone_after(suite: DirectorySuite, tmp_path: Path) -> None:
    spy = _Spy(suite)
    db = tmp_path / "runs.db"
    careful = {"p_decline": 0, "p_give_up": 0, "p_hallucinate": 0, "p_bad_args": 0, "p_loop": 0, "p_wrong": 0}
    table = aeh.run(spy, "mock", attempts=2, seed=1, db=db, adapter_options=careful,
                    tasks=["rt_degraded_component", "rt_enterprise_sla"])
    assert table["successes"].sum() == 4
    from aeh.store import Store

    with Store(db) as store:
        frame = store.attempts_frame(table.run_id)
    results = [c["result"] for calls in frame["tool_calls"].to_list()
               for c in (json.loads(calls) if isinstance(calls, str) else calls) if c["name"] == "http_get"]
    assert {"unit": "minutes", "first_response": {"enterprise": 60, "pro": 240, "free": 1440}} in results
    assert _port_closed(spy.seen["http_port"])


# --- isolation and the end-to-end spread ---------------------------------------------------------


@pytest.mark.local_http
def test_every_attempt_starts_from_fresh_fixtures(suite: DirectorySuite, tmp_path: Path) -> None:
    fixture_hashes = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                      for p in (CORE / "fixtures").iterdir() if p.is_file()}
    careful = {"p_decline": 0, "p_give_up": 0, "p_hallucinate": 0, "p_bad_args": 0, "p_loop": 0}
    (tmp_path / "work").mkdir()
    aeh.run(suite, "mock", attempts=3, seed=2, db=tmp_path / "runs.db", adapter_options=careful,
            tasks=["fm_close_confirmed_ticket", "fm_shift_log_append"], keep_workspaces=True,
            work_dir=tmp_path / "work")
    (run_dir,) = (tmp_path / "work").iterdir()
    for attempt in range(3):
        log = (run_dir / "fm_shift_log_append" / str(attempt) / "shift_log.md").read_text()
        assert log.count("night shift") == 1  # not one line per earlier attempt
        ws = run_dir / "fm_close_confirmed_ticket" / str(attempt)
        assert (ws / "shift_log.md").read_text().count("T1007 solved") == 1
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in (CORE / "fixtures").iterdir() if p.is_file()} == fixture_hashes


@pytest.mark.local_http
@pytest.mark.slow  # the whole 32-task core suite
def test_mock_runs_the_whole_suite_with_a_realistic_spread(suite: DirectorySuite, tmp_path: Path) -> None:
    strong = aeh.run(suite, "mock", attempts=3, seed=11, db=tmp_path / "runs.db", model="mock-strong",
                     concurrency=8)
    degraded = aeh.run(suite, "mock", attempts=3, seed=11, db=tmp_path / "runs.db", model="mock-degraded",
                       concurrency=8)
    assert len(strong) == len(degraded) == 32
    assert strong.harness_errors == degraded.harness_errors == 0
    assert strong.suite_rate >= 0.8
    assert degraded.suite_rate <= strong.suite_rate - 0.15
    assert 0 < degraded.suite_rate < 1
    # Degraded fails in more than one way, as a real weak agent does.
    buckets = [c for c in degraded.table.columns if c.startswith("fail_") and degraded[c].sum() > 0]
    assert len(buckets) >= 3


@pytest.mark.local_http
@pytest.mark.timeout(60)
def test_clients_that_went_away_print_no_traceback(mod: Any, capfd: pytest.CaptureFixture[str]) -> None:
    # Each client sends a request and resets the connection at once (SO_LINGER 0): the server
    # then reads or writes a dead socket, as when a tool times out or the run is stopped.
    import struct

    import httpx

    server = mod.FixtureServer().start()
    try:
        for i in range(40):
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                request = b"GET /kb/articles HTTP/1.1\r\nHost: x\r\n" + (b"\r\n" if i % 2 else b"X-Partial: ")
                sock.sendall(request)
        with httpx.Client(trust_env=False, timeout=5) as client:  # still serving afterwards
            assert client.get(f"{server.base_url}/status").status_code == 200
    finally:
        server.stop()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Error" not in err, err[:2000]
