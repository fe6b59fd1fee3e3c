"""A suite directory whose `suite.py` defines the suite as a class: the specification's contract.

    from aeh.models import Task, Trace
    from aeh.tools.registry import ToolRegistry

    class DemoSuite:
        name = "demo"
        def tasks(self) -> list[Task]: ...
        def tool_registry(self) -> ToolRegistry: ...
        def invariants(self) -> dict: ...          # name -> (trace) -> pass/fail
        def golden_traces(self) -> dict[str, Trace]: ...

`aeh run --suite DIR` on such a directory instantiates the class and runs it; the directory is its
root (fixtures, the suite hash). What each method returns is checked before anything runs, and a
wrong type is a load problem naming `suite.py`, the method and the fix — never a traceback.
"""

from __future__ import annotations

import inspect
import types
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from aeh._util.problems import display_path
from aeh.errors import Problem
from aeh.models import GoldenTrace, Invariant, Task
from aeh.tools import ToolRegistry

__all__ = ["CONTRACT", "ClassSuite", "suite_classes"]

#: the methods that make a class a suite
CONTRACT = ("tasks", "tool_registry", "invariants", "golden_traces")


def suite_classes(module: types.ModuleType) -> list[type]:
    """The classes `module` itself defines (not imports) that have every contract method."""
    return [value for value in vars(module).values()
            if inspect.isclass(value) and value.__module__ == module.__name__
            and all(callable(getattr(value, m, None)) for m in CONTRACT)]


class ClassSuite:
    """The suite a `suite.py` class defines, rooted at its directory, its answers checked once."""

    def __init__(self, root: Path, cls: type) -> None:
        self.root = root
        self._where = display_path(root / "suite.py")
        self._problems: list[Problem] = []
        self._tasks: list[Task] = []
        self._tools = ToolRegistry()
        self._invariants: dict[str, Invariant] = {}
        self._goldens: dict[str, GoldenTrace] = {}
        try:
            self._suite = cls()
        except Exception as exc:  # noqa: BLE001 — a broken suite class is a load problem
            self._suite = None
            self._problem(cls.__name__, f"{cls.__name__}() failed: {type(exc).__name__}: {exc}",
                          "fix the class so it can be created without arguments")
            self.name = root.name
            return
        self.name = str(getattr(self._suite, "name", None) or root.name)
        label = cls.__name__
        self._tasks = self._answer(f"{label}.tasks()", "tasks", list, Task, "a list of Task") or []
        self._tools = self._answer(f"{label}.tool_registry()", "tool_registry", ToolRegistry, None,
                                   "a ToolRegistry") or ToolRegistry()
        self._invariants = self._answer(f"{label}.invariants()", "invariants", dict, None,
                                        "a dict of name -> function (trace) -> pass/fail") or {}
        self._goldens = self._answer(f"{label}.golden_traces()", "golden_traces", dict, GoldenTrace,
                                     "a dict of name -> Trace") or {}
        for name, check in self._invariants.items():
            if not callable(check):
                self._problem(f"{label}.invariants()[{name!r}]", "is not callable",
                              "map each name to a function (TraceView) -> bool")

    def _problem(self, field: str, what: str, fix: str) -> None:
        self._problems.append(Problem(self._where, field, what, fix))

    def add_problem(self, problem: Problem) -> None:
        """A problem of the directory around the class, reported with the class's own."""
        self._problems.append(problem)

    def _answer(self, field: str, method: str, kind: type, item: type | None, what: str) -> Any:
        """What the method returns, when it is `what`; otherwise a problem and None."""
        try:
            value = getattr(self._suite, method)()
        except Exception as exc:  # noqa: BLE001 — a failing method is a load problem
            self._problem(field, f"failed: {type(exc).__name__}: {exc}", f"make {method}() return {what}")
            return None
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        if not isinstance(value, kind) or (item is not None and not all(isinstance(v, item) for v in items)):
            got = "None (an empty body?)" if value is None else type(value).__name__
            self._problem(field, f"returned {got}, not {what}", f"make {method}() return {what}")
            return None
        return value

    # The EvalSuite contract, as the class answered it.
    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def tool_registry(self) -> ToolRegistry:
        return self._tools

    def invariants(self) -> dict[str, Invariant]:
        return dict(self._invariants)

    def golden_traces(self) -> dict[str, GoldenTrace]:
        return dict(self._goldens)

    # The optional extras, when the class has them.
    def secrets(self) -> list[str]:
        secrets = getattr(self._suite, "secrets", None)
        return list(secrets()) if callable(secrets) else []

    def lifespan(self) -> AbstractAsyncContextManager[dict[str, Any]] | None:
        factory = getattr(self._suite, "lifespan", None)
        return factory() if callable(factory) else None

    def load_problems(self) -> list[Problem]:
        return list(self._problems)

    def task_sources(self) -> list[tuple[str, Task]]:
        return [(f"{self._where}:{task.id}", task) for task in self._tasks]

    def __repr__(self) -> str:
        return f"ClassSuite({self.name!r}, root={str(self.root)!r})"
