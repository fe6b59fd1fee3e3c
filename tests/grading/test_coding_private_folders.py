"""Private folders per run: two coding runs side by side, one solver hunting the other's hidden tests.

The victim run grades the reference solution again and again (each grading folder holds the
fixture's hidden tests while pytest runs); the probe run's solver searches the shared temp dir
for them the whole time. Confined (bubblewrap, or `unshare` with bubblewrap hidden from PATH) it
finds nothing; unconfined on purpose it does, so the probe could fail.
"""

from __future__ import annotations

import contextlib
import shutil
import stat
import tempfile
import threading
from pathlib import Path

import pytest

import aeh
from aeh.grading._jail import probe_jail
from tests.coding_support import commands_without, mini_suite

pytestmark = pytest.mark.slow  # two runs grading through pytest subprocesses

#: Scans the shared temp dir for hidden test files for ~8 s, writing what it finds to seen.txt.
PROBE = ('i=0; while [ $i -lt 40 ]; do /usr/bin/find "{shared}" -name "test_hidden*" 2>/dev/null; '
         '/bin/sleep 0.2; i=$((i+1)); done > seen.txt; true')


@pytest.mark.parametrize("how", ["bwrap", "unshare", "unconfined"])
def test_a_concurrent_runs_solver_cannot_find_the_other_runs_hidden_tests(how, tmp_path, monkeypatch):
    if how == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("no bubblewrap here")
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    suite = mini_suite(tmp_path / "suite", ("csv_dedup",))
    hide = ("bwrap",) if how == "unshare" else ()
    with commands_without(tmp_path / "bin", *hide) if hide else contextlib.nullcontext():
        mode = probe_jail().mode
        if how != "unconfined" and mode != how:
            pytest.skip(f"the {how} jail does not run here ({mode})")
        loose = {} if how != "unconfined" else {"solver_confinement": False, "grading_confinement": False}
        results: dict[str, object] = {}

        def victim() -> None:
            results["victim"] = aeh.run(suite, adapter="command", adapter_options={"solver": "reference"},
                                        attempts=4, concurrency=1, seed=1, db=tmp_path / "victim.db",
                                        progress=False, **loose)

        thread = threading.Thread(target=victim)
        thread.start()
        probe = aeh.run(suite, adapter="command", adapter_options={"solver": PROBE.format(shared=shared)},
                        attempts=1, seed=2, db=tmp_path / "probe.db", progress=False, keep_workspaces=True,
                        work_dir=tmp_path / "probe-ws", **loose)
        thread.join()
    assert results["victim"]["successes"].tolist() == [4]  # type: ignore[index]
    assert probe.run.config.facts["solver_confinement"] == ("disabled" if how == "unconfined" else how)
    (seen,) = Path(probe.run.config.workspace_root).glob("*/*/seen.txt")
    found = seen.read_text()
    if how == "unconfined":
        assert "test_hidden" in found, "the probe never saw a grading folder: it proves nothing"
    else:
        assert "test_hidden" not in found, found[:2000]


def test_grading_folders_are_private_and_under_the_runs_own_parent(tmp_path, monkeypatch):
    from aeh.grading import _hidden_tests

    made: list[Path] = []
    modes: dict[Path, int] = {}
    real = _hidden_tests.build_grading_dir

    def spy(fixture, dest, *args, **kwargs):
        if Path(dest).parent.name.startswith("grade-"):  # not the one-off count of a fixture's tests
            made.append(Path(dest).parent)
            modes.update({folder: stat.S_IMODE(folder.stat().st_mode)
                          for folder in (Path(dest).parent, Path(dest).parent.parent)})
        return real(fixture, dest, *args, **kwargs)

    monkeypatch.setattr(_hidden_tests, "build_grading_dir", spy)
    suite = mini_suite(tmp_path / "suite", ("csv_dedup",))
    table = aeh.run(suite, adapter="command", adapter_options={"solver": "reference"}, attempts=2, seed=1,
                    db=tmp_path / "runs.db", progress=False, work_dir=tmp_path / "ws", keep_workspaces=True)
    assert table["successes"].tolist() == [2]
    root = Path(table.run.config.workspace_root)
    assert len(made) == 2 and len(set(made)) == 2
    assert set(modes.values()) == {0o700}, modes
    for folder in made:
        assert folder.parent == root / ".grading"  # the run's own private parent, not the shared temp dir
        assert len(folder.name) >= 8  # unguessable


def test_the_grader_knows_the_engines_owner_mark():
    from aeh.engine._workspaces import OWNER_MARK
    from aeh.grading._hidden_tests import _OWNER_MARK

    assert OWNER_MARK == _OWNER_MARK
