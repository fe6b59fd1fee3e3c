"""Turns user-facing run options into the engine's RunOptions, validating them loudly."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from aeh.engine.scheduler import RunOptions
from aeh.errors import ConfigError
from aeh.grading.review import configure_judge, default_after_failure_hooks
from aeh.grading.shadow import shadow_judge_hook
from aeh.store._plan import parse_shard
from aeh.tools.faults import configure_faults

__all__ = ["build_run_options"]


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
    if attempts < 1:
        raise ConfigError(f"attempts must be at least 1, got {attempts}")
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
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
    if fault_profile is not None or fault_rate is not None:
        configure_faults(options, fault_profile, fault_rate=fault_rate, mode=fault_mode)
    if judge_model is not None:
        configure_judge(options, judge_model)
        if judge_all:
            options.after_grading.append(shadow_judge_hook)
            options.config["judge_all"] = True
    elif judge_all:
        raise ConfigError("--judge-all needs a judge: add --judge-model MODEL")
    return options
