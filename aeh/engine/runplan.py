"""Turns user-facing run options into the engine's RunOptions, validating them loudly."""

from __future__ import annotations

import difflib
from typing import Any

from aeh._files import unsafe_id
from aeh.engine.runspec import MAX_ATTEMPTS, MAX_CONCURRENCY, MAX_SEED, RunSpec
from aeh.engine.scheduler import RunOptions
from aeh.errors import ConfigError
from aeh.grading.review import configure_judge, default_after_failure_hooks
from aeh.grading.shadow import shadow_judge_hook
from aeh.store import parse_shard
from aeh.suite.contract import EvalSuite
from aeh.tools.faults import configure_faults

__all__ = ["MAX_ATTEMPTS", "MAX_CONCURRENCY", "MAX_SEED", "build_run_options", "check_against_suite"]


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


def build_run_options(spec: RunSpec | None = None, /, **given: Any) -> RunOptions:
    """The engine's RunOptions from a spec (or from the options of one, by name).

    `shard="i/n"` (1-based) runs only shard i of the plan's (task, attempt) pairs; it needs a seed
    so every shard shares one plan and run id."""
    spec = spec if spec is not None else RunSpec.build(caller="build_run_options", **given)
    if spec.run_id is not None and (why := unsafe_id(spec.run_id)) is not None:
        raise ConfigError(f"run id {spec.run_id!r} {why} — use letters, digits, '-', '_' and '.', "
                          "e.g. --run-id nightly-1")
    options = RunOptions(
        max_connections=spec.max_connections, judge_max_connections=spec.judge_max_connections,
        attempts=spec.attempts, concurrency=spec.concurrency, seed=spec.seed, task_ids=spec.tasks,
        keep_workspaces=spec.keep_workspaces or spec.workspace_retention is not None,
        work_dir=spec.retained_work_dir(), workspace_retention=spec.workspace_retention,
        run_id=spec.run_id, parent_run_id=spec.parent_run_id, config=dict(spec.config or {}),
    )
    options.config["run_spec"] = spec.stored()
    if spec.max_connections is not None:
        options.config["max_connections"] = spec.max_connections
    if spec.shard is not None:
        index, count = parse_shard(spec.shard)
        if spec.seed is None:
            raise ConfigError(f"shard {spec.shard} needs a seed: every shard must run the same plan — "
                              "give each shard the same --seed N (and the same suite, tasks and attempts)")
        options.config["shard"] = f"{index}/{count}"
    # Graded code runs with the network denied unless turned off (recorded on the run either way).
    options.resources["grading_sandbox"] = spec.grading_sandbox
    # Graded code runs jailed unless turned off; a run where no jail works refuses to start.
    options.resources["grading_confinement"] = spec.grading_confinement
    # Tier 3 needs no judge: a failure with no golden (or no judge for tier 2) is flagged.
    options.after_failure.extend(default_after_failure_hooks())
    if spec.fault_profile is not None or spec.fault_rate is not None or spec.fault_mode is not None:
        configure_faults(options, spec.fault_profile, fault_rate=spec.fault_rate, mode=spec.fault_mode)
    if spec.judge_model is not None:
        configure_judge(options, spec.judge_model)
        if spec.judge_all:
            options.after_grading.append(shadow_judge_hook)
            options.config["judge_all"] = True
    elif spec.judge_all:
        raise ConfigError("--judge-all needs a judge: add --judge-model MODEL")
    return options
