"""Seed-style smoke through the installed CLI: on suites/coding noop solves 0, reference solves all."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.coding_support import FIXTURES

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

AEH = str(Path(sys.executable).parent / "aeh")


def _aeh(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "AEH_DB"}
    env["TMPDIR"] = str(cwd)  # kept workspaces go to $TMPDIR/aeh-workspaces: keep them in the test dir
    done = subprocess.run([AEH, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_noop_floor_reference_ceiling_matrix_and_report(tmp_path):
    noop = _aeh(tmp_path, "run", "--suite", "coding", "--adapter", "command", "--solver", "noop",
                "--attempts", "1", "--seed", "1", "--log-level", "silent", "--workspace-retention", "2")
    ref = _aeh(tmp_path, "run", "--suite", "coding", "--adapter", "command", "--solver", "reference",
               "--attempts", "1", "--seed", "1", "--log-level", "silent", "--workspace-retention", "2")
    assert (tmp_path / "runs.db").is_file()
    ids = [re.search(r"run id (\S+)", out).group(1) for out in (noop, ref)]
    for out in (noop, ref):
        assert "grading sandbox: " in out and "workspaces kept in" in out
        # one hash per fixture, named by its hidden set; the digest over all of them named apart
        assert all(f"hidden set sha256 ({f}/tests_hidden): " in out for f in FIXTURES)
        assert "hidden sets digest (sha256 over the 8 fixtures' hashes, not a hidden set's): " in out
    assert "suite rate 0.000" in noop and "suite rate 1.000" in ref
    for fixture in FIXTURES:
        assert re.search(rf"^{fixture}\s+1\s+0\s", noop, re.M), fixture
        assert re.search(rf"^{fixture}\s+1\s+1\s", ref, re.M), fixture

    matrix = _aeh(tmp_path, "matrix", *ids)
    assert re.search(r"^reference\s+ceiling\s+8/8\s+1\.00", matrix, re.M)
    assert re.search(r"^noop\s+floor\s+0/8\s+0\.00", matrix, re.M)
    assert "no floor run" not in matrix
    kept = list((tmp_path / "aeh-workspaces").glob("aeh-*"))
    assert len(kept) == 2 and all((k / "csv_dedup" / "0.grading" / "tests_public").is_dir() for k in kept)
    assert not list((tmp_path / "aeh-workspaces").rglob("tests_hidden")), "hidden tests kept where solvers look"

    pytest.importorskip("papermill")
    _aeh(tmp_path, "report", "--run-id", ids[0], "--out", str(tmp_path / "noop.html"))
    html = (tmp_path / "noop.html").read_text()
    assert "Public vs hidden tests per task" in html and "coding-public-hidden" in html
    for fixture in FIXTURES:
        assert fixture in html
