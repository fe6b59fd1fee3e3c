"""`aeh import …` through aeh.cli.main, and Terminal-Bench bad input (no real data needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realdata_paths import OPUS, tb_runs

import aeh
from aeh.cli import main as cli_main
from aeh.errors import ValidationError
from aeh.importers import import_terminal_bench


def _result(task_id: str, resolved: bool | None, mode: str = "unset") -> dict:
    return {"id": "x", "trial_name": f"{task_id}.1-of-1.r", "task_id": task_id, "instruction": "do it",
            "is_resolved": resolved, "failure_mode": mode,
            "parser_results": None if resolved is None else {"test": "passed" if resolved else "failed"},
            "recording_path": "", "total_input_tokens": 0, "total_output_tokens": 0,
            "trial_started_at": "2025-09-22T02:00:00+00:00", "trial_ended_at": "2025-09-22T02:10:00+00:00",
            "agent_started_at": "2025-09-22T02:00:05+00:00", "agent_ended_at": "2025-09-22T02:05:05+00:00",
            "test_started_at": "2025-09-22T02:06:00+00:00", "test_ended_at": "2025-09-22T02:07:00+00:00"}


def _run_dir(root: Path, name: str, results: list[dict]) -> Path:
    d = root / "20250101_agent_model-x" / name
    d.mkdir(parents=True)
    (d / "results.json").write_text(json.dumps({"id": "u", "results": results}))
    return d


def test_synthetic_runs(tmp_path: Path) -> None:
    d1 = _run_dir(tmp_path, "r1", [_result("a", True), _result("b", None, "test_timeout")])
    d2 = _run_dir(tmp_path, "r2", [_result("a", False, "agent_timeout"), _result("b", True, "agent_timeout")])
    rid = import_terminal_bench([d1, d2], db=tmp_path / "r.db")
    frame = aeh.attempts(rid, db=tmp_path / "r.db").set_index(["task_id", "attempt"])
    assert frame.loc[("a", 0), "success"] and frame.loc[("a", 0), "latency_s"] == 300.0
    assert frame.loc[("a", 1), "status"] == "budget_exhausted"
    assert frame.loc[("a", 1), "failure_bucket"] == "budget_exhausted"
    # a null is a failure by default (the leaderboard's definition); test_timeout is a time budget
    assert frame.loc[("b", 0), "status"] == "budget_exhausted" and frame.loc[("b", 0), "failure_bucket"] == "budget_exhausted"
    assert frame.loc[("b", 1), "success"]  # resolved although the agent timed out: the tests decide
    result = aeh.load_run(rid, db=tmp_path / "r.db")
    table = result.table.set_index("task_id")
    assert (table.loc["b", "n"], table.loc["b", "harness_errors"], table.loc["b", "successes"]) == (2, 0, 1)
    assert aeh.runs(db=tmp_path / "r.db").loc[0, "model"] == "model-x"
    assert result.run.config.facts["agent_name"] == "agent"  # no metadata: from the folder name

    rid = import_terminal_bench([d1, d2], db=tmp_path / "r.db", null_as="harness_error")
    frame = aeh.attempts(rid, db=tmp_path / "r.db").set_index(["task_id", "attempt"])
    assert frame.loc[("b", 0), "status"] == "harness_error" and frame.loc[("b", 0), "failure_bucket"] == "harness_error"
    table = aeh.load_run(rid, db=tmp_path / "r.db").table.set_index("task_id")
    assert (table.loc["b", "n"], table.loc["b", "harness_errors"], table.loc["b", "successes"]) == (1, 1, 1)


def test_bad_input_lists_every_problem(tmp_path: Path) -> None:
    bad = _run_dir(tmp_path, "bad", [{"task_id": 3, "is_resolved": "yes", "failure_mode": "unset"},
                                     _result("a", True), _result("a", False)])
    wrong = tmp_path / "20250101_agent_model-x" / "wrong"
    wrong.mkdir()
    (wrong / "results.json").write_text(json.dumps([1, 2]))
    with pytest.raises(ValidationError) as exc:
        import_terminal_bench([bad, wrong, tmp_path / "missing"], db=tmp_path / "r.db")
    fields = [(Path(p.file).parent.name, p.field) for p in exc.value.problems]
    assert ("bad", "results[0].task_id") in fields and ("bad", "results[0].is_resolved") in fields
    assert ("bad", "results[2].task_id") in fields  # the same trial of a task twice
    assert ("wrong", "results") in fields
    assert any("missing" in p.file and "not a directory or file" in p.message for p in exc.value.problems)
    assert all(p.fix for p in exc.value.problems)
    with pytest.raises(ValidationError, match="no path given"):
        import_terminal_bench([], db=tmp_path / "r.db")


def test_cli_import_bad_input_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["import", "terminal-bench", str(tmp_path), "--db", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert "results.json" in err and "file not found" in err and "Traceback" not in err
    assert cli_main(["import", "tau-bench", str(tmp_path / "none.json"), "--db", str(tmp_path / "r.db")]) == 2


def test_cli_import_real_data(tau_file: Path, tb_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "r.db")
    assert cli_main(["import", "tau-bench", str(tau_file), "--db", db, "--run-id", "tau-cli"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "tau-cli"
    assert out[1].startswith("50 tasks, 200 attempts: suite rate 0.420") and "unpriced" in out[1]
    assert cli_main(["import", "terminal-bench", *map(str, tb_runs(OPUS)), "--db", db]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("tb-") and "suite rate 0.588" in out[1] and "harness errors 0/400;" in out[1]
    assert "source accuracy 0.5875" in out[1] and "null is_resolved as failure" in out[1]
    assert cli_main(["import", "terminal-bench", *map(str, tb_runs(OPUS)), "--db", db, "--null-as", "harness_error"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "harness errors 9/400 (2.2% > 2%" in out[1] and "null is_resolved as harness_error" in out[1]
    assert cli_main(["runs", "--db", db]) == 0
    assert "claude-4-1-opus" in capsys.readouterr().out


def test_every_command_has_help() -> None:
    from aeh.cli import build_parser

    text = build_parser().format_help()
    assert "import" in text
