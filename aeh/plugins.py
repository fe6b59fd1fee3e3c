"""What a plugin author needs, in one place (see docs/plugins.md for a worked example of each).

    from aeh.plugins import grader, GraderConfig, GradeContext      # a tier-0 grader kind
    from aeh.plugins import invariant, InvariantVerdict, TraceView  # a tier-1 invariant
    from aeh.plugins import Adapter, AttemptContext, AgentOutcome   # an adapter (agent driver)
    from aeh.plugins import Importer                                # another harness's runs
    from aeh.plugins import EvalSuite                               # a suite

Publish each under its entry-point group (`aeh.suites`, `aeh.graders`, `aeh.invariants`,
`aeh.adapters`, `aeh.importers`, `aeh.scorers`, `aeh.commands`); `aeh plugins` lists what is
installed and where it came from.
"""

from aeh._registry import Registry, RegistryError
from aeh.adapters import adapters
from aeh.commands._registry import commands
from aeh.engine.adapter import Adapter
from aeh.engine.context import AttemptContext
from aeh.grading import default_graders, default_invariants, default_scorers
from aeh.grading.invariants import invariant
from aeh.grading._registry import GradeContext, GraderConfig, grader
from aeh.grading.scorers import DimensionScore, scorer
from aeh.importers import Importer, importers, new_run_id, run_info, write_run
from aeh.models import AgentOutcome, Attempt, GraderResult, InvariantVerdict, Task, TraceView
from aeh.suite import EvalSuite, suites

__all__ = [
    "Adapter",
    "AgentOutcome",
    "Attempt",
    "AttemptContext",
    "DimensionScore",
    "EvalSuite",
    "GradeContext",
    "GraderConfig",
    "GraderResult",
    "Importer",
    "InvariantVerdict",
    "Registry",
    "RegistryError",
    "Task",
    "TraceView",
    "adapters",
    "commands",
    "default_graders",
    "default_invariants",
    "default_scorers",
    "grader",
    "importers",
    "invariant",
    "new_run_id",
    "run_info",
    "scorer",
    "suites",
    "write_run",
]
