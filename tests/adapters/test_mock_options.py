"""The mock adapter's options: probabilities and a settable model-turn latency."""

from __future__ import annotations

from pathlib import Path

import pytest

import aeh
from aeh.adapters.mock import MockAdapter
from aeh.errors import ConfigError


def _verdicts(table_run: str, db: Path) -> list[tuple[str, int, bool, str | None]]:
    rows = aeh.attempts(table_run, db=db).sort_values(["task_id", "attempt"])
    return [(r.task_id, r.attempt, bool(r.success), r.failure_bucket) for r in rows.itertuples()]


def test_zero_latency_keeps_the_seeded_trajectories(db: Path) -> None:
    slow = aeh.run("smoke", model="mock-degraded", attempts=3, seed=9, db=db, progress=False)
    fast = aeh.run("smoke", model="mock-degraded", attempts=3, seed=9, db=db, progress=False,
                   adapter_options={"latency_s": 0})
    assert _verdicts(fast.run_id, db) == _verdicts(slow.run_id, db)
    assert MockAdapter(latency_s="0").profile.latency_s == (0.0, 0.0)


def test_bad_options_name_what_is_accepted() -> None:
    with pytest.raises(ConfigError, match="latency_s"):
        MockAdapter(latency="0")
    with pytest.raises(ConfigError, match="from 0 to 60"):
        MockAdapter(latency_s=-1)
