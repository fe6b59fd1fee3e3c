"""Scripts written against the earlier DataFrame-with-attrs API run unchanged.

Each script in `tests/fixtures/earlier_api/` is a job a user wrote when `aeh.run`, `compare`,
`pass_k` and `agreement` returned DataFrames with their figures in `attrs`: iterrows, to_csv,
groupby, plot, pd.concat and `attrs[...]` keys. They run as scripts, in a process of their own,
and are told (DeprecationWarning) which typed field replaces each key they read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.slow  # a Python process and a run per script

SCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "earlier_api"


def _script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-W", "default::DeprecationWarning", str(SCRIPTS / f"{name}.py"), *args],
                          capture_output=True, text=True, timeout=300)


def _told(done: subprocess.CompletedProcess[str], key: str, field: str) -> bool:
    return f"attrs[{key!r}] is deprecated: read the typed field `.{field}`" in done.stderr


def test_a_nightly_csv_job(tmp_path: Path) -> None:
    done = _script("nightly_csv", str(tmp_path / "runs.db"), str(tmp_path / "out.csv"))
    assert done.returncode == 0, done.stderr
    rows = pd.read_csv(tmp_path / "out.csv")
    assert rows["task_id"].tolist() == ["add_then_multiply", "average_to_two_decimals", "split_the_bill"]
    lines = done.stdout.splitlines()
    assert len(lines) == 4 and lines[-1].startswith("suite 0.") and lines[-1].endswith(" valid")
    assert _told(done, "run_id", "run_id") and _told(done, "suite_rate", "suite_rate")


def test_a_regression_gate_exits_1_on_the_degraded_agent(tmp_path: Path) -> None:
    done = _script("regression_gate", str(tmp_path / "runs.db"))
    assert done.returncode == 1, done.stderr
    assert "status regressed" in done.stdout and "regressed none" not in done.stdout
    assert _told(done, "regressed", "regressed_tasks") and _told(done, "verdict", "verdict")


def test_a_trend_chart_over_concatenated_runs(tmp_path: Path) -> None:
    done = _script("trend_plot", str(tmp_path / "runs.db"), str(tmp_path / "trend.png"))
    assert done.returncode == 0, done.stderr
    assert "runs 3" in done.stdout and len(done.stdout.splitlines()) == 4
    assert (tmp_path / "trend.png").read_bytes()[:4] == b"\x89PNG"


def test_a_pass_k_table(tmp_path: Path) -> None:
    done = _script("pass_k_table", str(tmp_path / "runs.db"))
    assert done.returncode == 0, done.stderr
    assert "suite tasks 3" in done.stdout and "k=6 pass^k=" in done.stdout and "k,pass_hat_k" in done.stdout
    assert _told(done, "suite_tasks", "suite_tasks")


def test_a_judge_audit(tmp_path: Path) -> None:
    done = _script("judge_check", str(tmp_path / "runs.db"))
    assert done.returncode == 0, done.stderr
    assert "threshold 0.7 min_n 10" in done.stdout and "judge 0 not trusted" in done.stdout
    assert _told(done, "threshold", "threshold") and _told(done, "judge_verdicts", "judge_verdicts")
