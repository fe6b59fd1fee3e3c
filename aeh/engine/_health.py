"""The harness watches its own health while a run goes: how late its event loop wakes.

A ticker on the run's loop sleeps `every_s` and notes how late it wakes. Lateness above
`STALL_S` is a **stall**: for that long no attempt's coroutine could run — no timeout could
fire on time, no tool result could be picked up. On a loaded machine (other processes taking the
cores) or with something blocking the loop, stalls are where a local tool's 0.3 s timeout
expires without the tool being slow at all.

`stalled_during(start, end)` is the stall time inside a window, counting a stall still under
way (the ticker overdue now), so a tool timeout that fires as the loop wakes from a stall
already sees it. The engine (`AttemptContext.call_tool`) gives a timed-out tool back the stall
measured during its call, and the attempt's clock does not count it either; see
docs/reliability.md "Machine load".
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import os
import time
from typing import Any

__all__ = ["STALL_S", "HarnessHealth", "health_warnings", "load_average"]

#: Loop lateness below this is ordinary scheduling jitter, not a stall.
STALL_S = 0.02
#: A run is flagged as stalled when its stalls add up to this share of its time (or 1 s at least).
STALLED_SHARE = 0.05
#: Stall intervals kept for look-ups; older ones are summarised only (bounded memory).
_MAX_KEPT = 20_000


def load_average() -> float | None:
    """The machine's 1-minute load average (None where the OS has none)."""
    with contextlib.suppress(OSError, AttributeError):
        return round(os.getloadavg()[0], 2)
    return None


class HarnessHealth:
    """Event-loop lag of one run, plus what the engine did about it (extended or excused timeouts)."""

    def __init__(self, every_s: float = 0.02, stall_s: float = STALL_S) -> None:
        self.every_s = every_s
        self.stall_s = stall_s
        self._starts: list[float] = []
        self._ends: list[float] = []
        self._cumulative: list[float] = []  # stall seconds up to and including interval i
        self._due: float | None = None
        self._task: asyncio.Task[None] | None = None
        self.max_lag_s = 0.0
        self.total_stall_s = 0.0
        self.stalls = 0
        self.ticks = 0
        self.extended_timeouts = 0
        """Tool calls whose timeout was extended by a stall measured during them (and then answered)."""
        self.stall_timeouts = 0
        """Tool calls that timed out during a stall too long to give back: harness errors."""
        self.worker_queue_max_s = 0.0
        self.started = time.monotonic()
        self.load_start = load_average()
        self.load_max = self.load_start

    # -- the ticker ------------------------------------------------------------------------
    def start(self) -> HarnessHealth:
        """Start ticking on the running loop."""
        self._task = asyncio.ensure_future(self._tick())
        return self

    def cancel(self) -> None:
        """Stop ticking without waiting (a run ending on an error or a cancellation)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self._due = None

    async def stop(self) -> None:
        """Stop ticking and wait for the ticker to end."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._due = None

    async def _tick(self) -> None:
        while True:
            self._due = time.monotonic() + self.every_s
            await asyncio.sleep(self.every_s)
            woke = time.monotonic()
            self.note_lag(self._due, woke)
            self.ticks += 1
            if self.ticks % 250 == 0:  # every ~5 s: the machine's load, beside the lag it explains
                load = load_average()
                if load is not None and (self.load_max is None or load > self.load_max):
                    self.load_max = load

    def note_lag(self, due: float, woke: float) -> None:
        """Record that something due at `due` ran at `woke` (a stall when later than `stall_s`)."""
        lag = woke - due
        self.max_lag_s = max(self.max_lag_s, lag)
        if lag < self.stall_s:
            return
        self.stalls += 1
        self.total_stall_s += lag
        if len(self._starts) >= _MAX_KEPT:
            del self._starts[: _MAX_KEPT // 2], self._ends[: _MAX_KEPT // 2]
            del self._cumulative[: _MAX_KEPT // 2]
        before = self._cumulative[-1] if self._cumulative else 0.0
        self._starts.append(due)
        self._ends.append(woke)
        self._cumulative.append(before + lag)

    def note_worker_queue(self, seconds: float) -> None:
        """A sync tool waited `seconds` for a worker thread to start it."""
        self.worker_queue_max_s = max(self.worker_queue_max_s, seconds)

    # -- look-ups --------------------------------------------------------------------------
    def stalled_during(self, start: float, end: float | None = None) -> float:
        """Seconds of stall inside [start, end] (monotonic clock; end defaults to now), including
        a stall still under way (the ticker overdue at `end`)."""
        end = time.monotonic() if end is None else end
        return self._recorded_overlap(start, end) + self._ongoing_stall(start, end)

    def _ongoing_stall(self, start: float, end: float) -> float:
        """The part after `start` of a stall still under way at `end`: the loop just woke (or is
        still late) and the ticker has not run to record it yet."""
        if self._due is None or end - self._due < self.stall_s:
            return 0.0
        last_end = self._ends[-1] if self._ends else float("-inf")
        return max(0.0, end - max(self._due, start, last_end))

    def stall_ending_at(self, end: float, slack_s: float = 0.05) -> float:
        """The length of a stall under way at `end` or ended within `slack_s` before it: the loop
        was late to run whatever became ready during it."""
        ongoing = self._ongoing_stall(float("-inf"), end)
        if ongoing:
            return ongoing
        if self._ends and self._ends[-1] >= end - slack_s:
            return self._ends[-1] - self._starts[-1]
        return 0.0

    def _recorded_overlap(self, start: float, end: float) -> float:
        if not self._ends or end <= start:
            return 0.0
        first = bisect.bisect_right(self._ends, start)  # intervals ending after `start`
        last = bisect.bisect_left(self._starts, end)  # intervals starting before `end`
        if first >= last:
            return 0.0
        whole = self._cumulative[last - 1] - (self._cumulative[first - 1] if first else 0.0)
        # The two edge intervals may stick out of the window: trim them.
        whole -= max(0.0, start - self._starts[first])
        whole -= max(0.0, self._ends[last - 1] - end)
        return max(0.0, whole)

    def stalled(self) -> bool:
        """Did this run stall enough to doubt its timings (or did the engine step in)?"""
        share = STALLED_SHARE * (time.monotonic() - self.started)
        return self.total_stall_s >= max(1.0, share) or self.extended_timeouts > 0 or self.stall_timeouts > 0

    def summary(self) -> dict[str, Any]:
        """What the run stores as `RunConfig.health` (with `--workers` or Ray, each worker loop's
        summary is added to the run's own: `aeh.engine.scheduler`)."""
        end = load_average()
        return {
            "stalled": self.stalled(),
            "max_loop_lag_s": round(self.max_lag_s, 4),
            "stall_s": round(self.total_stall_s, 3),
            "stalls": self.stalls,
            "stall_threshold_s": self.stall_s,
            "run_s": round(time.monotonic() - self.started, 3),
            "extended_tool_timeouts": self.extended_timeouts,
            "stall_tool_timeouts": self.stall_timeouts,
            "worker_queue_max_s": round(self.worker_queue_max_s, 4),
            "load_average_start": self.load_start,
            "load_average_max": max((x for x in (self.load_max, end) if x is not None), default=None),
        }


def health_warnings(health: dict[str, Any] | None) -> list[str]:
    """The run-table warning for a run that stalled (none for a healthy one)."""
    if not health or not health.get("stalled"):
        return []
    load = health.get("load_average_max")
    workers = health.get("worker_loops") or 0
    loops = f"event loops (its own and {workers} worker loop{'s' * (workers != 1)})" if workers else "event loop"
    parts = [f"the harness's {loops} stalled {health.get('stall_s', 0):g} s in all "
             f"({health.get('stalls', 0)} stalls, the longest {health.get('max_loop_lag_s', 0):g} s"
             + (f", load average up to {load:g}" if load is not None else "") + ")"]
    if health.get("extended_tool_timeouts"):
        parts.append(f"{health['extended_tool_timeouts']} tool timeout(s) were extended by the stall "
                     "measured during them")
    if health.get("stall_tool_timeouts"):
        parts.append(f"{health['stall_tool_timeouts']} tool call(s) timed out during a stall: harness errors, "
                     "not the agent's")
    return ["HARNESS STALLED (machine load or a blocked event loop): " + "; ".join(parts)
            + " — timings of this run are doubtful; rerun on a less loaded machine or with lower --concurrency"]
