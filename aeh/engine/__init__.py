"""The domain-blind engine: scheduling, attempt contexts, budgets and span recording."""

import typing as _typing

from aeh._util.lazy import lazy_getattr as _lazy_getattr
from aeh.engine.budget import BudgetExceeded, BudgetTracker
from aeh.engine.context import AttemptContext
from aeh.trace import SpanRecorder, SpanSink

if _typing.TYPE_CHECKING:
    from aeh.engine._health import HarnessHealth, health_warnings
    from aeh.engine._recorded import over_budget_summary, over_budget_warning, recorded_latency, recorded_overruns
    from aeh.engine._resume import check_resumable, resume_mismatches, stored_options
    from aeh.engine._spend import EvaluationSpend, merged_spend
    from aeh.engine._workspaces import make_work_root, release_work_root

# loaded on first use: what other packages take from here, kept off this package's import
_LAZY = {
    "HarnessHealth": "aeh.engine._health",
    "health_warnings": "aeh.engine._health",
    "over_budget_summary": "aeh.engine._recorded",
    "over_budget_warning": "aeh.engine._recorded",
    "recorded_latency": "aeh.engine._recorded",
    "recorded_overruns": "aeh.engine._recorded",
    "check_resumable": "aeh.engine._resume",
    "resume_mismatches": "aeh.engine._resume",
    "stored_options": "aeh.engine._resume",
    "EvaluationSpend": "aeh.engine._spend",
    "merged_spend": "aeh.engine._spend",
    "make_work_root": "aeh.engine._workspaces",
    "release_work_root": "aeh.engine._workspaces",
}


__getattr__ = _lazy_getattr(__name__, _LAZY)


__all__ = [
    "AttemptContext",
    "BudgetExceeded",
    "BudgetTracker",
    "EvaluationSpend",
    "HarnessHealth",
    "SpanRecorder",
    "SpanSink",
    "check_resumable",
    "health_warnings",
    "make_work_root",
    "merged_spend",
    "over_budget_summary",
    "over_budget_warning",
    "recorded_latency",
    "recorded_overruns",
    "release_work_root",
    "resume_mismatches",
    "stored_options",
]
