"""Suite loading: directories, installed `aeh.suites` entry points, or ready objects.

Every problem is collected at once and reported as `file:field: what is wrong — fix`; a suite
that does not validate never runs, because a silently skipped task corrupts the measurement.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aeh._util.problems import display_path, pydantic_problems, read_yaml
from aeh._util.registry import Registry, RegistryError
from aeh.errors import Problem, SuiteLoadError
from aeh.models import TRAJECTORY_FIELDS
from aeh.suite import builtin
from aeh.suite._coding import CodingSuite, is_coding_suite_dir
from aeh.suite._directory import DirectorySuite
from aeh.suite._harness import HarnessSuite, is_harness_suite_file
from aeh.suite._task_json import TaskJsonSuite, is_task_json_path
from aeh.suite._validate import validate_suite
from aeh.suite.contract import EvalSuite, suite_root

__all__ = ["DirectorySuite", "display_path", "load_suite", "pydantic_problems", "read_yaml", "suite_hash",
           "suites", "validate_suite"]

ENTRY_POINT_GROUP = "aeh.suites"

#: What a suite entry names: a factory returning the suite (a class counts), or the suite itself.
SuiteSource = Callable[[], EvalSuite] | EvalSuite

#: Name → suite factory (or suite object): the built-ins' table, then the `aeh.suites` group.
suites: Registry[SuiteSource] = Registry(
    "suite", group=ENTRY_POINT_GROUP,
    builtins={name: f"aeh.suite.builtin:{name}" for name in builtin.BUILTIN_SUITES})


def _from_registry(name: str) -> EvalSuite:
    try:
        known = name in suites
    except RegistryError as exc:  # a broken plugin is a load problem, not a crash
        raise SuiteLoadError([Problem(name, "entry point", str(exc), "fix or reinstall the plugin")],
                             suite=name) from exc
    if not known:
        installed = ", ".join(suites.names()) or "(none installed)"
        raise SuiteLoadError([Problem(name, "suite", f"no suite named {name!r} is installed",
                                      f"installed suites: {installed}; or pass the path of a suite directory")],
                             suite=name)
    source = suites.describe()[name]
    try:
        target = suites.get(name)
        # A class also "looks like" an EvalSuite (it has the attributes), so call classes too.
        if isinstance(target, type) or not isinstance(target, EvalSuite):
            target = target()
    except SuiteLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 — a broken plugin is a load problem, not a crash
        raise SuiteLoadError([Problem(name, "entry point", f"{source} failed to load: "
                                      f"{type(exc).__name__}: {exc}", "fix or reinstall the plugin")],
                             suite=name) from exc
    if not isinstance(target, EvalSuite):
        raise SuiteLoadError([Problem(name, "entry point", f"{source} did not give an EvalSuite "
                                      f"(got {type(target).__name__})",
                                      "return an object with name, tasks(), tool_registry(), "
                                      "invariants(), golden_traces()")], suite=name)
    return target


def _not_a_suite(path: Path) -> str:
    if not path.is_file():
        return "no such suite directory"
    if path.suffix in (".json", ".jsonl"):
        return ("is a file, not a suite (a trajectory file? give it as `aeh import trajectory FILE --suite S`, "
                "the suite after --suite)")
    return "is a file, not a suite directory (nor an agent-eval-harness suite YAML: no `- task_id:` tasks)"


def _directory(path: Path) -> EvalSuite:
    """suite.py with tasks/, or suite.py defining the suite as a class."""
    suite = DirectorySuite(path)
    return suite.class_suite or suite


def load_suite(spec: str | Path | EvalSuite) -> EvalSuite:
    """A validated suite from an object, a directory path, or an installed `aeh.suites` name."""
    if not isinstance(spec, str | Path):
        suite = spec
    elif Path(spec).expanduser().is_dir():
        path = Path(spec).expanduser()
        suite = (CodingSuite(path) if is_coding_suite_dir(path)
                 else TaskJsonSuite(path) if is_task_json_path(path) else _directory(path))
    elif is_harness_suite_file(Path(spec).expanduser()):
        suite = HarnessSuite(Path(spec).expanduser())
    elif isinstance(spec, Path) or any(c in spec for c in "/\\") or spec.startswith((".", "~")):
        raise SuiteLoadError([Problem(str(spec), "suite", _not_a_suite(Path(spec).expanduser()),
                                      "pass a directory holding suite.py and tasks/, an agent-eval-harness "
                                      "suite YAML file, or an installed suite name")],
                             suite=str(spec))
    else:
        suite = _from_registry(spec)
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
        # fields added later hash only when set, so existing suites keep their hash (and baselines)
        unset = {f for f in TRAJECTORY_FIELDS if getattr(task, f) in (None, [])}
        h.update(task.model_dump_json(exclude=unset).encode() + b"\n")
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
