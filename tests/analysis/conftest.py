"""Fixtures for analysis tests: fresh stores, mock runs, and hand-built runs with known counts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.models import Attempt, GraderResult, RunInfo
from aeh.store import Store


def make_info(run_id: str, **kw: Any) -> RunInfo:
    fields: dict[str, Any] = dict(
        run_id=run_id, created_at="2025-01-01T00:00:00Z", finished_at="2025-01-01T00:01:00Z",
        aeh_version="0.1.0", suite="hand", suite_hash="h1", adapter="mock", model="mock-strong",
        seed=1, attempts=10, concurrency=1, price_table_version="2026.11.1",
        price_table_date="2026-11-01", status="finished",
    )  # fmt: skip
    fields.update(kw)
    return RunInfo(**fields)


def make_attempt(run_id: str, task_id: str, attempt: int, success: bool, *,
                 harness_error: bool = False, cost: float | None = 0.001,
                 graders: list[GraderResult] | None = None) -> Attempt:
    status = "harness_error" if harness_error else "answered"
    bucket = "harness_error" if harness_error else (None if success else "wrong_answer")
    return Attempt(run_id=run_id, task_id=task_id, attempt=attempt, seed=attempt, success=success,
                   status=status, failure_bucket=bucket, final_output="x", tokens_in=100, tokens_out=10,
                   cost_usd=cost, latency_s=0.5 + attempt, grader_results=graders or [])


def store_run(store: Store, run_id: str, outcomes: dict[str, list[bool | None]], **kw: Any) -> str:
    """A run whose task `t` has the listed outcomes; None = a harness error."""
    cost = kw.pop("cost", 0.001)
    store.create_run(make_info(run_id, **kw))
    store.write_attempts(
        (make_attempt(run_id, t, i, bool(o), harness_error=o is None, cost=cost), [])
        for t, results in outcomes.items() for i, o in enumerate(results)
    )
    return run_id


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "runs.db") as s:
        yield s


@pytest.fixture(scope="module")
def mock_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """(db, strong run, degraded run): toy_math, 20 attempts, seed 3 — a real regression."""
    db = str(tmp_path_factory.mktemp("pair") / "runs.db")
    a = aeh.run("toy_math", adapter="mock", attempts=20, seed=3, db=db, model="mock-strong")
    b = aeh.run("toy_math", adapter="mock", attempts=20, seed=3, db=db, model="mock-degraded")
    return db, a.run_id, b.run_id


class Builders:
    """Hand-built runs for tests (exposed as the `build` fixture: test dirs are not packages)."""

    info = staticmethod(make_info)
    attempt = staticmethod(make_attempt)
    run = staticmethod(store_run)


@pytest.fixture
def build() -> type[Builders]:
    return Builders
