"""A solver process that fails for reasons outside the task is a harness error, never a wrong answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from aeh.adapters._solver_failure import environment_failure, workspace_fingerprint
from aeh.cli import main
from tests.coding_support import mini_suite, run_coding


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    return mini_suite(tmp_path_factory.mktemp("coding") / "suite", ("csv_dedup",))


def _result(code: int | None, stderr: str = "", timed_out: bool = False) -> dict:
    return {"exit_code": code, "stderr": stderr, "timed_out": timed_out}


@pytest.mark.parametrize(("result", "changed", "cause"), [
    (_result(127, "sh: 1: my-agent: not found\n"), False, "solver exited 127 (command not found): sh: 1: my-agent: not found"),
    (_result(126, "sh: 1: ./agent.sh: Permission denied\n"), True, "solver exited 126 (not executable): sh: 1: ./agent.sh: Permission denied"),
    (_result(1, "openai.OpenAIError: The api_key client option must be set either by passing api_key to the "
                "client or by setting the OPENAI_API_KEY environment variable\n"), True, "solver exited 1: OPENAI_API_KEY is not set"),
    (_result(1, "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    import nope\n"
                "ModuleNotFoundError: No module named 'nope'\n"), False,
     "solver exited 1 without changing the workspace: ModuleNotFoundError: No module named 'nope'"),
    (_result(2), False, "solver exited 2 without changing the workspace: no output on stderr"),
    (_result(0, "warning: ANTHROPIC_API_KEY not set, skipping\n"), False,
     "solver exited 0 without changing the workspace: ANTHROPIC_API_KEY is not set"),
])
def test_failures_outside_the_task_are_named(result, changed, cause):
    error = environment_failure(result, changed=changed)
    assert error is not None and error.split("\n", 1)[0] == cause
    if result["stderr"]:
        assert "stderr tail:" in error


@pytest.mark.parametrize(("result", "changed"), [
    (_result(0), False),  # did nothing, said it was done: the grader judges that
    (_result(0, "note: GITHUB_TOKEN not set, using anonymous access\n"), True),  # and then did the work
    (_result(1, "tests failed\n"), True),  # changed files, then failed: what it left is its answer
    (_result(None, timed_out=True), False),  # the budget: not this function's call
])
def test_failures_of_the_task_are_graded(result, changed):
    assert environment_failure(result, changed=changed) is None


def test_the_workspace_path_does_not_split_one_cause_in_many(tmp_path):
    one = environment_failure(_result(3, f"cannot open {tmp_path}/a/config\n"), changed=False, workspace=tmp_path / "a")
    assert one is not None and "<workspace>" in one.split("\n")[0]


def test_fingerprint_sees_edits_not_bytecode(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    before = workspace_fingerprint(tmp_path)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    assert workspace_fingerprint(tmp_path) == before
    (tmp_path / "m.py").write_text("x = 2\n")
    assert workspace_fingerprint(tmp_path) != before


@pytest.mark.slow
def test_an_always_crashing_solver_is_not_a_valid_measurement(suite, db, capsys):
    solver = "echo 'error: OPENAI_API_KEY is not set' >&2; exit 2"
    code = main(["run", "--suite", str(suite), "--adapter", "command", "--solver", solver,
                 "--attempts", "3", "--seed", "1", "--db", str(db), "--log-level", "silent"])
    out = capsys.readouterr().out
    assert code == 3
    assert "harness errors 3/3" in out and "NOT A VALID MEASUREMENT" in out
    assert "solver exited 2: OPENAI_API_KEY is not set (3 attempts)" in out


@pytest.mark.slow
def test_a_solver_that_crashes_at_start_up_keeps_its_exit_status_and_stderr(suite, db):
    solver = "python3 -c 'import no_such_module_aeh'"
    table = run_coding(suite, db, solver, attempts=2)
    assert table["harness_errors"].tolist() == [2] and table["fail_wrong_answer"].tolist() == [0]
    import aeh

    frame = aeh.attempts(table.run_id, db=db)
    error = frame["error"].tolist()[0]
    assert error.startswith("solver exited 1 without changing the workspace: ModuleNotFoundError")
    assert "stderr tail:" in error and "Traceback" in error
