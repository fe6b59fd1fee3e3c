"""Cross-checks of a loaded suite: tools, invariants, graders, goldens, fixtures, ids."""

from __future__ import annotations

from pathlib import Path

import pydantic

from aeh._util.problems import pydantic_problems
from aeh.errors import Problem
from aeh.grading import default_graders
from aeh.models import Task
from aeh.suite.contract import EvalSuite, suite_root
from aeh.tools import ToolRegistry

__all__ = ['validate_suite']


def _task_sources(suite: EvalSuite) -> list[tuple[str, Task]]:
    sources = getattr(suite, "task_sources", None)
    if callable(sources):
        return list(sources())
    return [(f"{suite.name}/{t.id}", t) for t in suite.tasks()]


def _check_tools(file: str, task: Task, registry: ToolRegistry) -> list[Problem]:
    known = ", ".join(registry.names()) or "(none)"
    problems = [
        Problem(file, f"tools[{i}]", f"unknown tool {name!r}", f"registered tools: {known}")
        for i, name in enumerate(task.tools) if name not in registry
    ]
    for i, step in enumerate(task.plan):
        problems += _check_step(file, f"plan[{i}].tool", step.tool, task, registry, "plan step")
    return problems


def _check_step(file: str, field: str, tool: str, task: Task, registry: ToolRegistry,
                what: str) -> list[Problem]:
    if tool not in registry:
        known = ", ".join(registry.names()) or "(none)"
        return [Problem(file, field, f"{what} calls unknown tool {tool!r}", f"registered tools: {known}")]
    if tool not in task.tools:
        return [Problem(file, field, f"{what} calls {tool!r}, which is not in this task's tools: allowlist",
                        f"add {tool!r} to tools: or change the step")]
    return []


def _check_graders(file: str, task: Task) -> list[Problem]:
    problems: list[Problem] = []
    for i, spec in enumerate(task.outcome_graders):
        if spec.kind not in default_graders:
            problems.append(Problem(file, f"graders[{i}].kind", f"unknown grader kind {spec.kind!r}",
                                    f"known kinds: {', '.join(default_graders.kinds())}"))
            continue
        try:
            default_graders.validate(spec)
        except pydantic.ValidationError as exc:
            model = default_graders.config_model(spec.kind)
            problems += pydantic_problems(file, exc, model, prefix=("graders", i))
    return problems


def _check_fixtures(file: str, task: Task, root: Path | None) -> list[Problem]:
    problems: list[Problem] = []
    for i, fixture in enumerate(task.fixtures):
        field = f"fixtures[{i}]"
        if root is None:
            problems.append(Problem(file, field, "the suite has no root directory to copy fixtures from",
                                    "give the suite a `root` attribute"))
            continue
        path = (root / fixture).resolve()
        if not path.is_relative_to(root.resolve()):
            problems.append(Problem(file, field, f"fixture {fixture!r} points outside the suite directory",
                                    "use a path relative to the suite directory"))
        elif not path.exists():
            problems.append(Problem(file, field, f"fixture {fixture!r} does not exist under {root}",
                                    "create it or fix the path"))
    return problems


def _check_refs(file: str, task: Task, suite: EvalSuite) -> list[Problem]:
    """A task's references to invariants and its golden trace."""
    invariants, goldens = suite.invariants(), suite.golden_traces()
    problems = [
        Problem(file, f"invariants[{i}]", f"unknown invariant {name!r}",
                f"known invariants: {', '.join(sorted(invariants)) or '(none)'}")
        for i, name in enumerate(task.invariants) if name not in invariants
    ]
    if task.golden is None:
        return problems
    golden = goldens.get(task.golden)
    if golden is None:
        known = ", ".join(sorted(goldens)) or "none"
        return problems + [Problem(file, "golden", f"golden trace {task.golden!r} not found",
                                   f"add goldens/{task.golden}.yaml (known: {known})")]
    for j, step in enumerate(golden.steps):
        problems += _check_step(file, f"golden.steps[{j}].tool", step.tool, task,
                                suite.tool_registry(), f"golden {task.golden!r} step")
    return problems


def validate_suite(suite: EvalSuite) -> list[Problem]:
    """Every problem with a suite, at once: parse errors plus all cross-references."""
    load_problems = getattr(suite, "load_problems", None)
    problems: list[Problem] = list(load_problems()) if callable(load_problems) else []
    sources = _task_sources(suite)
    if not sources and not problems:
        problems.append(Problem(suite.name, "tasks", "the suite has no tasks", "add at least one task"))
    partial = getattr(suite, "partial_sources", None)
    first_file: dict[str, str] = {}
    for file, task in sources + (list(partial()) if callable(partial) else []):
        if task.id in first_file:
            problems.append(Problem(file, "id", f"duplicate task id {task.id!r}, also used in "
                                    f"{first_file[task.id]}", "give every task a unique id"))
        first_file.setdefault(task.id, file)
        problems += _check_tools(file, task, suite.tool_registry())
        problems += _check_refs(file, task, suite)
        problems += _check_graders(file, task)
        problems += _check_fixtures(file, task, suite_root(suite))
    return problems


# --- loading and hashing --------------------------------------------------------------------
