"""How a coding run names its hidden sets: one SHA-256 per fixture (its `tests_hidden/`, the hash a
run card carries), and a digest over all of them for a run of several fixtures, named apart."""

from __future__ import annotations

from typing import Any

__all__ = ["hidden_set_lines"]

#: More fixtures than this: the per-fixture hashes are left to the run cards.
_LISTED = 8


def hidden_set_lines(facts: dict[str, Any]) -> list[str]:
    """The lines a coding run prints about the hidden sets that graded it (from the suite's facts,
    `RunConfig.facts`)."""
    per_task: dict[str, str] = dict(facts.get("hidden_sha256_per_task") or {})
    if not per_task:
        return [f"hidden sets sha256 (digest of the run's fixtures): {facts['hidden_sha256']}"] \
            if facts.get("hidden_sha256") else []
    if len(per_task) == 1:
        (task, digest), = per_task.items()
        return [f"hidden set sha256 ({task}/tests_hidden): {digest}"]
    lines = [f"hidden set sha256 ({task}/tests_hidden): {digest}"
             for task, digest in sorted(per_task.items())[:_LISTED]]
    if len(per_task) > _LISTED:
        lines.append(f"  … {len(per_task) - _LISTED} more: each attempt's run card names its fixture's")
    lines.append(f"hidden sets digest (sha256 over the {len(per_task)} fixtures' hashes, not a hidden set's): "
                 f"{facts.get('hidden_sha256')}")
    return lines
