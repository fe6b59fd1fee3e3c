"""A run's plan of (task, attempt) pairs and its deterministic split into shards.

Every machine that runs a shard computes the same plan from the same tasks and attempts, so
shard `i/n` (1-based, like a CI matrix index) is the same set of pairs everywhere, and `aeh merge`
can tell which shard a missing pair belongs to.
"""

from __future__ import annotations

import hashlib
import json
import re

from aeh.errors import ConfigError

__all__ = ["outside_shard", "parse_shard", "plan_pairs", "plan_run_id", "shard_number"]

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """`"2/4"` → (2, 4); shards are numbered 1..n. ConfigError for anything else."""
    match = _SHARD.match(str(text))
    index, count = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    if not match or count < 1 or not 1 <= index <= count:
        raise ConfigError(f"shard {text!r} is not I/N with 1 <= I <= N — e.g. --shard 1/2 and --shard 2/2 "
                          "(shards are numbered from 1)")
    return index, count


def plan_pairs(tasks: list[str], attempts: int) -> list[tuple[str, int]]:
    """Every (task, attempt) pair of a run, in a fixed order that does not depend on task order."""
    return [(task, i) for i in range(attempts) for task in sorted(tasks)]


def shard_number(position: int, count: int) -> int:
    """The 1-based shard of the pair at `position` in `plan_pairs` (round-robin keeps shards even)."""
    return position % count + 1


def outside_shard(tasks: list[str], attempts: int, shard: str) -> set[tuple[str, int]]:
    """The pairs of the plan that shard `shard` ("i/n") does not run."""
    index, count = parse_shard(shard)
    return {pair for k, pair in enumerate(plan_pairs(tasks, attempts)) if shard_number(k, count) != index}


def plan_run_id(suite: str, suite_hash: str, seed: int, attempts: int, tasks: list[str], adapter: str,
                model: str | None) -> str:
    """One run id for every shard of a plan: the same suite, seed, attempts, tasks and agent."""
    plan = json.dumps([suite_hash, seed, attempts, sorted(tasks), adapter, model])
    digest = hashlib.sha256(plan.encode()).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", suite)[:40]
    return f"{name}-s{seed}-{digest}"
