"""Fixtures for store tests: a fresh database per test, and small model builders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aeh.models import Attempt, GraderResult, InvariantResult, RunInfo, Span, ToolCall
from aeh.store import Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


@pytest.fixture
def file_store(db_path: Path) -> Iterator[Store]:
    with Store(db_path) as store:
        yield store


@pytest.fixture
def mem_store() -> Iterator[Store]:
    with Store.memory() as store:
        yield store


def _make_run(run_id: str = "run-0001", created_at: str = "2025-01-01T00:00:00Z", **kw: Any) -> RunInfo:
    fields: dict[str, Any] = dict(
        run_id=run_id, created_at=created_at, aeh_version="0.1.0", suite="smoke",
        suite_hash="h1", adapter="mock", model="mock-1", seed=7, attempts=3, concurrency=2,
        price_table_version="2025.1", price_table_date="2025-01-01",
        fault_profile={"kind": "uniform", "rate": 0.1}, config={"level": "steps"},
    )  # fmt: skip
    fields.update(kw)
    return RunInfo(**fields)


def _make_attempt(run_id: str = "run-0001", task_id: str = "t1", attempt: int = 0, **kw: Any) -> Attempt:
    fields: dict[str, Any] = dict(
        run_id=run_id, task_id=task_id, attempt=attempt, seed=100 + attempt, success=True,
        status="answered", final_output="42", tokens_in=120, tokens_out=30, cost_usd=0.0012,
        latency_s=1.5, steps=3, root_span_id=f"{task_id}-{attempt}-root",
        tool_calls=[
            ToolCall(name="calc", args={"expr": "6*7"}, result=42, span_id="s1", latency_s=0.1),
            ToolCall(name="fetch", args={"url": "http://x"}, error="boom", error_kind="500",
                     injected_fault="500"),
        ],
        grader_results=[
            GraderResult(tier=0, kind="exact", name="exact", passed=True, evidence={"want": "42"}),
            GraderResult(tier=2, kind="judge", name="judge", passed=None, error="judge timed out"),
        ],
        invariant_results=[InvariantResult(name="no_leak", passed=True, detail="clean")],
    )  # fmt: skip
    fields.update(kw)
    return Attempt(**fields)


def _make_spans(run_id: str = "run-0001", task_id: str = "t1", attempt: int = 0, n: int = 3,
               **attrs: Any) -> list[Span]:
    root = f"{task_id}-{attempt}-root"
    return [
        Span(
            run_id=run_id, task_id=task_id, attempt=attempt,
            span_id=root if i == 0 else f"{task_id}-{attempt}-{i}",
            parent_span_id=None if i == 0 else root,
            category="scheduler" if i == 0 else "tools", name=f"span{i}",
            start_ts=10.0 + i, end_ts=None if i == n - 1 else 10.5 + i,
            status="error" if i == 2 else "ok", attributes={"i": i, **attrs},
        )  # fmt: skip
        for i in range(n)
    ]


@pytest.fixture(name="make_run")
def make_run_fixture() -> Any:
    return _make_run


@pytest.fixture(name="make_attempt")
def make_attempt_fixture() -> Any:
    return _make_attempt


@pytest.fixture(name="make_spans")
def make_spans_fixture() -> Any:
    return _make_spans
