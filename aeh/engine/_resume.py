"""Checks before continuing a stored run: is there anything to resume, and is it the same run?

A resumed run must equal an uninterrupted one attempt for attempt, so it runs with the stored
seed, attempts and tasks, and refuses a suite, adapter or option that differs from the stored one.
"""

from __future__ import annotations

from typing import Any

from aeh.engine.adapter import Adapter
from aeh.errors import ConfigError
from aeh.models import RunInfo
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import suite_hash

__all__ = ["check_resumable", "resume_mismatches", "stored_options"]


def check_resumable(info: RunInfo) -> bool:
    """False for a finished run (nothing to do); ConfigError for one still running; else True."""
    if info.status == "finished":
        return False
    if info.status == "running":
        where = f"pid {info.owner_pid} on {info.owner_host}" if info.owner_pid else "its owner"
        raise ConfigError(
            f"run {info.run_id} is still running ({where}, heartbeat {info.heartbeat_at or 'unknown'}) — "
            "wait for it to end, or stop it (Ctrl-C / SIGTERM) and then resume it"
        )
    return True


def stored_options(info: RunInfo) -> dict[str, Any]:
    """The options a stored run ran with: its stored spec (runs from before aeh stored one have
    none), overlaid with what the run itself drew or resolved — the seed, the task list, the
    fault profile with any rate and mode folded in — which a resumed run must reuse."""
    config = info.config
    return {**config.spec, "attempts": info.attempts, "seed": info.seed,
            "tasks": config.tasks, "judge_model": info.judge_model, "judge_all": config.judge_all,
            "fault_profile": info.fault_profile, "fault_rate": None, "fault_mode": None,
            "adapter": info.adapter, "model": info.model, "adapter_options": config.spec.get("adapter_options") or {}}


def resume_mismatches(info: RunInfo, suite: EvalSuite, adapter: Adapter) -> list[str]:
    """What differs between the stored run and this suite and adapter; empty when it may resume
    (the options are compared by `RunSpec.resumed`)."""
    found = []
    now_hash = suite_hash(suite)
    if now_hash != info.suite_hash:
        found.append(f"suite {suite.name!r} hash {now_hash[:12]} (stored: {info.suite!r} hash {info.suite_hash[:12]})")
    if adapter.name != info.adapter:
        found.append(f"adapter {adapter.name!r} (stored: {info.adapter!r})")
    if adapter.model != info.model:
        found.append(f"model {adapter.model!r} (stored: {info.model!r})")
    return found
