"""Scores stored per attempt, baselines and the gate, through the library and the CLI."""

from __future__ import annotations

import io
import json
import random
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd
import pytest

import aeh
from aeh.analysis import Baseline, build_baseline, gate, load_baseline
from aeh.analysis._gate import GateFinding, _compare
from aeh.cli import main
from aeh.stats import ScoreSummary, noise_band


def cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def run_id(code_out: tuple[int, str]) -> str:
    code, out = code_out
    assert code == 0, out
    return out.rsplit("run id ", 1)[1].split()[0]


def test_noise_band_is_two_sigma_with_a_floor() -> None:
    assert noise_band(ScoreSummary(1, 0, 5), ScoreSummary(1, 0, 5)) == 0.01
    assert noise_band(ScoreSummary(0.5, 0.2, 4), ScoreSummary(0.5, 0.2, 4)) == pytest.approx(2 * (0.04 / 4 * 2) ** 0.5)


def _noisy(mean: float, n: int, rng: random.Random) -> dict[str, float | int]:
    values = [min(1.0, max(0.0, rng.gauss(mean, 0.15))) for _ in range(n)]
    s = pd.Series(values)
    return {"mean": float(s.mean()), "sd": float(s.std()), "n": n}


def test_small_drop_on_a_noisy_agent_does_not_fire_and_a_collapse_does() -> None:
    rng = random.Random(3)
    base = {"loop_detection": _noisy(0.8, 10, rng)}
    small = {"loop_detection": {**_noisy(0.78, 10, rng), "mean": base["loop_detection"]["mean"] - 0.02}}
    assert not any(f.regressed for f in _compare("noisy_task", base, small, 0.05, 0.03))
    collapse = {"loop_detection": {**_noisy(0.1, 10, rng), "mean": base["loop_detection"]["mean"] - 0.7}}
    hit = [f for f in _compare("noisy_task", base, collapse, 0.05, 0.03) if f.regressed]
    assert [(f.task_id, f.dimension) for f in hit] == [("noisy_task", "loop_detection")]


def test_a_noisy_task_does_not_borrow_a_stable_tasks_band() -> None:
    stable = GateFinding("stable", "x", 1.0, 0.9, noise_band(ScoreSummary(1, 0, 5), ScoreSummary(0.9, 0, 5)), 0.05)
    noisy = GateFinding("noisy", "x", 0.8, 0.7, noise_band(ScoreSummary(0.8, 0.3, 5), ScoreSummary(0.7, 0.3, 5)), 0.05)
    assert stable.regressed and not noisy.regressed


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("gate")
    db = str(d / "runs.db")
    common = ["--suite", "smoke", "--attempts", "5", "--db", db, "--log-level", "silent"]
    ids = {
        "base": run_id(cli("run", *common, "--seed", "101")),
        "loopy": run_id(cli("run", *common, "--seed", "102", "--model", "mock-loopy")),
        "rerun": run_id(cli("run", *common, "--seed", "103")),
    }
    return {**ids, "db": db, "dir": str(d)}


def test_run_stores_scores_and_scores_api_reads_them(smoke_runs: dict[str, str]) -> None:
    frame = aeh.scores(smoke_runs["base"], db=smoke_runs["db"])
    assert {"task_completion", "loop_detection", "step_efficiency"} <= set(frame["dimension"])
    assert len(frame) > 0 and frame["score"].between(0, 1).all()
    suite = frame.suite.set_index("dimension")
    assert suite.loc["loop_detection", "n"] == 25
    tasks = frame.tasks
    overall = tasks[tasks["dimension"] == "overall"]["mean"].tolist()
    assert overall == sorted(overall)  # worst first


def test_score_command_rescores_without_a_rerun(smoke_runs: dict[str, str]) -> None:
    code, out = cli("score", smoke_runs["loopy"], "--db", smoke_runs["db"])
    assert code == 0 and "loop_detection" in out
    frame = aeh.scores(smoke_runs["loopy"], db=smoke_runs["db"])
    low = frame[(frame["dimension"] == "loop_detection") & (frame["score"] < 1)]
    assert len(low) and all(e["steps"] for e in low["evidence"])


def test_done_when_loopy_fails_the_gate_and_a_rerun_passes(smoke_runs: dict[str, str]) -> None:
    db, out = smoke_runs["db"], Path(smoke_runs["dir"]) / "baselines" / "main.json"
    code, _ = cli("baseline", "save", smoke_runs["base"], "--out", str(out), "--db", db)
    assert code == 0
    saved = json.loads(out.read_text())
    assert saved["suite_hash"] and saved["tasks"] and saved["learned_optimal_steps"]
    md = Path(smoke_runs["dir"]) / "pr.md"
    code, text = cli("gate", "--baseline", str(out), "--run", smoke_runs["loopy"], "--db", db, "--markdown", str(md))
    assert code == 1, text
    assert "loop_detection" in text and "step_efficiency" in text and "HARD REGRESSION" in text
    comment = md.read_text()
    assert "loop_detection" in comment and "band" in comment and "Worst" in comment
    code, text = cli("gate", "--baseline", str(out), "--run", smoke_runs["rerun"], "--db", db)
    assert code == 0, text
    # smoke's tasks declare no optimal_steps: the counts are learned, and the output says so
    assert f"optimal steps learned from the baseline's passing attempts for {len(saved['learned_optimal_steps'])}" in text


def test_gate_success_rate_unchanged_for_loopy(smoke_runs: dict[str, str]) -> None:
    base = build_baseline(smoke_runs["base"], smoke_runs["db"])
    result = gate(base, smoke_runs["loopy"], smoke_runs["db"])
    assert not result.success_verdict.regressed  # output-level success misses it
    assert {"loop_detection", "step_efficiency"} <= set(result.regressed_dimensions)


def test_the_validated_baseline_stays_a_model_through_the_gate(smoke_runs: dict[str, str], tmp_path: Path) -> None:
    written = build_baseline(smoke_runs["base"], smoke_runs["db"])
    path = tmp_path / "base.json"
    path.write_text(json.dumps(written))
    loaded = load_baseline(path)
    assert isinstance(loaded, Baseline) and loaded.tasks.keys() == written["tasks"].keys()
    for given in (str(path), written, loaded):  # a file, the dict as written, the model itself
        result = gate(given, smoke_runs["loopy"], smoke_runs["db"])
        assert isinstance(result.baseline, Baseline) and result.baseline.run_id == written["run_id"]
        assert {"loop_detection", "step_efficiency"} <= set(result.regressed_dimensions)


def test_gate_bad_input_and_suite_mismatch(smoke_runs: dict[str, str], tmp_path: Path) -> None:
    db = smoke_runs["db"]
    assert cli("gate", "--baseline", str(tmp_path / "missing.json"), "--db", db)[0] == 2
    (tmp_path / "bad.json").write_text("{}")
    assert cli("gate", "--baseline", str(tmp_path / "bad.json"), "--db", db)[0] == 2
    other = build_baseline(smoke_runs["base"], db)
    other["suite_hash"] = "0" * 64
    (tmp_path / "other.json").write_text(json.dumps(other))
    assert cli("gate", "--baseline", str(tmp_path / "other.json"), "--db", db)[0] == 5
