"""`aeh run` killed from outside — SIGTERM, or SIGKILL at random points — then resumed: the
finished run equals an uninterrupted one attempt for attempt (0 lost, 0 duplicated)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import aeh
from aeh.store import Store
from tests.engine.resume_support import clean_digests, digests, only_run_id, stored_count

SEED = 5
ATTEMPTS = 60  # toy_math: 180 attempts, about a second of mock work at concurrency 8


def _start(db: Path, tmp: Path, *args: str) -> subprocess.Popen[str]:
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp)}  # where the run's workspaces go
    return subprocess.Popen(
        [sys.executable, "-m", "aeh.cli", "run", "--db", str(db), "--log-level", "silent", *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _fresh(db: Path, tmp: Path) -> subprocess.Popen[str]:
    return _start(db, tmp, "--suite", "toy_math", "--attempts", str(ATTEMPTS), "--concurrency", "8",
                  "--seed", str(SEED))


def _wait_for_more_than(db: Path, n: int, proc: subprocess.Popen[str], timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while stored_count(db) <= n and proc.poll() is None:
        assert time.monotonic() < deadline, "the run stored nothing"
        time.sleep(0.02)


@pytest.mark.slow
def test_sigterm_stops_a_run_as_interrupted_and_it_resumes_to_the_clean_result(tmp_path: Path) -> None:
    db, tmp = tmp_path / "runs.db", tmp_path / "tmp"
    proc = _fresh(db, tmp)
    _wait_for_more_than(db, 0, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "--resume" in err
    run_id = only_run_id(db)
    with Store(db) as store:
        assert store.run_info(run_id).status == "interrupted"
    assert not list(tmp.glob("aeh-*"))  # a clean stop removes its own workspaces
    before = stored_count(db)
    assert 0 < before < 3 * ATTEMPTS

    table = aeh.run(resume=run_id, db=db)
    assert table.resume.ran == 3 * ATTEMPTS - before
    assert digests(db, run_id) == clean_digests(tmp_path, "toy_math", ATTEMPTS, SEED)


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    clean = clean_digests(tmp_path, "toy_math", ATTEMPTS, SEED)
    rng = random.Random(20261130)
    killed_mid_run = 0
    for i in range(4):
        db, tmp = tmp_path / f"runs{i}.db", tmp_path / f"tmp{i}"
        proc = _fresh(db, tmp)
        _wait_for_more_than(db, 0, proc)
        time.sleep(rng.uniform(0.0, 0.4))
        proc.kill()
        proc.communicate(timeout=60)  # reaped: its pid is gone, as after a real kill -9
        run_id = only_run_id(db)
        with Store(db) as store:
            status = store.run_info(run_id).status
        if status == "finished":
            continue  # the kill came too late; the clean comparison below still holds
        killed_mid_run += 1
        assert status == "stale"  # stored as running, nobody running it
        assert list(tmp.glob(f"aeh-{run_id}-*"))  # the dead run's workspace, left behind
        if i % 2:  # kill the resume too, part-way
            before = stored_count(db)
            proc = _start(db, tmp, "--resume", run_id)
            _wait_for_more_than(db, before, proc)
            proc.kill()
            proc.communicate(timeout=60)
        table = aeh.run(resume=run_id, db=db, work_dir=tmp)
        assert table.harness_errors == 0  # in-flight attempts re-ran, not stored as errors
        assert digests(db, run_id) == clean
        assert not list(tmp.glob("aeh-*"))  # the next run swept the dead runs' workspaces
        with Store(db) as store:
            assert store.run_info(run_id).status == "finished"
    assert killed_mid_run >= 2
