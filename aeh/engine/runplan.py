"""Turns user-facing run options into the engine's RunOptions, validating them loudly."""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path
from typing import Any

from aeh._files import unsafe_id
from aeh.engine.scheduler import RunOptions
from aeh.errors import ConfigError
from aeh.grading.review import configure_judge, default_after_failure_hooks
from aeh.grading.shadow import shadow_judge_hook
from aeh.store import parse_shard
from aeh.suite.contract import EvalSuite
from aeh.tools.faults import configure_faults

__all__ = ["MAX_ATTEMPTS", "MAX_CONCURRENCY", "MAX_SEED", "build_run_options", "check_against_suite"]

#: Every (task, attempt) is scheduled up front; past this a typo (10**12) would exhaust memory.
MAX_ATTEMPTS = 10_000
MAX_CONCURRENCY = 10_000
#: SQLite integers are signed 64-bit.
MAX_SEED = 2**63 - 1


def _check_int(name: str, value: Any, low: int, high: int, fix: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{name} must be an integer from {low} to {high}, got {value!r} — {fix}")


def check_against_suite(suite: EvalSuite, options: RunOptions) -> None:
    """Options that name things in the suite must name things it has: a typo runs nothing, silently."""
    ids = [t.id for t in suite.tasks()]
    unknown = [t for t in options.task_ids or [] if t not in ids]
    if unknown:
        hints = []
        for task_id in unknown:
            close = difflib.get_close_matches(task_id, ids, n=3)
            hints.append(f"{task_id!r}" + (f" (did you mean {', '.join(map(repr, close))}?)" if close else ""))
        shown = ", ".join(ids[:20]) + (" …" if len(ids) > 20 else "")
        raise ConfigError(f"--task names no task of suite {suite.name!r}: {', '.join(hints)} — "
                          f"its tasks are: {shown} (list them with `aeh tasks --suite …`)")
    targeted = (options.fault_profile or {}).get("tools") or []
    tools = suite.tool_registry().names()
    missing = [t for t in targeted if t not in tools]
    if missing:
        raise ConfigError(f"the fault profile's tools name {', '.join(map(repr, missing))}, which suite "
                          f"{suite.name!r} does not have — its tools are: {', '.join(tools) or '(none)'}")


def build_run_options(
    *,
    attempts: int = 5,
    concurrency: int = 4,
    seed: int | None = None,
    tasks: list[str] | None = None,
    keep_workspaces: bool = False,
    work_dir: str | Path | None = None,
    fault_profile: str | Path | dict[str, Any] | None = None,
    fault_rate: float | None = None,
    fault_mode: str | None = None,
    judge_model: str | None = None,
    judge_all: bool = False,
    run_id: str | None = None,
    parent_run_id: str | None = None,
    config: dict[str, Any] | None = None,
    max_connections: int | None = None,
    judge_max_connections: int | None = 2,
    grading_sandbox: bool = True,
    workspace_retention: int | None = None,
    shard: str | None = None,
) -> RunOptions:
    """RunOptions from user-facing values. `shard="i/n"` (1-based) runs only shard i of the
    plan's (task, attempt) pairs; it needs a seed so every shard shares one plan and run id."""
    _check_int("attempts", attempts, 1, MAX_ATTEMPTS, "e.g. --attempts 5; split a bigger study into runs")
    _check_int("concurrency", concurrency, 1, MAX_CONCURRENCY, "e.g. --concurrency 4")
    if seed is not None:
        _check_int("seed", seed, 0, MAX_SEED, "a seed is stored as a 64-bit integer, e.g. --seed 7")
    if run_id is not None and (why := unsafe_id(run_id)) is not None:
        raise ConfigError(f"run id {run_id!r} {why} — use letters, digits, '-', '_' and '.', e.g. --run-id nightly-1")
    for name, value in (("max_connections", max_connections), ("judge_max_connections", judge_max_connections)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ConfigError(f"{name} must be an integer >= 1, got {value!r}")
    options = RunOptions(
        max_connections=max_connections, judge_max_connections=judge_max_connections,
        attempts=attempts, concurrency=concurrency, seed=seed, task_ids=tasks,
        keep_workspaces=keep_workspaces, work_dir=Path(work_dir) if work_dir else None,
        run_id=run_id, parent_run_id=parent_run_id, config=dict(config or {}),
    )
    if max_connections is not None:
        options.config["max_connections"] = max_connections
    if shard is not None:
        index, count = parse_shard(shard)
        if seed is None:
            raise ConfigError(f"shard {shard} needs a seed: every shard must run the same plan — "
                              "give each shard the same --seed N (and the same suite, tasks and attempts)")
        options.config["shard"] = f"{index}/{count}"
    if workspace_retention is not None:
        if workspace_retention < 0:
            raise ConfigError(f"workspace_retention must be 0 or more, got {workspace_retention}")
        # Kept workspaces live in one place, so retention can count runs there.
        options.keep_workspaces = True
        options.work_dir = options.work_dir or Path(tempfile.gettempdir()) / "aeh-workspaces"
        options.workspace_retention = workspace_retention
    # Graded code runs with the network denied unless turned off (recorded on the run either way).
    options.resources["grading_sandbox"] = bool(grading_sandbox)
    # Tier 3 needs no judge: a failure with no golden (or no judge for tier 2) is flagged.
    options.after_failure.extend(default_after_failure_hooks())
    if fault_profile is not None or fault_rate is not None or fault_mode is not None:
        configure_faults(options, fault_profile, fault_rate=fault_rate, mode=fault_mode)
    if judge_model is not None:
        configure_judge(options, judge_model)
        if judge_all:
            options.after_grading.append(shadow_judge_hook)
            options.config["judge_all"] = True
    elif judge_all:
        raise ConfigError("--judge-all needs a judge: add --judge-model MODEL")
    return options
