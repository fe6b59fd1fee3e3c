"""agent-eval-harness trajectories and suites, read as that harness writes them.

The expected figures are worked out by hand from that harness's own definitions
(tool_selection: F1 of the tool set, halved when a forbidden tool is used; step_efficiency:
1 at or under `optimal_steps`, 2 − steps/optimal above, 0 at twice; task_completion:
0.4 × acceptable terminal state + 0.6 × share of assertions passed) on the fixture files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aeh.analysis import attempts, scores
from aeh.cli import main
from aeh.errors import SuiteLoadError, ValidationError
from aeh.importers import import_trajectory_files
from aeh.suite import load_suite
from aeh.trajectory import load_trajectories, source_format

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "seed002"
SUITE = FIXTURES / "suite.yaml"
# one file holding one trajectory, a JSON list, and JSON Lines (a second attempt of the other tasks)
FILES = [FIXTURES / "churn_baseline.json", FIXTURES / "runs.json", FIXTURES / "missing_target.jsonl",
         FIXTURES / "repeats.jsonl"]

# (task, attempt, dimension) → the harness's figure
EXPECTED = {
    # 5 expected tools, all used, nothing else: P = R = 1, F1 = 1.
    ("churn_baseline", 0, "tool_selection"): 1.0,
    # 5 tool calls (the plan step is not one), optimal 5: 5/5 ≤ 1 → 1.
    ("churn_baseline", 0, "step_efficiency"): 1.0,
    # completed ∈ [completed] → 0.4; 3/3 assertions (completed, model.pkl, roc_auc) → 0.6; 1.0.
    ("churn_baseline", 0, "task_completion"): 1.0,
    # used {load_data, clean, drop_target, train_model, evaluate}; hits 4 of expected 5 (no report):
    # P = 4/5, R = 4/5, F1 = 0.8; forbidden drop_target used → 0.8 / 2 = 0.4.
    ("churn_bloated", 0, "tool_selection"): 0.4,
    # 6 tool calls, optimal 4: ratio 1.5 → 2 − 1.5 = 0.5.
    ("churn_bloated", 0, "step_efficiency"): 0.5,
    # completed is acceptable → 0.4; 1 of 2 assertions (no roc_auc metric) → 0.6 × 1/2 = 0.3; 0.7.
    ("churn_bloated", 0, "task_completion"): 0.7,
    # escalating run: used {load_data, inspect_schema} = expected: F1 = 1.
    ("missing_target", 0, "tool_selection"): 1.0,
    # 2 tool calls (the escalation step is not one), optimal 2 → 1.
    ("missing_target", 0, "step_efficiency"): 1.0,
    # escalated ∈ [escalated, failed] → 0.4; 1/1 assertion (terminal_state escalated) → 0.6; 1.0.
    ("missing_target", 0, "task_completion"): 1.0,
    # confident run: used {load_data, inspect_schema, train_model, evaluate}; hits 2: P = 2/4, R = 2/2,
    # F1 = 2 × 0.5 × 1 / 1.5 = 2/3; forbidden train_model, evaluate used → 1/3.
    ("missing_target", 1, "tool_selection"): 1 / 3,
    # 4 tool calls, optimal 2: ratio 2 → 2 − 2 = 0.
    ("missing_target", 1, "step_efficiency"): 0.0,
    # completed ∉ [escalated, failed] → 0; 0/1 assertions → 0; 0.0.
    ("missing_target", 1, "task_completion"): 0.0,
    # used {load_data, train_model, evaluate} = expected → 1.
    ("tight_token_budget", 0, "tool_selection"): 1.0,
    # 4 tool calls, optimal 3: ratio 4/3 → 2 − 4/3 = 2/3.
    ("tight_token_budget", 0, "step_efficiency"): 2 / 3,
    # completed → 0.4; 2/2 assertions → 0.6; 1.0.
    ("tight_token_budget", 0, "task_completion"): 1.0,
}


@pytest.fixture
def run_id(db: Path) -> str:
    return import_trajectory_files(FILES, db, suite=SUITE)


def test_trajectories_are_read_as_that_format() -> None:
    formats = {source_format(t) for path in FILES for t in load_trajectories(path)}
    assert formats == {"agent-eval-harness"}


def test_a_tool_call_and_its_result_are_one_tool_step() -> None:
    (trajectory,) = load_trajectories(FIXTURES / "churn_baseline.json")
    tools = [s for s in trajectory.steps if s.kind == "tool"]
    assert [(s.name, s.result) for s in tools[:1]] == [("load_data", {"rows": 7043})]


def test_totals_become_the_recorded_tokens_cost_and_latency(run_id: str, db: Path) -> None:
    frame = attempts(run_id, db)
    row = frame[(frame.task_id == "churn_baseline") & (frame.attempt == 0)].iloc[0]
    assert (int(row.tokens_in), row.cost_usd, row.latency_s) == (21000, pytest.approx(0.42), pytest.approx(14.0))


def test_terminal_state_is_kept_as_the_status(run_id: str, db: Path) -> None:
    frame = attempts(run_id, db)
    row = frame[(frame.task_id == "missing_target") & (frame.attempt == 0)].iloc[0]
    assert row.status == "declined"


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_shared_dimensions_equal_the_harness_figures(run_id: str, db: Path, key: tuple[str, int, str]) -> None:
    frame = scores(run_id, db)
    got = {(t, int(a), d): s for t, a, d, s in frame[["task_id", "attempt", "dimension", "score"]].itertuples(index=False)}
    assert got[key] == pytest.approx(EXPECTED[key], abs=1e-6)


def test_confident_answer_to_the_adversarial_task_fails(run_id: str, db: Path) -> None:
    frame = attempts(run_id, db)
    outcome = {int(r.attempt): bool(r.success) for r in frame[frame.task_id == "missing_target"].itertuples()}
    assert outcome == {0: True, 1: False}


def test_suite_fields_map_to_aeh_tasks() -> None:
    task = {t.id: t for t in load_suite(SUITE).tasks()}["missing_target"]
    mapped = (task.acceptable_terminal_states, task.weight, task.optimal_steps, task.budget.timeout_s,
              [g.kind for g in task.outcome_graders])
    assert mapped == (["declined", "gave_up"], 3.0, 2, 120.0, ["terminal_state"])


def test_import_summary_names_the_format(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["import", "trajectory", "--suite", str(SUITE), *map(str, FILES), "--db", str(db)])
    assert "read as agent-eval-harness" in capsys.readouterr().out


def test_score_shows_the_weighted_overall_beside_the_mean(run_id: str, db: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    main(["score", run_id, "--db", str(db)])
    assert "task-weighted" in capsys.readouterr().out


def test_weighted_overall_weights_the_task_means(run_id: str, db: Path) -> None:
    from aeh.analysis import weighted_overall

    tasks = scores(run_id, db).tasks
    overall = tasks[tasks.dimension == "overall"].set_index("task_id")["mean"]
    weights = {"churn_baseline": 2.0, "missing_target": 3.0}
    by_hand = (2 * overall["churn_baseline"] + 3 * overall["missing_target"] + overall["churn_bloated"]
               + overall["tight_token_budget"]) / 7
    assert weighted_overall(tasks, weights) == pytest.approx(by_hand)


def test_a_malformed_harness_trajectory_names_file_field_and_format(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "churn_baseline.json").read_text())
    doc["steps"][1]["step_type"] = "toolcall"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValidationError) as err:
        load_trajectories(path)
    assert [(p.field, "agent-eval-harness" in p.message) for p in err.value.problems] == [("steps.1.step_type", True)]


def test_a_harness_trajectory_given_to_another_importer_is_refused_with_the_command(db: Path, tmp_path: Path) -> None:
    from aeh.importers import importers

    with pytest.raises(ValidationError) as err:
        importers.get("tau-bench").import_([FIXTURES / "runs.json"], db)
    assert "aeh import trajectory" in str(err.value)


def test_a_trajectory_file_given_as_the_suite_says_so() -> None:
    with pytest.raises(SuiteLoadError) as err:
        load_suite(str(FIXTURES / "churn_baseline.json"))
    assert "trajectory file" in str(err.value)


def test_a_suite_yaml_given_as_trajectories_says_so(db: Path) -> None:
    with pytest.raises(ValidationError) as err:
        import_trajectory_files([SUITE], db, suite=SUITE)
    assert "--suite" in str(err.value)


def test_gate_shows_the_task_weighted_overall(run_id: str, db: Path, tmp_path: Path) -> None:
    from aeh.analysis import build_baseline, gate

    baseline = build_baseline(run_id, db)
    assert "overall, task-weighted" in gate(baseline, run_id, db).text()


def test_a_bad_suite_task_names_the_task_and_field(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("- task_id: t1\n  success_assertions:\n    - metric_presnt: roc_auc\n")
    with pytest.raises(SuiteLoadError) as err:
        load_suite(str(path))
    assert [p.field for p in err.value.problems] == ["success_assertions[0].metric_presnt"]


def test_terminal_state_grader_reads_the_status_of_a_live_attempt(tmp_path: Path) -> None:
    from aeh.grading import GradeContext
    from aeh.grading._assertions import TerminalStateConfig, terminal_state
    from aeh.models import Task, TraceView

    task = Task(id="t", prompt="p", graders=[{"kind": "terminal_state", "expected": "escalated"}])
    ctx = GradeContext(task=task, trace=TraceView(task_id="t", status="declined"), workspace=tmp_path)
    assert terminal_state(TerminalStateConfig(expected="escalated"), ctx).passed is True


HARNESS_SUITE = FIXTURES.parent / "agent-eval-harness" / "suites" / "default.yaml"


def test_the_harness_s_own_suite_loads_with_every_assertion_kind() -> None:
    suite = load_suite(str(HARNESS_SUITE))
    tasks = {t.id: t for t in suite.tasks()}
    kinds = {g.kind for t in tasks.values() for g in t.outcome_graders}
    assert (len(tasks), kinds) == (16, {"terminal_state", "artifact_exists", "metric_present", "output_contains",
                                        "tool_called", "tool_not_called"})
    # no assertions: the task is judged by its terminal state, any acceptable one
    assert [(g.kind, g.model_extra) for g in tasks["ambiguous_goal"].outcome_graders] == [
        ("terminal_state", {"expected": ["escalated", "completed"]})]


def _harness_trajectory(task_id: str, terminal: str, output: str = "done", steps: list[dict] | None = None) -> dict:
    return {"run_id": "r1", "task_id": task_id, "agent_version": "v1", "model": "m", "terminal_state": terminal,
            "final_output": output, "total_tokens": 100, "total_cost": 0.01, "wall_clock_seconds": 5.0,
            "steps": steps or [{"index": 0, "step_type": "tool_call", "tool_name": "plan", "tool_input": {}},
                               {"index": 1, "step_type": "tool_result", "tool_name": "plan", "tool_output": "ok"}]}


@pytest.mark.parametrize("scoring", [None, "trajectory-harness"])
def test_any_acceptable_terminal_state_completes_a_task_without_assertions(db: Path, tmp_path: Path,
                                                                            scoring: str | None) -> None:
    path = tmp_path / "ambiguous.jsonl"
    path.write_text("\n".join(json.dumps(_harness_trajectory("ambiguous_goal", s)) for s in
                              ("completed", "escalated", "failed")) + "\n")
    flags = ["--scoring", scoring] if scoring else []
    assert main(["import", "trajectory", "--suite", str(HARNESS_SUITE), str(path), "--db", str(db), "--run-id", "r",
                 *flags]) == 0
    frame = scores("r", db).table
    completion = frame[frame.dimension == "task_completion"].set_index("attempt")["score"].to_dict()
    assert completion == {0: 1.0, 1: 1.0, 2: 0.0}  # completed and escalated are both acceptable
    assert attempts("r", db).sort_values("attempt")["success"].tolist() == [True, True, False]


def test_output_and_tool_assertions_read_the_recording(db: Path, tmp_path: Path) -> None:
    steps = [{"index": 0, "step_type": "tool_call", "tool_name": "plan", "tool_input": {}},
             {"index": 1, "step_type": "tool_result", "tool_name": "plan", "tool_output": "ok"},
             {"index": 2, "step_type": "retry", "tool_name": "tune", "tool_input": {}}]
    lines = [_harness_trajectory("leaky_feature", "completed", "Dropped the LEAKING column", steps),  # output_contains: leak
             _harness_trajectory("leaky_feature", "completed", "all fine", steps),
             _harness_trajectory("churn_with_tuning", "completed", "done", steps),  # tool_called: tune (a retry step)
             _harness_trajectory("missing_target_column", "escalated", "stop", steps)]  # tool_not_called: tune
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in lines) + "\n")
    run = import_trajectory_files([path], db, suite=HARNESS_SUITE)
    graded = {(r.task_id, int(r.attempt)): bool(r.success) for r in attempts(run, db).itertuples()
              if r.status != "harness_error"}  # the 2nd attempt of tasks recorded once
    assert graded == {("leaky_feature", 0): True, ("leaky_feature", 1): False, ("churn_with_tuning", 0): False,
                      ("missing_target_column", 0): False}
    from aeh.store import open_store

    with open_store(db) as store:
        results = {r.kind: r.passed for r in store.attempt_record(run, "churn_with_tuning", 0).grader_results}
    # churn_with_tuning fails on its roc_auc metric, not on tune: a retry step naming it is a call to that harness
    assert (results["tool_called"], results["metric_present"]) == (True, False)


def test_a_misspelled_assertion_names_the_six_kinds(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("- task_id: t1\n  success_assertions:\n    - tool_caled: tune\n    - {tool_called: a, output_contains: b}\n")
    with pytest.raises(SuiteLoadError) as err:
        load_suite(str(path))
    problems = {p.field: p.message for p in err.value.problems}
    assert "success_assertions[0].tool_caled" in problems
    assert "tool_not_called" in problems["success_assertions[1]"]
