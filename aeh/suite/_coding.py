"""Coding suites: a directory of fixture directories (`suite.yaml` says `kind: coding_fixtures`).

Each fixture holds `task.yaml`, `seed/`, `tests_public/`, `tests_hidden/` and `reference/`
(see suites/coding/README.md). A fixture becomes a task graded by `hidden_tests`; the engine
asks the suite to prepare each attempt's workspace (a fresh copy of `seed/` + `tests_public/`
+ `PROMPT.md`), and the suite refuses a workspace that holds anything named like a hidden test.

`validate_coding_suite` runs the fixture contract for real: the seed passes the public tests
and fails at least one hidden test, the reference passes all, and the seed holds nothing
named like a hidden test.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fnmatch
import hashlib
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path, PurePosixPath
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator

from aeh._util.problems import display_path, pydantic_problems, read_yaml
from aeh.errors import Problem
from aeh.grading import (
    HIDDEN_PATTERNS,
    build_grading_dir,
    hidden_like_files,
    hidden_sha256,
    jail_for,
    probe_sandbox,
    run_tests,
    sandbox_for,
)
from aeh.models import Budget, GoldenTrace, Task
from aeh.tools import ToolRegistry

__all__ = ["CODING_KIND", "CodingSuite", "FixtureSpec", "check_contract", "format_contract_table",
           "is_coding_suite_dir", "validate_coding_suite"]

CODING_KIND = "coding_fixtures"
#: Wall clock for one solver run (an LLM agent takes minutes); the solver's own timeout is below.
SOLVER_TIMEOUT_S = 900.0


class SuiteSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    kind: str

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v != CODING_KIND:
            raise ValueError(f"kind must be {CODING_KIND!r} for a fixture suite")
        return v


class FixtureSpec(BaseModel):
    """One fixture's task.yaml."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    title: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    entry_files: list[str] = Field(min_length=1)
    timeout_seconds: int = Field(gt=0)
    taxonomy: list[str] = Field(min_length=1)

    @field_validator("entry_files")
    @classmethod
    def _relative(cls, v: list[str]) -> list[str]:
        for rel in v:
            p = PurePosixPath(rel)
            if p.is_absolute() or ".." in p.parts or not rel.strip():
                raise ValueError(f"entry file {rel!r} must be a path relative to seed/ without '..'")
        return v


def is_coding_suite_dir(path: Path) -> bool:
    """True when `path/suite.yaml` declares `kind: coding_fixtures`."""
    data, _ = read_yaml(path / "suite.yaml") if (path / "suite.yaml").is_file() else (None, [])
    return isinstance(data, dict) and data.get("kind") == CODING_KIND


def _tree_sha(path: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(q for q in path.rglob("*") if q.is_file() and "__pycache__" not in q.parts):
        h.update(str(p.relative_to(path)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


class CodingSuite:
    """A loaded coding suite. Every problem is collected (`file:field: what — fix`)."""

    def __init__(self, root: str | Path, name: str | None = None) -> None:
        self.root = Path(root).resolve()
        self._problems: list[Problem] = []
        self._sources: list[tuple[str, Task]] = []
        self.specs: dict[str, FixtureSpec] = {}
        self.description = ""
        self.name: str = self._read_suite_file(name) or self.root.name
        self._parse_fixtures()

    def _read_suite_file(self, name: str | None) -> str | None:
        """Read `suite.yaml` (description, name); returns the suite's name if it gives one."""
        suite_file = self.root / "suite.yaml"
        data, problems = read_yaml(suite_file)
        self._problems += problems
        if data is not None:
            try:
                spec = SuiteSpec.model_validate(data)
                self.description = spec.description
                return name or spec.name
            except pydantic.ValidationError as exc:
                self._problems += pydantic_problems(display_path(suite_file), exc, SuiteSpec)
        return name

    # -- the EvalSuite contract -------------------------------------------------------------
    def tasks(self) -> list[Task]:
        return [t for _, t in self._sources]

    def tool_registry(self) -> ToolRegistry:
        return ToolRegistry()

    def invariants(self) -> dict[str, Any]:
        return {}

    def golden_traces(self) -> dict[str, GoldenTrace]:
        return {}

    def load_problems(self) -> list[Problem]:
        return list(self._problems)

    def task_sources(self) -> list[tuple[str, Task]]:
        return list(self._sources)

    def lifespan(self) -> contextlib.AbstractAsyncContextManager[dict[str, Any]]:
        @contextlib.asynccontextmanager
        async def span() -> AsyncIterator[dict[str, Any]]:
            yield {"coding_suite_root": self.root}

        return span()

    def __repr__(self) -> str:
        return f"CodingSuite({self.name!r}, {len(self._sources)} fixtures at {self.root})"

    # -- coding specifics ---------------------------------------------------------------------
    def reload(self) -> CodingSuite:
        """The same suite read again from its files."""
        return CodingSuite(self.root, name=self.name)

    def fixture_dir(self, task_id: str) -> Path:
        return self.root / task_id

    def prepare_workspace(self, task: Task, workspace: Path) -> None:
        """seed/ + tests_public/ + PROMPT.md; never anything named like a hidden test."""
        fixture = self.fixture_dir(task.id)
        shutil.copytree(fixture / "seed", workspace, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copytree(fixture / "tests_public", workspace / "tests_public",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (workspace / "PROMPT.md").write_text(task.prompt, encoding="utf-8")
        leaked = hidden_like_files(workspace)
        if leaked:
            raise RuntimeError(f"separation broken: the prepared workspace holds {leaked} — the fixture "
                               f"{fixture} puts hidden-test material where the agent can see it")

    def run_config(self, resources: dict[str, Any]) -> dict[str, Any]:
        """What a run records about this suite: the grading sandbox and the hidden-set hashes."""
        sandbox = sandbox_for(bool(resources.get("grading_sandbox", True)))
        per_task = {t.id: t.metadata["coding"]["hidden_sha256"] for t in self.tasks()}
        whole = hashlib.sha256("".join(f"{k}:{v}\n" for k, v in sorted(per_task.items())).encode())
        jail = jail_for(bool(resources.get("grading_confinement", True)))
        return {"suite_kind": CODING_KIND, "grading_sandbox": sandbox.mode, "grading_confinement": jail.mode,
                "hidden_sha256": whole.hexdigest(), "hidden_sha256_per_task": per_task}

    def _fixture_dirs(self) -> list[Path]:
        return sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))

    def _read_task_file(self, fx: Path) -> tuple[str, Any, list[Problem]]:
        """(where, data or None, problems) for one fixture's task file."""
        where = display_path(fx / "task.yaml")
        if not (fx / "task.yaml").is_file():
            return where, None, [Problem(where, "(file)", "fixture directory has no task.yaml",
                                         "add task.yaml or move the directory out of the suite")]
        data, problems = read_yaml(fx / "task.yaml")
        return where, data, problems

    def _parse_fixtures(self) -> None:
        for fx in self._fixture_dirs():
            where, data, problems = self._read_task_file(fx)
            self._problems += problems
            if data is None:
                continue
            try:
                spec = FixtureSpec.model_validate(data)
            except pydantic.ValidationError as exc:
                self._problems += pydantic_problems(where, exc, FixtureSpec)
                continue
            layout = _layout_problems(fx, spec, where)
            self._problems += layout
            if layout:
                continue
            self.specs[spec.id] = spec
            self._sources.append((where, self._task(fx, spec)))

    def _task(self, fx: Path, spec: FixtureSpec) -> Task:
        graders = [{"kind": "hidden_tests", "fixture": fx.name, "entry_files": spec.entry_files,
                    "timeout_seconds": spec.timeout_seconds}]
        # The hashes make the suite hash change when any fixture byte does.
        meta = {"fixture": fx.name, "entry_files": spec.entry_files, "timeout_seconds": spec.timeout_seconds,
                "title": spec.title, "hidden_sha256": hidden_sha256(fx),
                "tree_sha256": {d: _tree_sha(fx / d) for d in ("seed", "tests_public", "reference")}}
        return Task.model_validate({
            "id": spec.id, "prompt": spec.prompt, "description": spec.title, "category": "coding",
            "tags": spec.taxonomy, "graders": graders, "budget": Budget(timeout_s=SOLVER_TIMEOUT_S),
            "metadata": {"coding": meta},
        })


def _layout_problems(fx: Path, spec: FixtureSpec, where: str) -> list[Problem]:
    problems = []
    if spec.id != fx.name:
        problems.append(Problem(where, "id", f"id {spec.id!r} differs from the directory name {fx.name!r}",
                                f"set id: {fx.name}"))
    for sub in ("seed", "tests_public", "tests_hidden", "reference"):
        if not (fx / sub).is_dir():
            problems.append(Problem(display_path(fx), sub, f"missing {sub}/ directory", f"create {fx / sub}"))
    if problems:
        return problems
    for i, rel in enumerate(spec.entry_files):
        for sub in ("seed", "reference"):
            if not (fx / sub / rel).is_file():
                problems.append(Problem(where, f"entry_files[{i}]", f"{rel} is missing from {sub}/",
                                        f"add {fx / sub / rel}"))
    for pattern, sub in (("test_public*.py", "tests_public"), ("test_hidden*.py", "tests_hidden")):
        names = [p.name for p in (fx / sub).iterdir() if p.name != "__pycache__"]
        if not names or not all(fnmatch.fnmatch(n, pattern) for n in names):
            problems.append(Problem(display_path(fx / sub), "(files)", f"must hold only {pattern} files, has "
                                    f"{sorted(names)}", f"rename the test files to {pattern}"))
    leaked = hidden_like_files(fx / "seed")
    if leaked:
        problems.append(Problem(display_path(fx / "seed"), "(files)", f"seed/ holds files named like hidden "
                                f"tests {leaked} ({', '.join(HIDDEN_PATTERNS)})",
                                "move them to tests_hidden/: the agent sees all of seed/"))
    return problems


# --- the contract, run for real ----------------------------------------------------------------

CONTRACT_COLUMNS = ("fixture", "public_seed", "hidden_seed", "public_ref", "hidden_ref", "no_leak", "ok")


def _check_fixture(fx: Path, spec: FixtureSpec, grading_sandbox: bool) -> tuple[dict[str, Any], list[str]]:
    sandbox = sandbox_for(grading_sandbox)
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix=f"aeh-validate-{fx.name}-") as tmp:
        seed_dir, ref_dir = Path(tmp) / "seed", Path(tmp) / "ref"
        build_grading_dir(fx, seed_dir, spec.entry_files, None)
        build_grading_dir(fx, ref_dir, spec.entry_files, fx / "reference")
        seed = run_tests(seed_dir, spec.timeout_seconds, sandbox)
        ref = run_tests(ref_dir, spec.timeout_seconds, sandbox)
    (sp, sn), (shp, shn) = seed.counts.get("tests_public", (0, 0)), seed.counts.get("tests_hidden", (0, 0))
    (rp, rn), (rhp, rhn) = ref.counts.get("tests_public", (0, 0)), ref.counts.get("tests_hidden", (0, 0))
    leaked = hidden_like_files(fx / "seed")
    for label, run in (("seed", seed), ("reference", ref)):
        if run.timed_out:
            problems.append(f"{label} half: the tests timed out after {spec.timeout_seconds}s")
        if run.collection_errors:
            problems.append(f"{label} half: test modules failed to import: {', '.join(run.collection_errors)}")
    if sn == 0 or sp != sn:
        problems.append(f"seed half: the seed must pass every public test, passes {sp}/{sn}")
    if shn == 0 or shp == shn:
        problems.append(f"seed half: the seed must fail at least one hidden test, passes {shp}/{shn}")
    if rn == 0 or rhn == 0 or rp != rn or rhp != rhn:
        problems.append(f"reference half: the reference must pass everything, passes public {rp}/{rn}, "
                        f"hidden {rhp}/{rhn}")
    if leaked:
        problems.append(f"separation half: seed/ holds files named like hidden tests: {leaked}")
    row = {"fixture": fx.name, "public_seed": f"{sp}/{sn}", "hidden_seed": f"{shp}/{shn}",
           "public_ref": f"{rp}/{rn}", "hidden_ref": f"{rhp}/{rhn}", "no_leak": "yes" if not leaked else "NO",
           "ok": "OK" if not problems else "FAIL", "sandbox": sandbox.mode}
    return row, problems


_CONTRACT_FIXES = {
    "seed half: the tests timed out": "make the tests finish well within timeout_seconds, or raise it",
    "reference half: the tests timed out": "make the tests finish well within timeout_seconds, or raise it",
    "seed half: test modules failed": "make the tests import against seed/ (module names, syntax)",
    "reference half: test modules failed": "make the tests import against reference/ overlaid on seed/",
    "seed half: the seed must pass": "fix seed/ or tests_public/: the public tests cover the common path the "
                                     "seed already gets right",
    "seed half: the seed must fail": "put the bug in seed/ or add a hidden test for it: a seed that passes the "
                                     "hidden tests leaves nothing to solve",
    "reference half": "fix reference/ (or the tests) until it passes every public and hidden test",
    "separation half": "move those files to tests_hidden/: the agent sees all of seed/",
}


def _contract_fix(problem: str) -> str | None:
    return next((fix for start, fix in _CONTRACT_FIXES.items() if problem.startswith(start)), None)


def validate_coding_suite(path: CodingSuite | str | Path, *, grading_sandbox: bool = True,
                          workers: int = 4) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Load the suite (loud schema problems) and run the contract on every fixture.

    Returns (one row per fixture, every problem). A contract problem names the fixture and which
    half failed (seed, reference or separation).
    """
    # A loaded suite is re-read from its files (loud problems), keeping its own fixture format.
    suite = path.reload() if isinstance(path, CodingSuite) else CodingSuite(path)
    problems = suite.load_problems()
    if not suite.specs and not problems:
        problems.append(Problem(display_path(suite.root), "fixtures", "the suite has no fixtures",
                                "add fixture directories with task.yaml"))
    probe_sandbox()  # once, before the threads
    rows: list[dict[str, Any]] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(_check_fixture, suite.fixture_dir(fid), spec, grading_sandbox): fid
                   for fid, spec in suite.specs.items()}
        results = {futures[f]: f.result() for f in concurrent.futures.as_completed(futures)}
    for fid in suite.specs:
        row, found = results[fid]
        rows.append(row)
        problems += [Problem(display_path(suite.fixture_dir(fid)), "contract", p, _contract_fix(p)) for p in found]
    return rows, problems


def format_contract_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no fixtures)"
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in CONTRACT_COLUMNS}
    lines = ["  ".join(c.ljust(widths[c]) for c in CONTRACT_COLUMNS)]
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in CONTRACT_COLUMNS) for r in rows]
    return "\n".join(lines)


def check_contract(suite: CodingSuite | str | Path, *, grading_sandbox: bool = True) -> tuple[str, bool]:
    """The per-fixture contract table and every problem, as printed by `aeh tasks validate`."""
    rows, problems = validate_coding_suite(suite, grading_sandbox=grading_sandbox)
    mode = rows[0]["sandbox"] if rows else "-"
    lines = [format_contract_table(rows), f"(tests run for real, network sandbox: {mode})"]
    lines += [f"  ✗ {p}" for p in problems]
    return "\n".join(lines), not problems
