"""Per-endpoint connection limits, separate from the number of attempts in flight.

A single-process model server (llama-cpp-python's, for one) handles one request at a time; a
second request waits in the server's queue, and that wait used to be counted as the agent's time.
With `--max-connections N` every model call to one endpoint first takes one of N slots here, on
the client, where the wait is measured: it is recorded as queue time (`aeh.time.queue_s`) and the
attempt's time budget is paused while it lasts (`BudgetTracker.waiting`).

One `ConnectionLimits` is made per run (asyncio semaphores belong to one event loop). Limits are
keyed by endpoint URL, so the judge shares the agent's slots when both use the same server (its
waits are then measured rather than hidden in the agent's latency) and has its own limit
(`--judge-max-connections`) on a different server.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aeh.engine.budget import BudgetTracker

__all__ = ["ConnectionLimits", "EndpointLimiter"]


class EndpointLimiter:
    """At most `limit` requests in flight to one endpoint (None: no limit)."""

    def __init__(self, endpoint: str, limit: int | None) -> None:
        self.endpoint = endpoint
        self.limit = limit
        self._semaphore = asyncio.Semaphore(limit) if limit else None
        self.waits = 0
        self.wait_s = 0.0

    @contextlib.asynccontextmanager
    async def slot(self, budget: BudgetTracker | None = None) -> AsyncIterator[float]:
        """Hold one slot; yields the seconds spent waiting for it (the agent's clock paused)."""
        if self._semaphore is None:
            yield 0.0
            return
        started = time.monotonic()
        waiting = budget.waiting() if budget is not None else contextlib.nullcontext()
        with waiting:
            await self._semaphore.acquire()
        waited = time.monotonic() - started
        self.waits += 1
        self.wait_s += waited
        try:
            yield waited
        finally:
            self._semaphore.release()


class ConnectionLimits:
    """The run's limiters, one per endpoint."""

    def __init__(self, default_limit: int | None = None) -> None:
        self.default_limit = default_limit
        self._by_endpoint: dict[str, EndpointLimiter] = {}

    def for_endpoint(self, endpoint: str | None, limit: int | None = None) -> EndpointLimiter:
        """The endpoint's limiter; the first caller's limit (else the default) fixes its size."""
        key = (endpoint or "default").rstrip("/")
        found = self._by_endpoint.get(key)
        if found is None:
            found = self._by_endpoint[key] = EndpointLimiter(
                key, limit if limit is not None else self.default_limit)
        return found

    def summary(self) -> dict[str, Any]:
        return {k: {"limit": v.limit, "waits": v.waits, "wait_s": round(v.wait_s, 3)}
                for k, v in self._by_endpoint.items()}
