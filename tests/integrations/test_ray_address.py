"""`--ray-address 127.0.0.1:PORT`: a run joins a cluster started on loopback with `ray start`.

Ray rewrites a loopback address to the machine's outward IP, where a head started on loopback
does not answer, and a head started with a token present wants token authentication, which
Ray's driver enables by itself only for `address="auto"`. The test starts such a head
(`ray start --head --node-ip-address 127.0.0.1 --block`, `ray_support.py`) as a child of this
process, runs a small run through it, and stops every process it started, by process id.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import aeh
from aeh.integrations import ray as ray_integration
from tests.engine.resume_support import digests
from tests.integrations.ray_support import driver_node_ip, loopback_head

SEED = 5


@pytest.fixture
def loopback_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    # The driver as on any Linux machine: Ray resolves node addresses to the outward IP.
    with driver_node_ip(loopback=False) as ray:
        if ray.is_initialized():
            pytest.skip("a Ray connection is already open in this process")
        with loopback_head() as port:  # the machine's own token settings: a token file turns auth on
            try:
                yield port
            finally:
                ray_integration.stop_workers()  # the connection this run opened, and its workers


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_run_joins_a_cluster_started_on_loopback_by_its_address(loopback_cluster: int, tmp_path: Path) -> None:
    address = f"127.0.0.1:{loopback_cluster}"
    ray_env = ray_integration._ray_env()
    table = aeh.run("toy_math", attempts=2, seed=SEED, db=tmp_path / "ray.db", model="mock-degraded",
                    executor="ray", ray_address=address, ray_workers=2, concurrency=2)
    import ray

    assert ray.is_initialized() and ray.get_runtime_context().gcs_address == address
    local = tmp_path / "local.db"
    local_id = aeh.run("toy_math", attempts=2, seed=SEED, db=local, model="mock-degraded").run_id
    assert digests(tmp_path / "ray.db", table.run_id) == digests(local, local_id)
    assert len(ray_integration.idle_workers()) == 2  # kept for the next run on this cluster
    # closing the connection aeh opened leaves the process as it was: joining a cluster with token
    # auth set RAY_AUTH_MODE=token, which made the next cluster without auth cancel every actor
    ray_integration.stop_workers()
    assert not ray.is_initialized()
    assert ray_integration._ray_env() == ray_env
