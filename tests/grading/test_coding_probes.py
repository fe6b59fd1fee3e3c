"""Every way graded or solving code once changed a grade or read hidden material, as a test.

(a) an entry file whose `atexit` hook forges the results (and pytest's exit status);
(b) an entry file that overwrites `tests_hidden/` while pytest collects;
(c) a solver reading another attempt's (or an earlier run's) grading folder;
(d) a solver reading the suite's own `reference/` and hidden tests;
plus a daemonized child of the graded code, which must not outlive the grading.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

import aeh
from aeh.grading._hidden_tests import build_grading_dir, run_tests
from aeh.grading._jail import Jail, pid_namespace_prefix
from aeh.grading._sandbox import sandbox_for
from tests.coding_support import SHIPPED, grader_evidence, mini_suite, run_coding

pytestmark = pytest.mark.slow  # every test grades through pytest subprocesses

#: Appended to the seed's dedup.py: at exit, forge a JUnit file and a passing record on every
#: open descriptor, then exit 0 whatever pytest decided.
ATEXIT_FORGER = r'''

import atexit as _atexit, os as _os, sys as _sys

def _forge():
    cases = "".join(f'<testcase classname="{s}.test_x" name="t{i}"/>' for s in ("tests_public", "tests_hidden")
                    for i in range(20))
    xml = f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>'
    for arg in _sys.argv:
        if arg.startswith("--junitxml="):
            open(arg.split("=", 1)[1], "w").write(xml)
    forged = "".join('{"nodeid": "tests_hidden/test_hidden_dedup.py::t%d", "when": "call", '
                     '"outcome": "passed"}\n' % i for i in range(40))
    for fd in range(3, 256):
        try:
            _os.write(fd, forged.encode())
        except OSError:
            pass
    _os._exit(0)

_atexit.register(_forge)
'''

#: Appended to the seed's dedup.py: on import, write a full passing result set and a final line to
#: every pipe the process holds (found as /proc/self/fd would show them), then silence those
#: pipes so the real results vanish, and exit 0 at the end.
FD_FORGER = r'''

import atexit as _atexit, json as _json, os as _os, stat as _stat

def _forge_fds():
    lines = "".join(_json.dumps({"nodeid": f"{s}/test_x.py::t{i}", "when": w, "outcome": "passed"}) + "\n"
                    for s, n in (("tests_public", 5), ("tests_hidden", 7)) for i in range(n)
                    for w in ("setup", "call", "teardown"))
    lines += _json.dumps({"exitstatus": 0, "collected": 12}) + "\n"
    devnull = _os.open(_os.devnull, _os.O_WRONLY)
    for fd in range(3, 256):
        try:
            if not _stat.S_ISFIFO(_os.fstat(fd).st_mode) or fd == devnull:
                continue
            _os.write(fd, lines.encode())
            _os.dup2(devnull, fd)
        except OSError:
            pass

_forge_fds()
_atexit.register(lambda: _os._exit(0))
'''

#: Appended to the seed's dedup.py: when imported (by the public tests, collected first),
#: replace every hidden test file with one test that always passes.
COLLECTION_OVERWRITER = r'''

import glob as _glob
for _path in _glob.glob("tests_hidden/*.py"):
    try:
        with open(_path, "w") as _fh:
            _fh.write("def test_always():\n    pass\n")
    except OSError:
        pass
'''

#: Appended to the seed's dedup.py: a grandchild that leaves the process group and lives on,
#: adding a beat to a file in the grading folder every 0.1 s.
DAEMON = r'''

import os as _os, time as _time
if _os.fork() == 0:
    _os.setsid()
    if _os.fork() == 0:
        _beat = _os.path.abspath("daemon.beat")
        _os.chdir("/")
        for _ in range(1200):
            with open(_beat, "a") as _fh:
                _fh.write(".")
            _time.sleep(0.1)
    _os._exit(0)
'''


def _size(name: str) -> int:
    return sum(f.read_text().count("\ndef test_") for f in (SHIPPED / "csv_dedup" / name).glob("test_*.py"))


#: The real sizes of csv_dedup's public and hidden sets.
SIZES = (_size("tests_public"), _size("tests_hidden"))


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return mini_suite(tmp_path / "suite", ("csv_dedup",))


def _append_solver(code: str) -> str:
    """A solver that appends `code` to dedup.py (inline: a confined solver sees no outside file)."""
    assert "AEH_EOF" not in code
    return f"cat >> dedup.py <<'AEH_EOF'\n{code}\nAEH_EOF"


CONFINED = {"confine_solver": True}


def _only(db: Path, table) -> dict:
    grades = grader_evidence(db, table.run_id)
    assert len(grades) == 1
    return next(iter(grades.values()))


def test_an_atexit_hook_cannot_forge_the_results(suite, tmp_path, db):
    table = run_coding(suite, db, _append_solver(ATEXIT_FORGER), adapter_options=CONFINED)
    ev = _only(db, table)
    assert table["successes"].tolist() == [0]
    assert (ev["public_total"], ev["hidden_total"]) == SIZES, ev
    assert ev["hidden_passed"] < ev["hidden_total"]
    assert ev["tamper_suspect"] is True, ev
    assert any("exit" in why for why in ev["tamper_evidence"]), ev["tamper_evidence"]


def test_forging_results_on_the_inherited_pipe_is_caught(suite, db):
    table = run_coding(suite, db, _append_solver(FD_FORGER), adapter_options=CONFINED)
    ev = _only(db, table)
    assert table["successes"].tolist() == [0]
    assert ev["tamper_suspect"] is True, ev
    assert any("key" in why for why in ev["tamper_evidence"]), ev["tamper_evidence"]
    assert ev["hidden_passed"] < ev["hidden_total"] == SIZES[1]


def test_overwriting_hidden_tests_during_collection_is_tampering(suite, tmp_path, db):
    table = run_coding(suite, db, _append_solver(COLLECTION_OVERWRITER), adapter_options=CONFINED)
    ev = _only(db, table)
    assert table["successes"].tolist() == [0]
    assert ev["hidden"] != "1/1" and ev["hidden_total"] == SIZES[1], ev
    assert ev["hidden_passed"] < ev["hidden_total"]
    # Either the copy was read-only (the write failed) or the change was caught by the hashes.
    files = Path(ev["grading_dir"] or tmp_path) / "tests_hidden"
    assert ev["tamper_suspect"] is True or ev["grading_isolation"] == "bwrap", ev
    if ev["tamper_suspect"]:
        assert any("tests_hidden" in why for why in ev["tamper_evidence"]), ev["tamper_evidence"]
    assert not files.exists() or not list(files.glob("*.py")), "hidden tests left beside the workspace"


def test_a_daemonized_child_of_the_graded_code_is_killed(suite, tmp_path, db):
    started = time.monotonic()
    table = run_coding(suite, db, _append_solver(DAEMON), keep_workspaces=True, work_dir=tmp_path / "ws",
                       adapter_options=CONFINED)
    assert time.monotonic() - started < 60, "grading waited for a daemon of the graded code"
    ev = _only(db, table)
    assert table["successes"].tolist() == [0]
    beat = Path(ev["grading_dir"]) / "daemon.beat"
    deadline = time.monotonic() + 10
    while not beat.is_file() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert beat.is_file(), "the daemon never started"
    size = beat.stat().st_size
    time.sleep(1.0)
    assert beat.stat().st_size == size, "a process started by the graded code outlived the grading"


#: Lists and prints every grading folder and hidden test it can find near its workspace, into
#: `seen.txt` in its own workspace (kept for the test to read).
LOOK_GRADING = ('{{ ls -R ../*.grading ../../*/*.grading "{ws}" 2>/dev/null; cat ../*.grading/tests_hidden/*.py '
                '2>/dev/null; find "{ws}" -path "*tests_hidden*" 2>/dev/null; }} > seen.txt; true')
#: Also the suite's own directory, the git objects, the temp dir and earlier runs' folders.
LOOK_SUITE = ('{{ ls -R "{suite}/$AEH_TASK_ID" "${{TMPDIR:-/tmp}}" 2>/dev/null; '
              'cat "{suite}/$AEH_TASK_ID/tests_hidden/"*.py "{suite}/$AEH_TASK_ID/reference/"*.py 2>/dev/null; '
              'git -C "{repo}" show HEAD:suites/coding/csv_dedup/reference/dedup.py 2>/dev/null; '
              'find "${{TMPDIR:-/tmp}}" -maxdepth 8 -name "test_hidden_dedup.py" 2>/dev/null | head; }} > seen.txt; true')


def _seen(table, count: int) -> list[str]:
    root = Path(table.run.config.workspace_root)
    listings = sorted(root.glob("*/*/seen.txt"))
    assert len(listings) == count
    return [p.read_text() for p in listings]


def test_no_solver_reads_another_attempts_or_an_earlier_runs_grading_folder(suite, tmp_path, db):
    ws = tmp_path / "ws"
    run_coding(suite, db, "reference", attempts=2, concurrency=1, work_dir=ws, keep_workspaces=True)
    # Unconfined on purpose: the grading folders must be safe even where no jail runs.
    table = run_coding(suite, db, LOOK_GRADING.format(ws=ws), attempts=2, concurrency=1, seed=2,
                       work_dir=ws, keep_workspaces=True)
    for text in _seen(table, 2):
        assert "test_hidden" not in text and "tests_hidden" not in text, text[:2000]
        assert "tests_public" in text, "the probe did not see the grading folders at all"
    kept = [p for p in ws.rglob("*") if "hidden" in p.name]
    assert kept == [], "hidden tests were kept where a later solver can read them"


@pytest.mark.parametrize("where", ["copy", "shipped"])
def test_a_confined_solver_cannot_read_the_suite_or_the_temp_dir(where, suite, tmp_path, db):
    # The shipped suite lives in a git checkout: its objects hold the reference too.
    root = suite if where == "copy" else SHIPPED
    table = run_coding(root, db, LOOK_SUITE.format(suite=root, repo=root), work_dir=tmp_path / "ws",
                       keep_workspaces=True, adapter_options=CONFINED, tasks=["csv_dedup"])
    mode = table.run.config.facts["solver_confinement"]
    ev = next(iter(grader_evidence(db, table.run_id).values()))
    if mode != "bwrap":
        assert mode == "unavailable" or mode.startswith("fallback-off:"), mode
        pytest.skip(f"solver confinement here: {mode} (the suite stays readable, and the run says so)")
    (text,) = _seen(table, 1)
    # No hidden test file and no reference content: a checkout the run was started from (which
    # stays visible, e.g. under /tmp in CI) may show its fixtures' emptied `tests_hidden/` folders
    # by name, never what was in them.
    assert "test_hidden" not in text, text[:2000]
    assert "def dedupe_csv" not in text, "the confined solver read the reference"
    assert ev["hidden_passed"] < ev["hidden_total"]
    spans = aeh.spans(table.run_id, db=db)
    assert "bwrap" in [a.get("confinement") for a in aeh.span_attributes(spans)]


def test_unconfined_the_same_probe_does_read_the_suite(suite, tmp_path, db):
    """The probe above can fail: without the jail it finds the reference."""
    table = run_coding(SHIPPED, db, LOOK_SUITE.format(suite=SHIPPED, repo=SHIPPED), work_dir=tmp_path / "ws",
                       keep_workspaces=True, tasks=["csv_dedup"])
    assert table.run.config.facts["solver_confinement"] == "disabled"
    (text,) = _seen(table, 1)
    assert "def dedupe_csv" in text


def test_without_bwrap_a_pid_namespace_still_ends_the_daemon(tmp_path):
    if not pid_namespace_prefix():
        pytest.skip("unshare cannot make a PID namespace here")
    fixture = SHIPPED / "csv_dedup"
    workspace = tmp_path / "ws"
    shutil.copytree(fixture / "seed", workspace)
    (workspace / "dedup.py").write_text((fixture / "seed" / "dedup.py").read_text() + DAEMON)
    work = tmp_path / "grade"
    build_grading_dir(fixture, work, ["dedup.py"], workspace)
    started = time.monotonic()
    run = run_tests(work, 60, sandbox_for(False), jail=Jail("unavailable"))
    assert time.monotonic() - started < 60
    assert run.isolation == "unavailable; pid namespace: unshare"
    beat = work / "daemon.beat"
    assert beat.is_file(), run.output
    size = beat.stat().st_size
    time.sleep(1.0)
    assert beat.stat().st_size == size, "the daemon outlived the grading"


def test_a_checkout_in_a_temp_dir_keeps_its_solver_script_but_not_its_suite(tmp_path, db, monkeypatch):
    """A user (or a CI job) working from a checkout under /tmp runs a solver script from it: the
    script is reachable inside the jail, the suite beside it stays hidden."""
    checkout = tmp_path / "checkout"
    suite = mini_suite(checkout / "suites" / "coding", ("csv_dedup",))
    (checkout / "tools").mkdir()
    (checkout / "tools" / "look.sh").write_text(
        f'{{ echo script-ran; ls "{suite}/csv_dedup"; cat "{suite}/csv_dedup/reference/"*.py; }} > seen.txt 2>&1\n')
    monkeypatch.chdir(checkout)
    table = run_coding(suite, db, f"sh {checkout}/tools/look.sh", work_dir=tmp_path / "ws",
                       keep_workspaces=True, adapter_options=CONFINED)
    if table.run.config.facts["solver_confinement"] != "bwrap":
        pytest.skip("no bubblewrap here")
    assert table["harness_errors"].tolist() == [0]
    (text,) = _seen(table, 1)
    assert "script-ran" in text
    assert "def dedupe_csv" not in text and "tests_hidden" not in text, text[:2000]
