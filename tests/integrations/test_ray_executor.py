"""`--executor ray`: the same attempts and verdicts as a local run, written by the driver only.

The slow tests start a real Ray head (2 CPUs, loopback, no dashboard, no usage stats; see
`ray_support.py`) once for the module, join it, and stop it at the end.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import aeh
import aeh._util.optional as optional
from aeh._util.install import install_command
from aeh.cli import main as cli_main
from aeh.errors import ConfigError, MissingExtraError
from aeh.store import Store
from tests.engine.resume_support import CancelAfter, digests, only_run_id
from tests.integrations.blocking_suite import ALWAYS_CALLS, blocking_suite, stored_worker_stalls
from tests.integrations.ray_support import driver_node_ip, loopback_head

SEED = 3
ATTEMPTS = 4  # toy_math has 3 tasks: 12 attempts


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    # No usage report, and every Ray process binds to 127.0.0.1 only (the driver's setting is read
    # when Ray is first imported, maybe by an earlier test in this process: driver_node_ip sets it).
    env = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    with driver_node_ip(loopback=True) as ray, loopback_head(RAY_AUTH_MODE="disabled") as port:
        ray.init(address=f"127.0.0.1:{port}", logging_level="ERROR", log_to_driver=False)
        assert ray._private.worker.global_worker.node.node_ip_address == "127.0.0.1"
        try:
            yield
        finally:
            ray.shutdown()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


@pytest.mark.slow
def test_a_ray_run_has_the_attempts_and_verdicts_of_a_local_run(ray_cluster: None, tmp_path: Path) -> None:
    local = tmp_path / "local.db"
    local_id = aeh.run("toy_math", attempts=ATTEMPTS, seed=SEED, db=local, model="mock-degraded").run_id
    remote = tmp_path / "ray.db"
    table = aeh.run("toy_math", attempts=ATTEMPTS, seed=SEED, db=remote, model="mock-degraded",
                    executor="ray", ray_workers=2, concurrency=2)
    ray_id = table.run_id
    assert digests(remote, ray_id) == digests(local, local_id)
    assert any(not d[2] for d in digests(remote, ray_id))  # mock-degraded fails some: verdicts are compared
    with Store(remote) as store, Store(local) as other:
        assert store.run_info(ray_id).status == "finished"
        assert len(store.spans_frame(ray_id)) == len(other.spans_frame(local_id))
        assert len(store.dimension_scores_frame(ray_id)) == len(other.dimension_scores_frame(local_id)) > 0


@pytest.mark.slow
def test_a_second_ray_run_reuses_the_first_runs_workers_and_matches_local(
        ray_cluster: None, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    from aeh.integrations import ray as ray_integration

    ray_integration.stop_workers()  # the other tests' workers: this test counts its own
    first = aeh.run("toy_math", attempts=2, seed=SEED, db=tmp_path / "a.db", model="mock-degraded",
                    executor="ray", ray_workers=2, concurrency=2)
    workers = sorted(ray_integration.idle_workers())
    assert len({pid for _, pid in workers}) == 2 and os.getpid() not in {pid for _, pid in workers}
    # Another seed and model: the reused workers must build this run's setup, not keep the first's.
    second = aeh.run("toy_math", attempts=ATTEMPTS, seed=SEED + 1, db=tmp_path / "b.db", executor="ray",
                     ray_workers=2, concurrency=2)
    assert sorted(ray_integration.idle_workers()) == workers  # the same actors, in the same processes
    for table, seed, model, db in ((first, SEED, "mock-degraded", "a.db"), (second, SEED + 1, None, "b.db")):
        local = tmp_path / f"local-{db}"
        local_id = aeh.run("toy_math", attempts=2 if db == "a.db" else ATTEMPTS, seed=seed, db=local,
                           model=model).run_id
        assert digests(tmp_path / db, table.run_id) == digests(local, local_id)
    assert any(not d[2] for d in digests(tmp_path / "a.db", first.run_id))  # verdicts compared, not all passes
    # A run that asks for fewer workers takes idle ones and starts none.
    aeh.run("toy_math", attempts=1, seed=SEED, db=tmp_path / "c.db", executor="ray", ray_workers=1)
    assert sorted(ray_integration.idle_workers()) == workers
    ray_integration.stop_workers()
    assert ray_integration.idle_workers() == [] and ray.is_initialized()  # the caller's connection stays


@pytest.mark.slow
def test_a_ray_shard_merges_with_a_local_shard_into_the_whole_run(
        ray_cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # a suite directory given relative to here
    whole = tmp_path / "whole.db"
    whole_id = aeh.run("suites/toy_math", attempts=ATTEMPTS, seed=SEED, db=whole).run_id
    common = ["run", "--suite", "suites/toy_math", "--attempts", str(ATTEMPTS), "--seed", str(SEED), "--log-level", "silent"]
    assert cli_main([*common, "--shard", "1/2", "--executor", "ray", "--db", str(tmp_path / "a.db")]) == 0
    assert cli_main([*common, "--shard", "2/2", "--db", str(tmp_path / "b.db")]) == 0
    merged = tmp_path / "m.db"
    assert cli_main(["merge", str(tmp_path / "a.db"), str(tmp_path / "b.db"), "--into", str(merged)]) == 0
    assert digests(merged, only_run_id(merged)) == digests(whole, whole_id)


@pytest.mark.slow
def test_an_interrupted_ray_run_keeps_what_came_back_and_resumes_to_the_same_run(
        ray_cluster: None, tmp_path: Path) -> None:
    db = tmp_path / "ray.db"
    progress = CancelAfter(2)

    async def main() -> None:
        progress.task = asyncio.ensure_future(aeh.run_async(
            "toy_math", attempts=ATTEMPTS, seed=SEED, db=db, progress=progress, executor="ray",
            ray_workers=2, concurrency=1))
        with pytest.raises(asyncio.CancelledError):
            await progress.task

    asyncio.run(main())
    run_id = only_run_id(db)
    with Store(db) as store:
        info = store.run_info(run_id)
        stored = len(store.attempts_frame(run_id))
    assert info.status == "interrupted" and 2 <= stored < 12
    table = aeh.run(resume=run_id, db=db, executor="ray", ray_workers=2)
    assert table.resume.ran == 12 - stored
    local = tmp_path / "local.db"
    local_id = aeh.run("toy_math", attempts=ATTEMPTS, seed=SEED, db=local).run_id
    assert digests(db, run_id) == digests(local, local_id)


@pytest.mark.slow
def test_a_stall_of_an_actors_loop_is_in_the_runs_stored_health(ray_cluster: None, tmp_path: Path) -> None:
    """Each tool call holds its actor's loop BLOCK_S; the driver's own loop never stalls that long."""
    db = tmp_path / "ray.db"
    table = aeh.run(str(blocking_suite(tmp_path)), adapter="mock", adapter_options=ALWAYS_CALLS, attempts=2,
                    seed=SEED, db=db, executor="ray", ray_workers=2, concurrency=2)
    stored_worker_stalls(db, table.run_id)  # 3 calls on each actor


def test_without_the_ray_extra_the_cli_names_the_install_command(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real = optional.find_spec
    monkeypatch.setattr(optional, "find_spec", lambda name: None if name == "ray" else real(name))
    with pytest.raises(MissingExtraError):
        aeh.run("toy_math", attempts=1, seed=1, db=tmp_path / "x.db", executor="ray")
    assert cli_main(["run", "--suite", "toy_math", "--seed", "1", "--executor", "ray",
                     "--db", str(tmp_path / "y.db"), "--log-level", "silent"]) == 2
    err = capsys.readouterr().err
    assert "Ray executor" in err and install_command("ray") in err
    assert not (tmp_path / "y.db").exists()


def test_ray_refuses_what_workers_cannot_rebuild(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    with pytest.raises(ConfigError, match="rebuilds the adapter by name"):
        aeh.run("toy_math", attempts=1, seed=1, db=tmp_path / "x.db", executor="ray",
                agent=lambda task, tools: "42")
    with pytest.raises(ConfigError, match="executor must be 'local' or 'ray'"):
        aeh.run("toy_math", attempts=1, seed=1, db=tmp_path / "x.db", executor="dask")
