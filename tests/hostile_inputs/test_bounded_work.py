"""Work the agent or the task author controls is bounded: a tool that exits, a tool that never
returns, a regex that backtracks for ever, or a path no file system takes ends one attempt (or
one call) with a clear, correctly attributed error, and the run goes on."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.adapters.callable import ToolCallError
from aeh.store import Store
from aeh.tools._tools import ToolEnv, ToolInputError, WorkspaceEscape

SUITE_PY = """
import sys
import time

from aeh.tools._tools import ToolRegistry

tools = ToolRegistry()

@tools.tool("exits")
def exits(args, env):
    sys.exit(3)

@tools.tool("exits_async")
async def exits_async(args, env):
    sys.exit(4)

@tools.tool("hangs", timeout_s=0.5)
def hangs(args, env):
    time.sleep(30)

@tools.tool("slow_but_allowed", timeout_s=120)
def slow_but_allowed(args, env):
    time.sleep(30)

@tools.tool("echo")
def echo(args, env):
    return "ok"
"""


def _task(task_id: str, tools: list[str], graders: str, timeout_s: float = 20) -> str:
    return (f"id: {task_id}\nprompt: call {' '.join(tools) or 'nothing'}\ntools: [{', '.join(tools)}]\n"
            f"graders:\n{textwrap.indent(graders, '  ')}\nbudget: {{max_steps: 4, timeout_s: {timeout_s}}}\n")


def _suite(root: Path, tasks: dict[str, str]) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "suite.py").write_text(SUITE_PY)
    for name, text in tasks.items():
        (root / "tasks" / f"{name}.yaml").write_text(text)
    return root


def _agent(task: aeh.Task, tools: Any) -> str:
    """Calls each offered tool once, then answers the prompt's last word (or 'a…a!' for regex)."""
    for name in task.tools:
        try:
            getattr(tools, name)()
        except ToolCallError:
            pass
    return "a" * 40 + "!" if task.id == "backtracks" else "ok"


def _attempts(db: Path) -> dict[str, Any]:
    with Store(db) as store:
        run_id = store.runs()[0].run_id
        frame = store.attempts_frame(run_id)
        calls = {t: store.attempt_record(run_id, t, 0).tool_calls for t in frame["task_id"]}
        graders = {t: store.attempt_record(run_id, t, 0).grader_results for t in frame["task_id"]}
    rows = {r["task_id"]: r for r in frame.iter_rows(named=True)}
    return {"rows": rows, "calls": calls, "graders": graders}


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run over a task per kind of unbounded work, plus a fine one; its attempts and its time."""
    root = tmp_path_factory.mktemp("bounded")
    ok = "- kind: exact\n  expected: ok"
    suite = _suite(root / "s", {
        "exits": _task("exits", ["exits", "exits_async"], ok),
        "hangs": _task("hangs", ["hangs"], ok),
        "over_budget": _task("over_budget", ["slow_but_allowed"], ok, timeout_s=1),
        "backtracks": _task("backtracks", [], "- kind: regex\n  pattern: '(a|aa)+$'"),
        "fine": _task("fine", ["echo"], ok),
    })
    db = root / "runs.db"
    start = time.monotonic()
    table = aeh.run(suite, agent=_agent, attempts=1, seed=1, db=db, progress=False)
    return {**_attempts(db), "elapsed": time.monotonic() - start, "health": table.harness_health}


@pytest.mark.timeout(60)
def test_sys_exit_in_a_sync_or_async_tool_is_that_tool_failing(bounded: dict[str, Any]) -> None:
    calls = bounded["calls"]["exits"]
    assert [c.error_kind for c in calls] == ["exception", "exception"]
    assert "the tool called sys.exit(3)" in calls[0].error
    assert "the tool called sys.exit(4)" in calls[1].error


@pytest.mark.timeout(60)
def test_sys_exit_in_a_tool_is_not_a_harness_error(bounded: dict[str, Any]) -> None:
    assert bounded["rows"]["exits"]["status"] != "harness_error"


@pytest.mark.timeout(60)
def test_a_sync_tool_sleeping_past_its_timeout_is_a_tool_timeout(bounded: dict[str, Any]) -> None:
    call, health = bounded["calls"]["hangs"][0], bounded["health"]
    if health["stall_tool_timeouts"]:
        # A machine loaded enough to stall the event loop past the cap (load ~9 on 2 cores does)
        # leaves the harness unable to say the tool had its time: that call is the harness's,
        # counted in the run's health, and the message says why.
        assert call.error_kind == "harness_stall" and "while the harness stalled" in (call.error or "")
        assert health["stalled"]
    else:
        assert call.error_kind == "timeout", call.error


@pytest.mark.timeout(60)
def test_the_agent_goes_on_after_a_tool_timeout(bounded: dict[str, Any]) -> None:
    assert bounded["rows"]["hangs"]["success"] is True


@pytest.mark.timeout(60)
def test_a_tool_allowed_longer_than_the_attempt_is_ended_by_the_attempts_budget(bounded: dict[str, Any]) -> None:
    assert bounded["rows"]["over_budget"]["failure_bucket"] == "budget_exhausted"


@pytest.mark.timeout(60)
def test_a_catastrophically_backtracking_pattern_is_the_tasks_grader_error(bounded: dict[str, Any]) -> None:
    assert bounded["rows"]["backtracks"]["status"] == "harness_error"
    assert "catastrophic backtracking" in (bounded["graders"]["backtracks"][0].error or "")


@pytest.mark.timeout(60)
def test_the_run_goes_on_past_unbounded_work(bounded: dict[str, Any]) -> None:
    assert bounded["rows"]["fine"]["success"] is True


@pytest.mark.timeout(60)
def test_thirty_second_sleeps_are_abandoned_not_waited_for(bounded: dict[str, Any]) -> None:
    # two tools sleep 30 s each; waiting for either would take the run past this bound
    assert bounded["elapsed"] < 25


@pytest.mark.parametrize("path, error", [
    ("a\0b.txt", "NUL byte"),
    ("x" * 300, "too long"),
    ("d/" * 2100 + "f", "too long"),
])
def test_a_path_no_file_system_takes_is_the_agents_bad_argument(tmp_path: Path, path: str, error: str) -> None:
    env = ToolEnv(workspace=tmp_path, resources={})
    with pytest.raises(ToolInputError, match=error) as info:
        env.resolve(path)
    assert not isinstance(info.value, WorkspaceEscape)  # not an escape: no_path_escape stays quiet
