"""Which runs a notebook reads when given none: the newest, or the newest two of one suite."""

from __future__ import annotations

import pandas as pd

from aeh.report import pick_newest_run, pick_run_pair


def _index(*rows: tuple[str, str, str | None]) -> pd.DataFrame:
    """(run_id, suite, parent) newest first, as `aeh.runs` lists them."""
    return pd.DataFrame([{"run_id": r, "suite": s, "suite_hash": f"h-{s}", "adapter": "mock", "model": "m",
                          "created_at": "2026-12-01", "parent_run_id": p} for r, s, p in rows])


def test_an_empty_or_missing_store_says_how_to_make_a_run() -> None:
    for index in (None, _index()[:0]):
        pick = pick_newest_run(index, "x.db")
        assert not pick.found and "No runs stored yet in x.db" in pick.message and "aeh run --suite smoke" in pick.message
        assert not pick_run_pair(index, "x.db").found


def test_the_newest_run_skips_the_point_runs_of_a_recovery_curve() -> None:
    pick = pick_newest_run(_index(("r3", "core", "r1"), ("r2", "core", "r1"), ("r1", "core", None)), "x.db")
    assert pick.run_ids == ("r1",) and "the newest run in x.db" in pick.message


def test_the_pair_is_the_newest_run_and_the_one_before_it_of_its_suite() -> None:
    index = _index(("r4", "toy_math", None), ("r3", "smoke", None), ("r2", "toy_math", None), ("r1", "smoke", None))
    pick = pick_run_pair(index, "x.db")
    assert pick.run_ids == ("r4", "r2") and "suite toy_math" in pick.message
    assert pick_run_pair(index, "x.db", run_b="r3").run_ids == ("r3", "r1")


def test_a_suite_with_one_run_is_explained_not_compared_with_another_suite() -> None:
    pick = pick_run_pair(_index(("r3", "toy_math", None), ("r2", "smoke", None), ("r1", "smoke", None)), "x.db")
    assert not pick.found
    assert "r3 is the only run of suite toy_math" in pick.message and "of smoke" in pick.message
    assert "aeh run --suite toy_math --adapter mock --seed 2" in pick.message and "overlap" in pick.message


def test_one_run_needs_a_second() -> None:
    pick = pick_run_pair(_index(("r1", "smoke", None)), "x.db")
    assert not pick.found and "Comparing needs two runs; x.db holds one (r1)" in pick.message


def test_the_same_suite_hash_is_preferred() -> None:
    index = _index(("r3", "smoke", None), ("r2", "smoke", None), ("r1", "smoke", None))
    index.loc[1, "suite_hash"] = "edited"
    assert pick_run_pair(index, "x.db").run_ids == ("r3", "r1")


def test_an_unknown_or_ambiguous_run_b_is_named() -> None:
    index = _index(("r12", "smoke", None), ("r11", "smoke", None))
    assert "no such run" in pick_run_pair(index, "x.db", run_b="zz").message
    assert "matches 2 runs" in pick_run_pair(index, "x.db", run_b="r1").message
