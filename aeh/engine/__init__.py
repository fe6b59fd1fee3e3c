"""The domain-blind engine: scheduling, attempt contexts, budgets and span recording."""

from aeh.engine.budget import BudgetExceeded, BudgetTracker
from aeh.engine.context import AttemptContext
from aeh.trace import SpanRecorder, SpanSink

__all__ = ["AttemptContext", "BudgetExceeded", "BudgetTracker", "SpanRecorder", "SpanSink"]
