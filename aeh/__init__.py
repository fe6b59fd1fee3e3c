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

from aeh._util.lazy import lazy_getattr as _lazy_getattr
from aeh.errors import AehError, SuiteLoadError, ValidationError

if _typing.TYPE_CHECKING:
    from aeh._version import __version__
    from aeh.analysis import (
        AgreementResult,
        CompareResult,
        DriftResult,
        GateResult,
        RunResult,
        TrajectoryDiff,
        agreement,
        attempts,
        compare,
        drift,
        gate,
        load_run,
        matrix,
        pass_k,
        power,
        runs,
        scores,
        span_attributes,
        spans,
        trajectory_diff,
    )
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

# heavy: loaded on first use (pandas, polars, scipy, statsmodels; ipywidgets for TraceBrowser)
_LAZY = {
    "AgreementResult": "aeh.analysis",
    "CompareResult": "aeh.analysis",
    "DriftResult": "aeh.analysis",
    "GateResult": "aeh.analysis",
    "RunResult": "aeh.analysis",
    "agreement": "aeh.analysis",
    "attempts": "aeh.analysis",
    "compare": "aeh.analysis",
    "drift": "aeh.analysis",
    "load_run": "aeh.analysis",
    "matrix": "aeh.analysis",
    "pass_k": "aeh.analysis",
    "power": "aeh.analysis",
    "runs": "aeh.analysis",
    "spans": "aeh.analysis",
    "span_attributes": "aeh.analysis",
    "scores": "aeh.analysis",
    "gate": "aeh.analysis",
    "TrajectoryDiff": "aeh.analysis",
    "trajectory_diff": "aeh.analysis",
    "view": "aeh.viewer",
    "run": "aeh.api",
    "run_async": "aeh.api",
    "recovery_curve": "aeh.experiments",
    "TraceBrowser": "aeh.widgets",
    "RecordedRun": "aeh.importers.recorded_run",
    # Light, but still loaded on first use: pydantic and the models alone take ~0.2 s to import,
    # and the version needs importlib.metadata (~0.05 s); `import aeh` stays near instant.
    "__version__": "aeh._version",
    "Budget": "aeh.models",
    "GoldenTrace": "aeh.models",
    "GraderSpec": "aeh.models",
    "Task": "aeh.models",
    "TraceView": "aeh.models",
    "Recorder": "aeh.recording",
    "record_step": "aeh.recording",
    "EvalSuite": "aeh.suite.contract",
    "load_suite": "aeh.suite.loader",
    "ToolRegistry": "aeh.tools._tools",
    "ToolUnavailable": "aeh.tools._tools",
}


__getattr__ = _lazy_getattr(__name__, _LAZY, cache=True)  # later lookups skip it


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AehError",
    "AgreementResult",
    "Budget",
    "CompareResult",
    "DriftResult",
    "EvalSuite",
    "GateResult",
    "GoldenTrace",
    "GraderSpec",
    "RecordedRun",
    "Recorder",
    "RunResult",
    "SuiteLoadError",
    "Task",
    "ToolRegistry",
    "ToolUnavailable",
    "TraceBrowser",
    "TraceView",
    "TrajectoryDiff",
    "ValidationError",
    "__version__",
    "agreement",
    "attempts",
    "compare",
    "drift",
    "gate",
    "load_run",
    "load_suite",
    "matrix",
    "pass_k",
    "power",
    "record_step",
    "recovery_curve",
    "run",
    "run_async",
    "runs",
    "scores",
    "span_attributes",
    "spans",
    "trajectory_diff",
    "view",
]
