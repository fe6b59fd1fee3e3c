"""Which stored runs a notebook reads when it is given none: the newest, or the newest two of a suite.

Comparing the two newest runs of a store would compare two suites as soon as a person runs a
second suite; so the pair is the newest run and the one before it of the same suite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["RunPick", "pick_newest_run", "pick_run_pair"]

_FIRST_RUN = "aeh run --suite smoke --adapter mock"


@dataclass(frozen=True)
class RunPick:
    """The runs chosen (newest first), how they were chosen, or why none could be."""

    #: chosen run ids, newest first: one for `pick_newest_run`, two (B, A) for `pick_run_pair`; empty when none
    run_ids: tuple[str, ...]
    #: one sentence: how the runs were chosen, or why none could be and what to do
    message: str

    @property
    def found(self) -> bool:
        return bool(self.run_ids)


def _top_level(index: Any) -> Any:
    # Points of a recovery curve are child runs of the run that made them; a person means the parent.
    if index is None or not len(index):
        return index
    if "parent_run_id" not in index.columns:
        return index
    top = index[index["parent_run_id"].isna()]
    return top if len(top) else index


def pick_newest_run(index: Any, db: str) -> RunPick:
    """The newest run of `index` (`aeh.runs(db)`, newest first; None for a store that does not exist)."""
    runs = _top_level(index)
    if runs is None or not len(runs):
        return RunPick((), f"No runs stored yet in {db} — make one from a terminal in this project: {_FIRST_RUN}")
    row = runs.iloc[0]
    return RunPick((str(row.run_id),), f"run {row.run_id} ({row.suite}, {row.adapter}/{row.model}, "
                                       f"{row.created_at}): the newest run in {db}")


def pick_run_pair(index: Any, db: str, run_b: str | None = None) -> RunPick:
    """The newest run (B) and the newest earlier run of the same suite (A), preferring the same suite hash.

    With `run_b` (an id or unique prefix), B is that run and A the newest run of its suite before it.
    """
    runs = _top_level(index)
    if run_b and runs is not None and len(runs):
        ids = [str(r) for r in runs["run_id"]]
        matches = [i for i, r in enumerate(ids) if r.startswith(run_b)]
        if len(matches) != 1:
            return RunPick((), f"run_b = {run_b!r} matches {len(matches)} runs in {db} — give a longer prefix "
                               "(aeh runs lists them)" if matches else
                               f"run_b = {run_b!r}: no such run in {db} — aeh runs lists the stored runs")
        runs = runs.iloc[matches[0]:]
    if runs is None or not len(runs):
        return RunPick((), f"No runs stored yet in {db} — make one from a terminal in this project: {_FIRST_RUN}")
    b = runs.iloc[0]
    if len(runs) < 2:
        return RunPick((), f"Comparing needs two runs; {db} holds one ({b.run_id}). Make a second, e.g. "
                           f"aeh run --suite {b.suite} --adapter {b.adapter} --seed 2, then run this notebook again.")
    earlier = runs.iloc[1:]
    same = earlier[earlier["suite"] == b.suite]
    exact = same[same["suite_hash"] == b.suite_hash] if "suite_hash" in same.columns else same
    pool = exact if len(exact) else same
    if not len(pool):
        others = ", ".join(sorted({str(s) for s in earlier["suite"]}))
        return RunPick((), f"The newest run {b.run_id} is the only run of suite {b.suite} in {db} (the others are "
                           f"of {others}); a comparison needs two runs of one suite. Make a second, e.g. "
                           f"aeh run --suite {b.suite} --adapter {b.adapter} --seed 2, or set run_a and run_b "
                           "(with overlap = True to compare different suites on the tasks both ran).")
    a = pool.iloc[0]
    return RunPick((str(b.run_id), str(a.run_id)),
                   f"comparing the two newest runs of suite {b.suite} in {db}: A {a.run_id} ({a.adapter}/{a.model}) "
                   f"→ B {b.run_id} ({b.adapter}/{b.model})")
