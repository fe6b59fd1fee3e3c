"""What a plugin author needs, in one place (see docs/plugins.md for a worked example of each).

    from aeh.plugins import grader, GraderConfig, GradeContext      # a tier-0 grader kind
    from aeh.plugins import invariant, InvariantVerdict, TraceView  # a tier-1 invariant
    from aeh.plugins import Adapter, AttemptContext, AgentOutcome   # an adapter (agent driver)
    from aeh.plugins import Importer                                # another harness's runs
    from aeh.plugins import EvalSuite, ToolRegistry, ToolEnv        # a suite and its tools

Publish each under its entry-point group (`aeh.suites`, `aeh.graders`, `aeh.invariants`,
`aeh.adapters`, `aeh.importers`, `aeh.scorers`, `aeh.commands`); `installed()` (and the
`aeh plugins` command) lists what is installed and where it came from. The registries
themselves are not exported: a plugin registers through its entry point or a decorator
(`grader`, `invariant`, `scorer`) and reads through `installed()` / `registered_invariants()`.

Every name loads on first use (one table, `_NAMES`), so `import aeh.plugins` costs about what
`import aeh` does (benchmarks/plugins_import.py); a suite pays only for the names it imports.
"""

from __future__ import annotations

import typing as _typing

from aeh._util.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    # one unwrapped line a module, so these imports read as the `_NAMES` table below does
    # isort: off
    from aeh._util.registry import RegistryError
    from aeh.adapters.callable import ToolCallError
    from aeh.commands import Command
    from aeh.commands.plugins import installed
    from aeh.engine.adapter import Adapter
    from aeh.engine.context import AttemptContext
    from aeh.grading import GradeContext, GraderConfig, extract_last_number, grader, invariant, registered_invariants
    from aeh.grading.scorers import DimensionScore, scorer
    from aeh.grading.workspace_graders import QueryTooSlow, check_read_only_sql, connect_read_only, run_read_only
    from aeh.importers import Importer, import_otel_files, new_run_id, run_info, write_run
    from aeh.models import AgentOutcome, Attempt, GoldenTrace, GraderResult, Invariant, InvariantVerdict, Task
    from aeh.models import TraceView
    from aeh.suite import EvalSuite
    from aeh.tools import ToolEnv, ToolInputError, ToolRegistry, ToolSpec, ToolUnavailable, evaluate_arithmetic
    from aeh.trajectory import Step, Trajectory, load_trajectories
    # isort: on

#: module → the names it gives; the one declaration of what `aeh.plugins` exports
#: (tests/test_lazy_names.py checks the TYPE_CHECKING imports above say the same).
_NAMES: dict[str, tuple[str, ...]] = {
    # suites and their tools
    "aeh.suite": ("EvalSuite",),
    "aeh.models": ("Task", "GoldenTrace", "GraderResult", "Invariant", "InvariantVerdict", "TraceView",
                   "AgentOutcome", "Attempt"),
    "aeh.tools": ("ToolRegistry", "ToolEnv", "ToolSpec", "ToolInputError", "ToolUnavailable", "evaluate_arithmetic"),
    # graders, invariants, trajectory scorers
    "aeh.grading": ("grader", "GraderConfig", "GradeContext", "extract_last_number", "invariant",
                    "registered_invariants"),
    "aeh.grading.workspace_graders": ("connect_read_only", "check_read_only_sql", "run_read_only", "QueryTooSlow"),
    "aeh.grading.scorers": ("scorer", "DimensionScore"),
    # adapters
    "aeh.engine.adapter": ("Adapter",),
    "aeh.engine.context": ("AttemptContext",),
    "aeh.adapters.callable": ("ToolCallError",),
    # importers (new_run_id, run_info, write_run, import_otel_files write a store: polars)
    "aeh.importers": ("Importer", "new_run_id", "run_info", "write_run", "import_otel_files"),
    "aeh.trajectory": ("Trajectory", "Step", "load_trajectories"),
    # commands, and what is installed
    "aeh.commands": ("Command",),
    "aeh.commands.plugins": ("installed",),
    "aeh._util.registry": ("RegistryError",),
}

#: Names this module exported before, kept one release with a DeprecationWarning naming their home:
#: the registries are mutable objects, reached now through `installed()` and the decorators.
_MOVED = {
    "adapters": "aeh.adapters",
    "commands": "aeh.commands",
    "importers": "aeh.importers",
    "suites": "aeh.suite",
    "default_graders": "aeh.grading",
    "default_invariants": "aeh.grading",
    "default_scorers": "aeh.grading",
    "Registry": "aeh._util.registry",
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES, cache=True, moved=_MOVED)


def __dir__() -> list[str]:
    return list(__all__)
