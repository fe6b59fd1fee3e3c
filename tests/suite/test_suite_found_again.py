"""The suite a run measured is found again from any folder, or the command stops with the fix."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from aeh.cli import main
from aeh.suite.loader import load_suite


def cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(out):
        code = main(list(argv))
    return code, out.getvalue()


def _run(db: Path, seed: int, suite: str = "suite") -> str:
    code, out = cli("run", "--suite", suite, "--attempts", "3", "--seed", str(seed), "--db", str(db),
                    "--log-level", "silent")
    assert code == 0, out
    return out.rsplit("run id ", 1)[1].split()[0]


def _config(db: Path, run_id: str) -> dict:
    with sqlite3.connect(db) as conn:
        return json.loads(conn.execute("SELECT config FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0])


@pytest.fixture
def runs(tmp_path, monkeypatch) -> dict:
    """Two runs of the same agent on a copy of `smoke`, started in `here/` with a relative --suite."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    shutil.copytree(load_suite("smoke").root, here / "suite")
    db = tmp_path / "runs.db"
    monkeypatch.chdir(here)
    base, rerun = _run(db, 101), _run(db, 103)
    baseline = tmp_path / "baseline.json"
    assert cli("baseline", "save", base, "--out", str(baseline), "--db", str(db))[0] == 0
    return {"db": str(db), "base": base, "rerun": rerun, "baseline": str(baseline), "here": here,
            "elsewhere": elsewhere, "suite": here / "suite"}


def test_a_run_stores_an_absolute_location(runs):
    assert _config(Path(runs["db"]), runs["rerun"])["suite"]["location"] == str(runs["suite"].resolve())


def test_a_same_agent_rerun_gated_from_another_folder_passes(runs, monkeypatch):
    monkeypatch.chdir(runs["elsewhere"])
    code, out = cli("gate", "--baseline", runs["baseline"], "--run", runs["rerun"], "--db", runs["db"])
    assert code == 0, out


def test_a_moved_suite_is_refused_by_gate_score_replay_and_report_with_the_fix(runs, tmp_path):
    moved = tmp_path / "moved"
    shutil.move(runs["suite"], moved)
    db, rerun = runs["db"], runs["rerun"]
    with sqlite3.connect(db) as conn:  # unscored: the report would have to score it
        conn.execute("DELETE FROM dimension_scores WHERE run_id = ?", (rerun,))
    for argv in (("gate", "--baseline", runs["baseline"], "--run", rerun), ("score", rerun),
                 ("replay", "--run-id", rerun), ("report", "--run-id", rerun, "--out", str(tmp_path / "r.html"))):
        code, out = cli(*argv, "--db", db)
        assert code == 2, (argv, out)
        assert "--suite PATH" in out and "Traceback" not in out, (argv, out)
    code, out = cli("score", rerun, "--db", db)
    assert f"which is not at {runs['suite'].resolve()} any more" in out
    # pointed at where it is now, the same suite is accepted (same hash)
    code, out = cli("gate", "--baseline", runs["baseline"], "--run", rerun, "--db", db, "--suite", str(moved))
    assert code == 0, out
    assert cli("score", rerun, "--db", db, "--suite", str(moved))[0] == 0


def test_a_changed_suite_is_refused_naming_both_hashes(runs):
    task = next((runs["suite"] / "tasks").glob("*.yaml"))
    task.write_text(task.read_text().replace("prompt:", "prompt: (changed)", 1))
    code, out = cli("gate", "--baseline", runs["baseline"], "--run", runs["rerun"], "--db", runs["db"])
    assert code == 2
    assert "now has hash" in out and "the suite changed since the run" in out and "--suite PATH" in out
    # a given suite is checked too
    code, out = cli("score", runs["rerun"], "--db", runs["db"], "--suite", str(runs["suite"]))
    assert code == 2 and "now has hash" in out


def test_an_old_store_with_a_relative_location_works_from_its_folder(runs, monkeypatch):
    db = Path(runs["db"])
    config = _config(db, runs["rerun"])
    config["suite"]["location"] = "./suite"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET config = ? WHERE run_id = ?", (json.dumps(config), runs["rerun"]))
    monkeypatch.chdir(runs["here"])
    assert cli("score", runs["rerun"], "--db", str(db))[0] == 0
    monkeypatch.chdir(runs["elsewhere"])
    code, out = cli("score", runs["rerun"], "--db", str(db))
    assert code == 2 and "stored the path as typed" in out and "--suite PATH" in out


def test_score_never_replaces_stored_scores_silently(runs):
    db, rerun = Path(runs["db"]), runs["rerun"]
    with sqlite3.connect(db) as conn:
        key = conn.execute("SELECT task_id, attempt, dimension FROM dimension_scores WHERE run_id = ? "
                           "AND dimension = 'loop_detection' LIMIT 1", (rerun,)).fetchone()
        conn.execute("UPDATE dimension_scores SET score = 0.123 WHERE run_id = ? AND task_id = ? AND attempt = ? "
                     "AND dimension = ?", (rerun, *key))

    def stored() -> float:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT score FROM dimension_scores WHERE run_id = ? AND task_id = ? AND attempt = ? "
                                "AND dimension = ?", (rerun, *key)).fetchone()[0]

    code, out = cli("score", rerun, "--db", str(db))
    assert code == 2 and "would change 1 of its" in out and "--rescore" in out
    assert stored() == 0.123
    code, out = cli("score", rerun, "--db", str(db), "--rescore")
    assert code == 0 and "1 changed" in out
    assert stored() != 0.123
    code, out = cli("score", rerun, "--db", str(db))
    assert code == 0 and "are the same when scored again: kept" in out


def test_resume_refuses_a_moved_suite(runs, tmp_path):
    db, rerun = Path(runs["db"]), runs["rerun"]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET status = 'interrupted' WHERE run_id = ?", (rerun,))
    shutil.move(runs["suite"], tmp_path / "moved")
    code, out = cli("run", "--resume", rerun, "--db", str(db), "--log-level", "silent")
    assert code == 2 and "any more" in out and "--suite PATH" in out


@pytest.mark.local_http
def test_score_does_not_judge_again_what_is_judged_without_rescore(runs, monkeypatch):
    from aeh.testing.openai_server import FakeOpenAIServer, Reply

    def respond(request: dict) -> Reply:
        return Reply.text(json.dumps({"score": 0.5, "steps": [0], "details": "ok"}))

    db, rerun = runs["db"], runs["rerun"]
    argv = ("score", rerun, "--db", db, "--judge-model", "gpt-4o-mini", "--judge-dimension", "plan_coherence")
    with FakeOpenAIServer(respond) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        assert cli(*argv)[0] == 0
        asked = len(server.requests)
        code, out = cli(*argv)
        assert code == 2 and "already has stored judged scores (plan_coherence)" in out and "--rescore" in out
        assert len(server.requests) == asked, "nothing was sent to the judge"
        assert cli(*argv, "--rescore")[0] == 0
        assert len(server.requests) == 2 * asked
