"""The `trajectory-harness` scoring profile: agent-eval-harness's definitions, each on a
trajectory built to exercise one rule, with the arithmetic beside the expected figure."""

from __future__ import annotations

from typing import Any

import pytest

from aeh.errors import ConfigError
from aeh.grading import scoring_profile
from aeh.grading._harness_scorers import HARNESS_SCORERS, harness_steps
from aeh.grading.scorers import ScoreInput, score_attempt
from aeh.models import Budget, GraderResult, Span, Task, ToolCall


def _task(**fields: Any) -> Task:
    base: dict[str, Any] = {"id": "t", "prompt": "p", "graders": [{"kind": "contains", "substring": "x"}],
                            "tools": ["load", "clean", "train", "drop"]}
    return Task.model_validate(base | fields)


def _call(name: str, error: bool = False, **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args, error="boom" if error else None, error_kind="exception" if error else None)


def _span(name: str, index: int, **attrs: Any) -> Span:
    status = "error" if "error" in attrs else "ok"
    return Span(run_id="r", task_id="t", attempt=0, span_id=f"s{index}", category="tools" if name.startswith("tool:")
                else "scheduler", name=name, start_ts=0.0, status=status, attributes={"index": index, **attrs})


def _score(dimension: str, inp: ScoreInput) -> float:
    result = HARNESS_SCORERS[dimension](inp)
    assert result is not None
    return result.score


def test_a_failure_fixed_by_the_next_result_is_recovered() -> None:
    # load fails, the retry works: 1 failure, recovered (1.0)
    inp = ScoreInput(task=_task(), tool_calls=[_call("load", error=True), _call("load")])
    assert _score("error_recovery", inp) == 1.0


def test_a_failure_fixed_on_the_third_result_after_it_is_recovered_slowly() -> None:
    # three failing load results, then one that works: the first failure is fixed by the 3rd result after
    # it (> 2: recovered slowly, 0.6), the second by the 2nd (recovered, 1), the third by the next (1)
    calls = [_call("load", True), _call("load", True), _call("load", True), _call("load")]
    assert _score("error_recovery", ScoreInput(task=_task(), tool_calls=calls)) == round(2.6 / 3, 4)


def test_repeated_failing_results_are_a_loop_and_a_run_that_stops_gives_up() -> None:
    # 4 failing results of load, then nothing, ended failed: failure 1 sees 3 more failures → looped (0.2);
    # failure 2 sees 2 (< loop_n 3) in a failed run → gave up (0); failure 3 sees 1 → 0; failure 4 is last → 0
    calls = [_call("load", True) for _ in range(4)]
    inp = ScoreInput(task=_task(), tool_calls=calls, status="gave_up")
    assert _score("error_recovery", inp) == pytest.approx(0.05)
    # the same in a run that completed: the unfixed failures with < loop_n retries after them recovered slowly
    # (0.2 + 0.6 + 0.6 + 0 (nothing after the last)) / 4
    done = ScoreInput(task=_task(), tool_calls=calls, status="answered", final_output="ok")
    assert _score("error_recovery", done) == pytest.approx(0.35)


def test_loops_count_every_exact_repeat_at_one_and_a_half_weight() -> None:
    # 3 identical load calls among 6 calls: share 3/6, 1 − 1.5 × 0.5 = 0.25
    calls = [_call("load", step=1)] * 3 + [_call("clean"), _call("train"), _call("load", step=2)]
    assert _score("loop_detection", ScoreInput(task=_task(), tool_calls=calls)) == 0.25
    # inputs that differ only in case are different inputs to that harness (aeh's own normalises them)
    varied = [_call("load", q="A"), _call("load", q="a"), _call("load", q="A ")]
    assert _score("loop_detection", ScoreInput(task=_task(), tool_calls=varied)) == 1.0


def test_no_tool_call_is_zero_efficiency_and_the_declared_optimum_beats_a_learned_one() -> None:
    task = _task(optimal_steps=2)
    assert _score("step_efficiency", ScoreInput(task=task, tool_calls=[])) == 0.0
    # 3 calls, declared optimal 2: 2 − 1.5 = 0.5; a learned count of 3 is not used over the declared one
    calls = [_call("load"), _call("clean"), _call("train")]
    assert _score("step_efficiency", ScoreInput(task=task, tool_calls=calls, optimal_steps=3)) == 0.5


def test_tool_selection_names_tools_of_plan_and_retry_steps_and_halves_only_for_forbidden() -> None:
    task = _task(expected_tools=["load", "clean"], forbidden_tools=["drop"], tools=["load", "clean", "drop"])
    spans = [_span("tool:load", 0, step_type="tool_call", args={}, result_index=1),
             _span("step:retry", 2, step_type="retry", tool_name="train"),
             _span("tool:clean", 3, step_type="tool_call", args={}, result_index=4)]
    # used {load, clean, train} (train only on a retry step, outside the allowlist — not halved):
    # P = 2/3, R = 1, F1 = 0.8
    inp = ScoreInput(task=task, tool_calls=[_call("load"), _call("clean")], spans=spans)
    assert _score("tool_selection", inp) == 0.8
    # a forbidden tool halves it: used {load, clean, drop}: F1 0.8 → 0.4
    forbidden = ScoreInput(task=task, tool_calls=[_call("load"), _call("clean"), _call("drop")])
    assert _score("tool_selection", forbidden) == 0.4


def test_budget_adherence_reads_declared_caps_only_and_caps_budget_exceeded_at_half() -> None:
    declared = _task(budget=Budget(max_tokens=1000, timeout_s=60),
                     metadata={"declared_budget": {"max_tokens": 1000}, "terminal_states": ["completed"]})
    # tokens 1500 of 1000: 2 − 1.5 = 0.5; the 60 s aeh gives every task is not a declared cap
    over = ScoreInput(task=declared, tool_calls=[], tokens=1500, latency_s=500.0)
    assert _score("budget_adherence", over) == 0.5
    within = ScoreInput(task=declared, tool_calls=[], tokens=900, latency_s=500.0,
                        spans=[_span("step:terminal_state", 0, terminal_state="budget_exceeded")])
    assert _score("budget_adherence", within) == 0.5
    assert _score("budget_adherence", ScoreInput(task=_task(metadata={"declared_budget": {}}), tool_calls=[])) == 1.0


def test_task_completion_reads_the_recorded_terminal_state_not_the_over_budget_status() -> None:
    task = _task(metadata={"terminal_states": ["escalated", "completed"]})
    passed = GraderResult(tier=0, kind="terminal_state", name="terminal_state", passed=True)
    recorded = [_span("step:terminal_state", 9, terminal_state="completed")]
    # aeh ended the recording budget_exhausted (it ran over a cap); that harness reads `completed`
    inp = ScoreInput(task=task, tool_calls=[], status="budget_exhausted", grader_results=[passed], spans=recorded)
    assert _score("task_completion", inp) == 1.0
    failed = GraderResult(tier=0, kind="output_contains", name="output_contains", passed=False)
    # acceptable (0.4) + 1 of 2 assertions (0.6 × 0.5)
    assert _score("task_completion", ScoreInput(task=task, tool_calls=[], grader_results=[passed, failed],
                                                spans=recorded)) == 0.7


def test_recorded_steps_are_that_harness_s_own_list() -> None:
    spans = [_span("step:plan", 0, step_type="plan"),
             _span("tool:load", 1, step_type="tool_call", args={"a": 1}, result_index=2, error="bad"),
             _span("tool:load", 3, step_type="tool_call", args={"a": 1}, result_index=4,
                   error="tool 'load' is not in the task's allowlist", error_kind="unknown_tool")]
    steps = harness_steps(ScoreInput(task=_task(), tool_calls=[_call("load", True), _call("load")], spans=spans))
    assert [(s.step_type, s.tool_name, s.error, s.call) for s in steps] == [
        ("plan", None, None, None), ("tool_call", "load", None, 0), ("tool_result", "load", "bad", 0),
        ("tool_call", "load", None, 1), ("tool_result", "load", None, 1)]  # aeh's own refusal is no recorded error


def test_the_profile_replaces_only_the_dimensions_it_names() -> None:
    profile = scoring_profile("trajectory-harness")
    assert set(profile.scorers) == {"task_completion", "tool_selection", "step_efficiency", "error_recovery",
                                    "budget_adherence", "loop_detection"}
    inp = ScoreInput(task=_task(), tool_calls=[_call("load", True)] * 4, status="gave_up")
    theirs = {s.dimension: s.score for s in score_attempt(inp, replacing=profile.scorers)}
    ours = {s.dimension: s.score for s in score_attempt(inp)}
    assert theirs["error_recovery"] != ours["error_recovery"]


def test_an_unknown_profile_names_the_known_ones() -> None:
    with pytest.raises(ConfigError) as err:
        scoring_profile("trajectory_harness")
    assert "aeh, trajectory-harness" in str(err.value)
