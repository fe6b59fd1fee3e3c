"""Human labels as a second rater: the labels of a run, and the programmatic verdicts they pair with for κ.

    human_label_pairs(store, run_id)                    # task_id, attempt, programmatic, judge
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from aeh.store._store import Store

__all__ = ["JUDGE_KINDS", "human_label_pairs", "labels_frame", "programmatic_verdicts"]


_LABEL_SCHEMA = {"task_id": pl.Utf8(), "attempt": pl.Int64(), "label": pl.Boolean(),
                 "reviewer": pl.Utf8(), "note": pl.Utf8(), "created_at": pl.Utf8()}


def labels_frame(store: Store, run_id: str) -> pl.DataFrame:
    """The run's human labels, one row per attempt."""
    full = store.resolve_run_id(run_id)
    with store._read() as conn:
        found = conn.execute(
            "SELECT task_id, attempt, label, reviewer, note, created_at FROM human_labels "
            "WHERE run_id = ? ORDER BY task_id, attempt", (full,)).fetchall()
    rows = [(t, a, bool(lab), r, n, c) for t, a, lab, r, n, c in found]
    return pl.DataFrame(rows, schema=_LABEL_SCHEMA, orient="row")


JUDGE_KINDS: tuple[str, ...] = ("judge", "judge_shadow")


def programmatic_verdicts(grader_rows: pl.DataFrame, judge_kinds: tuple[str, ...] = JUDGE_KINDS) -> pl.DataFrame:
    """Per attempt: `programmatic`, True when every decided tier-0 grader that is not a judge passed.

    The one rule for the programmatic side of κ, whoever the other rater is (judge or person).
    """
    return (
        grader_rows.filter((pl.col("tier") == 0) & pl.col("passed").is_not_null()
                           & ~pl.col("kind").is_in(list(judge_kinds)))
        .group_by("task_id", "attempt").agg(pl.col("passed").all().alias("programmatic"))
    )


def human_label_pairs(store: Store, run_id: str, judge_kinds: tuple[str, ...] = JUDGE_KINDS) -> pl.DataFrame:
    """Per labelled attempt: `programmatic` (all tier-0 non-judge graders passed) and `judge`
    (the human label) — the shape `verdict_pairs` gives, so κ treats a person as a rater."""
    full = store.resolve_run_id(run_id)
    labels = labels_frame(store, full).select("task_id", "attempt", pl.col("label").alias("judge"))
    graders = store.grader_frame(full)
    programmatic = programmatic_verdicts(graders, judge_kinds).with_columns(pl.col("attempt").cast(pl.Int64))
    return (programmatic.join(labels, on=["task_id", "attempt"], how="inner")
            .select("task_id", "attempt", "programmatic", "judge").sort("task_id", "attempt"))
