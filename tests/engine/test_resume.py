"""Resuming a run that did not finish: exactly the missing attempts, the same seeds, no duplicates."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.cli import main as cli_main
from aeh.engine._workspaces import OWNER_MARK, clean_stale_workspaces
from aeh.errors import ConfigError
from aeh.experiments import replay_run
from aeh.models import RunInfo
from aeh.store import Store
from aeh.store._liveness import host_name, run_is_dead
from tests.engine.resume_support import CancelAfter, clean_digests, digests, only_run_id

SEED = 11
ATTEMPTS = 6  # toy_math has 3 tasks: 18 attempts


def _interrupted_run(db: Path, after: int, **options: Any) -> str:
    progress = CancelAfter(after)

    async def main() -> None:
        progress.task = asyncio.ensure_future(aeh.run_async(
            "toy_math", attempts=ATTEMPTS, concurrency=8, seed=SEED, db=db, progress=progress, **options))
        with pytest.raises(asyncio.CancelledError):
            await progress.task

    asyncio.run(main())
    return only_run_id(db)


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()  # reaped: the pid names no process now
    return proc.pid


def test_a_resumed_run_equals_an_uninterrupted_one(tmp_path: Path, db: Path) -> None:
    clean = clean_digests(tmp_path, "toy_math", ATTEMPTS, SEED)
    run_id = _interrupted_run(db, after=7)
    with Store(db) as store:
        info = store.run_info(run_id)
        before = len(digests(store, run_id))
    assert info.status == "interrupted" and 7 <= before < len(clean)

    table = aeh.run(resume=run_id, db=db)

    assert table.run_id == run_id
    assert table.resume.stored_before == before
    assert table.resume.ran == len(clean) - before
    assert digests(db, run_id) == clean  # 0 lost, 0 duplicated, same verdicts, answers and seeds
    with Store(db) as store:
        after = store.run_info(run_id)
    assert after.status == "finished" and after.seed == SEED and table.harness_errors == 0


def test_resuming_a_finished_run_says_there_is_nothing_to_do(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id = aeh.run("toy_math", attempts=2, seed=SEED, db=db).run_id
    table = aeh.run(resume=run_id, db=db)
    assert table.resume.ran == 0
    assert "already finished" in table.resume.note
    assert cli_main(["run", "--resume", run_id, "--db", str(db), "--log-level", "silent"]) == 0
    assert "already finished — nothing to resume" in capsys.readouterr().out
    assert len(digests(db, run_id)) == 6


def test_resuming_with_other_settings_is_refused(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _interrupted_run(db, after=3)
    for options, says in [({"attempts": 9}, "attempts 9 (stored: 6)"), ({"seed": 12}, "seed 12 (stored: 11)"),
                          ({"model": "mock-degraded"}, "model 'mock-degraded' (stored: 'mock-strong')"),
                          ({"fault_rate": 0.5}, "fault_rate")]:
        with pytest.raises(ConfigError, match="cannot resume run") as caught:
            aeh.run(resume=run_id, db=db, **options)
        assert says in str(caught.value)
    with pytest.raises(ConfigError, match=r"suite 'smoke' hash .*stored: 'toy_math'"):
        aeh.run("smoke", resume=run_id, db=db)
    code = cli_main(["run", "--resume", run_id, "--attempts", "2", "--db", str(db), "--log-level", "silent"])
    assert code == 2 and "attempts 2 (stored: 6)" in capsys.readouterr().err
    with Store(db) as store:
        assert store.run_info(run_id).status == "interrupted"  # a refused resume changes nothing


def _stored_running(db: Path, **owner: Any) -> str:
    info = RunInfo(run_id="r-live", created_at="2026-01-01T00:00:00+00:00", aeh_version="x", suite="toy_math",
                   suite_hash="h", adapter="mock", seed=1, attempts=1, concurrency=1,
                   price_table_version="v", price_table_date="d", **owner)
    with Store(db) as store:
        store.create_run(info)
        return store.run_info("r-live").status


def test_a_run_whose_process_is_alive_is_running_and_cannot_be_resumed(db: Path) -> None:
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    parent = os.getppid()  # alive, and not this process
    assert _stored_running(db, owner_pid=parent, owner_host=host_name(), heartbeat_at=now) == "running"
    with pytest.raises(ConfigError, match=f"still running \\(pid {parent} on {host_name()}"):
        aeh.run(resume="r-live", db=db)


@pytest.mark.parametrize(("owner", "status"), [
    ({"owner_host": "this-host", "heartbeat_at": "now"}, "stale"),  # this host, process gone
    ({"owner_host": "elsewhere", "heartbeat_at": "now"}, "running"),  # other host, fresh heartbeat
    ({"owner_host": "elsewhere", "heartbeat_at": "2026-01-01T00:00:00+00:00"}, "stale"),  # old heartbeat
    ({}, "running"),  # stored before aeh recorded owners: nothing to judge by
])
def test_readers_show_a_running_run_with_no_live_process_as_stale(
        db: Path, owner: dict[str, str], status: str, capsys: pytest.CaptureFixture[str]) -> None:
    if owner:
        owner = {**owner, "owner_pid": _dead_pid()}  # type: ignore[dict-item]
        if owner["owner_host"] == "this-host":
            owner["owner_host"] = host_name()
        if owner["heartbeat_at"] == "now":
            owner["heartbeat_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    assert _stored_running(db, **owner) == status
    assert aeh.runs(db)["status"].tolist() == [status]
    assert cli_main(["runs", "--db", str(db)]) == 0
    line = capsys.readouterr().out
    assert f" {status}" in line and (("aeh run --resume" in line) == (status == "stale"))


def test_a_run_owned_by_this_process_is_dead_once_it_stops_executing() -> None:
    info = RunInfo(run_id="mine", created_at="x", aeh_version="x", suite="s", suite_hash="h", adapter="a",
                   seed=1, attempts=1, concurrency=1, price_table_version="v", price_table_date="d",
                   owner_pid=os.getpid(), owner_host=host_name())
    assert run_is_dead(info)  # e.g. its store failed and the final status could not be written
    from aeh.store._liveness import executing

    with executing("mine"):
        assert not run_is_dead(info)


def test_replaying_an_unfinished_run_is_refused_with_a_pointer_to_resume(db: Path) -> None:
    run_id = _interrupted_run(db, after=3)
    with pytest.raises(ConfigError, match=f"is interrupted, not finished .*aeh run --resume {run_id}"):
        replay_run(run_id, db=db)
    with Store(db) as store:
        assert [r.run_id for r in store.runs()] == [run_id]  # no half-harness-error replay stored


def _mark(root: Path, pid: int) -> Path:
    root.mkdir(parents=True)
    (root / OWNER_MARK).write_text(json.dumps({"run_id": root.name, "pid": pid, "host": host_name()}))
    return root


def test_workspaces_of_dead_runs_are_swept_by_the_next_run(tmp_path: Path, db: Path) -> None:
    work = tmp_path / "work"
    dead = _mark(work / "aeh-20260101-000000-aaaaaa-x1", _dead_pid())
    live = _mark(work / "aeh-20260101-000000-bbbbbb-x2", os.getppid())
    kept = work / "aeh-20260101-000000-cccccc-x3"  # kept on purpose by a finished run: unmarked
    kept.mkdir()
    other = _mark(work / "not-aeh", _dead_pid())
    assert clean_stale_workspaces(work) == [dead]
    assert live.exists() and kept.exists() and other.exists()

    _mark(work / "aeh-20260101-000000-dddddd-x4", _dead_pid())
    aeh.run("toy_math", attempts=1, seed=1, db=db, work_dir=work)
    assert sorted(p.name for p in work.iterdir()) == sorted([live.name, kept.name, other.name])


def test_kept_workspaces_lose_their_owner_mark_so_no_sweep_takes_them(tmp_path: Path, db: Path) -> None:
    work = tmp_path / "work"
    aeh.run("toy_math", attempts=1, seed=1, db=db, work_dir=work, keep_workspaces=True)
    (root,) = work.iterdir()
    assert not (root / OWNER_MARK).exists() and any(root.iterdir())


def test_a_running_run_refreshes_its_heartbeat(db: Path) -> None:
    from aeh.engine._heartbeat import Heartbeat

    _stored_running(db, owner_pid=os.getpid(), owner_host=host_name())
    with Store(db) as store:
        beat = Heartbeat(store, "r-live", every_s=0.05).start()
        try:
            for _ in range(200):
                if store.run_info("r-live").heartbeat_at is not None:
                    break
                time.sleep(0.02)
        finally:
            beat.stop()
        stamp = store.run_info("r-live").heartbeat_at
    assert stamp is not None
    age = dt.datetime.now(dt.UTC) - dt.datetime.fromisoformat(stamp)
    assert age.total_seconds() < 5


def _fixed_agent(task: Any, tools: Any) -> str:
    return "42"


def test_a_function_agent_run_resumes_only_with_the_same_function_given_again(db: Path) -> None:
    run_id = _interrupted_run(db, after=3, agent=_fixed_agent)
    with pytest.raises(ConfigError, match=r"cannot be rebuilt from the store .* pass the same adapter= or agent="):
        aeh.run(resume=run_id, db=db)
    table = aeh.run(resume=run_id, db=db, agent=_fixed_agent)
    assert table.attempts_total == 3 * ATTEMPTS
    assert {d[4] for d in digests(db, run_id)} == {"42"}
