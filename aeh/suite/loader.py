"""Suite loading and validation: directories, installed entry points, or ready objects.

Every problem is collected at once and reported as `file:field: what is wrong — fix`; a suite
that does not validate never runs, because a silently skipped task corrupts the measurement.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import sys
import traceback
import types
import typing
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pydantic
import yaml
from pydantic import BaseModel

from aeh.errors import Problem, SuiteLoadError
from aeh.grading.invariants import SHIPPED_INVARIANTS
from aeh.grading.registry import default_graders
from aeh.models import GoldenTrace, Task
from aeh.suite.contract import EvalSuite, Invariant, suite_root
from aeh.tools.registry import ToolRegistry

__all__ = ["DirectorySuite", "load_suite", "suite_hash", "validate_suite"]

ENTRY_POINT_GROUP = "aeh.suites"


# --- turning YAML and pydantic errors into Problems ----------------------------------------


def display_path(path: Path) -> str:
    """Relative to the working directory when possible, so `file:field` is clickable."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_yaml(path: Path) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Parse one YAML mapping; on failure return the problems (with the line) instead."""
    where = display_path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        field = f"line {mark.line + 1}" if mark is not None else "(yaml)"
        what = getattr(exc, "problem", None) or str(exc)
        col = f" (column {mark.column + 1})" if mark is not None else ""
        return None, [Problem(where, field, f"YAML syntax error: {what}{col}", "fix the YAML syntax")]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(where, "(file)", f"cannot read the file: {exc}", None)]
    if not isinstance(data, dict):
        got = "nothing (empty file)" if data is None else type(data).__name__
        return None, [Problem(where, "(file)", f"expected a YAML mapping, got {got}",
                              "write one task as a mapping of key: value")]
    return data, []


def _field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _submodel(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation like `Budget`, `list[PlanStep]`, `X | None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (list, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            if found := _submodel(arg):
                return found
    return None


def _allowed_keys(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """The keys the model accepts at `loc` (the parent of the offending key)."""
    for part in loc:
        if model is None:
            return []
        if isinstance(part, int):
            continue
        field = next(
            (f for n, f in model.model_fields.items() if part in (n, f.alias)), None
        )
        model = _submodel(field.annotation) if field is not None else None
    if model is None:
        return []
    return sorted(f.alias or n for n, f in model.model_fields.items())


def pydantic_problems(
    file: str,
    exc: pydantic.ValidationError,
    model: type[BaseModel] | None = None,
    prefix: tuple[str | int, ...] = (),
) -> list[Problem]:
    """One Problem per pydantic error, with field paths like `budget.max_stepz`.

    `prefix` places a nested model's errors, e.g. ("graders", 1) for a grader's options.
    """
    problems = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        field = _field_path(prefix + loc)
        if err["type"] == "extra_forbidden":
            key = str(loc[-1])
            allowed = _allowed_keys(model, loc[:-1])
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            fix = f"{hint}allowed keys: {', '.join(allowed)}" if allowed else "remove it"
            problems.append(Problem(file, field, f"unknown key {key!r}", fix))
        elif err["type"] == "missing":
            problems.append(Problem(file, field, "missing required field", f"add `{loc[-1]}:`"))
        else:
            # A whole-model error's message is its own fix; echoing the input would dump it all.
            got = f"got {err.get('input')!r}"[:200] if loc else None
            problems.append(Problem(file, field, err["msg"].removeprefix("Value error, "), got))
    return problems


# --- directory suites ----------------------------------------------------------------------


def _salvage(data: dict[str, Any], exc: pydantic.ValidationError) -> Task | None:
    """The task without the top-level keys that failed, if that much validates."""
    bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]}
    if not bad:  # a whole-task error (e.g. both grader keys): nothing to trim
        return None
    try:
        return Task.model_validate({k: v for k, v in data.items() if k not in bad})
    except pydantic.ValidationError:
        return None


def _import_by_path(path: Path) -> types.ModuleType:
    # A name unique per path, so two suites' suite.py never collide in sys.modules.
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    name = f"aeh_suite_{path.parent.name}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic and dataclasses look the module up while executing
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


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
        self.name: str = name or getattr(self._module, "name", None) or self.root.name
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
        """Shipped reusable invariants merged with the suite's own."""
        return {**SHIPPED_INVARIANTS, **self._own_invariants}

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
        try:
            return _import_by_path(path)
        except Exception as exc:  # noqa: BLE001 — any import failure is a load problem
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
            field = f"line {frames[-1].lineno}" if frames else "(import)"
            self._problems.append(Problem(where, field, f"importing suite.py failed: "
                                          f"{type(exc).__name__}: {exc}", "fix the error in suite.py"))
            return None

    def _module_attr(self, attr: str, kind: type, default: Any, what: str) -> Any:
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
            if name in SHIPPED_INVARIANTS:
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
                if (partial := _salvage(data, exc)) is not None:
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


def _from_entry_point(name: str) -> EvalSuite:
    eps = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if name not in eps:
        known = ", ".join(sorted(eps)) or "(none installed)"
        raise SuiteLoadError([Problem(name, "suite", f"no suite named {name!r} is installed",
                                      f"installed suites: {known}; or pass the path of a suite directory")],
                             suite=name)
    try:
        target = eps[name].load()
        # A class also "looks like" an EvalSuite (it has the attributes), so call classes too.
        if isinstance(target, type) or not isinstance(target, EvalSuite):
            target = target()
    except SuiteLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 — a broken plugin is a load problem, not a crash
        raise SuiteLoadError([Problem(name, "entry point", f"{eps[name].value} failed to load: "
                                      f"{type(exc).__name__}: {exc}", "fix or reinstall the plugin")],
                             suite=name) from exc
    if not isinstance(target, EvalSuite):
        raise SuiteLoadError([Problem(name, "entry point", f"{eps[name].value} did not give an EvalSuite "
                                      f"(got {type(target).__name__})",
                                      "return an object with name, tasks(), tool_registry(), "
                                      "invariants(), golden_traces()")], suite=name)
    return target


def load_suite(spec: str | Path | EvalSuite) -> EvalSuite:
    """A validated suite from an object, a directory path, or an installed `aeh.suites` name."""
    if not isinstance(spec, str | Path):
        suite = spec
    elif Path(spec).expanduser().is_dir():
        suite = DirectorySuite(Path(spec).expanduser())
    elif isinstance(spec, Path) or any(c in spec for c in "/\\") or spec.startswith((".", "~")):
        raise SuiteLoadError([Problem(str(spec), "suite", "no such suite directory",
                                      "pass a directory holding suite.py and tasks/, or an installed suite name")],
                             suite=str(spec))
    else:
        suite = _from_entry_point(spec)
    problems = validate_suite(suite)
    if problems:
        raise SuiteLoadError(problems, suite=suite.name)
    return suite


def _hash_fixture(h: Any, root: Path, fixture: str) -> None:
    path = root / fixture
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        if f.is_file():
            h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")


def suite_hash(suite: EvalSuite) -> str:
    """A short sha256 that changes when anything that shapes the measurement changes.

    Covers task definitions, goldens, tool and invariant names, fixture bytes and, for directory
    suites, suite.py itself (tool code changes what is measured).
    """
    h = hashlib.sha256()
    for task in sorted(suite.tasks(), key=lambda t: t.id):
        h.update(task.model_dump_json().encode() + b"\n")
    for name, golden in sorted(suite.golden_traces().items()):
        h.update(f"golden:{name}:".encode() + golden.model_dump_json().encode() + b"\n")
    h.update(("tools:" + ",".join(suite.tool_registry().names()) + "\n").encode())
    h.update(("invariants:" + ",".join(sorted(suite.invariants())) + "\n").encode())
    root = suite_root(suite)
    if root is not None:
        for fixture in sorted({f for t in suite.tasks() for f in t.fixtures}):
            _hash_fixture(h, root, fixture)
        if (root / "suite.py").is_file():
            h.update(b"suite.py\0" + (root / "suite.py").read_bytes())
    return h.hexdigest()[:16]
