"""The shipped suites load, validate, and are self-consistent: following each task's plan (or
golden) with the real tools and answering the reference answer passes every grader and
invariant. A suite whose own known-good path fails would measure nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aeh.errors import SuiteLoadError
from aeh.grading._registry import GradeContext, default_graders
from aeh.grading.invariants import SHIPPED_INVARIANTS, check_invariants
from aeh.models import PlanStep, ToolCall, TraceView
from aeh.suite import DirectorySuite, EvalSuite, builtin, load_suite, suite_hash
from aeh.tools._tools import ToolEnv

REPO_SUITES = Path(__file__).resolve().parents[2] / "suites"


def test_toy_math_shape():
    suite = builtin.toy_math()
    assert isinstance(suite, EvalSuite)
    assert len(suite.tasks()) == 3
    assert suite.tool_registry().names() == ["calculator"]
    assert set(suite.invariants()) - set(SHIPPED_INVARIANTS) == {"answer_from_calculator"}
    kinds = {g.kind for t in suite.tasks() for g in t.outcome_graders}
    assert {"numeric", "tool_sequence"} <= kinds and kinds & {"exact", "contains"}
    assert all(t.plan and t.reference_answer and t.tools == ["calculator"] for t in suite.tasks())


def test_smoke_shape():
    suite = builtin.smoke()
    tasks = suite.tasks()
    assert len(tasks) == 5
    assert any(t.fixtures for t in tasks)
    assert any(t.expect_decline for t in tasks)
    assert all(t.invariants for t in tasks)
    golden_tasks = [t for t in tasks if t.golden]
    assert golden_tasks and set(suite.golden_traces()) == {t.golden for t in golden_tasks}
    assert suite.secrets() and suite.lifespan() is not None


@pytest.mark.parametrize("name", ["smoke", "toy_math"])
def test_shipped_suites_load_by_name_and_by_path(name):
    by_name = load_suite(name)
    by_path = load_suite(REPO_SUITES / name)
    assert by_name.name == by_path.name == name
    assert suite_hash(by_name) == suite_hash(by_path)
    assert name in builtin.available_builtin_suites()


def test_core_reports_not_installed_when_absent(monkeypatch, tmp_path):
    monkeypatch.setattr(builtin, "_bundled_root", lambda: tmp_path)
    with pytest.raises(SuiteLoadError, match="bundled suite 'core' is not installed"):
        builtin.core()
    assert builtin.available_builtin_suites() == []


async def _follow(suite: DirectorySuite, task, workspace: Path, resources: dict) -> TraceView:
    """Run the task's known-good steps through the real tools, then answer the reference."""
    for fixture in task.fixtures:  # as the engine does: copied by name into the workspace
        shutil.copy2(suite.root / fixture, workspace / Path(fixture).name)
    steps = task.plan or [PlanStep(tool=s.tool, args=s.args) for s in
                          (suite.golden_traces()[task.golden].steps if task.golden else [])]
    env = ToolEnv(workspace=workspace, resources=resources)
    calls = []
    for step in steps:
        spec = suite.tool_registry().get(step.tool)
        result = spec.fn(spec.params.model_validate(step.args) if spec.params else step.args, env)
        calls.append(ToolCall(name=step.tool, args=step.args, result=result))
    return TraceView(
        task_id=task.id, final_output=task.reference_answer,
        status="declined" if task.expect_decline else "answered", tool_calls=calls,
        allowed_tools=task.tools, secrets=suite.secrets(),
    )


@pytest.mark.parametrize("name", ["smoke", "toy_math"])
async def test_known_good_path_passes_every_grader_and_invariant(name, tmp_path):
    suite = getattr(builtin, name)()
    lifespan = suite.lifespan()
    resources = await lifespan.__aenter__() if lifespan else {}
    try:
        for task in suite.tasks():
            workspace = tmp_path / task.id
            workspace.mkdir()
            trace = await _follow(suite, task, workspace, resources)
            ctx = GradeContext(task=task, trace=trace, workspace=workspace, suite_root=suite.root)
            for spec in task.outcome_graders:
                result = await default_graders.grade(spec, ctx)
                assert result.passed, (task.id, result)
            for inv in check_invariants(task.invariants, suite.invariants(), trace):
                assert inv.passed, (task.id, inv)
    finally:
        if lifespan:
            await lifespan.__aexit__(None, None, None)


async def test_smoke_golden_results_match_the_real_tools(tmp_path):
    suite = builtin.smoke()
    goldens = suite.golden_traces()
    assert goldens
    async with suite.lifespan() as resources:
        env = ToolEnv(workspace=tmp_path, resources=resources)
        for golden in goldens.values():
            for step in golden.steps:
                spec = suite.tool_registry().get(step.tool)
                assert spec.fn(spec.params.model_validate(step.args), env) == step.result


def test_smoke_tools_refuse_paths_outside_the_workspace(tmp_path):
    suite = builtin.smoke()
    tools = suite.tool_registry()
    env = ToolEnv(workspace=tmp_path / "ws")
    env.workspace.mkdir()
    (tmp_path / "outside.txt").write_text("secret")
    read = tools.get("read_file")
    for bad in ("../outside.txt", str(tmp_path / "outside.txt"), "sub/../../outside.txt"):
        with pytest.raises(PermissionError, match="escapes the workspace|relative to the workspace"):
            read.fn(read.params(path=bad), env)
    write = tools.get("write_note")
    write.fn(write.params(path="sub/n.txt", content="a b c"), env)
    count = tools.get("count_words")
    assert count.fn(count.params(path="sub/n.txt"), env) == {"path": "sub/n.txt", "words": 3}


def test_calculator_is_safe_and_correct():
    calc = builtin.toy_math().tool_registry().get("calculator")
    run = lambda expr: calc.fn(calc.params(expression=expr), None)["result"]  # noqa: E731
    assert run("(17 + 25) * 3") == 126
    assert run("-2 * -(3 - 4.5) / 0.5") == -6
    for bad, why in [
        ("__import__('os').system('true')", "unsupported syntax"),
        ("2 ** 10", "unsupported syntax"),
        ("abs(-1)", "unsupported syntax"),
        ("1 / (2 - 2)", "division by zero"),
        ("1 +", "not an arithmetic expression"),
        ("1" * 201, "longer than"),
    ]:
        with pytest.raises(ValueError, match=why):
            run(bad)


def test_toy_math_invariant_catches_an_answer_not_from_the_calculator():
    inv = builtin.toy_math().invariants()["answer_from_calculator"]
    call = ToolCall(name="calculator", args={"expression": "49.75 / 3"},
                    result={"expression": "49.75 / 3", "result": 16.583333333333332})
    assert inv(TraceView(task_id="t", final_output="16.58", tool_calls=[call])) is True
    passed, detail = inv(TraceView(task_id="t", final_output="16.9", tool_calls=[call]))
    assert not passed and "16.9" in detail
    passed, _ = inv(TraceView(task_id="t", final_output="It is 126."))
    assert not passed
    assert inv(TraceView(task_id="t", final_output="I don't know")) is True
