"""`aeh.attempts` reads only the tier-0 verdicts it pivots, and returns what the full read gave."""

from __future__ import annotations

import random

import pandas as pd
import polars as pl

import aeh
from aeh.models import GraderResult
from aeh.store import ATTEMPTS_SCHEMA, Store
from tests.analysis.conftest import make_attempt, make_info


def full_read(store: Store, run_id: str) -> pd.DataFrame:
    """attempts() as it was: every grader column fetched, tier 0 kept in polars."""
    keep = [c for c in ATTEMPTS_SCHEMA if c not in ("tool_calls", "invariant_results")]
    frame = store.attempts_frame(run_id, columns=keep)
    verdicts = (
        store.grader_frame(run_id).filter(pl.col("tier") == 0)
        .with_columns(pl.concat_str([pl.lit("grader:"), pl.col("name")]).alias("column"))
        .pivot(on="column", index=["task_id", "attempt"], values="passed", aggregate_function="first")
    )
    return frame.join(verdicts, on=["task_id", "attempt"], how="left", maintain_order="left").to_pandas()


def test_attempts_equal_the_full_grader_read() -> None:
    rng = random.Random(7)
    with Store.memory() as store:
        store.create_run(make_info("r"))
        batch = []
        for t in range(30):
            for k in rng.sample(range(20), 4):
                graders = [GraderResult(tier=rng.choice([0, 0, 2]), kind="exact", name=rng.choice(["exact", "regex"]),
                                        passed=rng.choice([True, False, None]), evidence={"long": "x" * 50})
                           for _ in range(rng.randint(0, 3))]  # repeats of a name: the first is kept
                batch.append((make_attempt("r", f"t{(t * 37) % 30:02d}", k, rng.random() < 0.5,
                                           graders=graders), []))
        rng.shuffle(batch)
        store.write_attempts(batch)
        new, old = aeh.attempts("r", db=store), full_read(store, "r")
        tier2 = store.grader_frame("r", ["name", "passed"], tier=2)
    assert {"grader:exact", "grader:regex"} <= set(new.columns) and tier2.height > 0
    assert new["grader:exact"].isna().any() and (new["grader:exact"] == False).any()  # noqa: E712
    pd.testing.assert_frame_equal(new, old)
    assert list(zip(new["task_id"], new["attempt"], strict=True)) == sorted(zip(new["task_id"], new["attempt"],
                                                                                strict=True))
