"""Within one stored run: how attempts fared after each kind of injected tool fault."""

from __future__ import annotations

import json

import pandas as pd

from aeh.stats import wilson_interval
from aeh.store import StoreLike, using_store
from aeh.tools.faults import FAULT_KINDS

__all__ = ["recovery_by_fault"]


def recovery_by_fault(run_id: str, db: StoreLike = None) -> pd.DataFrame:
    """Within one stored run: success rate of attempts that met each injected fault kind.

    One row per kind (`timeout`, `500`, `garbage`), one for attempts hit by any injected fault
    (`any`), and one for attempts that met none (`none`, the baseline), each with n and a Wilson
    interval. Harness errors are left out, as everywhere. The curve across fail rates needs
    several runs: `recovery_curve` makes them.
    """
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        frame = store.attempts_frame(full, columns=["success", "failure_bucket", "tool_calls"])
        info = store.run_info(full)
    groups: dict[str, list[bool]] = {k: [] for k in (*FAULT_KINDS, "any", "none")}
    for success, bucket, calls in zip(frame["success"], frame["failure_bucket"], frame["tool_calls"], strict=True):
        if bucket == "harness_error":
            continue
        kinds = {c.get("injected_fault") for c in json.loads(calls or "[]")} - {None}
        for kind in kinds:
            groups[kind].append(bool(success))
        groups["any" if kinds else "none"].append(bool(success))
    rows = []
    for kind, outcomes in groups.items():
        n, k = len(outcomes), sum(outcomes)
        low, high = wilson_interval(k, n) if n else (float("nan"), float("nan"))
        rows.append({"injected": kind, "n": n, "successes": k,
                     "success_rate": k / n if n else float("nan"), "low": low, "high": high})
    out = pd.DataFrame(rows)
    mode = (info.fault_profile or {}).get("mode", "none")
    out.attrs["title"] = f"Success by injected fault kind ({mode} mode), run {full}"
    out.attrs["run_id"] = full
    return out
