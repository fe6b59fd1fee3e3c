"""The verdict channel's rules, one forgery at a time, and the jail's mount plan."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from aeh.commands._coding_options import run_notes
from aeh.grading._jail import Jail, _masks, repository_dirs
from aeh.grading._verdict import MAX_VERDICT_BYTES, VerdictPipe, read_verdict

SETS = ("tests_public", "tests_hidden")
EXPECTED = {"tests_public": 2, "tests_hidden": 1}


def _lines(*records: dict) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def _test(nodeid: str, outcome: str = "passed") -> list[dict]:
    return [{"nodeid": nodeid, "when": w, "outcome": outcome if w == "call" else "passed"}
            for w in ("setup", "call", "teardown")]


HONEST = [*_test("tests_public/test_public_a.py::test_1"), *_test("tests_public/test_public_a.py::test_2"),
          *_test("tests_hidden/test_hidden_a.py::test_1", "failed")]
FINAL_1 = {"exitstatus": 1, "collected": 3}


def test_an_honest_run_is_counted_and_trusted():
    v = read_verdict(_lines(*HONEST, FINAL_1), True, 1, SETS, EXPECTED)
    assert v.counts == {"tests_public": (2, 2), "tests_hidden": (0, 1)}
    assert v.failing == ["tests_hidden/test_hidden_a.py::test_1"]
    assert v.finished and v.tamper == []


@pytest.mark.parametrize(("records", "returncode", "why"), [
    ([*HONEST, FINAL_1], 0, "but the process exited 0"),
    ([*HONEST, {"exitstatus": 0, "collected": 3}], 0, "exit status 0 while tests failed"),
    ([*HONEST, *_test("tests_hidden/test_hidden_a.py::test_1"), FINAL_1], 1, "a second call result"),
    ([*HONEST, FINAL_1, *_test("tests_hidden/test_hidden_a.py::test_9")], 1, "after pytest had finished"),
    ([*HONEST, *_test("tests_hidden/test_hidden_a.py::test_9"), FINAL_1], 1, "the set holds 1 tests"),
    (HONEST[:-3] + _test("tests_hidden/test_hidden_a.py::test_1") + [FINAL_1], 1, "every test reported passed"),
    (HONEST, 0, "exited 0 without reporting"),
])
def test_each_disagreement_is_tampering(records, returncode, why):
    v = read_verdict(_lines(*records), True, returncode, SETS, EXPECTED)
    assert any(why in t for t in v.tamper), v.tamper


def test_junk_and_a_flood_are_tampering():
    v = read_verdict(b"not json\n" + _lines(*HONEST, FINAL_1), True, 1, SETS, EXPECTED)
    assert any("unreadable" in t for t in v.tamper)
    v = read_verdict(_lines(*HONEST, FINAL_1), False, 1, SETS, EXPECTED)
    assert any("flooded" in t for t in v.tamper)


def test_a_crash_before_the_end_is_unfinished_not_forged():
    v = read_verdict(_lines(*HONEST[:3]), True, -9, SETS, EXPECTED)
    assert not v.finished and v.tamper == []


def test_the_pipe_reaches_a_child_with_the_key_and_only_through_the_pipe():
    pipe = VerdictPipe()
    code = ("import os; fd, key_fd = map(int, os.environ['AEH_VERDICT_FD'].split(',')); "
            "os.write(fd, os.read(key_fd, 64))")
    proc = subprocess.run(["python3", "-c", code], env={**os.environ, **pipe.env}, pass_fds=pipe.fds, timeout=30)
    pipe.close_child_end()
    data, complete = pipe.result(wait_s=5)
    assert proc.returncode == 0 and data.decode() == pipe.key and complete
    assert pipe.key not in json.dumps(pipe.env) and len(pipe.key) == 32
    assert MAX_VERDICT_BYTES >= 1 << 20


def test_a_line_without_the_runs_key_is_forged():
    keyed = [{**r, "key": "k1"} for r in [*HONEST, FINAL_1]]
    assert read_verdict(_lines(*keyed), True, 1, SETS, EXPECTED, key="k1").tamper == []
    forged = [{**r, "key": "guess"} for r in _test("tests_hidden/test_hidden_a.py::test_1")]
    v = read_verdict(_lines(*forged, *keyed), True, 1, SETS, EXPECTED, key="k1")
    assert any("without the run's key" in t for t in v.tamper)
    assert v.counts["tests_hidden"] == (0, 1)  # the forged pass is not counted


def test_the_jail_hides_parents_once_and_binds_after(tmp_path):
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert _masks([tmp_path / "a", inner, tmp_path / "missing"]) == [(tmp_path / "a").resolve()]
    argv = Jail("bwrap", "/usr/bin/bwrap").wrap(["true"], cwd=inner, writable=[inner], hidden=[tmp_path])
    assert argv[argv.index("--tmpfs") + 1] == "/tmp"
    assert argv.index("--tmpfs") < argv.index("--bind") < argv.index("--chdir")
    assert "--unshare-pid" in argv and "--die-with-parent" in argv
    assert Jail("unavailable").wrap(["true"], cwd=inner) == ["true"]


def test_a_worktree_hides_its_shared_git_dir(tmp_path):
    common = tmp_path / "main" / ".git"
    linked = common / "worktrees" / "wt"
    linked.mkdir(parents=True)
    (linked / "commondir").write_text("../..\n")
    checkout = tmp_path / "wt"
    (checkout / "suites").mkdir(parents=True)
    (checkout / ".git").write_text(f"gitdir: {linked}\n")
    assert set(repository_dirs(checkout / "suites")) == {linked.resolve(), common.resolve()}


@pytest.mark.parametrize(("mode", "warned"), [("bwrap", False), ("unshare", False), ("unavailable", True),
                                              ("disabled", True), ("none (built-in solver)", None)])
def test_run_notes_say_when_a_solver_was_unconfined(mode, warned):
    run = type("R", (), {"config": {"grading_sandbox": "unshare", "solver_confinement": mode}})
    table = type("T", (), {"run": run})
    lines = [line for line in run_notes(table) if "solver confinement" in line]
    if warned is None:
        assert lines == []
    else:
        assert len(lines) == 1 and lines[0].startswith("UNCONFINED: ") is warned, lines


def test_no_solver_confinement_is_a_command_adapter_flag():
    import argparse

    from aeh.commands._coding_options import add_run_arguments, run_options
    from aeh.errors import ConfigError

    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter")
    parser.add_argument("--keep-workspaces", action="store_true")
    add_run_arguments(parser)
    adapter_options, _ = run_options(parser.parse_args(["--adapter", "command", "--solver", "true",
                                                        "--no-solver-confinement"]))
    assert adapter_options["confine_solver"] is False
    with pytest.raises(ConfigError, match="--no-solver-confinement"):
        run_options(parser.parse_args(["--adapter", "mock", "--no-solver-confinement"]))


def test_hashing_never_opens_what_graded_code_may_leave(tmp_path):
    from aeh.grading._hidden_tests import _changes, tree_digests

    base = tmp_path / "tests_hidden"
    base.mkdir()
    (base / "test_hidden_a.py").write_text("def test_a():\n    pass\n")
    before = tree_digests(base)
    os.mkfifo(base / "pipe")
    (base / "zero").symlink_to("/dev/zero")
    (base / "loop").symlink_to(base, target_is_directory=True)
    after = tree_digests(base)  # returns: neither the FIFO nor /dev/zero is read
    assert after["zero"] == "link:/dev/zero" and after["pipe"].startswith("special:")
    assert sorted(_changes("tests_hidden", before, after)) == [
        "tests_hidden/loop created during the run", "tests_hidden/pipe created during the run",
        "tests_hidden/zero created during the run"]
