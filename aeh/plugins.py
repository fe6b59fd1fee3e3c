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

from aeh._util.lazy import by_module as _by_module
from aeh._util.lazy import lazy_getattr as _lazy_getattr

if _typing.TYPE_CHECKING:
    from aeh._util.registry import RegistryError as RegistryError
    from aeh.adapters.callable import ToolCallError as ToolCallError
    from aeh.commands import Command as Command
    from aeh.commands.plugins import installed as installed
    from aeh.engine.adapter import Adapter as Adapter
    from aeh.engine.context import AttemptContext as AttemptContext
    from aeh.grading import (
        GradeContext as GradeContext,
    )
    from aeh.grading import (
        GraderConfig as GraderConfig,
    )
    from aeh.grading import (
        extract_last_number as extract_last_number,
    )
    from aeh.grading import (
        grader as grader,
    )
    from aeh.grading import (
        invariant as invariant,
    )
    from aeh.grading import (
        registered_invariants as registered_invariants,
    )
    from aeh.grading.scorers import (
        DimensionScore as DimensionScore,
    )
    from aeh.grading.scorers import (
        scorer as scorer,
    )
    from aeh.grading.workspace_graders import (
        QueryTooSlow as QueryTooSlow,
    )
    from aeh.grading.workspace_graders import (
        check_read_only_sql as check_read_only_sql,
    )
    from aeh.grading.workspace_graders import (
        connect_read_only as connect_read_only,
    )
    from aeh.grading.workspace_graders import (
        run_read_only as run_read_only,
    )
    from aeh.importers import (
        Importer as Importer,
    )
    from aeh.importers import (
        import_otel_files as import_otel_files,
    )
    from aeh.importers import (
        new_run_id as new_run_id,
    )
    from aeh.importers import (
        run_info as run_info,
    )
    from aeh.importers import (
        write_run as write_run,
    )
    from aeh.models import (
        AgentOutcome as AgentOutcome,
    )
    from aeh.models import (
        Attempt as Attempt,
    )
    from aeh.models import (
        GoldenTrace as GoldenTrace,
    )
    from aeh.models import (
        GraderResult as GraderResult,
    )
    from aeh.models import (
        Invariant as Invariant,
    )
    from aeh.models import (
        InvariantVerdict as InvariantVerdict,
    )
    from aeh.models import (
        Task as Task,
    )
    from aeh.models import (
        TraceView as TraceView,
    )
    from aeh.suite import EvalSuite as EvalSuite
    from aeh.tools import (
        ToolEnv as ToolEnv,
    )
    from aeh.tools import (
        ToolInputError as ToolInputError,
    )
    from aeh.tools import (
        ToolRegistry as ToolRegistry,
    )
    from aeh.tools import (
        ToolSpec as ToolSpec,
    )
    from aeh.tools import (
        ToolUnavailable as ToolUnavailable,
    )
    from aeh.tools import (
        evaluate_arithmetic as evaluate_arithmetic,
    )
    from aeh.trajectory import (
        Step as Step,
    )
    from aeh.trajectory import (
        Trajectory as Trajectory,
    )
    from aeh.trajectory import (
        load_trajectories as load_trajectories,
    )

#: module → the names it gives; the one declaration of what `aeh.plugins` exports
#: (tests/test_plugin_surface.py checks the TYPE_CHECKING imports above say the same).
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

__getattr__ = _lazy_getattr(__name__, _by_module(_NAMES), cache=True, moved=_MOVED)

__all__ = sorted(name for names in _NAMES.values() for name in names)


def __dir__() -> list[str]:
    return list(__all__)
