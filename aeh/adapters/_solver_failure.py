"""Whose failure is a solver process's failure: the task's, or the environment's?

A solver that could not run (command not found, not executable), that stopped on a missing
credential, or that exited non-zero without touching its workspace (a traceback at start-up, a
bad flag) says nothing about the task: the attempt is a harness error carrying the exit status
and the stderr tail, never a wrong answer. A solver that changed its workspace and then failed is
graded: what it left is its answer.

The cause (the first line of the error) is the same on every attempt that failed the same way, so
the run summary can say "solver exited 2 … (24 attempts)" and a run where it happened on every
attempt is not a valid measurement (exit 3).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from aeh.grading import tree_digests

__all__ = ["STDERR_TAIL_CHARS", "environment_failure", "workspace_fingerprint"]

STDERR_TAIL_CHARS = 600
#: Files a process writes as a side effect of running Python or pytest: not an answer.
_NOISE = ("__pycache__", ".pytest_cache")
_SHELL = {126: "not executable", 127: "command not found"}
_KEY_NAME = re.compile(r"\b([A-Z][A-Z0-9_]*(?:API_KEY|_TOKEN|_SECRET|_KEY))\b")
_UNSET = re.compile(r"not set|must be set|is missing|missing|required|not found|undefined|is empty|unset|KeyError",
                    re.IGNORECASE)
_TRACEBACK = "Traceback (most recent call last):"


def workspace_fingerprint(root: Path) -> str:
    """A hash of everything under `root` as `tree_digests` sees it (files by their bytes, links
    and special files by kind, never followed or opened), bytecode caches left out."""
    h = hashlib.sha256()
    for rel, digest in tree_digests(root).items():
        if rel.endswith(".pyc") or any(part in _NOISE for part in Path(rel).parts):
            continue
        h.update(f"{rel}\0{digest}\0".encode())
    return h.hexdigest()


def _missing_key(stderr: str) -> str | None:
    for line in stderr.splitlines():
        found = _KEY_NAME.search(line)
        if found and _UNSET.search(line):
            return found.group(1)
    return None


def _last_line(stderr: str, workspace: Path | None) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "no output on stderr"
    line = lines[-1]
    if _TRACEBACK in stderr:  # the exception line of the last traceback
        after = stderr.rsplit(_TRACEBACK, 1)[1]
        unindented = [x.strip() for x in after.splitlines() if x.strip() and not x.startswith((" ", "\t"))]
        line = unindented[-1] if unindented else line
    if workspace is not None:  # each attempt has its own workspace: one cause for them all
        line = line.replace(str(workspace), "<workspace>")
    return line[:200]


def environment_failure(result: dict[str, Any], *, changed: bool, workspace: Path | None = None) -> str | None:
    """The error for a solver process that failed for reasons outside the task, else None.

    `result` is the process's record (`exit_code`, `timed_out`, `stderr`); `changed` says whether
    the workspace differs from how it was prepared. The first line is the cause; the stderr tail
    follows it.
    """
    code = result.get("exit_code")
    if result.get("timed_out") or code is None:
        return None
    stderr = str(result.get("stderr") or "")
    key = _missing_key(stderr)
    if code == 0:  # a solver that swallowed its missing key and did nothing still never ran
        if key is None or changed:
            return None
        cause = f"solver exited 0 without changing the workspace: {key} is not set"
    elif code in _SHELL:
        cause = f"solver exited {code} ({_SHELL[code]}): {_last_line(stderr, workspace)}"
    elif key is not None:
        cause = f"solver exited {code}: {key} is not set"
    elif not changed:
        cause = f"solver exited {code} without changing the workspace: {_last_line(stderr, workspace)}"
    else:
        return None
    tail = stderr[-STDERR_TAIL_CHARS:].strip()
    return f"{cause}\nstderr tail:\n{tail}" if tail else cause
