"""A replayed recording is counted against the budget but never cut; its clock is the latency."""

from __future__ import annotations

import pytest

from aeh.engine.budget import BudgetExceeded, BudgetTracker
from aeh.models import Budget


def test_an_enforced_budget_cuts_and_a_recording_is_only_counted() -> None:
    live = BudgetTracker(Budget(max_steps=2, max_tokens=10))
    live.take_step()
    live.take_step()
    with pytest.raises(BudgetExceeded):
        live.take_step()
    replay = BudgetTracker(Budget(max_steps=2, max_tokens=10))
    replay.enforced = False
    for _ in range(5):
        replay.take_step()
    replay.add_usage("m", 50, 50, 0.1)
    replay.check_time()
    assert replay.steps == 5 and replay.tokens_in == 50 and replay.exhausted is None


def test_the_recorded_clock_is_the_agent_time() -> None:
    budget = BudgetTracker(Budget())
    assert budget.agent_s == pytest.approx(budget.elapsed_s, abs=0.05)
    budget.recorded_s = 3.8
    assert budget.agent_s == 3.8
