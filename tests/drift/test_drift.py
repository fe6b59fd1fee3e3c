"""Slow drift: caught across a window of runs even where no adjacent pair can be flagged."""

from __future__ import annotations

from pathlib import Path

import pytest

import aeh
from aeh.stats import drift_trend
from tests.test_cli import run_cli

STEPS = (0.0, 0.05, 0.10, 0.15, 0.20)


@pytest.fixture(scope="module")
def declining(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Five core runs, each a little more error-prone than the last (p_wrong rising)."""
    db = tmp_path_factory.mktemp("drift") / "runs.db"
    ids = [aeh.run("core", attempts=3, seed=i, db=db, adapter_options={"p_wrong": p}).attrs["run_id"]
           for i, p in enumerate(STEPS)]
    return db, ids


def test_declining_series_is_drifting_though_no_adjacent_pair_regresses(declining) -> None:
    db, ids = declining
    frame = aeh.drift("core", db=db)
    a = frame.attrs
    assert list(frame["run_id"]) == ids, "oldest first, the whole window"
    assert a["slope_high"] < 0 and a["cumulative"] < -0.08 and a["drifting"] is True
    for before, after in zip(ids, ids[1:]):
        assert not aeh.compare(before, after, db=db).attrs["regressed"]
    code, out, _ = run_cli("drift", "--suite", "core", "--db", str(db))
    assert code == 1 and "DRIFTING" in out


def test_flat_series_is_not_drifting(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    for seed in range(4):
        aeh.run("toy_math", attempts=8, seed=seed, db=db)
    frame = aeh.drift("toy_math", db=db, window=4)
    assert len(frame) == 4 and frame.attrs["drifting"] is False
    assert frame.attrs["slope_low"] < 0 < frame.attrs["slope_high"] or frame.attrs["slope_high"] < 0.2
    code, out, _ = run_cli("drift", "--suite", "toy_math", "--window", "4", "--db", str(db))
    assert code == 0 and "no significant drift" in out


def test_window_keeps_only_the_newest_suite_definition(declining) -> None:
    db, ids = declining
    frame = aeh.drift(runs=ids[:2], db=db)
    assert frame.attrs["drifting"] is False and any("fewer than 3" in n for n in frame.attrs["notes"])


def test_trend_needs_three_runs_and_variation() -> None:
    flat = drift_trend(["a", "b"] * 6, [0, 0, 1, 1, 2, 2] * 2, [True] * 12)
    assert flat.runs == 3 and flat.slope != flat.slope  # nan: constant outcomes carry no slope
    two = drift_trend(["a", "b", "a", "b"], [0, 0, 1, 1], [True, False, False, True])
    assert "not fitted" in two.method


def test_unknown_suite_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(aeh.AehError, match="no finished run of suite 'nope'"):
        aeh.drift("nope", db=tmp_path / "runs.db")
