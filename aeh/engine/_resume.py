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

__all__ = ["check_resumable", "resume_mismatches"]


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


def resume_mismatches(info: RunInfo, suite: EvalSuite, adapter: Adapter, given: dict[str, Any]) -> list[str]:
    """What differs between the stored run and the suite, adapter and explicitly given options
    (`attempts`, `seed`, `tasks`, `fault_profile`, `judge_model`); empty when it may resume."""
    found = []
    now_hash = suite_hash(suite)
    if now_hash != info.suite_hash:
        found.append(f"suite {suite.name!r} hash {now_hash[:12]} (stored: {info.suite!r} hash {info.suite_hash[:12]})")
    if adapter.name != info.adapter:
        found.append(f"adapter {adapter.name!r} (stored: {info.adapter!r})")
    if adapter.model != info.model:
        found.append(f"model {adapter.model!r} (stored: {info.model!r})")
    stored: dict[str, Any] = {"attempts": info.attempts, "seed": info.seed, "tasks": info.config.get("tasks"),
              "fault_profile": info.fault_profile, "judge_model": info.judge_model}
    for key, value in given.items():
        if value is None or key not in stored:
            continue
        mine, theirs = value, stored[key]
        if key == "tasks" and theirs is not None:
            mine, theirs = sorted(value), sorted(theirs)
        if mine != theirs:
            found.append(f"{key} {value!r} (stored: {stored[key]!r})")
    return found
