"""Merge shard stores into one store, run by run id, refusing anything that is not one plan.

Shards of a run (`aeh run --shard i/n`) share the run id, suite hash, seed, attempts, tasks,
adapter and model; each holds a disjoint part of the (task, attempt) plan. Merging copies their
rows as stored (already redacted) into the target in one transaction. When every pair of the
plan is present the merged run is `finished`; otherwise it is `interrupted`, which `aeh run
--resume` finishes by running exactly the missing pairs.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aeh.errors import ConfigError
from aeh.models import Provenance, RunConfig
from aeh.store._plan import parse_shard, plan_pairs, shard_number
from aeh.store._store import Store
from aeh.store._totals import remember

__all__ = ["MergeResult", "merge_stores"]

#: Per-attempt tables, parents first; each has run_id, task_id, attempt columns.
_ATTEMPT_TABLES = ("attempts", "spans", "grader_results", "dimension_scores", "human_labels")
#: What every shard of one run must agree on.
_SAME = ("suite", "suite_hash", "seed", "attempts", "adapter", "model")


@dataclass
class MergeResult:
    """What `merge_stores` did: the run, its status and the pairs of its plan still missing."""

    run_id: str
    status: str
    stored: int
    planned: int
    missing: list[tuple[str, int]] = field(default_factory=list)
    missing_shards: list[str] = field(default_factory=list)

    def message(self) -> str:
        """One line for people: finished, or what is missing and how to finish it."""
        if not self.missing:
            return f"run {self.run_id}: merged, {self.stored} of {self.planned} attempts — finished"
        pairs = ", ".join(f"{t}#{a}" for t, a in self.missing[:8]) + (" …" if len(self.missing) > 8 else "")
        shards = f" (shard {', '.join(self.missing_shards)} not merged?)" if self.missing_shards else ""
        return (f"run {self.run_id}: merged, {self.stored} of {self.planned} attempts — incomplete, "
                f"{len(self.missing)} (task, attempt) pairs missing{shards}: {pairs}; merge the missing "
                f"shard, or run them with `aeh run --resume {self.run_id} --db DB`")


def merge_stores(sources: list[str | Path], into: str | Path, run_id: str | None = None) -> MergeResult:
    """Copy one run's attempts, spans, grader results, dimension scores and labels from every
    source store into `into` (created if absent). ConfigError, before anything is written, for
    shards of different runs, suites, seeds, plans or agents, or a (task, attempt) stored twice."""
    target = Path(into)
    paths = [Path(p) for p in sources]
    for path in paths:
        if not path.is_file():
            raise ConfigError(f"shard store {path} does not exist — pass the runs.db files the shards wrote")
        if target.exists() and path.resolve() == target.resolve():
            raise ConfigError(f"{path} is both a source and --into: merge into a new or another store")
    for path in [*paths, target]:
        Store(path).close()  # brings every store to the current schema
    with ExitStack() as stack:
        shards = {str(p): stack.enter_context(closing(_connect(p, read_only=True))) for p in paths}
        conn = stack.enter_context(closing(_connect(target, read_only=False)))
        runs = {name: {r["run_id"]: dict(r) for r in src.execute("SELECT * FROM runs")} for name, src in shards.items()}
        chosen = _choose_run(runs, run_id)
        members = {name: rows[chosen] for name, rows in runs.items() if chosen in rows}
        existing = conn.execute("SELECT * FROM runs WHERE run_id = ?", (chosen,)).fetchone()
        if existing is not None:
            members = {f"{target} (--into)": dict(existing), **members}
        _check_same_plan(chosen, members)
        _check_not_running(chosen, [p for p in paths if str(p) in members])
        holders = {name: src for name, src in shards.items() if name in members}
        pairs = _check_disjoint(chosen, {**({f"{target} (--into)": conn} if existing is not None else {}), **holders})
        with conn:  # one transaction: a refused or failed merge leaves the target as it was
            _copy(conn, chosen, list(holders.values()), insert_run=existing is None)
            return _finish(conn, chosen, members, pairs)


def _connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True) if read_only else sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _choose_run(runs: dict[str, dict[str, dict[str, Any]]], run_id: str | None) -> str:
    ids = sorted({rid for rows in runs.values() for rid in rows})
    if run_id is not None:
        found = [rid for rid in ids if rid == run_id] or [rid for rid in ids if rid.startswith(run_id)]
        if len(found) != 1:
            raise ConfigError(f"--run-id {run_id!r} matches {len(found)} runs in the shard stores "
                              f"(they hold: {', '.join(ids) or 'none'})")
        return found[0]
    if len(ids) != 1:
        where = "; ".join(f"{name}: " + (", ".join(f"{rid} (suite {r['suite']!r} hash {r['suite_hash'][:12]})"
                                                   for rid, r in rows.items()) or "no runs")
                          for name, rows in runs.items())
        raise ConfigError(f"the shard stores hold {len(ids)} runs, not one — shards of one run share its run id "
                          f"(same suite, seed and plan): {where}; pass --run-id to merge one of them")
    return ids[0]


def _config(row: dict[str, Any]) -> RunConfig:
    """A stored row's config, typed (a flat one from an older shard store is nested)."""
    return RunConfig.model_validate(json.loads(row.get("config") or "{}"))


def _plan(row: dict[str, Any]) -> dict[str, Any]:
    return {**{k: row[k] for k in _SAME}, "tasks": sorted(_config(row).tasks or [])}


def _check_same_plan(run_id: str, members: dict[str, dict[str, Any]]) -> None:
    (first_name, first), *rest = members.items()
    want = _plan(first)
    for name, row in rest:
        got = _plan(row)
        differ = [f"{k} {got[k]!r} (in {first_name}: {want[k]!r})" for k in want if got[k] != want[k]]
        if differ:
            raise ConfigError(f"{name}: run {run_id} is not a shard of the same run as {first_name}: "
                              + "; ".join(differ) + " — merge only shards of one suite, seed, plan and agent")


def _check_not_running(run_id: str, paths: list[Path]) -> None:
    """A shard still executing would be merged half-done: refuse it (a killed one reads `stale`)."""
    for path in paths:
        with Store(path) as store:
            info = store.run_info(run_id)
        if info.status == "running":
            raise ConfigError(f"{path}: run {run_id} is still running there (pid {info.owner_pid} on "
                              f"{info.owner_host}, heartbeat {info.heartbeat_at}) — merge it once it has ended")


def _check_disjoint(run_id: str, holders: dict[str, sqlite3.Connection]) -> set[tuple[str, int]]:
    seen: dict[tuple[str, int], str] = {}
    for name, src in holders.items():
        pairs = [(r[0], r[1]) for r in src.execute("SELECT task_id, attempt FROM attempts WHERE run_id = ?", (run_id,))]
        twice = [(p, seen[p]) for p in pairs if p in seen]
        if twice:
            listed = ", ".join(f"{t}#{a}" for (t, a), _ in twice[:5])
            raise ConfigError(f"{name}: {len(twice)} (task, attempt) pairs of run {run_id} are also in "
                              f"{twice[0][1]}: {listed} — each pair must come from one shard (was a shard "
                              "merged twice, or two shards run with the same --shard?)")
        seen.update(dict.fromkeys(pairs, name))
    return set(seen)


def _columns(conn: sqlite3.Connection, src: sqlite3.Connection, table: str) -> list[str]:
    theirs = {r[1] for r in src.execute(f"PRAGMA table_info({table})")}
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] in theirs]


def _copy(conn: sqlite3.Connection, run_id: str, sources: list[sqlite3.Connection], *, insert_run: bool) -> None:
    """Rows as stored (already redacted), streamed from each shard; parents before children."""
    for k, src in enumerate(sources):
        tables = (("runs",) if insert_run and k == 0 else ()) + _ATTEMPT_TABLES
        for table in tables:
            cols = _columns(conn, src, table)
            names = ", ".join(cols)
            rows = src.execute(f"SELECT {names} FROM {table} WHERE run_id = ?", (run_id,))
            conn.executemany(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(cols))})",
                             (tuple(r) for r in rows))


def _finish(conn: sqlite3.Connection, run_id: str, members: dict[str, dict[str, Any]],
            pairs: set[tuple[str, int]]) -> MergeResult:
    rows = list(members.values())
    config = _config(rows[0])
    plan = plan_pairs(config.tasks or [], int(rows[0]["attempts"]))
    missing = [p for p in plan if p not in pairs]
    counts = {parse_shard(s)[1] for r in rows if (s := _config(r).provenance.shard)}
    shards = sorted({f"{shard_number(k, n)}/{n}" for n in counts for k, p in enumerate(plan) if p in set(missing)})
    merged_from = list(config.provenance.merged_from)
    for name, row in members.items():
        if not name.endswith("(--into)"):
            merged_from.append({"store": name, "shard": _config(row).provenance.shard})
    # the merged run is the whole plan: resuming it runs every missing pair
    config.provenance = Provenance(shard=None, merged_from=merged_from)
    status = "interrupted" if missing else "finished"
    finished_at = max((r["finished_at"] for r in rows if r.get("finished_at")), default=None)
    conn.execute("UPDATE runs SET status = ?, finished_at = ?, config = ?, owner_pid = NULL, owner_host = NULL, "
                 "heartbeat_at = NULL WHERE run_id = ?",
                 (status, finished_at, json.dumps(config.model_dump(mode="json")), run_id))
    if status == "finished":
        remember(conn, run_id)
    return MergeResult(run_id=run_id, status=status, stored=len(pairs), planned=len(plan), missing=missing,
                       missing_shards=shards)
