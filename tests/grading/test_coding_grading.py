"""Grading does not trust the workspace: separation, tamper-proofing, real network denial."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from aeh.cli import main
from aeh.grading import _sandbox
from aeh.grading._sandbox import probe_sandbox
from tests.coding_support import LoopbackServer, grader_evidence, mini_suite, network_fixture, run_coding

pytestmark = pytest.mark.slow  # every test grades through pytest subprocesses

FIX = 'cp "{suite}/$AEH_TASK_ID/reference/"*.py .'
TAMPER = (
    "rm -rf tests_public && mkdir -p tests_public tests_hidden"
    " && printf 'def test_fake():\\n    pass\\n' > tests_public/test_public_fake.py"
    " && printf 'def test_fake():\\n    pass\\n' > tests_hidden/test_hidden_fake.py"
    " && printf 'def test_fake():\\n    pass\\n' > test_hidden_extra.py"
    " && printf 'import pytest\\n@pytest.hookimpl(tryfirst=True)\\ndef pytest_runtest_call(item):\\n"
    "    item.runtest = lambda: None\\n' > conftest.py"
)
COUNTS = ("public_passed", "public_total", "hidden_passed", "hidden_total", "failing")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return mini_suite(tmp_path / "suite")


def _grades(db: Path, table) -> dict:
    return grader_evidence(db, table.run_id)


def test_no_hidden_test_in_any_workspace_at_any_time(suite, tmp_path, db):
    seen = tmp_path / "seen"
    seen.mkdir()
    # The solver lists its whole workspace at start and again after a pause, with attempts in parallel.
    solver = f'find . > "{seen}/$AEH_TASK_ID-$AEH_ATTEMPT-a"; sleep 0.2; find . > "{seen}/$AEH_TASK_ID-$AEH_ATTEMPT-b"'
    table = run_coding(suite, db, solver, attempts=2, concurrency=4, workspace_retention=1,
                       work_dir=tmp_path / "ws")
    listings = sorted(seen.iterdir())
    assert len(listings) == 2 * 2 * 2
    for listing in listings:
        text = listing.read_text()
        assert "./PROMPT.md" in text and "./tests_public/" in text
        assert "hidden" not in text, listing.name
    root = Path(table.run.config.workspace_root)
    workspaces = [p for p in root.glob("*/*") if p.is_dir() and p.name.isdigit()]
    assert len(workspaces) == 4
    for ws in workspaces:
        assert not [p for p in ws.rglob("*") if "hidden" in p.name]
    for ev in _grades(db, table).values():
        assert ev["tamper_suspect"] is False and ev["public"] == f"{ev['public_total']}/{ev['public_total']}"


def test_tampering_with_tests_changes_the_grade_by_zero(suite, db):
    honest = _grades(db, run_coding(suite, db, FIX.format(suite=suite)))
    tamper = _grades(db, run_coding(suite, db, FIX.format(suite=suite) + " && " + TAMPER, seed=2))
    floor = _grades(db, run_coding(suite, db, "noop", seed=3))
    fake_only = _grades(db, run_coding(suite, db, TAMPER, seed=4))
    assert honest.keys() == tamper.keys() == floor.keys() == fake_only.keys()
    for key in honest:
        assert [honest[key][c] for c in COUNTS] == [tamper[key][c] for c in COUNTS]
        assert [floor[key][c] for c in COUNTS] == [fake_only[key][c] for c in COUNTS]
        assert honest[key]["hidden_passed"] == honest[key]["hidden_total"]
        assert floor[key]["hidden_passed"] < floor[key]["hidden_total"]
        assert honest[key]["tamper_suspect"] is False and floor[key]["tamper_suspect"] is False
        assert tamper[key]["tamper_suspect"] is True and fake_only[key]["tamper_suspect"] is True
        assert "test_hidden_extra.py" in tamper[key]["tamper_files"]
        assert tamper[key]["hidden_sha256"] == honest[key]["hidden_sha256"]


def test_a_symlinked_entry_file_is_not_graded(suite, db):
    solver = f'for f in "{suite}/$AEH_TASK_ID/reference/"*.py; do ln -sf "$f" .; done'
    grades = _grades(db, run_coding(suite, db, solver))
    for ev in grades.values():
        assert set(ev["entry_files"].values()) == {"rejected:symlink"}
        assert ev["hidden_passed"] == 0


def test_hidden_set_hash_is_on_the_run_and_every_attempt(suite, db):
    table = run_coding(suite, db, "reference")
    config = table.run.config.facts
    per_task = config["hidden_sha256_per_task"]
    assert len(config["hidden_sha256"]) == 64 and set(per_task) == {"csv_dedup", "lru_eviction"}
    for (task, _), ev in _grades(db, table).items():
        assert ev["hidden_sha256"] == per_task[task]


def test_graded_code_is_denied_the_network(tmp_path, db):
    with LoopbackServer() as server:
        suite = network_fixture(tmp_path / "net", server.port)
        off = run_coding(suite, db, "reference", grading_sandbox=False)
        assert off.run.config.facts["grading_sandbox"] == "disabled"
        assert off["successes"].tolist() == [1], "without the sandbox the loopback probe is reachable"
        hits = server.hits
        assert hits >= 1
        on = run_coding(suite, db, "reference", seed=2)
        mode = on.run.config.facts["grading_sandbox"]
        ev = next(iter(_grades(db, on).values()))
        assert ev["grading_sandbox"] == mode
        if mode != "unshare":
            pytest.skip(f"no network sandbox on this machine ({mode}); recorded honestly")
        assert on["successes"].tolist() == [0]
        assert ev["public"] == "1/1" and ev["hidden"] == "0/1"
        assert server.hits == hits, "graded code reached the loopback server under the sandbox"
        assert "unreachable" in ev["output_tail"].lower() or "refused" in ev["output_tail"].lower()


@pytest.fixture
def fresh_probe():
    probe_sandbox.cache_clear()
    yield
    probe_sandbox.cache_clear()


def _fake_unshare(bin_dir: Path) -> None:
    bin_dir.mkdir()
    script = bin_dir / "unshare"
    script.write_text("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_sandbox_modes_are_honest(tmp_path, monkeypatch, fresh_probe):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert probe_sandbox().mode == "unavailable"
    probe_sandbox.cache_clear()
    _fake_unshare(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    mode = probe_sandbox().mode
    assert mode.startswith("fallback-off:") and "Operation not permitted" in mode
    assert _sandbox.sandbox_for(False).mode == "disabled"


def test_fallback_is_recorded_and_announced_never_silent(tmp_path, monkeypatch, fresh_probe, capsys, db):
    _fake_unshare(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    with LoopbackServer() as server:
        suite = network_fixture(tmp_path / "net", server.port)
        code = main(["run", "--suite", str(suite), "--adapter", "command", "--solver", "reference",
                     "--attempts", "1", "--seed", "1", "--db", str(db), "--log-level", "silent"])
        assert code == 0
        out = capsys.readouterr().out
        assert "grading sandbox: fallback-off:" in out and "WARNING" in out
        assert server.hits >= 1  # it really ran unsandboxed, and said so
