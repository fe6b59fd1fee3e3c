"""The domain-blind engine: scheduling, attempt contexts, budgets and span recording."""

import typing as _typing

from aeh._util.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    # one unwrapped line a module, so these imports read as the `_NAMES` table below does
    # isort: off
    from aeh.engine.budget import BudgetExceeded, BudgetTracker
    from aeh.engine.context import AttemptContext
    from aeh.trace import SpanRecorder, SpanSink
    from aeh.engine._health import HarnessHealth, health_warnings
    from aeh.engine._recorded import over_budget_summary, over_budget_warning, recorded_latency, recorded_overruns
    from aeh.engine._resume import check_resumable, resume_mismatches, stored_options
    from aeh.engine._spend import EvaluationSpend, merged_spend
    from aeh.engine._workspaces import make_work_root, release_work_root
    # isort: on

# Every name loads on first use: what other packages take from here, kept off this package's import (a
# report reads a run's warnings from here without the attempt machinery).
_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.engine.budget": ("BudgetExceeded", "BudgetTracker"),
    "aeh.engine.context": ("AttemptContext",),
    "aeh.trace": ("SpanRecorder", "SpanSink"),
    "aeh.engine._health": ("HarnessHealth", "health_warnings"),
    "aeh.engine._recorded": ("over_budget_summary", "over_budget_warning", "recorded_latency", "recorded_overruns"),
    "aeh.engine._resume": ("check_resumable", "resume_mismatches", "stored_options"),
    "aeh.engine._spend": ("EvaluationSpend", "merged_spend"),
    "aeh.engine._workspaces": ("make_work_root", "release_work_root"),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES)
