"""agent-eval-harness's own suite and recorded runs, read as they are: every suite figure that
harness publishes is reproduced to its printed decimals under the `trajectory-harness` scoring
profile, every attempt's score equals the one it computed, and its gate's verdicts hold.

The files (`tests/fixtures/agent-eval-harness/README.md`): a suite file in that harness's format
declaring the tasks of its 16-task `suites/default.yaml` (ids, tools, step counts, budgets, weights,
assertions), and the trajectories its own mock agent recorded for v1, a same-agent rerun (v1-rerun)
and a degraded planner (v2-degraded), 16 tasks × 5 repeats each. With `AEH_AGENT_EVAL_HARNESS`
naming a checkout of that harness, its own `suites/default.yaml` is checked to declare the same.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from aeh.analysis import build_baseline, gate, score_run, scores, task_weighted
from aeh.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent-eval-harness"
VERSIONS = ("v1", "v1-rerun", "v2-degraded")

#: The suite figures that harness's README publishes ("Results (real numbers)": 16 tasks × 5
#: repeats × 6 deterministic scorers), task-weighted, 3 decimals: the baseline v1 and the
#: degraded planner v2-degraded, overall and six dimensions each; and the rerun's two it prints.
PUBLISHED = {
    "v1": {"overall": "0.993", "budget_adherence": "1.000", "error_recovery": "1.000", "loop_detection": "1.000",
           "step_efficiency": "0.975", "task_completion": "0.985", "tool_selection": "1.000"},
    "v2-degraded": {"overall": "0.622", "budget_adherence": "0.991", "error_recovery": "0.636",
                    "loop_detection": "0.161", "step_efficiency": "0.427", "task_completion": "0.610",
                    "tool_selection": "0.907"},
    "v1-rerun": {"overall": "0.993", "step_efficiency": "0.972"},
}
#: The dimensions that harness's gate marks FAIL for the degraded planner (budget_adherence: noise).
HARNESS_FAILS = ["error_recovery", "loop_detection", "step_efficiency", "task_completion", "tool_selection"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The recorded files, decompressed and otherwise unchanged, beside the suite file."""
    root = tmp_path_factory.mktemp("harness")
    shutil.copytree(FIXTURES / "suites", root / "suites")
    out = {"suite": root / "suites" / "default.yaml"}
    for version in VERSIONS:
        out[version] = root / f"{version}.jsonl"
        out[version].write_bytes(gzip.decompress((FIXTURES / "runs" / f"{version}.jsonl.gz").read_bytes()))
    return out


@pytest.fixture(scope="module")
def harness_runs(files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The three versions imported as that harness's users would: `aeh import trajectory … --scoring trajectory-harness`."""
    db = tmp_path_factory.mktemp("harness-db") / "runs.db"
    for version in VERSIONS:
        assert main(["import", "trajectory", "--suite", str(files["suite"]), str(files[version]), "--db", str(db),
                     "--run-id", version, "--scoring", "trajectory-harness"]) == 0
    return db, {v: v for v in VERSIONS}


def _declared(path: Path) -> dict[str, object]:
    """What a suite file declares that scoring reads: everything but the words of descriptions and goals."""
    from aeh._util.yaml import load_yaml

    tasks = load_yaml(path.read_text())["tasks"]
    return {t["task_id"]: {k: ({**v, "goal": None} if k == "input" else v)
                           for k, v in t.items() if k != "description"} for t in tasks}


def test_the_harness_s_own_suite_file_declares_the_same_tasks() -> None:
    checkout = os.environ.get("AEH_AGENT_EVAL_HARNESS")
    if not checkout:
        pytest.skip("set AEH_AGENT_EVAL_HARNESS to a checkout of agent-eval-harness to compare its suites/default.yaml")
    from aeh.suite.loader import load_suite

    theirs = Path(checkout) / "suites" / "default.yaml"
    assert _declared(theirs) == _declared(FIXTURES / "suites" / "default.yaml")
    assert len(load_suite(str(theirs)).tasks()) == 16  # loads as it is


@pytest.mark.parametrize("version", ["v1", "v2-degraded", "v1-rerun"])
def test_every_published_suite_figure_is_reproduced_under_the_profile(
        harness_runs: tuple[Path, dict[str, str]], version: str) -> None:
    db, runs = harness_runs
    result = scores(runs[version], db)
    figures = task_weighted(result.tasks, result.task_weights)
    got = {dim: f"{figures[dim]:.3f}" for dim in PUBLISHED[version]}
    assert got == PUBLISHED[version]


def test_aeh_score_prints_the_figures_as_that_harness_prints_them(
        harness_runs: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    db, runs = harness_runs
    assert main(["score", runs["v2-degraded"], "--db", str(db)]) == 0
    out = capsys.readouterr().out
    block = out[out.index("task-weighted, as agent-eval-harness prints them:"):].splitlines()[1:]
    # that harness's own printout of this run (fixtures README), its [UNSTABLE] marks aside
    assert block == ["overall: 0.622 (±0.098)",
                     "  budget_adherence         0.991 ±0.018",
                     "  error_recovery           0.636 ±0.203",
                     "  loop_detection           0.161 ±0.201",
                     "  step_efficiency          0.427 ±0.259",
                     "  task_completion          0.610 ±0.000",
                     "  tool_selection           0.907 ±0.000"]
    assert "(scoring: trajectory-harness)" in out


def test_every_attempt_scores_as_that_harness_scored_it(harness_runs: tuple[Path, dict[str, str]]) -> None:
    db, runs = harness_runs
    theirs = json.loads(gzip.decompress((FIXTURES / "runs" / "scores.json.gz").read_bytes()))
    differ = []
    for version in VERSIONS:
        table = scores(runs[version], db).table
        ours = {(t, int(a), d): s for t, a, d, s in table[["task_id", "attempt", "dimension", "score"]]
                .itertuples(index=False)}
        for task, repeats in theirs[version].items():
            for attempt, dims in enumerate(repeats):
                differ += [(version, task, attempt, d, s, ours.get((task, attempt, d)))
                           for d, s in dims.items() if ours.get((task, attempt, d)) != pytest.approx(s, abs=1e-9)]
    assert sum(len(d) for v in theirs.values() for r in v.values() for d in r) == 3 * 80 * 6
    assert differ == []


def test_the_same_agent_rerun_passes_and_the_degraded_planner_fails_on_the_same_dimensions(
        harness_runs: tuple[Path, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, runs = harness_runs
    baseline = tmp_path / "main.json"
    assert main(["baseline", "save", runs["v1"], "--out", str(baseline), "--db", str(db)]) == 0
    assert json.loads(baseline.read_text())["scoring"] == "trajectory-harness"  # the run's own profile
    assert main(["gate", "--baseline", str(baseline), "--run", runs["v1-rerun"], "--db", str(db)]) == 0
    rerun = capsys.readouterr().out
    assert "    step_efficiency          0.975 -> 0.972 (-0.004)" in rerun  # as that harness prints it
    assert main(["gate", "--baseline", str(baseline), "--run", runs["v2-degraded"], "--db", str(db)]) == 1
    degraded = capsys.readouterr().out
    assert "    overall                  0.993 -> 0.622 (-0.371)" in degraded
    assert "    error_recovery           1.000 -> 0.636 (-0.363)" in degraded
    assert gate(baseline, runs["v2-degraded"], db).regressed_dimensions == HARNESS_FAILS


def test_aeh_s_own_definitions_stay_the_default_and_gate_alike(harness_runs: tuple[Path, dict[str, str]]) -> None:
    db, runs = harness_runs
    base = build_baseline(runs["v1"], db, scoring="aeh")
    assert build_baseline(runs["v1"], db, scoring=None)["scoring"] == "trajectory-harness"  # the run's own
    assert not gate(base, runs["v1-rerun"], db).regressed
    assert gate(base, runs["v2-degraded"], db).regressed_dimensions == HARNESS_FAILS
    # aeh's own error_recovery and loop_detection read the degraded planner differently
    frame = score_run(runs["v2-degraded"], db, scoring="aeh", write=False)
    means = frame.groupby("dimension")["score"].mean()
    assert (round(means["error_recovery"], 3), round(means["loop_detection"], 3)) != (0.636, 0.161)


def test_declared_optimal_steps_are_used_and_none_learned(harness_runs: tuple[Path, dict[str, str]]) -> None:
    db, runs = harness_runs
    base = build_baseline(runs["v1"], db)
    assert base["learned_optimal_steps"] == {}
    assert len(base["declared_optimal_steps"]) == 16
    suite = base["dimensions"]["step_efficiency"]["mean"]
    assert suite == pytest.approx(scores(runs["v1"], db).suite.set_index("dimension")["mean"]["step_efficiency"])


def test_a_baseline_that_learned_over_a_declared_count_is_named_and_not_used(
        harness_runs: tuple[Path, dict[str, str]]) -> None:
    db, runs = harness_runs
    base = build_baseline(runs["v1"], db)
    stale = {**base, "learned_optimal_steps": {"churn_baseline": 3}}  # as aeh saved baselines before
    result = gate(stale, runs["v1-rerun"], db)
    assert any("declare optimal_steps (churn_baseline)" in note and "re-save" in note for note in result.notes)
    fresh = gate(base, runs["v1-rerun"], db)
    step = [(f.base, f.new) for f in fresh.tasks if f.task_id == "churn_baseline" and f.dimension == "step_efficiency"]
    assert [(f.base, f.new) for f in result.tasks if f.task_id == "churn_baseline"
            and f.dimension == "step_efficiency"] == step  # the run is scored with the declared 12, not 3
