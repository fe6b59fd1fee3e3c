"""Sharded runs: disjoint parts of one plan under one run id, merged back into the whole run."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from pathlib import Path

import pytest

import aeh
from aeh.cli import main as cli_main
from aeh.errors import ConfigError
from aeh.store import Store
from aeh.store._liveness import host_name
from aeh.store._plan import outside_shard, parse_shard, plan_pairs
from tests.engine.resume_support import CancelAfter, digests, only_run_id

SEED = 5
ATTEMPTS = 3  # toy_math has 3 tasks: 9 attempts, shards of 5 and 4


def _shard(tmp: Path, index: int, count: int = 2, suite: str = "toy_math", **options: object) -> Path:
    db = tmp / f"shard{index}-{suite}.db"
    aeh.run(suite, attempts=ATTEMPTS, seed=SEED, db=db, shard=f"{index}/{count}", **options)
    return db


def test_shards_partition_the_plan_and_share_one_run_id(tmp_path: Path) -> None:
    one, two = _shard(tmp_path, 1), _shard(tmp_path, 2)
    first, second = only_run_id(one), only_run_id(two)
    assert first == second
    a, b = {(d[0], d[1]) for d in digests(one, first)}, {(d[0], d[1]) for d in digests(two, second)}
    assert not a & b and len(a) + len(b) == 9
    with Store(one) as store:
        info = store.run_info(first)
    assert info.status == "finished" and info.config.provenance.shard == "1/2"


def test_two_merged_shards_equal_an_unsharded_run_attempt_for_attempt(tmp_path: Path) -> None:
    whole = tmp_path / "whole.db"
    whole_id = aeh.run("toy_math", attempts=ATTEMPTS, seed=SEED, db=whole).run_id
    one, two = _shard(tmp_path, 1), _shard(tmp_path, 2)
    merged = tmp_path / "merged.db"
    assert cli_main(["merge", str(one), str(two), "--into", str(merged)]) == 0
    run_id = only_run_id(merged)
    assert digests(merged, run_id) == digests(whole, whole_id)
    with Store(merged) as store:
        info = store.run_info(run_id)
        spans = store.spans_frame(run_id)
        graders = store.grader_frame(run_id)
        scores = store.dimension_scores_frame(run_id)
    assert info.status == "finished" and info.config.provenance.shard is None
    assert [m["shard"] for m in info.config.provenance.merged_from] == ["1/2", "2/2"]
    with Store(whole) as store:
        assert len(spans) == len(store.spans_frame(whole_id))
        assert len(graders) == len(store.grader_frame(whole_id))
        assert len(scores) == len(store.dimension_scores_frame(whole_id)) > 0


def test_a_shard_merged_twice_is_refused_and_the_target_is_unchanged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _shard(tmp_path, 1)
    merged = tmp_path / "merged.db"
    assert cli_main(["merge", str(one), "--into", str(merged)]) == 0
    before = digests(merged, only_run_id(merged))
    capsys.readouterr()
    assert cli_main(["merge", str(one), "--into", str(merged)]) == 2
    err = capsys.readouterr().err
    assert "pairs of run" in err and "are also in" in err and str(one) in err
    assert digests(merged, only_run_id(merged)) == before


def test_a_shard_of_another_suite_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _shard(tmp_path, 1, run_id="shared")
    other = _shard(tmp_path, 2, suite="smoke", run_id="shared")
    assert cli_main(["merge", str(one), str(other), "--into", str(tmp_path / "m.db")]) == 2
    err = capsys.readouterr().err
    assert "is not a shard of the same run" in err and "suite 'smoke'" in err and "suite_hash" in err
    assert not (tmp_path / "m.db").exists() or only_run_id_or_none(tmp_path / "m.db") is None


def only_run_id_or_none(db: Path) -> str | None:
    with Store(db) as store:
        runs = store.runs()
    return runs[0].run_id if runs else None


def test_shards_of_different_runs_are_refused_naming_their_suites(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one, other = _shard(tmp_path, 1), _shard(tmp_path, 2, suite="smoke")
    assert cli_main(["merge", str(one), str(other), "--into", str(tmp_path / "m.db")]) == 2
    err = capsys.readouterr().err
    assert "hold 2 runs, not one" in err and "'toy_math'" in err and "'smoke'" in err


def test_a_missing_shard_leaves_the_run_incomplete_and_resume_finishes_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = tmp_path / "whole.db"
    whole_id = aeh.run("toy_math", attempts=ATTEMPTS, seed=SEED, db=whole).run_id
    one = _shard(tmp_path, 1)
    merged = tmp_path / "merged.db"
    assert cli_main(["merge", str(one), "--into", str(merged)]) == 0
    out = capsys.readouterr().out
    run_id = only_run_id(merged)
    missing = sorted(outside_shard(["add_then_multiply", "average_to_two_decimals", "split_the_bill"], ATTEMPTS, "1/2"))
    assert "incomplete, 4 (task, attempt) pairs missing (shard 2/2 not merged?)" in out
    assert all(f"{t}#{a}" in out for t, a in missing)
    with Store(merged) as store:
        assert store.run_info(run_id).status == "interrupted"
    table = aeh.run(resume=run_id, db=merged)
    assert table.resume.ran == 4
    assert digests(merged, run_id) == digests(whole, whole_id)


def test_shard_needs_a_seed_and_a_valid_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "s.db")
    assert cli_main(["run", "--suite", "toy_math", "--shard", "1/2", "--db", db, "--log-level", "silent"]) == 2
    assert "needs a seed" in capsys.readouterr().err
    for bad in ("0/2", "3/2", "1-2"):
        assert cli_main(["run", "--suite", "toy_math", "--shard", bad, "--seed", "1", "--db", db,
                         "--log-level", "silent"]) == 2
        assert "numbered from 1" in capsys.readouterr().err


def test_plan_and_partition_do_not_depend_on_task_order() -> None:
    assert plan_pairs(["b", "a"], 2) == plan_pairs(["a", "b"], 2) == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]
    assert parse_shard(" 2 / 3 ") == (2, 3)
    shards = [set(plan_pairs(["a", "b", "c"], 4)) - outside_shard(["c", "a", "b"], 4, f"{i}/3") for i in (1, 2, 3)]
    assert sorted(len(s) for s in shards) == [4, 4, 4] and set.union(*shards) == set(plan_pairs(["a", "b", "c"], 4))


def test_an_interrupted_shard_resumes_only_its_own_missing_pairs(tmp_path: Path) -> None:
    db = tmp_path / "shard1.db"
    progress = CancelAfter(2)

    async def main() -> None:
        progress.task = asyncio.ensure_future(aeh.run_async(
            "toy_math", attempts=ATTEMPTS, seed=SEED, db=db, shard="1/2", concurrency=1, progress=progress))
        with pytest.raises(asyncio.CancelledError):
            await progress.task

    asyncio.run(main())
    run_id = only_run_id(db)
    with Store(db) as store:
        assert store.run_info(run_id).status == "interrupted"
    with pytest.raises(ConfigError, match="knows which shard"):
        aeh.run(resume=run_id, db=db, shard="1/2")
    aeh.run(resume=run_id, db=db)
    full = _shard(tmp_path, 1, suite="toy_math", run_id=None)
    assert digests(db, run_id) == digests(full, only_run_id(full)) and len(digests(db, run_id)) == 5


def test_a_shard_still_running_is_not_merged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _shard(tmp_path, 1)
    run_id = only_run_id(one)
    with Store(one) as store:  # as a live shard looks: running, owned by a live process on this host
        store.update_run(run_id, status="running", owner_pid=os.getppid(), owner_host=host_name(),
                         heartbeat_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
    assert cli_main(["merge", str(one), "--into", str(tmp_path / "m.db")]) == 2
    assert "is still running there" in capsys.readouterr().err
