"""aeh — the Agent Eval Harness. Measure LLM agents the way a statistician would.

    import aeh
    table = aeh.run("smoke", adapter="mock", attempts=5, seed=1)   # per-task DataFrame
    aeh.compare(run_a, run_b)                                       # regressions, BH-corrected
    aeh.agreement(run_id)                                           # judge vs programmatic, κ
"""

from aeh._version import __version__
from aeh.analysis import (
    agreement,
    attempts,
    compare,
    drift,
    load_run,
    matrix,
    pass_k,
    power,
    runs,
    spans,
)
from aeh.api import run, run_async
from aeh.errors import AehError, SuiteLoadError, ValidationError
from aeh.models import Budget, GoldenTrace, GraderSpec, Task, TraceView
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import load_suite
from aeh.tools.registry import ToolRegistry, ToolUnavailable


def __getattr__(name: str):  # heavy or optional pieces load on first use
    if name == "TraceBrowser":
        from aeh.widgets import TraceBrowser

        return TraceBrowser
    if name == "recovery_curve":
        from aeh.tools.recovery import recovery_curve

        return recovery_curve
    raise AttributeError(f"module 'aeh' has no attribute {name!r}")


__all__ = [
    "AehError",
    "Budget",
    "EvalSuite",
    "GoldenTrace",
    "GraderSpec",
    "SuiteLoadError",
    "Task",
    "ToolRegistry",
    "ToolUnavailable",
    "TraceBrowser",
    "TraceView",
    "ValidationError",
    "__version__",
    "agreement",
    "attempts",
    "compare",
    "drift",
    "load_run",
    "load_suite",
    "matrix",
    "pass_k",
    "power",
    "recovery_curve",
    "run",
    "run_async",
    "runs",
    "spans",
]
