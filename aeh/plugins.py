"""What a plugin author needs, in one place (see docs/plugins.md for a worked example of each).

    from aeh.plugins import grader, GraderConfig, GradeContext      # a tier-0 grader kind
    from aeh.plugins import invariant, InvariantVerdict, TraceView  # a tier-1 invariant
    from aeh.plugins import Adapter, AttemptContext, AgentOutcome   # an adapter (agent driver)
    from aeh.plugins import Importer                                # another harness's runs
    from aeh.plugins import EvalSuite, ToolRegistry, ToolEnv        # a suite and its tools

Publish each under its entry-point group (`aeh.suites`, `aeh.graders`, `aeh.invariants`,
`aeh.adapters`, `aeh.importers`, `aeh.scorers`, `aeh.commands`); `aeh plugins` lists what is
installed and where it came from. Importing this module loads no DataFrame library: the
importer helpers that write a store (`new_run_id`, `run_info`, `write_run`,
`import_otel_files`) load on first use.
"""

import typing as _typing

from aeh._lazy import lazy_getattr as _lazy_getattr
from aeh._registry import Registry, RegistryError
from aeh.adapters import adapters
from aeh.adapters.callable import ToolCallError
from aeh.commands import Command, commands
from aeh.engine.adapter import Adapter
from aeh.engine.context import AttemptContext
from aeh.grading import (
    GradeContext,
    GraderConfig,
    default_graders,
    default_invariants,
    default_scorers,
    extract_last_number,
    grader,
    invariant,
    registered_invariants,
)
from aeh.grading.scorers import DimensionScore, scorer
from aeh.grading.workspace_graders import QueryTooSlow, check_read_only_sql, connect_read_only, run_read_only
from aeh.importers import Importer, importers
from aeh.models import (
    AgentOutcome,
    Attempt,
    GoldenTrace,
    GraderResult,
    Invariant,
    InvariantVerdict,
    Task,
    TraceView,
)
from aeh.suite import EvalSuite, suites
from aeh.tools import ToolEnv, ToolInputError, ToolRegistry, ToolSpec, ToolUnavailable, evaluate_arithmetic
from aeh.trajectory import Step, Trajectory, load_trajectories

if _typing.TYPE_CHECKING:
    from aeh.importers import import_otel_files, new_run_id, run_info, write_run

# heavy: loaded on first use (they write a store, which brings polars)
_LAZY = dict.fromkeys(("import_otel_files", "new_run_id", "run_info", "write_run"), "aeh.importers")


__getattr__ = _lazy_getattr(__name__, _LAZY)


__all__ = [
    "Adapter",
    "AgentOutcome",
    "Attempt",
    "AttemptContext",
    "Command",
    "DimensionScore",
    "EvalSuite",
    "GoldenTrace",
    "GradeContext",
    "GraderConfig",
    "GraderResult",
    "Importer",
    "Invariant",
    "InvariantVerdict",
    "QueryTooSlow",
    "Registry",
    "RegistryError",
    "Step",
    "Task",
    "ToolCallError",
    "ToolEnv",
    "ToolInputError",
    "ToolRegistry",
    "ToolSpec",
    "ToolUnavailable",
    "TraceView",
    "Trajectory",
    "adapters",
    "check_read_only_sql",
    "commands",
    "connect_read_only",
    "default_graders",
    "default_invariants",
    "default_scorers",
    "evaluate_arithmetic",
    "extract_last_number",
    "grader",
    "import_otel_files",
    "importers",
    "invariant",
    "load_trajectories",
    "new_run_id",
    "registered_invariants",
    "run_info",
    "run_read_only",
    "scorer",
    "suites",
    "write_run",
]
