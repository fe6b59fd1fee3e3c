"""Preflight: a coding suite whose grading interpreter lacks pytest refuses to start, and names it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import aeh.api
import aeh.grading._hidden_tests as hidden_tests
from aeh.cli import main
from aeh.errors import Problem
from aeh.grading._preflight import PreflightError, install_command, module_importable, preflight_problems
from aeh.suite.loader import load_suite
from tests.coding_support import mini_suite, run_coding


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    return mini_suite(tmp_path_factory.mktemp("coding") / "suite", ("csv_dedup",))


@pytest.fixture
def python_without_pytest(tmp_path, monkeypatch) -> str:
    """A real interpreter that cannot import pytest (no site-packages), as the grading interpreter."""
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    python.chmod(0o755)
    monkeypatch.setattr(hidden_tests, "grading_interpreter", lambda: str(python))
    return str(python)


def test_the_probe_asks_the_interpreter_itself(python_without_pytest):
    assert module_importable(sys.executable, "pytest") is True
    assert module_importable(python_without_pytest, "pytest") is False
    assert module_importable("/nonexistent/python", "pytest") is False


def test_install_command_uses_uv_beside_the_interpreter(tmp_path):
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    assert install_command(str(bin_dir / "python"), "pytest") == f"{bin_dir / 'python'} -m pip install pytest"
    (bin_dir / "uv").write_text("")
    assert install_command(str(bin_dir / "python"), "pytest") == f"{bin_dir / 'uv'} pip install -p {tmp_path / 'venv'} pytest"


def test_run_refuses_to_start_naming_pytest_and_the_install_command(suite, db, python_without_pytest, capsys):
    with pytest.raises(PreflightError) as caught:
        run_coding(suite, db, "reference")
    assert "pytest is not importable by the grading interpreter" in str(caught.value)
    assert f"install it: {python_without_pytest} -m pip install pytest" in str(caught.value)
    assert not db.exists(), "nothing is stored for a run that never started"
    assert main(["run", "--suite", str(suite), "--adapter", "command", "--solver", "reference",
                 "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "pytest is not importable" in err and "Traceback" not in err


def test_tasks_validate_names_pytest_instead_of_zero_of_zero(suite, python_without_pytest, capsys):
    assert main(["tasks", "validate", "--suite", str(suite)]) == 2
    out = capsys.readouterr().out
    assert "pytest is not importable" in out and "install it:" in out
    assert "passes 0/0" not in out


def test_a_run_past_preflight_without_pytest_is_a_harness_error_not_a_wrong_answer(
        suite, db, python_without_pytest, monkeypatch):
    monkeypatch.setattr(aeh.api, "require_preflight", lambda suite: None)
    table = run_coding(suite, db, "reference")
    assert table["harness_errors"].tolist() == [1]
    assert table["fail_wrong_answer"].tolist() == [0]
    assert "pytest is not importable" in table.harness_error_causes[0]["cause"]
    assert table.invalid_measurement is True


def test_a_test_runner_that_never_starts_is_a_harness_error_not_a_wrong_answer(suite, db, tmp_path, monkeypatch):
    broken = tmp_path / "broken" / "python"
    broken.parent.mkdir()
    broken.write_text("#!/bin/sh\necho 'interpreter is broken' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setattr(hidden_tests, "grading_interpreter", lambda: str(broken))
    monkeypatch.setattr(aeh.api, "require_preflight", lambda suite: None)
    table = run_coding(suite, db, "reference")
    assert table["harness_errors"].tolist() == [1]
    assert table["fail_wrong_answer"].tolist() == [0]
    assert "the test runner never started" in table.harness_error_causes[0]["cause"]


def test_with_pytest_there_is_nothing_to_say(suite):
    assert preflight_problems(load_suite(str(suite))) == []


def test_a_suite_declares_its_own_preflight(suite):
    loaded = load_suite(str(suite))
    problem = Problem("suite.yaml", "service", "the fixture database is not running", "start it")
    loaded.preflight = lambda: [problem]  # type: ignore[attr-defined]
    assert preflight_problems(loaded) == [problem]


def test_a_reference_run_that_does_not_solve_everything_says_so(suite, db, python_without_pytest, monkeypatch,
                                                                capsys):
    monkeypatch.setattr(aeh.api, "require_preflight", lambda suite: None)
    code = main(["run", "--suite", str(suite), "--adapter", "command", "--solver", "reference",
                 "--db", str(db), "--log-level", "silent", "--attempts", "1"])
    out = capsys.readouterr().out
    assert code == 3
    assert "WARNING: the reference solution (the ceiling) solved 0 of 1 attempts (1 harness errors)" in out


def test_a_dry_run_says_what_a_run_would_refuse(suite, python_without_pytest):
    from aeh.dryrun import dry_run

    text = dry_run(str(suite), adapter="command")
    assert "preflight: a run would refuse to start" in text and "pytest is not importable" in text


def test_a_dry_run_with_everything_in_place_says_ok():
    from aeh.dryrun import dry_run

    assert "preflight: ok" in dry_run("smoke").splitlines()
