"""aeh — the Agent Eval Harness. Measure LLM agents the way a statistician would.

    import aeh
    result = aeh.run("smoke", adapter="mock", attempts=5, seed=1)  # a DataFrame (RunResult): one row per task
    result.suite_rate, result.warnings                              # its typed fields
    aeh.compare(run_a, run_b)                                       # regressions, BH-corrected
    aeh.agreement(run_id)                                           # judge vs programmatic, κ

`import aeh` stays light: the functions that need pandas, polars, scipy or the notebook stack
load their modules on first use (module `__getattr__` below).
"""

from __future__ import annotations

import typing as _typing

from aeh._util.lazy import lazy_exports as _lazy_exports
from aeh.errors import AehError, SuiteLoadError, ValidationError

if _typing.TYPE_CHECKING:
    # one unwrapped line a module, so these imports read as the `_NAMES` table below does
    # isort: off
    from aeh._version import __version__
    from aeh.analysis import AgreementResult, CompareResult, DriftResult, GateResult, RunResult, TrajectoryDiff
    from aeh.analysis import agreement, attempts, compare, drift, gate, load_run, matrix, pass_k, power, runs, scores
    from aeh.analysis import span_attributes, spans, trajectory_diff
    from aeh.api import run, run_async
    from aeh.experiments import recovery_curve
    from aeh.importers.recorded_run import RecordedRun
    from aeh.models import Budget, GoldenTrace, GraderSpec, Task, TraceView
    from aeh.recording import Recorder, record_step
    from aeh.suite.contract import EvalSuite
    from aeh.suite.loader import load_suite
    from aeh.tools import ToolRegistry, ToolUnavailable
    from aeh.viewer import view
    from aeh.widgets import TraceBrowser
    # isort: on

# Names not imported above load on first use (pandas, polars, scipy, statsmodels; ipywidgets for
# TraceBrowser). The light ones too: pydantic and the models alone take ~0.2 s to import, and the version
# needs importlib.metadata (~0.05 s); `import aeh` stays near instant.
_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.errors": ("AehError", "SuiteLoadError", "ValidationError"),
    "aeh._version": ("__version__",),
    "aeh.analysis": ("AgreementResult", "CompareResult", "DriftResult", "GateResult", "RunResult", "TrajectoryDiff",
                     "agreement", "attempts", "compare", "drift", "gate", "load_run", "matrix", "pass_k", "power",
                     "runs", "scores", "span_attributes", "spans", "trajectory_diff"),
    "aeh.api": ("run", "run_async"),
    "aeh.experiments": ("recovery_curve",),
    "aeh.importers.recorded_run": ("RecordedRun",),
    "aeh.models": ("Budget", "GoldenTrace", "GraderSpec", "Task", "TraceView"),
    "aeh.recording": ("Recorder", "record_step"),
    "aeh.suite.contract": ("EvalSuite",),
    "aeh.suite.loader": ("load_suite",),
    "aeh.tools": ("ToolRegistry", "ToolUnavailable"),
    "aeh.viewer": ("view",),
    "aeh.widgets": ("TraceBrowser",),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES, cache=True)


def __dir__() -> list[str]:
    return list(__all__)
