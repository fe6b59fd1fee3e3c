"""The solver matrix: coding runs side by side, read against the noop floor.

One row per solver label (several runs of one label pool their attempts). Solve rate is the
signal, with its Wilson interval. The public pass rate is not evidence of a fix: a valid fixture
is green on its public tests before the agent starts, so a do-nothing solver scores full marks
there. The hidden gap (public rate − hidden rate) only means something against the gap the
noop floor shows on the same fixtures; without a floor run the matrix leaves the gap blank and
says so. Cost per solved task is printed only when every attempt of every run of that solver
carries a cost — never an average over partial data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
import polars as pl

from aeh._util.figure import figure, money
from aeh.analysis._results import MatrixResult
from aeh.errors import ConfigError
from aeh.models import RunInfo
from aeh.stats import wilson_interval
from aeh.store import Store, StoreLike, using_store

__all__ = ["MATRIX_COLUMNS", "format_matrix", "matrix"]

MATRIX_COLUMNS = ["label", "role", "runs", "tasks", "n", "solved", "solve_rate", "solve_low", "solve_high",
                  "public_rate", "hidden_rate", "hidden_gap", "floor_gap", "gap_vs_floor", "above_floor",
                  "below_ceiling", "latency_p50_s", "cost_currency", "cost_total_usd", "cost_per_solved_usd",
                  "cost_note", "harness_errors", "tamper_suspects"]


def _attempt_rows(store: Store, run_id: str) -> tuple[RunInfo, pl.DataFrame]:
    info = store.run_info(run_id)
    att = store.attempts_frame(info.run_id, columns=("task_id", "attempt", "success", "failure_bucket",
                                                     "cost_usd", "latency_s"))
    graders = store.grader_frame(info.run_id).filter(pl.col("kind") == "hidden_tests")
    ev = [json.loads(e or "{}") for e in graders["evidence"].to_list()]
    counts = pl.DataFrame({
        "task_id": graders["task_id"], "attempt": graders["attempt"],
        "public_ok": [bool(e.get("public_total")) and e.get("public_passed") == e.get("public_total") for e in ev],
        "hidden_ok": [bool(e.get("hidden_total")) and e.get("hidden_passed") == e.get("hidden_total") for e in ev],
        "tamper": [bool(e.get("tamper_suspect")) for e in ev],
    }, schema={"task_id": pl.String(), "attempt": pl.Int64(), "public_ok": pl.Boolean(),
               "hidden_ok": pl.Boolean(), "tamper": pl.Boolean()})
    frame = att.join(counts, on=["task_id", "attempt"], how="left")
    return info, frame


def _groups(store: Store, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The runs by solver label: role, run ids, attempt frames, suite hashes and cost currencies."""
    groups: dict[str, dict[str, Any]] = {}
    for rid in run_ids:
        info, frame = _attempt_rows(store, rid)
        label, role = _label(info)
        g = groups.setdefault(label, {"role": role, "runs": [], "frames": [], "suites": set(), "currencies": set()})
        g["runs"].append(info.run_id)
        if not _costs_nothing(info):  # a built-in solver's zero is zero in any currency
            g["currencies"].add(info.config.currency)
        g["frames"].append(frame)
        g["suites"].add(info.suite_hash)
    priced = {c for g in groups.values() for c in g["currencies"]}
    for g in groups.values():
        if not g["currencies"]:  # only built-in runs: shown in the solvers' currency when they agree
            g["currencies"] = {next(iter(priced))} if len(priced) == 1 else {"USD"}
            g["currency_free"] = True
    return groups


def _costs_nothing(info: RunInfo) -> bool:
    """A run of a built-in solver (noop, reference): no model, no cost, in no currency."""
    return str(info.config.facts.get("cost_provenance", "")).startswith("none")


def _label(info: RunInfo) -> tuple[str, str]:
    cfg = info.config.facts  # the command adapter's solver label and role
    label = cfg.get("solver_label") or info.model or info.adapter
    return str(label), str(cfg.get("solver_role") or "solver")


def matrix(run_ids: Sequence[str], db: StoreLike = None) -> MatrixResult:
    """Per solver label: solve rate (Wilson 95%), public and hidden rates, the hidden gap read
    against the noop floor, distance from floor and ceiling, median latency, cost per solved task.

    `.warnings` says what could not be computed and why (no floor, partial cost …).
    """
    if not run_ids:
        raise ConfigError("matrix needs at least one run id — e.g. a noop, a reference and a solver run")
    with using_store(db) as store:
        groups = _groups(store, run_ids)
    per_task: dict[str, pl.DataFrame] = {}
    rows = []
    for label, g in groups.items():
        row, per_task[label] = _label_row(label, g)
        rows.append(row)
    floor = next((r for r in rows if r["role"] == "floor"), None)
    ceiling = next((r for r in rows if r["role"] == "ceiling"), None)
    warnings: list[str] = []
    if floor is None:
        warnings.append("no floor run (--solver noop) in the matrix: the hidden gap has no scale and is not "
                        "shown; add a noop run over the same fixtures")
    if len({h for g in groups.values() for h in g["suites"]}) > 1:
        warnings.append("the runs measured different suite versions (suite hashes differ)")
    for r in rows:
        _read_against(r, per_task, floor, ceiling, warnings)
    charged = [r for r in rows if not r.pop("_currency_free")]
    if len({r["cost_currency"] for r in charged}) > 1:
        warnings.append("the solvers' costs are in different currencies ("
                        + ", ".join(f"{r['label']} {r['cost_currency']}" for r in charged)
                        + "): compare cost per solved task only within one currency")
    rows.sort(key=_rank)
    return MatrixResult(table=pd.DataFrame(rows, columns=MATRIX_COLUMNS), warnings=warnings, run_ids=list(run_ids),
                        floor=floor["label"] if floor else None, ceiling=ceiling["label"] if ceiling else None)


def _rank(r: dict[str, Any]) -> tuple[int, float]:
    """Ceiling first, floor last, solvers between by solve rate (best first)."""
    order = {"ceiling": 0, "solver": 1, "floor": 2}
    return order.get(r["role"], 1), -(r["solve_rate"] if not math.isnan(r["solve_rate"]) else -1)


def _read_against(r: dict[str, Any], per_task: dict[str, pl.DataFrame], floor: dict[str, Any] | None,
                  ceiling: dict[str, Any] | None, warnings: list[str]) -> None:
    """Fill the row's distances from floor and ceiling; say what could not be computed."""
    r["hidden_gap"] = r["floor_gap"] = r["gap_vs_floor"] = r["above_floor"] = r["below_ceiling"] = math.nan
    tasks = r.pop("_tasks")
    if floor is not None:
        _against_floor(r, tasks, per_task[r["label"]], per_task[floor["label"]], warnings)
    if ceiling is not None:
        r["below_ceiling"] = ceiling["solve_rate"] - r["solve_rate"]
    if r.pop("_cost_unknown"):
        warnings.append(f"{r['label']}: {r['cost_note']} — no cost per solved task")


def _label_row(label: str, g: dict[str, Any]) -> tuple[dict[str, Any], pl.DataFrame]:
    """One solver label's row (its runs' attempts pooled) and its per-task rates."""
    frame = pl.concat(g["frames"], how="vertical_relaxed")
    valid = frame.filter((pl.col("failure_bucket") != "harness_error").fill_null(True))
    n, solved = valid.height, int(valid["success"].sum())
    low, high = wilson_interval(solved, n) if n else (math.nan, math.nan)
    public = valid["public_ok"].fill_null(False)
    hidden = valid["hidden_ok"].fill_null(False)
    currency = "/".join(sorted(g["currencies"]))
    total, per_solved, note, cost_unknown = _cost(frame, g["currencies"], currency, solved)
    per_task = valid.group_by("task_id").agg(pl.col("success").mean().alias("rate"),
                                             pl.col("public_ok").fill_null(False).mean().alias("pub"),
                                             pl.col("hidden_ok").fill_null(False).mean().alias("hid"))
    row = {
        "label": label, "role": g["role"], "runs": ",".join(g["runs"]), "tasks": valid["task_id"].n_unique(),
        "n": n, "solved": solved, "solve_rate": solved / n if n else math.nan, "solve_low": low,
        "solve_high": high, "public_rate": float(public.mean()) if n else math.nan,
        "hidden_rate": float(hidden.mean()) if n else math.nan,
        "latency_p50_s": float(frame["latency_s"].median()) if frame.height else math.nan,
        "cost_currency": currency, "cost_total_usd": total, "cost_per_solved_usd": per_solved,
        "cost_note": note,
        "harness_errors": frame.height - n, "tamper_suspects": int(frame["tamper"].fill_null(False).sum()),
        "_tasks": set(valid["task_id"].to_list()), "_currency_free": g.get("currency_free", False),
        "_cost_unknown": cost_unknown,
    }
    return row, per_task


def _cost(frame: pl.DataFrame, currencies: set[str], currency: str, solved: int) -> tuple[float, float, str, bool]:
    """Total cost, cost per solved task, the note on it, and whether the cost is unknown."""
    costs = frame["cost_usd"]
    if len(currencies) > 1:  # a sum of dollars and euros is neither
        return math.nan, math.nan, f"cost in more than one currency ({currency}) across this label's runs", True
    if costs.null_count() == 0 and frame.height:
        total = float(costs.sum())
        return total, (total / solved if solved else math.nan), ("" if solved else "no task solved"), False
    return math.nan, math.nan, f"cost unknown for {costs.null_count()} of {frame.height} attempts", True


def _against_floor(r: dict[str, Any], tasks: set[str], mine: pl.DataFrame, floor: pl.DataFrame,
                   warnings: list[str]) -> None:
    """The row's hidden gap read against the floor's on the same fixtures (or a warning when the
    floor run lacks some of them)."""
    ft = floor.filter(pl.col("task_id").is_in(list(tasks)))
    if ft.height < len(tasks):
        warnings.append(f"{r['label']}: the floor run lacks {len(tasks) - ft.height} of its fixtures; "
                        "gap and distance from floor not shown")
        return
    r["hidden_gap"] = r["public_rate"] - r["hidden_rate"]
    # The floor on the same fixtures, weighted like this row (task means).
    f_pub, f_hid, f_rate = (float(ft[c].mean() or 0.0) for c in ("pub", "hid", "rate"))  # type: ignore[arg-type]
    r["floor_gap"] = f_pub - f_hid
    r["gap_vs_floor"] = r["hidden_gap"] - r["floor_gap"]
    r["above_floor"] = float(mine["rate"].mean() or 0.0) - f_rate  # type: ignore[arg-type]



def format_matrix(result: MatrixResult) -> str:
    head = (f"{'solver':<22} {'role':<8} {'k/n':>7} {'solve':>5} {'wilson 95%':<13} {'public':>6} {'hidden':>6} "
            f"{'gap':>6} {'floor gap':>9} {'vs floor':>8} {'p50 s':>6} {'cost/solved':>11}")
    lines = [head]
    for r in result.table.itertuples(index=False):
        lines.append(
            f"{r.label[:22]:<22} {r.role:<8} {r.solved:>3}/{r.n:<3} {figure(r.solve_rate, '{:.2f}'):>5} "
            f"{'[' + figure(r.solve_low, '{:.2f}') + ', ' + figure(r.solve_high, '{:.2f}') + ']':<13} "
            f"{figure(r.public_rate, '{:.2f}'):>6} {figure(r.hidden_rate, '{:.2f}'):>6} "
            f"{figure(r.hidden_gap, '{:+.2f}'):>6} {figure(r.floor_gap, '{:+.2f}'):>9} "
            f"{figure(r.above_floor, '{:+.2f}'):>8} {figure(r.latency_p50_s, '{:.2f}'):>6} "
            f"{money(r.cost_per_solved_usd, r.cost_currency):>11}")
    lines += ["", "solve = all public and hidden tests pass (graded in a clean directory); public alone is not "
                  "evidence of a fix", "gap = public rate − hidden rate; vs floor = solve rate − the noop floor's "
                  "on the same fixtures; cost is solver-reported"]
    lines += [f"WARNING: {w}" for w in result.warnings]
    return "\n".join(lines)
