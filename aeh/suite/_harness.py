"""An agent-eval-harness suite file (`suites/default.yaml`: a list of tasks), read as it is.

Each task of that format becomes an aeh `Task`:

| agent-eval-harness | aeh |
| --- | --- |
| `task_id`, `description`, `category` | `id`, `description` (also the prompt, with `input`), `category` |
| `input` | `metadata.input`, and the prompt's second half |
| `expected_tools`, `forbidden_tools`, `optimal_steps` | the same fields (the trajectory dimensions) |
| `budget.max_tokens`, `.max_cost_usd`, `.max_seconds` | `budget.max_tokens`, `.max_cost_usd`, `.timeout_s` |
| `success_assertions:` every kind that format has (`terminal_state`, `artifact_exists`, …) | graders of those kinds |
| no `success_assertions` | one `terminal_state` grader passing on ANY acceptable terminal state |
| `acceptable_terminal_states` | `acceptable_terminal_states` (completed → answered, escalated → declined, …) |
| `weight` | `weight` (the weighted overall score) |
| `budget` as written | also `metadata.declared_budget` (the `trajectory-harness` scoring profile's caps) |

That format offers every tool; aeh offers a task only its `tools`, so a task's allowlist is its
expected and forbidden tools, each registered as a recorded-only tool (a recording is graded;
a live agent calling one gets an error).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pydantic
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from aeh._util.problems import display_path, pydantic_problems
from aeh._util.yaml import load_yaml, read_text_limited
from aeh.errors import Problem
from aeh.grading.invariants import registered_invariants
from aeh.models import GoldenTrace, Invariant, Task
from aeh.tools import ToolRegistry
from aeh.trajectory.harness import TERMINAL_STATUS

__all__ = ["HarnessSuite", "is_harness_suite_file"]

TerminalState = Literal["completed", "failed", "escalated", "timeout", "budget_exceeded"]

_COMPLETED: list[TerminalState] = ["completed"]

#: A step cap for a format that has none: high enough that no recording is cut by it.
_NO_STEP_CAP = 10_000


class _Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_tokens: int | None = Field(None, ge=1)
    max_cost_usd: float | None = Field(None, gt=0)
    max_seconds: float | None = Field(None, gt=0, le=86_400)


#: assertion key → (grader kind, the grader option its value goes to)
ASSERTION_KINDS: dict[str, tuple[str, str]] = {
    "terminal_state": ("terminal_state", "expected"), "artifact_exists": ("artifact_exists", "path"),
    "metric_present": ("metric_present", "metric"), "output_contains": ("output_contains", "text"),
    "tool_called": ("tool_called", "tool"), "tool_not_called": ("tool_not_called", "tool"),
}


class _Assertion(BaseModel):
    """One `success_assertions` entry: exactly one of that format's six checks."""

    model_config = ConfigDict(extra="forbid")

    terminal_state: TerminalState | None = None
    artifact_exists: str | None = None
    metric_present: str | None = None
    output_contains: str | None = None
    tool_called: str | None = None
    tool_not_called: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> _Assertion:
        if len(self._set()) != 1:
            raise ValueError(f"an assertion sets exactly one of {', '.join(ASSERTION_KINDS)}")
        return self

    def _set(self) -> list[str]:
        return [k for k in ASSERTION_KINDS if getattr(self, k) is not None]

    def grader(self) -> dict[str, Any]:
        key = self._set()[0]
        kind, option = ASSERTION_KINDS[key]
        return {"kind": kind, option: getattr(self, key)}


class HarnessTask(BaseModel):
    """One task as agent-eval-harness writes it."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1)
    description: str = ""
    category: str = "happy_path"
    input: dict[str, Any] = Field(default_factory=dict)
    expected_tools: list[str] = Field(default_factory=list)
    forbidden_tools: list[str] = Field(default_factory=list)
    optimal_steps: int = Field(10, ge=1)
    budget: _Budget = Field(default_factory=_Budget)
    success_assertions: list[_Assertion] = Field(default_factory=list)
    acceptable_terminal_states: list[TerminalState] = Field(default_factory=lambda: _COMPLETED.copy())
    weight: float = Field(1.0, gt=0)
    goal: str = ""

    def to_task(self) -> dict[str, Any]:
        """The aeh task document."""
        prompt = self.goal or self.description or self.task_id
        if self.input:
            prompt += "\n\nInput: " + json.dumps(self.input, sort_keys=True)
        graders = [a.grader() for a in self.success_assertions]
        if not graders:  # aeh needs a grader; that format then judges by the terminal state alone: any acceptable one
            graders = [{"kind": "terminal_state", "expected": list(self.acceptable_terminal_states)}]
        budget: dict[str, Any] = {"max_steps": _NO_STEP_CAP, "max_tokens": self.budget.max_tokens,
                                  "max_cost_usd": self.budget.max_cost_usd}
        if self.budget.max_seconds is not None:
            budget["timeout_s"] = self.budget.max_seconds
        accepted = list(dict.fromkeys(TERMINAL_STATUS[s] for s in self.acceptable_terminal_states))
        return {"id": self.task_id, "prompt": prompt, "description": self.description or None,
                "category": self.category, "tools": sorted({*self.expected_tools, *self.forbidden_tools}),
                "budget": budget, "graders": graders, "expected_tools": self.expected_tools,
                "forbidden_tools": self.forbidden_tools, "optimal_steps": self.optimal_steps,
                "acceptable_terminal_states": None if accepted == ["answered"] else accepted,
                "weight": self.weight, "metadata": {"input": self.input, "source_format": "agent-eval-harness",
                                                    "terminal_states": self.acceptable_terminal_states,
                                                    "declared_budget": self.budget.model_dump(exclude_none=True)}}


def _tasks_of(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("tasks"), list):
        return list(data["tasks"])
    return None


def is_harness_suite_file(path: Path) -> bool:
    """True for a YAML file (not a directory) whose tasks carry `task_id`: that format's suite."""
    if not path.is_file() or path.suffix not in (".yaml", ".yml"):
        return False
    try:
        tasks = _tasks_of(load_yaml(read_text_limited(path)))
    except (yaml.YAMLError, OSError, UnicodeDecodeError):
        return True  # its problems are reported when it is loaded
    return tasks is not None and bool(tasks) and isinstance(tasks[0], dict) and "task_id" in tasks[0]


def _recorded_only(name: str) -> Any:
    def tool(**_: Any) -> Any:
        raise RuntimeError(f"{name!r} comes from an agent-eval-harness suite, which declares no tool "
                           "implementations: grade recordings of it (aeh import trajectory)")

    return tool


class HarnessSuite:
    """An agent-eval-harness suite YAML file as an aeh suite; see the module docstring."""

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        self.path = Path(path).resolve()
        self.root = self.path.parent
        self._problems: list[Problem] = []
        self._sources: list[tuple[str, Task]] = []
        where = display_path(self.path)
        data: Any = None
        try:
            data = load_yaml(read_text_limited(self.path))
        except yaml.YAMLError as exc:
            self._problems.append(Problem(where, "(yaml)", f"YAML syntax error: {exc}", "fix the YAML syntax"))
        except (OSError, UnicodeDecodeError) as exc:
            self._problems.append(Problem(where, "(file)", f"cannot read the suite: {exc}", "pass a YAML text file"))
        named = data.get("name") if isinstance(data, dict) else None
        self.name: str = name or (str(named) if named else self.path.stem)
        self._tools = ToolRegistry()
        for i, raw in enumerate(_tasks_of(data) or []):
            self._parse(f"{where}[{i}]", raw)
        if data is not None and _tasks_of(data) is None:
            self._problems.append(Problem(where, "(file)", "expected a list of tasks (or `tasks:` under a name)",
                                          "write the suite as agent-eval-harness does: `- task_id: …` per task"))

    def _parse(self, where: str, raw: Any) -> None:
        try:
            source = HarnessTask.model_validate(raw)
        except pydantic.ValidationError as exc:
            self._problems += pydantic_problems(where, exc, HarnessTask)
            return
        try:
            task = Task.model_validate(source.to_task())
        except pydantic.ValidationError as exc:
            self._problems += pydantic_problems(where, exc, Task)
            return
        for tool in task.tools:
            if tool not in self._tools:
                self._tools.register(tool, _recorded_only(tool), description=f"{tool} (recorded only)")
        self._sources.append((where, task))

    # The EvalSuite contract.
    def tasks(self) -> list[Task]:
        return [task for _, task in self._sources]

    def tool_registry(self) -> ToolRegistry:
        return self._tools

    def invariants(self) -> dict[str, Invariant]:
        return registered_invariants()

    def golden_traces(self) -> dict[str, GoldenTrace]:
        return {}

    def load_problems(self) -> list[Problem]:
        return list(self._problems)

    def task_sources(self) -> list[tuple[str, Task]]:
        return list(self._sources)

    def __repr__(self) -> str:
        return f"HarnessSuite({self.name!r}, path={str(self.path)!r})"
