"""Budget accounting for one attempt. Crossing a limit raises BudgetExceeded."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from aeh.models import Budget

if TYPE_CHECKING:
    from aeh.engine._health import HarnessHealth

__all__ = ["USAGE_NOT_REPORTED", "BudgetExceeded", "BudgetTracker"]

USAGE_NOT_REPORTED = "<model usage not reported>"
"""Stands in `unpriced_models` for an agent that reported no token usage for its model calls."""


class BudgetExceeded(Exception):
    """The attempt ran out of steps, time, tokens or money: it ends as budget_exhausted."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BudgetTracker:
    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.started = time.monotonic()
        self.steps = 0
        self.model_calls = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost_usd: float | None = 0.0
        self.unpriced_models: set[str] = set()
        self.exhausted: str | None = None
        self.queue_s = 0.0
        """Time the agent spent waiting for the model server rather than working: a client-side
        wait for a connection slot, plus queueing the server reports (`timings`)."""
        self.stall_s = 0.0
        """Time the harness lost inside the agent's tool calls (a stalled event loop, a wait for a
        worker thread): measured by the engine and given back to the agent's clock."""
        self.health: HarnessHealth | None = None
        """The run's `HarnessHealth` (event-loop stalls), when the engine watches the loop."""
        self.before_first_reply = False
        """A model request was cut off before the server had answered any of this attempt's."""
        self.provider_failing: str | None = None
        """Why the model provider was failing (connection refused or reset, DNS, 429/5xx) when a
        request retrying it was cut off: the attempt is a harness error, not the agent's budget."""
        self._waiting_since: float | None = None
        self._model_since: float | None = None
        self.overlapped_stall_s = 0.0
        """Event-loop stalls not given back as harness time because something else timed that
        stretch: a model request in flight (the server's time ran on; see `awaiting_model`) or a
        queue wait (already in `queue_s`)."""
        self.enforced = True
        """False while a recording is replayed: its steps, tokens and cost are counted but never
        cut, since what the source did is a fact to report, not to truncate (see `recorded_s`)."""
        self.recorded_s: float | None = None
        """The agent's time as the recording measured it, when the attempt replays one."""

    @property
    def elapsed_s(self) -> float:
        """The agent's time: wall-clock since the start minus time queued (see `queue_s`) and
        harness stalls — the run's event-loop stalls since the start outside model requests and
        queues (`health`, `harness_s`), or the stall given back inside tool calls (`stall_s`) when
        that is more."""
        now = time.monotonic()
        waiting = now - self._waiting_since if self._waiting_since is not None else 0.0
        return max(0.0, now - self.started - self.queue_s - self.harness_s(now) - waiting)

    def harness_s(self, now: float | None = None) -> float:
        """Time the harness or the machine took from the agent since its clock started: loop
        stalls outside model requests and connection queues (those are timed on their own)."""
        if self.health is None:
            return self.stall_s
        now = time.monotonic() if now is None else now
        loop = self.health.stalled_during(self.started, now) - self.overlapped_stall_s
        if self._model_since is not None:
            loop -= self.health.stalled_during(self._model_since, now)
        elif self._waiting_since is not None:
            loop -= self.health.stalled_during(self._waiting_since, now)
        return max(loop, self.stall_s, 0.0)

    @property
    def agent_s(self) -> float:
        """The attempt's latency: the recorded time of a replayed recording, else `elapsed_s`."""
        return self.recorded_s if self.recorded_s is not None else self.elapsed_s

    @property
    def wall_s(self) -> float:
        return time.monotonic() - self.started

    def restart_clock(self) -> None:
        """Start the agent's clock now (workspace preparation is not the agent's time)."""
        self.started = time.monotonic()

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Pause the agent's clock while the attempt waits in a queue (nesting is not counted twice)."""
        if self._waiting_since is not None:
            yield
            return
        self._waiting_since = time.monotonic()
        try:
            yield
        finally:
            end = time.monotonic()
            self.queue_s += end - self._waiting_since
            if self.health is not None and self._model_since is None:
                # A stall during the wait is in queue_s already: not subtracted twice.
                self.overlapped_stall_s += self.health.stalled_during(self._waiting_since, end)
            self._waiting_since = None

    @contextlib.contextmanager
    def awaiting_model(self) -> Iterator[None]:
        """Mark a model request in flight. A loop stall meanwhile overlaps the server's own time,
        which is the agent's: only a stall still under way as the reply is picked up (the loop
        late to read it) is given back. Queueing inside (`waiting`, `add_queue`) is timed apart."""
        if self._model_since is not None or self.health is None:
            yield
            return
        self._model_since = time.monotonic()
        try:
            yield
        finally:
            end = time.monotonic()
            inside = self.health.stalled_during(self._model_since, end)
            self.overlapped_stall_s += max(0.0, inside - self.health.stall_ending_at(end))
            self._model_since = None

    def add_queue(self, seconds: float) -> None:
        """Add queueing measured after the fact (e.g. a server's reported timings)."""
        if seconds > 0:
            self.queue_s += seconds

    def add_stall(self, seconds: float) -> None:
        """Give the agent's clock back time the harness lost during a tool call."""
        if seconds > 0:
            self.stall_s += seconds

    def _exceed(self, reason: str) -> None:
        if not self.enforced:
            return
        self.exhausted = reason
        raise BudgetExceeded(reason)

    def take_step(self) -> None:
        """Count one tool call; refuse it when the step budget is already spent."""
        if self.steps >= self.budget.max_steps:
            self._exceed(f"max_steps={self.budget.max_steps} reached")
        self.steps += 1

    def add_usage(self, model: str | None, tokens_in: int, tokens_out: int, cost: float | None) -> None:
        """Record a model call's usage, then enforce token and cost caps."""
        self.model_calls += 1
        self.tokens_in += tokens_in
        self.tokens_out += tokens_out
        if cost is None:
            self.unpriced_models.add(model or "<unknown>")
            self.cost_usd = None
        elif self.cost_usd is not None:
            self.cost_usd += cost
        b = self.budget
        if b.max_tokens is not None and self.tokens_in + self.tokens_out > b.max_tokens:
            self._exceed(f"max_tokens={b.max_tokens} exceeded ({self.tokens_in + self.tokens_out})")
        if b.max_cost_usd is not None and self.cost_usd is not None and self.cost_usd > b.max_cost_usd:
            self._exceed(f"max_cost_usd={b.max_cost_usd} exceeded ({self.cost_usd:.6f})")

    def usage_not_reported(self) -> None:
        """The agent called models the harness could not see: the cost is unknown, not zero."""
        self.unpriced_models.add(USAGE_NOT_REPORTED)
        self.cost_usd = None

    def check_time(self) -> None:
        # Wall time less queueing bounds the agent's time from above: only near the limit is
        # it worth subtracting the stalls too.
        if time.monotonic() - self.started - self.queue_s <= self.budget.timeout_s:
            return
        if self.elapsed_s > self.budget.timeout_s:
            self._exceed(f"timeout_s={self.budget.timeout_s} exceeded")
