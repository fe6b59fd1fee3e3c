"""A suite laid out as a directory: `suite.py`, `tasks/*.yaml`, `goldens/*.yaml`, fixtures."""

from __future__ import annotations

import traceback
import types
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TypeVar

import pydantic

from aeh._util.problems import display_path, pydantic_problems, read_yaml, salvage_task
from aeh._util.pyfile import ImportTimedOut, import_file, import_time_limit
from aeh.errors import Problem
from aeh.grading.invariants import registered_invariants
from aeh.models import GoldenTrace, Task
from aeh.suite._class_suite import ClassSuite, suite_classes
from aeh.suite.contract import Invariant
from aeh.tools import ToolRegistry

__all__ = ['DirectorySuite']

T = TypeVar("T")


class DirectorySuite:
    """A suite on disk: `suite.py`, `tasks/*.yaml`, optional `goldens/*.yaml`, fixtures.

    Parsing never stops at the first bad file: every problem is kept in `load_problems()` and
    reported by `validate_suite` together with the cross-reference checks.
    """

    def __init__(self, root: str | Path, name: str | None = None) -> None:
        self.root = Path(root).resolve()
        self._problems: list[Problem] = []
        self._sources: list[tuple[str, Task]] = []
        # Tasks that failed the schema, minus the offending keys: never run, but still
        # cross-checked, so one pass reports a typo in `budget` AND an unknown tool.
        self._partial: list[tuple[str, Task]] = []
        self._goldens: dict[str, GoldenTrace] = {}
        self._module = self._import_module()
        #: set when suite.py defines the suite as a class (the specification's contract): that is the suite
        self.class_suite = self._class_suite()
        self.name: str = name or (self.class_suite.name if self.class_suite is not None else "")
        if self.class_suite is not None:
            return
        self.name = name or getattr(self._module, "name", None) or self.root.name
        self._tools = self._module_attr("tools", ToolRegistry, ToolRegistry(), "a ToolRegistry")
        self._own_invariants: dict[str, Invariant] = self._module_attr(
            "invariants", dict, {}, "a dict of name -> invariant function"
        )
        self._secrets: list[str] = self._module_attr("secrets", list, [], "a list of strings")
        self._check_module()
        self._parse_tasks()
        self._parse_goldens()

    # The EvalSuite contract.
    def tasks(self) -> list[Task]:
        return [task for _, task in self._sources]

    def tool_registry(self) -> ToolRegistry:
        return self._tools

    def invariants(self) -> dict[str, Invariant]:
        """Registered reusable invariants (built-in and installed) merged with the suite's own."""
        return {**registered_invariants(), **self._own_invariants}

    def golden_traces(self) -> dict[str, GoldenTrace]:
        return dict(self._goldens)

    def secrets(self) -> list[str]:
        return list(self._secrets)

    def lifespan(self) -> AbstractAsyncContextManager[dict[str, Any]] | None:
        """The suite's resources for a run (a fixture server …), or None when it needs none."""
        factory = getattr(self._module, "lifespan", None)
        return factory() if callable(factory) else None

    # What validate_suite reads besides the contract.
    def load_problems(self) -> list[Problem]:
        return list(self._problems)

    def task_sources(self) -> list[tuple[str, Task]]:
        """(file, task) pairs, so problems name the YAML file a task came from."""
        return list(self._sources)

    def partial_sources(self) -> list[tuple[str, Task]]:
        """Invalid tasks with their bad keys dropped, for cross-reference checks only."""
        return list(self._partial)

    def __repr__(self) -> str:
        return f"DirectorySuite({self.name!r}, root={str(self.root)!r})"

    # Parsing.
    def _import_module(self) -> types.ModuleType | None:
        path = self.root / "suite.py"
        where = display_path(path)
        if not path.is_file():
            self._problems.append(Problem(where, "(file)", "suite.py is missing",
                                          "create suite.py defining `tools = ToolRegistry()`"))
            return None
        limit = import_time_limit()
        try:
            return import_file(path, "aeh_suite", time_limit=limit)
        except ImportTimedOut:
            self._problems.append(Problem(where, "(import)", f"importing suite.py did not finish within {limit:g} s "
                                          "(a loop or a blocking call at import time?)",
                                          "do the slow work in lifespan() or in the tools, not at import; "
                                          "AEH_SUITE_IMPORT_TIMEOUT=SECONDS raises the limit"))
            return None
        except SystemExit as exc:  # would end the process with the suite silently "loaded"
            self._problems.append(Problem(where, "(import)", f"importing suite.py called sys.exit({exc.code!r})",
                                          "remove the sys.exit call; suite.py is imported, not run"))
            return None
        except RecursionError as exc:
            self._problems.append(Problem(where, "(import)", f"importing suite.py recursed too deeply: {exc}",
                                          "fix the recursion in suite.py"))
            return None
        except Exception as exc:  # noqa: BLE001 — any import failure is a load problem
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
            field = f"line {frames[-1].lineno}" if frames else "(import)"
            self._problems.append(Problem(where, field, f"importing suite.py failed: "
                                          f"{type(exc).__name__}: {exc}", "fix the error in suite.py"))
            return None

    def _class_suite(self) -> ClassSuite | None:
        classes = suite_classes(self._module) if self._module is not None else []
        if len(classes) != 1:
            if classes:
                self._problems.append(Problem(display_path(self.root / "suite.py"), "(classes)",
                                              f"defines {len(classes)} suite classes "
                                              f"({', '.join(c.__name__ for c in classes)})",
                                              "keep one suite class in suite.py, or install each as an "
                                              "aeh.suites entry point"))
            return None
        suite = ClassSuite(self.root, classes[0])
        if any((self.root / "tasks").glob("*.y*ml")):
            suite.add_problem(Problem(display_path(self.root / "tasks"), "(dir)",
                                      f"{classes[0].__name__} in suite.py defines the tasks; tasks/*.yaml would "
                                      "be ignored", "move those tasks into tasks(), or remove the class and keep "
                                      "suite.py's `tools` with tasks/*.yaml"))
        return suite

    def _module_attr(self, attr: str, kind: type[T], default: T, what: str) -> T:
        """suite.py's `attr` if it has the right type; otherwise a problem and the default."""
        where = display_path(self.root / "suite.py")
        if self._module is None:
            return default
        if not hasattr(self._module, attr):
            if attr == "tools":  # the only required attribute
                self._problems.append(Problem(where, "tools", "suite.py defines no `tools`",
                                              "add `tools = ToolRegistry()` and register tools on it"))
            return default
        value = getattr(self._module, attr)
        if not isinstance(value, kind):
            self._problems.append(Problem(where, attr, f"`{attr}` must be {what}, "
                                          f"not {type(value).__name__}", None))
            return default
        return value

    def _check_module(self) -> None:
        where = display_path(self.root / "suite.py")
        for name, fn in self._own_invariants.items():
            if not callable(fn):
                self._problems.append(Problem(where, f"invariants[{name!r}]", "is not callable",
                                              "map each name to a function (TraceView) -> bool"))
            if name in registered_invariants():
                self._problems.append(Problem(where, f"invariants[{name!r}]",
                                              "shadows a shipped invariant of the same name",
                                              "rename it, so the shipped rule is not silently replaced"))
        if not all(isinstance(s, str) and s for s in self._secrets):
            self._problems.append(Problem(where, "secrets", "every secret must be a non-empty string", None))
        lifespan = getattr(self._module, "lifespan", None)
        if lifespan is not None and not callable(lifespan):
            self._problems.append(Problem(where, "lifespan", "must be a zero-argument callable "
                                          "returning an async context manager", None))

    def _yaml_files(self, folder: str) -> Iterator[tuple[str, Path, dict[str, Any]]]:
        """(display path, path, mapping) per parseable YAML file; the rest become problems."""
        base = self.root / folder
        for path in sorted([*base.glob("*.yaml"), *base.glob("*.yml")]):
            data, problems = read_yaml(path)
            self._problems += problems
            if data is not None:
                yield display_path(path), path, data

    def _parse_tasks(self) -> None:
        for where, _, data in self._yaml_files("tasks"):
            try:
                self._sources.append((where, Task.model_validate(data)))
            except pydantic.ValidationError as exc:
                self._problems += pydantic_problems(where, exc, Task)
                if (partial := salvage_task(data, exc)) is not None:
                    self._partial.append((where, partial))
        if not any(p.suffix in (".yaml", ".yml") for p in (self.root / "tasks").glob("*")):
            self._problems.append(Problem(display_path(self.root / "tasks"), "(dir)",
                                          "the suite has no tasks (no tasks/*.yaml)",
                                          "add one YAML file per task under tasks/"))

    def _parse_goldens(self) -> None:
        for where, path, data in self._yaml_files("goldens"):
            try:
                self._goldens[path.stem] = GoldenTrace.model_validate(data)
            except pydantic.ValidationError as exc:
                self._problems += pydantic_problems(where, exc, GoldenTrace)


# --- validation -----------------------------------------------------------------------------
