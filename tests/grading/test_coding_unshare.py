"""Confinement without bubblewrap: the `unshare` jail, and a run that refuses where no jail works.

Every test hides `bwrap` from PATH (a machine where `pip install` put aeh and nothing installed
bubblewrap); some hide `unshare` as well (no mechanism at all).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import aeh
from aeh.cli import main
from aeh.commands._fixture_form import run_notes
from aeh.errors import AehError
from aeh.grading._jail import probe_jail
from aeh.importers import write_run_cards
from tests.coding_support import commands_without, mini_suite


@pytest.fixture
def no_bwrap(tmp_path):
    with commands_without(tmp_path / "bin-no-bwrap", "bwrap") as shim:
        if not probe_jail().active:
            pytest.skip(f"unshare cannot make user and mount namespaces here: {probe_jail().mode}")
        yield shim


@pytest.fixture
def no_jail(tmp_path):
    with commands_without(tmp_path / "bin-no-jail", "bwrap", "unshare") as shim:
        yield shim


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return mini_suite(tmp_path / "suite", ("csv_dedup",))


def _jailed(code: str, tmp_path: Path, hidden: Path) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    # tmp_path stays visible (as a checkout under /tmp does), the hidden folder inside it does not.
    argv = probe_jail().wrap([sys.executable, "-c", code], cwd=work, writable=[work], hidden=[hidden],
                             visible=[tmp_path])
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def test_the_unshare_jail_hides_locks_and_reads_only(no_bwrap, tmp_path):
    assert probe_jail().mode == "unshare"
    shm = Path("/dev/shm") / f"aeh-jail-probe-{tmp_path.name}"
    if shm.parent.is_dir():
        shm.write_text("another run's")
    secret = tmp_path / "answers"
    secret.mkdir()
    (secret / "key.txt").write_text("the answer")
    outside = tmp_path / "outside.txt"  # visible, read-only
    code = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("listing", os.listdir({str(secret)!r}))
print("umount", libc.umount2({str(secret).encode()!r}, 2), libc.umount2(b"/", 2))
print("remount-rw", libc.mount(None, b"/", None, ctypes.c_ulong(32 | 4096), None))
try:
    open({str(outside)!r}, "w")
    print("wrote-outside")
except OSError as exc:
    print("read-only", exc.errno)
open("inside.txt", "w").write("ok")
print("shm", sorted(os.listdir("/dev/shm")))
print("pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit())[:3])
"""
    try:
        proc = _jailed(code, tmp_path, secret)
    finally:
        shm.unlink(missing_ok=True)
    assert proc.returncode == 0, proc.stderr
    assert "shm []" in proc.stdout, proc.stdout  # a fresh /dev/shm
    out = proc.stdout
    assert "listing []" in out, out  # the hidden folder is empty inside
    assert "umount -1 -1" in out and "remount-rw -1" in out, out  # locked: nothing uncovers it
    assert "read-only 30" in out and not outside.exists(), out  # EROFS
    assert (tmp_path / "work" / "inside.txt").read_text() == "ok"
    assert "pids [1" in out, out  # its own PID namespace with its own /proc


@pytest.mark.slow
def test_a_solver_copying_the_reference_scores_0_under_unshare(no_bwrap, suite, tmp_path, db):
    hostile = f'/bin/cp -r "{suite}/$AEH_TASK_ID/reference/." . 2>/dev/null; /bin/cat "{suite}"/*/tests_hidden/*.py ' \
              '> seen.txt 2>&1; true'
    table = aeh.run(suite, adapter="command", adapter_options={"solver": hostile}, attempts=2, seed=1, db=db,
                    progress=False, work_dir=tmp_path / "ws", keep_workspaces=True)
    assert table.run.config.facts["solver_confinement"] == "unshare"
    assert table.run.config.facts["grading_confinement"] == "unshare"
    assert table["successes"].tolist() == [0]
    seen = sorted(Path(table.run.config.workspace_root).glob("*/*/seen.txt"))
    assert len(seen) == 2 and all("def test_" not in p.read_text() for p in seen)
    # The same solver unconfined (on purpose, and marked) copies the answer and is graded solved:
    # the probe above could have failed.
    loose = aeh.run(suite, adapter="command", adapter_options={"solver": hostile}, attempts=2, seed=1, db=db,
                    progress=False, solver_confinement=False)
    assert loose.run.config.facts["solver_confinement"] == "disabled"
    assert loose["successes"].tolist() == [2]
    assert any(line.startswith("UNCONFINED: solver confinement") for line in run_notes(loose))


def test_with_no_jail_a_coding_run_refuses_to_start(no_jail, suite, tmp_path, capsys):
    db = tmp_path / "runs.db"
    assert not probe_jail().active and "no bwrap" in probe_jail().mode and "no unshare" in probe_jail().mode
    with pytest.raises(AehError) as caught:
        aeh.run(suite, adapter="command", adapter_options={"solver": "true"}, db=db, progress=False)
    assert caught.value.exit_code == 2
    text = str(caught.value)
    assert "apt-get install bubblewrap" in text and "--no-grading-confinement" in text, text
    assert not db.exists() or aeh.runs(db=db).empty
    code = main(["run", "--suite", str(suite), "--adapter", "command", "--solver", "true", "--db", str(db),
                 "--no-grading-confinement", "--log-level", "silent"])
    err = capsys.readouterr().err
    assert code == 2 and "--no-solver-confinement" in err and "bubblewrap" in err, err
    assert not db.exists() or aeh.runs(db=db).empty


@pytest.mark.slow
def test_unconfined_on_purpose_runs_and_every_output_says_so(no_jail, suite, tmp_path, db, capsys):
    code = main(["run", "--suite", str(suite), "--adapter", "command", "--solver", "true", "--db", str(db),
                 "--no-grading-confinement", "--no-solver-confinement", "--log-level", "silent"])
    out = capsys.readouterr().out
    assert code in (0, 2), out  # 2: the floor solver solves nothing
    assert "UNCONFINED: solver confinement disabled" in out and "UNCONFINED: grading confinement disabled" in out
    run_id = aeh.runs(db=db)["run_id"].iloc[0]
    folder = write_run_cards(run_id, tmp_path / "cards", db)[0]
    card = folder / "results.json"
    data = json.loads(card.read_text())
    assert len(data["unconfined"]) == 2
    assert "--no-solver-confinement" in data["reproduce"] and "--no-grading-confinement" in data["reproduce"]
    assert "UNCONFINED" in card.with_name("run_card.md").read_text()

