"""`power(...)`: how many attempts per task a comparison needs, or what it can detect."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from aeh.analysis._read import run_table
from aeh.stats import attempts_for_power, minimum_detectable_drop, power_of_comparison

if TYPE_CHECKING:
    from aeh.store import StoreLike


__all__ = ["power"]


def power(
    rates: float | Sequence[float] | None = None,
    drop: float | None = None,
    *,
    pilot_run: str | None = None,
    attempts: int | None = None,
    n_tasks: int | None = None,
    target_power: float = 0.8,
    fdr: float = 0.05,
    db: StoreLike = None,
) -> pd.DataFrame:
    """Plan a comparison with the same exact test and BH level `compare` uses.

    Give base `rates` (or a `pilot_run` to take them from) and either a `drop` to detect —
    returns the attempts per task needed for `target_power` — or the `attempts` you will run —
    returns each task's minimum detectable drop and, with `drop`, the power you would get.
    Pilot tasks with no valid attempt (n = 0, e.g. all harness errors) have no rate to plan
    from: they are skipped with a warning and listed in `attrs["skipped_tasks"]`.
    """
    task_ids: list[str]
    skipped: list[str] = []
    if pilot_run is not None:
        table = run_table(pilot_run, db).table
        measured = table["n"] > 0
        skipped = table.loc[~measured, "task_id"].tolist()
        if skipped:
            warnings.warn(f"power: {len(skipped)} pilot task(s) have no valid attempt (n = 0) and were "
                          f"skipped: {', '.join(skipped)}", stacklevel=2)
        table = table[measured]
        task_ids, base = table["task_id"].tolist(), [float(r) for r in table["rate"]]
    elif rates is None:
        raise ValueError("give `rates` (per-task success rates) or a `pilot_run` id")
    else:
        base = [float(rates)] if isinstance(rates, int | float) else [float(r) for r in rates]
        task_ids = [f"task_{i}" for i in range(len(base))]
    family = n_tasks or len(base)
    rows = []
    for task_id, p in zip(task_ids, base, strict=True):
        row: dict[str, Any] = {"task_id": task_id, "base_rate": p, "n_tasks": family, "fdr": fdr}
        if attempts is None:
            if drop is None:
                raise ValueError("give a `drop` to detect, or the `attempts` you plan to run")
            if p - drop < 0:
                row.update(drop=drop, attempts_needed=None, note="drop larger than the base rate")
            else:
                row.update(drop=drop, attempts_needed=attempts_for_power(p, drop, target_power, fdr, family))
        else:
            row.update(attempts=attempts, minimum_detectable_drop=minimum_detectable_drop(
                p, attempts, target_power, fdr, family))
            if drop is not None:
                row["power"] = power_of_comparison(p, max(0.0, p - drop), attempts, fdr, family)
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs["skipped_tasks"] = skipped
    frame.attrs["method"] = ("exact power of Boschloo's test at the BH level fdr / n_tasks "
                             "(conservative when several tasks change)")
    return frame
