"""Wires a `RunSpec` for the engine (`RunWiring`: judge, faults, hooks), validating it loudly."""

from __future__ import annotations

import difflib
from typing import Any

from aeh._util.files import unsafe_id
from aeh.engine.runspec import MAX_ATTEMPTS, MAX_CONCURRENCY, MAX_SEED, RunSpec
from aeh.engine.wiring import RunWiring
from aeh.errors import ConfigError
from aeh.grading.review import configure_judge, default_after_failure_hooks
from aeh.grading.shadow import shadow_judge_hook
from aeh.store import parse_shard
from aeh.suite.contract import EvalSuite
from aeh.tools.faults import configure_faults

__all__ = ["MAX_ATTEMPTS", "MAX_CONCURRENCY", "MAX_SEED", "check_against_suite", "plan_run", "wire_run"]


def check_against_suite(suite: EvalSuite, spec: RunSpec, wiring: RunWiring) -> None:
    """Options that name things in the suite must name things it has: a typo runs nothing, silently."""
    ids = [t.id for t in suite.tasks()]
    unknown = [t for t in spec.tasks or [] if t not in ids]
    if unknown:
        hints = []
        for task_id in unknown:
            close = difflib.get_close_matches(task_id, ids, n=3)
            hints.append(f"{task_id!r}" + (f" (did you mean {', '.join(map(repr, close))}?)" if close else ""))
        shown = ", ".join(ids[:20]) + (" …" if len(ids) > 20 else "")
        raise ConfigError(f"--task names no task of suite {suite.name!r}: {', '.join(hints)} — "
                          f"its tasks are: {shown} (list them with `aeh tasks --suite …`)")
    targeted = (wiring.fault_profile or {}).get("tools") or []
    tools = suite.tool_registry().names()
    missing = [t for t in targeted if t not in tools]
    if missing:
        raise ConfigError(f"the fault profile's tools name {', '.join(map(repr, missing))}, which suite "
                          f"{suite.name!r} does not have — its tools are: {', '.join(tools) or '(none)'}")


def wire_run(spec: RunSpec) -> RunWiring:
    """The wiring a spec asks for (judge, fault injection, after-failure hooks), checking the
    options only a whole spec can: a safe run id, a shard with its seed, --judge-all with a judge."""
    if spec.run_id is not None and (why := unsafe_id(spec.run_id)) is not None:
        raise ConfigError(f"run id {spec.run_id!r} {why} — use letters, digits, '-', '_' and '.', "
                          "e.g. --run-id nightly-1")
    if spec.shard is not None:
        parse_shard(spec.shard)
        if spec.seed is None:
            raise ConfigError(f"shard {spec.shard} needs a seed: every shard must run the same plan — "
                              "give each shard the same --seed N (and the same suite, tasks and attempts)")
    if spec.judge_all and spec.judge_model is None:
        raise ConfigError("--judge-all needs a judge: add --judge-model MODEL")
    # Tier 3 needs no judge: a failure with no golden (or no judge for tier 2) is flagged.
    wiring = RunWiring(after_failure=default_after_failure_hooks())
    if spec.fault_profile is not None or spec.fault_rate is not None or spec.fault_mode is not None:
        configure_faults(wiring, spec.fault_profile, fault_rate=spec.fault_rate, mode=spec.fault_mode)
    if spec.judge_model is not None:
        configure_judge(wiring, spec.judge_model)
        if spec.judge_all:
            wiring.after_grading.append(shadow_judge_hook)
    return wiring


def plan_run(spec: RunSpec | None = None, /, **given: Any) -> tuple[RunSpec, RunWiring]:
    """A spec (or one built from options by name) and the wiring it asks for."""
    spec = spec if spec is not None else RunSpec.build(caller="plan_run", **given)
    return spec, wire_run(spec)
