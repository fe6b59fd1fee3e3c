"""`workers=N`: attempts on worker processes of this machine, this process the store's only writer.

The same seed stores the same rows as a run in one process (the digest); a worker killed under
its attempts is the harness's failure (they run again, or are stored as harness errors), never
the agent's; Ctrl-C and a killed driver leave no worker process behind.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.errors import ConfigError
from aeh.integrations import processes
from aeh.integrations._workers import WorkerSpec, most_workers, shares, worker_parts
from aeh.integrations.ray import _alive  # a process that has not exited (a zombie has)
from aeh.store import Store
from tests.engine.stored_digest import EXPECTED, fixed_run_digests
from tests.integrations.blocking_suite import ALWAYS_CALLS, blocking_suite, stored_worker_stalls

pytestmark = pytest.mark.slow  # each run spawns interpreters that import aeh

#: A suite whose tool kills the process it runs in when the task asks (`doom`), or once (`once`,
#: when the marker file exists): in a worker process, that is the worker dying under its attempt.
KILLER_SUITE = '''
import os, signal
from pathlib import Path
from pydantic import BaseModel
from aeh.models import Task, Trace
from aeh.tools import ToolRegistry

MARKER = Path(__file__).with_name("kill-once")


class ShoutArgs(BaseModel):
    word: str


def shout(args: ShoutArgs, env) -> dict:
    """Return the word in capitals."""
    if args.word == "doom":
        os.kill(os.getpid(), signal.SIGKILL)
    if args.word == "once":
        try:
            MARKER.unlink()
        except FileNotFoundError:
            pass
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    return {"text": args.word.upper()}


def _task(word):
    return Task(id=f"shout_{word}", prompt=f"Shout {word!r} with the shout tool.", tools=["shout"],
                golden=f"shout_{word}", reference_answer=word.upper(),
                graders=[{"kind": "contains", "expected": word.upper()}])


class KillerSuite:
    name = "killer"
    words = WORDS

    def tasks(self):
        return [_task(w) for w in self.words]

    def tool_registry(self):
        tools = ToolRegistry()
        tools.tool("shout", params=ShoutArgs)(shout)
        return tools

    def invariants(self):
        return {}

    def golden_traces(self):
        return {f"shout_{w}": Trace(steps=[{"tool": "shout", "args": {"word": w}, "result": {"text": w.upper()}}],
                                    final_output=w.upper()) for w in self.words}
'''


def _killer_suite(root: Path, words: list[str]) -> Path:
    suite = root / "killer"
    suite.mkdir()
    (suite / "suite.py").write_text(KILLER_SUITE.replace("WORDS", repr(words)))
    return suite


def test_two_workers_store_what_one_process_stores(tmp_path: Path) -> None:
    expected = json.loads(EXPECTED.read_text())
    found = fixed_run_digests(tmp_path / "digest.db", workers=2, concurrency=6)
    changed = sorted(k for k in expected.keys() | found.keys() if k != "run" and expected.get(k) != found.get(k))
    assert not changed and found["run"] == expected["run"], f"attempts stored differently by two workers: {changed}"
    assert len(processes.idle_workers()) == 2  # kept warm for this process's next run
    processes.stop_workers()
    assert processes.idle_workers() == []


def test_a_worker_killed_once_runs_its_attempts_again(tmp_path: Path) -> None:
    suite = _killer_suite(tmp_path, ["once", "calm", "quiet"])
    (suite / "kill-once").touch()
    db = tmp_path / "runs.db"
    result = aeh.run(str(suite), adapter="mock", attempts=2, seed=3, db=db, workers=2, concurrency=4)
    processes.stop_workers()
    assert not (suite / "kill-once").exists()  # a worker did die
    with Store(db) as store:
        frame = store.attempts_frame(result.run_id)
    assert len(frame) == 6
    assert frame["status"].to_list() == ["answered"] * 6
    assert all(frame["success"].to_list())


def test_an_attempt_whose_workers_keep_dying_is_a_harness_error(tmp_path: Path) -> None:
    suite = _killer_suite(tmp_path, ["doom", "calm"])
    db = tmp_path / "runs.db"
    result = aeh.run(str(suite), adapter="mock", attempts=2, seed=3, db=db, workers=2, concurrency=2)
    processes.stop_workers()
    with Store(db) as store:
        frame = store.attempts_frame(result.run_id).sort(["task_id", "attempt"])
        assert store.run_info(result.run_id).status == "finished"
    rows = frame.select("task_id", "status", "failure_bucket", "success", "error").to_dicts()
    doomed = [r for r in rows if r["task_id"] == "shout_doom"]
    calm = [r for r in rows if r["task_id"] == "shout_calm"]
    assert [r["status"] for r in doomed] == ["harness_error"] * 2
    assert {r["failure_bucket"] for r in doomed} == {"harness_error"}
    assert all("killed by SIGKILL" in r["error"] and "not the agent's" in r["error"] for r in doomed)
    assert [r["success"] for r in calm] == [True, True]  # the other attempts are untouched


DRIVER = '''
import sys
import aeh
aeh.run(sys.argv[1], adapter="mock", attempts=400, seed=1, db=sys.argv[2], workers=2, concurrency=4,
        adapter_options={"latency_s": 0.05})
'''


def _worker_pids(driver: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(driver)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
            return int(conn.execute("SELECT count(*) FROM attempts").fetchone()[0])
    except sqlite3.Error:
        return 0


def _start_driver(tmp_path: Path) -> tuple[subprocess.Popen[bytes], list[int]]:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    proc = subprocess.Popen([sys.executable, str(script), "toy_math", str(tmp_path / "runs.db")],
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pids = [p for p in _worker_pids(proc.pid) if _alive(p)]
        if len(pids) >= 2 and _stored(tmp_path / "runs.db") >= 8:  # attempts under way on both
            return proc, _worker_pids(proc.pid)
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"the driver did not start its workers: {proc.stderr.read() if proc.stderr else ''}")


def _gone(pids: list[int], timeout_s: float) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.2)
    return [p for p in pids if _alive(p)]


def test_ctrl_c_stops_the_run_and_every_worker(tmp_path: Path) -> None:
    proc, pids = _start_driver(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole process group
    proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert _gone(pids, 30) == []
    with Store(tmp_path / "runs.db") as store:
        (info,) = store.runs()
        assert info.status == "interrupted"
        stored = len(store.attempts_frame(info.run_id))
    assert 0 < stored < 400  # what finished is kept; the rest resumes


def test_a_killed_driver_leaves_no_worker_behind(tmp_path: Path) -> None:
    proc, pids = _start_driver(tmp_path)
    proc.kill()  # no clean-up of its own: the workers see their pipe close
    proc.communicate(timeout=60)
    assert _gone(pids, processes.ORPHAN_GRACE_S + 20) == []


def test_workers_take_named_suites_and_adapters_only(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="workers=2 rebuilds the adapter by name"):
        aeh.run("toy_math", agent=lambda task, tools: "1", workers=2, db=tmp_path / "runs.db")
    with pytest.raises(ConfigError, match="max_connections=1 cannot be shared by 2 worker"):
        aeh.run("toy_math", adapter="mock", workers=2, max_connections=1, db=tmp_path / "runs.db")
    with pytest.raises(ConfigError, match="judge_max_connections=1 cannot be shared by 3 workers .* --workers at most"):
        aeh.run("toy_math", adapter="mock", workers=3, judge_max_connections=1, db=tmp_path / "runs.db")
    with pytest.raises(ConfigError, match="max_connections=2 cannot be shared by 4 workers .* --ray-workers at most"):
        aeh.run("toy_math", adapter="mock", executor="ray", ray_workers=4, max_connections=2, db=tmp_path / "runs.db")
    assert not (tmp_path / "runs.db").exists()  # refused before the store exists
    with pytest.raises(ConfigError, match="workers must be an integer from 1 to 256, got 0"):
        aeh.run("toy_math", adapter="mock", workers=0, db=tmp_path / "runs.db")


def test_shares_split_the_work_evenly() -> None:
    assert shares(7, 3) == [3, 2, 2]
    assert shares(64, 2) == [32, 32]
    assert sum(shares(257, 4)) == 257


def test_a_shard_on_workers_stores_what_the_shard_stores_alone(tmp_path: Path) -> None:
    from tests.engine.stored_digest import canonical_rows

    options = {"adapter": "mock", "attempts": 3, "seed": 9, "shard": "1/2", "concurrency": 4}
    alone = aeh.run("toy_math", **options, db=tmp_path / "alone.db")
    spread = aeh.run("toy_math", **options, workers=2, db=tmp_path / "spread.db")
    processes.stop_workers()
    assert alone.run_id == spread.run_id  # the shard's derived id: the stores merge
    rows = canonical_rows(tmp_path / "alone.db", alone.run_id)
    assert rows and canonical_rows(tmp_path / "spread.db", spread.run_id) == rows


def _spec(**options: Any) -> WorkerSpec:
    return WorkerSpec(suite="toy_math", adapter="mock", model=None, adapter_options={},
                      run_options={"concurrency": 8, **options}, prices={}, concurrency=8)


def test_workers_share_the_connection_limits_and_processes_also_the_attempts_in_flight() -> None:
    spec = _spec(max_connections=5, judge_max_connections=2)
    local = worker_parts(spec, 2)
    assert [p.concurrency for p in local] == [4, 4]
    assert [p.run_options["max_connections"] for p in local] == [3, 2]  # together: the run's 5
    assert [p.run_options["judge_max_connections"] for p in local] == [1, 1]
    ray = worker_parts(spec, 2, share_concurrency=False)  # a Ray actor runs --concurrency attempts itself
    assert [p.concurrency for p in ray] == [8, 8] and [p.run_options["concurrency"] for p in ray] == [8, 8]
    assert sum(p.run_options["max_connections"] for p in ray) == 5
    assert worker_parts(_spec(), 3)[0].run_options.get("max_connections") is None  # no limit: none made up
    assert most_workers(spec) == 2 and most_workers(_spec()) is None


def test_a_stall_of_a_workers_loop_is_in_the_runs_stored_health(tmp_path: Path) -> None:
    """Each tool call holds its worker's loop BLOCK_S; the driver's own loop never stalls that long."""
    db = tmp_path / "runs.db"
    result = aeh.run(str(blocking_suite(tmp_path)), adapter="mock", adapter_options=ALWAYS_CALLS, attempts=2,
                     seed=5, db=db, workers=2, concurrency=2)
    processes.stop_workers()
    stored_worker_stalls(db, result.run_id)
    assert any("2 worker loops" in w for w in result.warnings)
