"""Preflight: before a run starts, every part it needs says whether it can work here.

A grader kind declares a check with `@preflight_check("kind")`: a function of the tasks that use
that kind, returning `Problem`s (empty when all is well). A suite may declare its own with a
`preflight()` method returning `Problem`s. `preflight_problems(suite)` runs both; `aeh run` refuses
to start on any (`PreflightError`, exit 2) and `aeh tasks validate` prints them instead of a
contract table where nothing could run.

The built-in check: `hidden_tests` runs the fixtures' tests with pytest under the grading
interpreter, so pytest must import there — otherwise every attempt, the reference solver's too,
would "fail" 0/0 tests and be charged to the agent as a wrong answer.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from aeh.errors import AehError, Problem
from aeh.models import Task

__all__ = ["PreflightError", "confinement_problems", "grading_interpreter", "install_command", "module_importable",
           "preflight_check", "preflight_problems", "require_confinement", "require_preflight"]

Check = Callable[[list[Task]], list[Problem]]
_CHECKS: dict[str, Check] = {}
_PROBE_TIMEOUT_S = 60.0


class PreflightError(AehError):
    """A part the run needs cannot work here; nothing was started."""

    def __init__(self, suite: str, problems: list[Problem]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"suite {suite!r} cannot be measured here — nothing was run "
                         f"({len(self.problems)} problem(s)):\n{lines}")


def preflight_check(kind: str) -> Callable[[Check], Check]:
    """Declare `fn(tasks) -> [Problem]` as the preflight of grader kind `kind`."""

    def register(fn: Check) -> Check:
        _CHECKS[kind] = fn
        return fn

    return register


def grading_interpreter() -> str:
    """The Python that runs graded code's tests (this process's interpreter)."""
    return sys.executable


@functools.lru_cache(maxsize=32)
def module_importable(interpreter: str, module: str) -> bool:
    """True when `interpreter -c "import module"` succeeds (asked once per pair and process)."""
    try:
        proc = subprocess.run([interpreter, "-c", f"import {module}"], capture_output=True,
                              timeout=_PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def install_command(interpreter: str, package: str) -> str:
    """The command that installs `package` for `interpreter`: uv beside it when the venv has uv."""
    bin_dir = Path(interpreter).parent
    if (bin_dir / "uv").is_file():
        return f"{bin_dir / 'uv'} pip install -p {bin_dir.parent} {package}"
    return f"{interpreter} -m pip install {package}"


class PreflightSuite(Protocol):
    """What preflight reads of a suite (an `EvalSuite`; an optional `preflight()` is looked up)."""

    def tasks(self) -> list[Task]: ...


def preflight_problems(suite: PreflightSuite) -> list[Problem]:
    """Every problem the suite's grader kinds and the suite's own `preflight()` report."""
    tasks: list[Task] = list(suite.tasks())
    by_kind: dict[str, list[Task]] = {}
    for task in tasks:
        for kind in dict.fromkeys(spec.kind for spec in task.outcome_graders):
            by_kind.setdefault(kind, []).append(task)
    problems: list[Problem] = []
    for kind, users in by_kind.items():
        check = _CHECKS.get(kind)
        if check is not None:
            problems += check(users)
    own = getattr(suite, "preflight", None)
    if callable(own):
        problems += list(own() or [])
    return problems


def confinement_problems(suite: PreflightSuite, resources: dict[str, Any]) -> list[Problem]:
    """Graded code runs jailed: where no jail works, a run of a suite with `hidden_tests` graders
    is refused unless `grading_confinement` was turned off on purpose."""
    if resources.get("grading_confinement", True) is False:
        return []
    if not any(spec.kind == "hidden_tests" for task in suite.tasks() for spec in task.outcome_graders):
        return []
    # heavy: loaded on first use (only a suite with hidden tests probes the jail)
    from aeh.grading._jail import no_jail_reason, probe_jail

    jail = probe_jail()
    if jail.active:
        return []
    what, fix = no_jail_reason("graded code", "--no-grading-confinement", jail)
    return [Problem("grader hidden_tests", "grading confinement", what, fix)]


def require_preflight(suite: PreflightSuite) -> None:
    """Raise `PreflightError` when any preflight problem is found."""
    problems = preflight_problems(suite)
    if problems:
        raise PreflightError(str(getattr(suite, "name", "suite")), problems)


def require_confinement(suite: PreflightSuite, resources: dict[str, Any]) -> None:
    """Raise `PreflightError` when graded code would run without the jail the run asks for."""
    problems = confinement_problems(suite, resources)
    if problems:
        raise PreflightError(str(getattr(suite, "name", "suite")), problems)
