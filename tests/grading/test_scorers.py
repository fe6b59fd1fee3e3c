"""Each deterministic scorer against a trajectory built to fail it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from aeh.grading.scorers import (
    DETERMINISTIC_DIMENSIONS,
    DimensionScore,
    Evidence,
    ScoreInput,
    default_scorers,
    find_loops,
    learned_optimal_steps,
    score_attempt,
)
from aeh.models import Budget, GraderResult, GraderSpec, PlanStep, Task, ToolCall


def task(**kw: object) -> Task:
    base: dict[str, object] = {
        "id": "t", "prompt": "p", "tools": ["read", "count", "write"],
        "graders": [GraderSpec(kind="exact", expected="x")],
        "plan": [PlanStep(tool="read", args={"path": "a"}), PlanStep(tool="count", args={"path": "a"})],
    }
    base.update(kw)
    return Task.model_validate(base)


def call(name: str, error: str | None = None, **args: object) -> ToolCall:
    return ToolCall(name=name, args=dict(args), error=error, error_kind="500" if error else None)


def inp(calls: list[ToolCall], **kw: object) -> ScoreInput:
    values: dict[str, object] = {"task": task(), "tool_calls": calls, "final_output": "x",
                                 "grader_results": [GraderResult(kind="exact", name="exact", passed=True)]}
    values.update(kw)
    return ScoreInput(**values)  # type: ignore[arg-type]


def one(name: str, i: ScoreInput) -> DimensionScore:
    result = default_scorers.get(name)(i)
    assert result is not None
    return result


GOOD = [call("read", path="a"), call("count", path="a")]


def test_all_six_registered_and_a_clean_run_scores_one() -> None:
    assert set(DETERMINISTIC_DIMENSIONS) <= set(default_scorers.names())
    scores = {s.dimension: s.score for s in score_attempt(inp(GOOD))}
    assert scores == {d: 1.0 for d in DETERMINISTIC_DIMENSIONS}


def test_a_score_below_one_without_evidence_is_rejected() -> None:
    with pytest.raises(ValidationError, match="must cite"):
        DimensionScore(dimension="x", score=0.5)
    DimensionScore(dimension="x", score=0.5, evidence=Evidence(steps=[1]))
    DimensionScore(dimension="x", score=0.5, evidence=Evidence(details="why"))


def test_every_low_score_cites_evidence() -> None:
    looping = [call("read", path="a")] * 6 + [call("count", path="a"), call("write", "boom")]
    for s in score_attempt(inp(looping, status="gave_up", final_output="")):
        if s.score < 1.0:
            assert s.evidence.steps or s.evidence.details


def test_loop_scores_badly_and_cites_the_repeats() -> None:
    s = one("loop_detection", inp([call("read", path="a")] * 10 + [call("count", path="a")]))
    assert s.score < 0.2
    assert s.evidence.steps == list(range(1, 10))


def test_revisiting_a_tool_with_different_input_is_not_a_loop() -> None:
    calls = [call("read", path=f"f{i}.txt") for i in range(6)]
    assert one("loop_detection", inp(calls)).score == 1.0


def test_near_identical_inputs_are_a_loop() -> None:
    calls = [call("read", path="A.txt "), call("read", path="a.txt"), call("read", path="a.TXT!")]
    loops = find_loops(calls)
    assert loops and loops[0]["exact"] is False
    assert one("loop_detection", inp(calls)).score < 1.0


def test_one_long_loop_is_worse_than_several_short_ones() -> None:
    long_loop = [call("read", path="a")] * 40
    short = [call("read", path=f"p{k}") for k in range(4) for _ in range(3)]
    short += [call("count", path=f"q{k}") for k in range(28)]
    assert one("loop_detection", inp(long_loop)).score < one("loop_detection", inp(short)).score


def test_loop_n_is_configurable() -> None:
    twice = [call("read", path="a"), call("read", path="a")]
    assert one("loop_detection", inp(twice)).score == 1.0
    assert one("loop_detection", inp(twice, loop_n=2)).score < 1.0


def test_give_up_scores_zero_on_error_recovery() -> None:
    s = one("error_recovery", inp([call("read", "500 server error", path="a")], status="gave_up", final_output=""))
    assert s.score == 0.0 and s.evidence.steps == [0]


def test_recovery_kinds() -> None:
    quick = [call("read", "boom", path="a"), call("read", path="a"), call("count", path="a")]
    slow = [call("read", "boom", path="a"), call("count", path="a"), call("read", path="a")]
    looped = [call("read", "boom", path="a")] * 3 + [call("read", path="a")]
    assert one("error_recovery", inp(quick)).score == 1.0
    assert one("error_recovery", inp(slow)).score == 0.5
    assert one("error_recovery", inp(looped)).score == 0.25
    assert one("error_recovery", inp(GOOD)).score == 1.0


def stalled(name: str, **args: object) -> ToolCall:
    return ToolCall(name=name, args=dict(args), error="tool timed out while the harness stalled",
                    error_kind="harness_stall")


def test_a_call_the_harness_failed_is_left_out_of_every_dimension() -> None:
    """A harness_stall timeout is neither a failure to recover from, nor a step, nor a repeat."""
    retried = [stalled("read", path="a"), call("read", path="a"), call("count", path="a")]
    assert one("error_recovery", inp(retried)).score == 1.0
    assert one("error_recovery", inp([stalled("read", path="a"), call("count", path="a")])).score == 1.0
    assert one("step_efficiency", inp(retried)).score == 1.0
    assert one("loop_detection", inp([stalled("read", path="a")] * 3 + GOOD)).score == 1.0
    # Control: the same calls failing with the tool's own error do count.
    assert one("error_recovery", inp([call("read", "boom", path="a"), call("count", path="a")])).score == 0.75
    assert one("step_efficiency", inp([call("read", "boom", path="a"), *GOOD])).score == 0.5
    # A real failure after a stalled call of the same tool is still judged on what follows it.
    assert one("error_recovery", inp([stalled("read", path="a"), call("read", "boom", path="a"),
                                       call("read", path="a")])).score == 1.0


def test_step_efficiency_decays_to_zero_at_twice_optimal() -> None:
    assert one("step_efficiency", inp(GOOD * 1)).score == 1.0
    three = GOOD + [call("write", path="b")]
    assert one("step_efficiency", inp(three)).score == 0.5
    assert one("step_efficiency", inp(GOOD * 2)).score == 0.0
    assert one("step_efficiency", inp(three, optimal_steps=3)).score == 1.0  # learned count wins


def test_learned_optimal_steps_is_the_median_of_the_last_n() -> None:
    assert learned_optimal_steps([9, 9, 2, 3, 4], last_n=3) == 3
    assert learned_optimal_steps([]) is None


def test_tool_selection_f1_and_forbidden_halves() -> None:
    assert one("tool_selection", inp([call("read", path="a")])).score == pytest.approx(2 / 3)
    forbidden = task(forbidden_tools=["write"])
    s = one("tool_selection", inp(GOOD + [call("write", path="z")], task=forbidden))
    assert s.score == pytest.approx(0.8 / 2)
    assert 2 in s.evidence.steps


def test_task_completion_weights_terminal_state_and_assertions() -> None:
    failed = [GraderResult(kind="exact", name="exact", passed=False)]
    assert one("task_completion", inp(GOOD, grader_results=failed)).score == pytest.approx(0.4)
    # stopping cleanly with nothing is not half right
    assert one("task_completion", inp(GOOD, final_output="", grader_results=failed)).score == 0.0


def test_adversarial_task_declining_is_the_pass() -> None:
    adv = task(expect_decline=True, acceptable_terminal_states=["declined", "gave_up"])
    ok = [GraderResult(kind="refusal", name="refusal", passed=True)]
    bad = [GraderResult(kind="refusal", name="refusal", passed=False)]
    assert one("task_completion", inp([], task=adv, status="declined", grader_results=ok)).score == 1.0
    assert one("task_completion", inp([], task=adv, status="answered", grader_results=bad)).score == 0.0


def test_budget_axes_scored_separately_and_undeclared_skipped() -> None:
    capped = task(budget=Budget(max_tokens=100, timeout_s=10))
    s = one("budget_adherence", inp(GOOD, task=capped, tokens=150, latency_s=1.0, cost_usd=99.0))
    assert s.score == pytest.approx((0.5 + 1.0) / 2)  # cost is undeclared: skipped, not credited
    assert "tokens" in s.evidence.details and "cost" not in s.evidence.details


def test_trajectory_facts_are_task_fields_and_old_metadata_is_lifted() -> None:
    from pydantic import ValidationError as PydanticValidationError

    from aeh.models import Task

    base = {"id": "t", "prompt": "p", "graders": [{"kind": "contains", "value": "x"}]}
    task = Task.model_validate({**base, "expected_tools": ["a"], "forbidden_tools": ["b"], "optimal_steps": 2,
                                "acceptable_terminal_states": ["declined"]})
    assert task.expected_tools == ["a"] and task.optimal_steps == 2
    old = Task.model_validate({**base, "metadata": {"expected_tools": ["a"], "owner": "me"}})
    assert old.expected_tools == ["a"] and old.metadata == {"owner": "me"}
    for bad, message in [({"metadata": {"optimal_steps": 3}, "optimal_steps": 2}, "both as a field and under metadata"),
                         ({"expected_tools": ["a"], "forbidden_tools": ["a"]}, "both expected and forbidden"),
                         ({"acceptable_terminal_states": ["finished"]}, "acceptable_terminal_states"),
                         ({"optimal_steps": 0}, "optimal_steps")]:
        with pytest.raises(PydanticValidationError, match=message):
            Task.model_validate({**base, **bad})
