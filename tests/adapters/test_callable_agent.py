"""`aeh.run(suite, agent=fn)`: a plain function as the agent, its tools routed through the engine."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.adapters.callable import ToolCallError
from aeh.errors import ConfigError
from tests.examples_support import load_example

REPO = Path(__file__).resolve().parents[2]


def _run(agent: Any, db: Path, tasks: list[str], **kw: Any) -> str:
    table = aeh.run("smoke", agent=agent, attempts=kw.pop("attempts", 2), seed=3, db=db, tasks=tasks,
                    progress=False, **kw)
    return str(table.run_id)


def test_sync_agent_tools_are_recorded_under_the_agent_span(db: Path) -> None:
    seen: list[str] = []

    def agent(task: aeh.Task, tools: Any) -> str:
        seen.extend(tools)
        tools.write_note(path="draft.txt", content="one two three four five six seven eight nine")
        return f"{tools['count_words']({'path': 'draft.txt'})['words']} words"

    run_id = _run(agent, db, ["draft_and_count"])
    rows = aeh.attempts(run_id, db=db)
    assert rows["success"].all()
    assert set(seen) == {"write_note", "count_words"}
    spans = aeh.spans(run_id, db=db)
    by_id = dict(zip(spans["span_id"], spans["name"], strict=True))
    tools = spans[spans["category"] == "tools"]
    assert sorted(set(tools["name"])) == ["tool:count_words", "tool:write_note"]
    assert {by_id[p] for p in tools["parent_span_id"]} == {"agent"}
    assert set(aeh.span_attributes(tools, "gen_ai.tool.name")) == {"write_note", "count_words"}


def test_async_agent_is_awaited_and_its_tools_are_awaitables(db: Path) -> None:
    async def agent(task: aeh.Task, tools: Any) -> str:
        await tools.write_note(path="draft.txt", content="a b c d e f g h i")
        await asyncio.sleep(0)
        result = await tools.call("count_words", path="draft.txt")
        return f"There are {result['words']} words."

    run_id = _run(agent, db, ["draft_and_count"])
    assert aeh.attempts(run_id, db=db)["success"].all()


def test_failed_tool_raises_and_the_agent_may_recover(db: Path) -> None:
    errors: list[str] = []

    def agent(task: aeh.Task, tools: Any) -> str:
        try:
            tools.count_words(path="missing.txt")
        except ToolCallError as exc:
            errors.append(exc.call.error_kind or "")
        tools.write_note(path="draft.txt", content="a b c d e f g h i")
        return str(tools.count_words(path="draft.txt")["words"])

    run_id = _run(agent, db, ["draft_and_count"], attempts=1)
    assert errors == ["exception"]
    assert aeh.attempts(run_id, db=db)["success"].all()


def test_agent_exception_is_the_agents_failure_not_a_harness_error(db: Path) -> None:
    def agent(task: aeh.Task, tools: Any) -> str:
        raise ValueError("my agent broke")

    run_id = _run(agent, db, ["draft_and_count"], attempts=1)
    row = aeh.attempts(run_id, db=db).iloc[0]
    assert not row["success"]
    assert row["status"] == "gave_up"


def test_step_budget_ends_the_attempt_even_when_the_agent_swallows_it(db: Path) -> None:
    def agent(task: aeh.Task, tools: Any) -> str:
        for _ in range(50):
            try:
                tools.count_words(path="draft.txt")
            except Exception:  # noqa: BLE001 - a careless agent
                pass
        return "9"

    run_id = _run(agent, db, ["draft_and_count"], attempts=1)
    row = aeh.attempts(run_id, db=db).iloc[0]
    assert row["status"] == "budget_exhausted"
    assert len(aeh.spans(run_id, db=db).query("category == 'tools'")) == 6  # max_steps


def test_faults_are_injected_into_plain_tool_calls(db: Path) -> None:
    def agent(task: aeh.Task, tools: Any) -> str:
        tools.write_note(path="draft.txt", content="a b c d e f g h i")
        return str(tools.count_words(path="draft.txt")["words"])

    run_id = _run(agent, db, ["draft_and_count"], attempts=4, fault_profile={"rates": {"500": 1.0}})
    rows = aeh.attempts(run_id, db=db)
    assert not rows["success"].any()
    assert (rows["n_injected_faults"] > 0).all()


def test_agent_and_adapter_together_is_a_config_error(db: Path) -> None:
    with pytest.raises(ConfigError, match="either agent"):
        aeh.run("smoke", adapter="react", agent=lambda task, tools: "x", db=db)


def test_callable_example_makes_a_graded_run(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    callable_agent = load_example("callable_agent")
    run_id = callable_agent.main(["--db", str(db), "--attempts", "2"])
    rows = aeh.attempts(run_id, db=db)
    assert len(rows) == 4 and rows["success"].all()
    out = capsys.readouterr().out  # the result a person reads, not the frame's 35 columns
    assert out == str(aeh.load_run(run_id, db=db)) + "\n"
    assert "suite rate 1.000" in out and f"run id {run_id}" in out and "fail_tool_error" not in out


def _words_agent(task: aeh.Task, tools: Any) -> str:
    tools.write_note(path="draft.txt", content="one two three four five six seven eight nine")
    return f"{tools.count_words(path='draft.txt')['words']} words"


def test_an_agent_that_reports_no_model_usage_is_unpriced_not_free(db: Path) -> None:
    run_id = _run(_words_agent, db, ["draft_and_count"])
    rows = aeh.attempts(run_id, db=db)
    assert rows["cost_usd"].isna().all()
    table = aeh.load_run(run_id, db=db)
    assert table.priced is False and table.total_cost_usd is None
    cost = aeh.span_attributes(aeh.spans(run_id, db=db).query("category == 'cost'"))
    assert all(a["unpriced_models"] == ["<model usage not reported>"] for a in cost)


def test_a_model_free_agent_costs_nothing_and_reported_usage_is_priced(db: Path) -> None:
    free = _run(_words_agent, db, ["draft_and_count"], model_free=True)
    assert (aeh.attempts(free, db=db)["cost_usd"] == 0).all()

    @aeh.record_step(kind="model")
    def think(prompt: str, model: str = "gpt-4o-mini") -> dict[str, Any]:
        return {"model": model, "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}

    def agent(task: aeh.Task, tools: Any) -> str:
        think("plan the note")
        return _words_agent(task, tools)

    priced = _run(agent, db, ["draft_and_count"])
    costs = aeh.attempts(priced, db=db)["cost_usd"]
    assert costs.notna().all() and (costs > 0).all()


def test_model_free_without_an_agent_is_a_config_error(db: Path) -> None:
    with pytest.raises(ConfigError, match="agent="):
        aeh.run("smoke", adapter="mock", model_free=True, db=db, progress=False)


def test_cli_runs_a_function_named_by_path_or_module(db: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from aeh.cli import main as cli_main

    def cli(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = cli_main(list(argv))
        return code, out.getvalue(), err.getvalue()

    example = f"{REPO / 'examples' / 'callable_agent.py'}:notes_agent"
    code, out, err = cli("run", "--suite", "smoke", "--agent", example, "--model-free", "--task", "draft_and_count",
                         "--attempts", "2", "--seed", "1", "--db", str(db), "--log-level", "silent")
    assert code == 0, err
    assert "draft_and_count" in out and "$0.0000" in out
    (tmp_path / "my_agent.py").write_text("def answer(task, tools):\n    return 'no idea'\n")
    # a file whose dataclasses need their module registered while it runs
    (tmp_path / "typed_agent.py").write_text(
        "from __future__ import annotations\nfrom dataclasses import dataclass\n\n@dataclass\nclass Reply:\n"
        "    text: str\n\ndef answer(task, tools):\n    return Reply('no idea').text\n")
    code, out, err = cli("run", "--suite", "smoke", "--agent", f"{tmp_path / 'typed_agent.py'}:answer", "--task",
                         "write_greeting", "--attempts", "1", "--db", str(db), "--log-level", "silent")
    assert code == 0, err
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the working directory joins sys.path, as under python -m
    code, out, err = cli("run", "--suite", "smoke", "--agent", "my_agent:answer", "--task", "write_greeting",
                         "--attempts", "1", "--db", str(db), "--log-level", "silent")
    assert code == 0, err
    assert "unpriced" in out
    for spec, message in [("my_agent", "no function named"), ("my_agent:nope", "has no 'nope'; its functions: answer"),
                          ("no_such_mod:fn", "module 'no_such_mod' not found"),
                          ("missing.py:fn", "file missing.py not found")]:
        code, out, err = cli("run", "--suite", "smoke", "--agent", spec, "--db", str(db))
        assert code == 2 and message in err and "Traceback" not in err, (spec, err)
    code, out, err = cli("run", "--suite", "smoke", "--model-free", "--db", str(db))
    assert code == 2 and "--agent" in err
