"""`aeh.Recorder`, `@aeh.record_step`, the trajectory format and `aeh grade` / `aeh import trajectory`."""

from __future__ import annotations

import asyncio
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.cli import main as cli_main
from aeh.errors import ValidationError
from aeh.importers import grade_trajectories
from aeh.recording import active_recorder
from aeh.trajectory import Trajectory, load_trajectories
from tests.examples_support import load_example


@aeh.record_step(kind="tool", name="calculator")
def calculator(expression: str) -> dict[str, Any]:
    return {"expression": expression, "result": eval(expression, {"__builtins__": {}})}  # noqa: S307


@aeh.record_step(kind="model")
def fake_model(prompt: str, model: str = "gpt-4o-mini") -> dict[str, Any]:
    return {"model": model, "text": prompt, "usage": {"prompt_tokens": 11, "completion_tokens": 3}}


@aeh.record_step
async def think(x: int) -> int:
    await asyncio.sleep(0)
    return x + 1


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_record_step_is_transparent_without_a_recorder() -> None:
    assert active_recorder() is None
    assert calculator("2 + 3")["result"] == 5
    assert asyncio.run(think(1)) == 2
    assert calculator.__name__ == "calculator"


def test_recorder_builds_a_nested_trajectory_and_appends_jsonl(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with aeh.Recorder(task_id="add_then_multiply", path=out, agent="mine") as rec:
        with rec.step("plan", note="first"):
            fake_model("how many boxes?")
        calculator("(17 + 25) * 3")
        rec.tool("lookup", {"q": "x"}, error="offline")
        rec.answer("126 boxes")
    with aeh.Recorder(task_id="add_then_multiply", path=out):
        raise_in = False
        assert not raise_in
    t = rec.trajectory
    assert t is not None
    assert [s.kind for s in t.steps] == ["step", "tool", "tool"]
    plan = t.steps[0]
    assert plan.name == "plan" and plan.attributes == {"note": "first"}
    model = plan.steps[0]
    assert (model.kind, model.model, model.tokens_in, model.tokens_out) == ("model", "gpt-4o-mini", 11, 3)
    assert t.steps[1].args == {"expression": "(17 + 25) * 3"} and t.steps[1].result["result"] == 126
    assert t.steps[2].error == "offline"
    assert [x.final_output for x in load_trajectories(out)] == ["126 boxes", None]
    assert active_recorder() is None


def test_an_exception_in_the_recorded_block_is_kept_as_gave_up(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with pytest.raises(RuntimeError), aeh.Recorder(task_id="split_the_bill", path=out):
        raise RuntimeError("agent crashed")
    (t,) = load_trajectories(out)
    assert t.status == "gave_up" and t.error == "RuntimeError: agent crashed"


def test_async_recorder_records_async_steps() -> None:
    async def go() -> Trajectory | None:
        async with aeh.Recorder(task_id="x") as rec:
            await think(1)
            rec.answer(2)
        return rec.trajectory

    t = asyncio.run(go())
    assert t is not None and t.steps[0].name == "think" and t.final_output == "2"


def test_record_step_inside_a_callable_run_joins_the_attempt_trace(db: Path) -> None:
    def agent(task: aeh.Task, tools: Any) -> str:
        fake_model(task.prompt)
        tools.write_note(path="draft.txt", content="a b c d e f g h i")
        return str(tools.count_words(path="draft.txt")["words"])

    table = aeh.run("smoke", agent=agent, attempts=1, seed=1, db=db, tasks=["draft_and_count"], progress=False)
    spans = aeh.spans(table.run_id, db=db)
    model = spans[spans["category"] == "model"]
    assert len(model) == 1
    assert aeh.span_attributes(model, "gen_ai.usage.input_tokens").tolist() == [11]


def _write(path: Path, *docs: Any) -> Path:
    path.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    return path


GOOD = {"task_id": "add_then_multiply", "final_output": "126",
        "steps": [{"kind": "model", "name": "plan", "model": "gpt-4o-mini", "tokens_in": 100, "tokens_out": 20},
                  {"kind": "tool", "name": "calculator", "args": {"expression": "(17+25)*3"},
                   "result": {"expression": "(17+25)*3", "result": 126}}]}
WRONG = {"task_id": "add_then_multiply", "final_output": "125",
         "steps": [{"kind": "tool", "name": "calculator", "args": {"expression": "1"}, "result": {"result": 125}}]}


def test_grade_makes_a_stored_graded_run_with_tokens_and_cost(tmp_path: Path, db: Path) -> None:
    f = _write(tmp_path / "t.jsonl", GOOD, WRONG)
    code, out, _ = cli("grade", "--suite", "toy_math", str(f), "--db", str(db))
    assert code == 0, out
    run_id = out.strip().splitlines()[-1].split()[-1]
    rows = aeh.attempts(run_id, db=db).sort_values("attempt")
    assert rows["success"].tolist() == [True, False]
    assert rows.iloc[0]["tokens_in"] == 100 and rows.iloc[0]["cost_usd"] > 0
    assert rows.iloc[1]["failure_bucket"] == "wrong_answer"
    assert aeh.runs(db=db).iloc[0]["adapter"] == "recorded"


def test_trajectories_without_reported_model_usage_are_unpriced_unless_model_free(tmp_path: Path, db: Path) -> None:
    no_tokens = {"task_id": "add_then_multiply", "final_output": "126",
                 "steps": [{"kind": "model", "name": "plan", "model": "gpt-4o-mini"}]}
    f = _write(tmp_path / "t.jsonl", GOOD, WRONG, no_tokens)
    code, out, _ = cli("grade", "--suite", "toy_math", str(f), "--db", str(db))
    assert code == 0, out
    assert "unpriced" in out
    rows = aeh.attempts(out.strip().splitlines()[-1].split()[-1], db=db).sort_values("attempt")
    assert rows["cost_usd"].notna().tolist() == [True, False, False]
    code, out, _ = cli("grade", "--suite", "toy_math", str(_write(tmp_path / "w.jsonl", WRONG)),
                       "--model-free", "--db", str(db))
    assert code == 0, out
    assert aeh.attempts(out.strip().splitlines()[-1].split()[-1], db=db)["cost_usd"].tolist() == [0.0]


def test_import_trajectory_lists_every_problem(tmp_path: Path, db: Path) -> None:
    bad = {"task_id": "", "final_ouput": "x", "steps": [{"kind": "tol", "name": "calculator"}]}
    f = _write(tmp_path / "bad.jsonl", GOOD, bad)
    with pytest.raises(ValidationError) as info:
        aeh.importers.import_trajectory_files([f], db, suite="toy_math")
    text = str(info.value)
    assert f"{f}:2:task_id:" in text
    assert f"{f}:2:final_ouput: Extra inputs are not permitted — remove it" in text
    assert f"{f}:2:steps.0.kind:" in text
    code, _, err = cli("import", "trajectory", str(f), "--suite", "toy_math", "--db", str(db))
    assert code != 0 and "final_ouput" in err


def test_import_trajectory_refuses_tasks_the_suite_lacks(tmp_path: Path, db: Path) -> None:
    f = _write(tmp_path / "t.json", {**GOOD, "task_id": "no_such_task"})
    with pytest.raises(ValidationError, match="no_such_task"):
        grade_trajectories("toy_math", load_trajectories(f), db)


def test_import_trajectory_cli_accepts_a_json_document(tmp_path: Path, db: Path) -> None:
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"trajectories": [GOOD, {**GOOD, "attempt": 1}]}, indent=2))
    code, out, err = cli("import", "trajectory", str(f), "--suite", "toy_math", "--db", str(db))
    assert code == 0, err
    assert "1 tasks, 2 attempts" in out


def test_recorded_example_grades_every_task(tmp_path: Path, db: Path) -> None:
    recorded_agent = load_example("recorded_agent")
    run_id = recorded_agent.main(["--out", str(tmp_path / "t.jsonl"), "--db", str(db)])
    rows = aeh.attempts(run_id, db=db)
    assert len(rows) == 6 and rows["success"].all()


def _solve(rec: aeh.Recorder, expression: str) -> None:
    fake_model(f"solve {expression}")
    rec.answer(str(calculator(expression)["result"]))


def test_recorded_run_grades_into_one_stored_run_and_keeps_the_file(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "t.jsonl"
    with aeh.RecordedRun("toy_math", db=db, path=path, agent="mine") as session:
        assert "add_then_multiply" in {t.id for t in session.tasks}
        for expression in ("(17+25)*3", "(17+25)*2"):
            with session.record("add_then_multiply") as rec:
                _solve(rec, expression)
    assert session.run_id is not None
    rows = aeh.attempts(session.run_id, db=db).sort_values("attempt")
    assert rows["success"].tolist() == [True, False]
    assert rows["tokens_in"].tolist() == [11, 11] and rows["cost_usd"].notna().all()
    assert aeh.runs(db=db).set_index("run_id").loc[session.run_id, "adapter"] == "mine"
    assert [t.final_output for t in load_trajectories(path)] == ["126", "84"]
    code, out, _ = cli("grade", "--suite", "toy_math", str(path), "--db", str(db))  # graded again, later
    assert code == 0 and "add_then_multiply" in out


def test_recorded_run_refuses_an_unknown_task_at_once(db: Path) -> None:
    from aeh.errors import ConfigError

    session = aeh.RecordedRun("toy_math", db=db)
    with pytest.raises(ConfigError, match="did you mean 'add_then_multiply'"):
        session.record("add_then_multiplyy")


def test_recorded_run_that_recorded_nothing_says_so(db: Path) -> None:
    from aeh.errors import ConfigError

    with pytest.raises(ConfigError, match="recorded no attempt"), aeh.RecordedRun("toy_math", db=db):
        pass
    assert not db.exists()


def test_recorded_run_stores_what_it_recorded_before_the_agent_loop_broke(db: Path) -> None:
    with pytest.raises(RuntimeError, match="agent loop broke"), aeh.RecordedRun("toy_math", db=db) as session:
        with session.record("add_then_multiply") as rec:
            _solve(rec, "(17+25)*3")
        raise RuntimeError("agent loop broke")
    assert session.run_id is not None
    assert aeh.attempts(session.run_id, db=db)["success"].tolist() == [True]


def test_async_recorded_run(db: Path) -> None:
    async def main() -> str | None:
        async with aeh.RecordedRun("toy_math", db=db) as session:
            async with session.record("add_then_multiply") as rec:
                assert await think(1) == 2
                _solve(rec, "(17+25)*3")
        return session.run_id

    run_id = asyncio.run(main())
    assert run_id is not None and aeh.attempts(run_id, db=db)["success"].tolist() == [True]
