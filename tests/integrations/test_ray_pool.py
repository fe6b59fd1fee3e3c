"""Idle Ray actors are reused only on the connection they were started in.

Every new Ray cluster numbers its jobs from 01000000 again, so after `ray.shutdown()` and a
fresh `ray.init` the job id repeats: a pool keyed by it handed the next run actors of a dead
cluster ("Can't find actor … from a different cluster"). A stand-in for Ray's module keeps
this test fast and independent of Ray being installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from aeh.integrations import ray as ray_integration


@dataclass
class _Context:
    gcs_address: str
    node_id: str
    job_id: str = "01000000"

    def get_node_id(self) -> str:
        return self.node_id

    def get_job_id(self) -> str:
        return self.job_id


class _FakeRay:
    """Just what `_lease` and `_give_back` call: the runtime context and `ray.remote`."""

    def __init__(self, node_id: str) -> None:
        self.context = _Context("127.0.0.1:6379", node_id)
        self.started = 0

    def get_runtime_context(self) -> _Context:
        return self.context

    def remote(self, cls: type) -> Any:
        fake = self

        class _Handle:
            def options(self, **_: Any) -> _Handle:
                return self

            def remote(self) -> object:
                fake.started += 1
                return object()

        return _Handle()


@pytest.fixture(autouse=True)
def empty_pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(ray_integration, "_pool", ray_integration._Pool())
    yield


def test_a_later_run_on_the_same_connection_takes_the_idle_actors() -> None:
    ray = _FakeRay("node-a")
    first = ray_integration._lease(ray, 2)
    ray_integration._give_back(ray, first)
    assert ray_integration._lease(ray, 2) == first
    assert ray.started == 2


def test_a_new_cluster_with_the_same_job_id_and_address_starts_its_own_actors() -> None:
    old = _FakeRay("node-a")
    stale = ray_integration._lease(old, 2)
    ray_integration._give_back(old, stale)
    new = _FakeRay("node-b")  # same GCS address and job id, as after ray.shutdown() and ray.init()
    fresh = ray_integration._lease(new, 2)
    assert not set(map(id, fresh)) & set(map(id, stale))
    assert new.started == 2


def test_actors_of_an_old_connection_are_not_given_back_to_the_new_one() -> None:
    old = _FakeRay("node-a")
    actors = ray_integration._lease(old, 1)
    new = _FakeRay("node-b")
    ray_integration._lease(new, 1)
    ray_integration._give_back(old, actors)
    assert ray_integration._pool.idle == []
