"""Store trouble during a run: a lock held too long is waited out; a lock never released or a
full disk stops the run with exit 6 and SQLite's own cause, and what was written resumes."""

from __future__ import annotations

import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import aeh
from aeh.cli import main as cli_main
from aeh.commands._exit import EXIT_STORE_FAILURE
from aeh.engine.scheduler import RunProgress
from aeh.errors import StoreError, StoreWriteError
from aeh.models import Attempt
from aeh.store import Store
from tests.engine.resume_support import clean_digests, digests, only_run_id, stored_count

SEED = 3


def _locker(db: Path) -> sqlite3.Connection:
    """Another process's connection, as far as SQLite can tell."""
    return sqlite3.connect(db, isolation_level=None, check_same_thread=False)


class LockFor(RunProgress):
    """After the `n`th finished attempt, another connection takes the write lock for `hold_s`."""

    def __init__(self, db: Path, n: int, hold_s: float) -> None:
        self.db, self.n, self.hold_s, self.seen = db, n, hold_s, 0
        self.held = threading.Event()

    def attempt_finished(self, attempt: Attempt) -> None:
        self.seen += 1
        if self.seen == self.n:
            conn = _locker(self.db)
            conn.execute("BEGIN IMMEDIATE")
            self.held.set()
            threading.Timer(self.hold_s, lambda: (conn.execute("COMMIT"), conn.close())).start()


@pytest.mark.slow
def test_a_lock_held_past_the_busy_timeout_is_waited_out_and_nothing_is_lost(tmp_path: Path, db: Path) -> None:
    clean = clean_digests(tmp_path, "toy_math", 8, SEED)
    progress = LockFor(db, n=3, hold_s=1.0)  # five times the busy timeout below
    with Store(db, busy_timeout_s=0.2, lock_retries=5) as store:
        table = aeh.run("toy_math", attempts=8, concurrency=8, seed=SEED, db=store, progress=progress)
        run_id = table.run_id
        assert progress.held.is_set()
        assert store.run_info(run_id).status == "finished"
        assert digests(store, run_id) == clean


@pytest.mark.slow
def test_a_lock_never_released_stops_the_run_with_exit_6_and_the_run_resumes(
        tmp_path: Path, db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    clean = clean_digests(tmp_path, "toy_math", 40, SEED)
    monkeypatch.setenv("AEH_STORE_BUSY_TIMEOUT_S", "0.1")
    monkeypatch.setenv("AEH_STORE_LOCK_RETRIES", "1")
    locker: dict[str, sqlite3.Connection] = {}

    def take_lock_once_attempts_are_stored() -> None:
        deadline = time.monotonic() + 60
        while stored_count(db) == 0 and time.monotonic() < deadline:
            time.sleep(0.005)
        conn = _locker(db)
        conn.execute("BEGIN IMMEDIATE")
        locker["conn"] = conn

    thread = threading.Thread(target=take_lock_once_attempts_are_stored)
    thread.start()
    try:
        code = cli_main(["run", "--suite", "toy_math", "--attempts", "40", "--concurrency", "8",
                         "--seed", str(SEED), "--db", str(db), "--log-level", "silent"])
    finally:
        thread.join()
        locker["conn"].execute("ROLLBACK")
        locker["conn"].close()
    err = capsys.readouterr().err
    run_id = only_run_id(db)
    assert code == EXIT_STORE_FAILURE == StoreWriteError.exit_code == 6, err
    assert "database is locked" in err and "gave up after 2 tries" in err
    assert f"`aeh run --resume {run_id}`" in err
    before = stored_count(db)
    assert 0 < before < 120
    with Store(db) as store:
        # The final status could not be written; the run's process no longer runs it.
        assert store.run_info(run_id).status == "stale"

    table = aeh.run(resume=run_id, db=db)
    assert table.resume.stored_before == before
    assert digests(db, run_id) == clean


def test_a_full_disk_stops_the_run_with_the_real_cause_and_the_run_resumes(tmp_path: Path, db: Path) -> None:
    clean = clean_digests(tmp_path, "toy_math", 20, SEED)
    with Store(db) as store:
        conn = store._conn
        assert conn is not None
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 12}")  # room for the run and a few attempts
        with pytest.raises(StoreWriteError) as caught:
            aeh.run("toy_math", attempts=20, concurrency=8, seed=SEED, db=store)
        message = str(caught.value)
        assert "database or disk is full" in message and "free space" in message
        assert "cannot rollback" not in message and "no transaction is active" not in message
        run_id = only_run_id_of(store)
        assert f"aeh run --resume {run_id}" in message
        before = len(digests(store, run_id))
        assert 0 < before < 60

        conn.execute("PRAGMA max_page_count = 1073741823")  # space again
        table = aeh.run(resume=run_id, db=store)
        assert table.resume.ran == 60 - before
        assert digests(store, run_id) == clean
        assert store.run_info(run_id).status == "finished"


def only_run_id_of(store: Store) -> str:
    (info,) = store.runs()
    return info.run_id


def test_a_write_that_fails_on_a_full_disk_reports_sqlite_full_not_the_rollback(db: Path) -> None:
    with Store(db) as store:
        conn = store._conn
        assert conn is not None
        conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
        with pytest.raises(StoreWriteError, match="database or disk is full"):
            with store._write() as c:
                c.execute("CREATE TABLE filler (x)")
                c.execute("INSERT INTO filler VALUES (randomblob(100000))")


def test_store_lock_settings_come_from_the_environment_and_are_checked(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEH_STORE_BUSY_TIMEOUT_S", "0.5")
    monkeypatch.setenv("AEH_STORE_LOCK_RETRIES", "2")
    with Store(db) as store:
        assert (store.busy_timeout_s, store.lock_retries) == (0.5, 2)
    monkeypatch.setenv("AEH_STORE_LOCK_RETRIES", "soon")
    with pytest.raises(StoreError, match="AEH_STORE_LOCK_RETRIES='soon' is not a number"):
        Store(db)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 600 KiB tmpfs: a real full disk (needs root, as on these machines; skipped elsewhere)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mnt)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_a_real_full_disk_exits_6_with_the_real_cause_and_resumes_once_there_is_room(
        tmp_path: Path, tiny_disk: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = clean_digests(tmp_path, "toy_math", 40, SEED)
    db = tiny_disk / "runs.db"
    code = cli_main(["run", "--suite", "toy_math", "--attempts", "40", "--seed", str(SEED),
                     "--db", str(db), "--log-level", "silent"])
    err = capsys.readouterr().err
    assert code == 6, err
    assert "database or disk is full" in err and "cannot rollback" not in err
    run_id = only_run_id(db)
    assert 0 < stored_count(db) < 120 and f"aeh run --resume {run_id}" in err

    subprocess.run(["mount", "-o", "remount,size=64m", str(tiny_disk)], check=True)
    code = cli_main(["run", "--resume", run_id, "--db", str(db), "--log-level", "silent"])
    assert code == 0, capsys.readouterr().err
    assert digests(db, run_id) == clean
