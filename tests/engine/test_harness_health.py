"""A stalled harness is not the agent's failure: a tool timeout during a measured event-loop stall is
given the stall back (or, past the cap, is a harness error), and the run is flagged as stalled.

The stall is made deterministic: the agent blocks the event loop with `time.sleep` (as a loaded
machine or a blocking call would) while its sync tool waits for an event that is set only after
the loop is free again — so the tool's timeout is due the moment the loop wakes.
"""

from __future__ import annotations

import asyncio
import io
import json
import threading
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.analysis import format_run_table
from aeh.cli import main
from aeh.engine._health import HarnessHealth
from aeh.models import AgentOutcome, GoldenTrace, Task
from aeh.store import Store
from aeh.tools._tools import ToolRegistry

TOOL_TIMEOUT_S = 0.3
STALL_S = 0.8


class EventSuite:
    """One task whose sync tool answers once `release` is set (at most 5 s)."""

    name = "stall"

    def __init__(self, release: threading.Event, timeout_s: float = TOOL_TIMEOUT_S) -> None:
        self.release = release
        self.timeout_s = timeout_s

    def tasks(self) -> list[Task]:
        return [Task.model_validate({"id": "t", "prompt": "call wait", "tools": ["wait"],
                                     "graders": [{"kind": "contains", "substring": "ok"}],
                                     "budget": {"timeout_s": 30}})]

    def tool_registry(self) -> ToolRegistry:
        registry = ToolRegistry()
        release = self.release

        @registry.tool("wait", timeout_s=self.timeout_s)
        def wait(args: dict, env: Any) -> str:
            return "ok" if release.wait(5.0) else "never released"

        return registry

    def invariants(self) -> dict[str, Any]:
        return {}

    def golden_traces(self) -> dict[str, GoldenTrace]:
        return {}


class StallsTheLoop:
    """Calls the tool; meanwhile the loop is blocked for `stall_s`, and the tool is released
    `release_after_s` after the loop is free again (or, with stall_s=0, after that long)."""

    name = "staller"
    model = "mock-strong"

    def __init__(self, release: threading.Event, stall_s: float, release_after_s: float) -> None:
        self.release, self.stall_s, self.release_after_s = release, stall_s, release_after_s

    async def run(self, task: Task, ctx: Any) -> AgentOutcome:
        loop = asyncio.get_running_loop()

        def block() -> None:
            time.sleep(self.stall_s)  # the whole loop stops: no timeout, no result can be seen
            loop.call_later(self.release_after_s, self.release.set)

        loop.call_later(0.05, block)
        call = await ctx.call_tool("wait", {})
        return AgentOutcome(final_output=call.result if call.ok else f"failed: {call.error}")


def _run(db: Path, stall_s: float, release_after_s: float, timeout_s: float = TOOL_TIMEOUT_S) -> Any:
    release = threading.Event()
    return aeh.run(EventSuite(release, timeout_s), adapter=StallsTheLoop(release, stall_s, release_after_s),
                   attempts=1, concurrency=1, seed=1, db=db)


def _attempt(db: Path, run_id: str) -> dict[str, Any]:
    with Store(db) as store:
        return store.attempts_frame(run_id).to_pandas().iloc[0].to_dict()


def test_a_tool_timeout_during_a_loop_stall_is_not_charged_to_the_agent(db: Path) -> None:
    table = _run(db, STALL_S, release_after_s=0.05)
    row = _attempt(db, table.run_id)
    assert row["success"], (row["status"], row["failure_bucket"], row["tool_calls"])
    health = table.harness_health
    assert health["stalled"] and health["extended_tool_timeouts"] == 1
    assert health["max_loop_lag_s"] >= STALL_S - 0.1
    # the call's wait for a worker thread is measured (on the span) and is not the stall: a fast
    # hand-off rounds to 0.0 in the summary's four decimals, so only its bound is asserted there
    assert 0 <= health["worker_queue_max_s"] < STALL_S
    assert any(w.startswith("HARNESS STALLED") for w in table.warnings)
    assert "HARNESS STALLED" in format_run_table(table).splitlines()[0]
    with Store(db) as store:
        spans = store.spans_frame(table.run_id).to_pandas()
        assert store.run_info(table.run_id).config.health.stalled
    tool = spans[spans["name"] == "tool:wait"].iloc[0]
    assert '"aeh.tool.stall_s"' in tool["attributes"]
    assert 0 <= json.loads(tool["attributes"])["aeh.tool.worker_queue_s"] < STALL_S
    listed = io.StringIO()
    with redirect_stdout(listed):
        assert main(["runs", "--db", str(db)]) == 0
    assert "STALLED" in listed.getvalue()
    # The stall is not the agent's time either.
    assert row["agent_s"] < row["latency_s"] + 1e-9 and row["agent_s"] < STALL_S


def test_the_same_timeout_without_a_stall_is_the_tools(db: Path) -> None:
    """Control: the test's tool does time out when nothing stalls (the fix above is not a no-op)."""
    table = _run(db, stall_s=0.0, release_after_s=3.0)  # far beyond any stall a loaded machine gives back
    row = _attempt(db, table.run_id)
    assert not row["success"] and row["failure_bucket"] == "tool_error"
    assert '"error_kind":"timeout"' in row["tool_calls"].replace(" ", "")
    assert not table.harness_health["stalled"]
    assert not any(w.startswith("HARNESS STALLED") for w in table.warnings)


def test_a_stall_longer_than_the_cap_is_a_harness_error(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("aeh.engine.context.STALL_CAP_MAX_S", 0.2)  # less than the 0.8 s stall
    table = _run(db, STALL_S, release_after_s=1.0)
    row = _attempt(db, table.run_id)
    assert row["status"] == "harness_error" and row["failure_bucket"] == "harness_error"
    assert "while the harness stalled" in row["error"]
    assert table.harness_errors == 1
    assert table.harness_health["stall_tool_timeouts"] == 1


def test_stalled_during_counts_recorded_and_ongoing_stalls() -> None:
    health = HarnessHealth(every_s=0.02, stall_s=0.05)
    health.note_lag(10.0, 10.5)  # a 0.5 s stall
    health.note_lag(11.0, 11.01)  # jitter: not a stall
    health.note_lag(12.0, 12.2)
    assert health.stalled_during(9.0, 13.0) == pytest.approx(0.7)
    assert health.stalled_during(10.25, 12.1) == pytest.approx(0.35)
    assert health.stalled_during(10.6, 11.9) == 0.0
    health._due = 20.0  # the ticker was due at 20 s and has not run yet
    assert health.stalled_during(19.0, 20.4) == pytest.approx(0.4)
    assert health.stalls == 2 and health.summary()["stall_s"] == pytest.approx(0.7)


class BlocksThenAnswers:
    """Blocks the loop for STALL_S (as a loaded machine would stop it), then answers."""

    name = "blocker"
    model = "mock-strong"

    async def run(self, task: Task, ctx: Any) -> AgentOutcome:
        await asyncio.sleep(0.05)
        time.sleep(STALL_S)
        await asyncio.sleep(0.05)  # the ticker wakes late here and records the stall
        return AgentOutcome(final_output="ok")


def test_the_agents_clock_does_not_count_a_loop_stall(db: Path) -> None:
    table = aeh.run(EventSuite(threading.Event()), adapter=BlocksThenAnswers(), attempts=1, concurrency=1,
                    seed=1, db=db)
    row = _attempt(db, table.run_id)
    assert row["success"]
    assert row["agent_s"] < STALL_S / 2, row["agent_s"]
    with Store(db) as store:
        root = next(s for s in store.attempt_spans(table.run_id, "t", 0) if s.name == "attempt")
    assert root.attributes["aeh.time.stall_s"] >= STALL_S - 0.1


def test_a_resumed_run_adds_to_what_its_first_part_stored() -> None:
    from types import SimpleNamespace

    from aeh.engine.fidelity import RunFidelity
    from aeh.engine.scheduler import _store_checks
    from aeh.models import HarnessHealth as StoredHealth
    from aeh.models import LiveChecks, RunConfig

    info = SimpleNamespace(config=RunConfig())
    health = HarnessHealth(stall_s=0.05)
    health.note_lag(1.0, 1.5)
    earlier_spend = {"calls": 2, "tokens_in": 900, "tokens_out": 40, "usd": 0.001, "unpriced_calls": 0,
                     "by_purpose": {"judge grader": 2}}
    earlier = (LiveChecks(evaluation_spend=earlier_spend, first_reply_exhausted=1),
               StoredHealth(stall_s=2.0, stalls=3, stalled=True, max_loop_lag_s=0.9, extended_tool_timeouts=4,
                            stall_tool_timeouts=0))
    _store_checks(info, RunFidelity(), health, earlier)  # type: ignore[arg-type]
    checks, merged = info.config.live_checks.model_dump(), info.config.health.model_dump()
    assert checks["evaluation_spend"]["calls"] == 2 and checks["evaluation_spend"]["usd"] == pytest.approx(0.001)
    assert checks["first_reply_exhausted"] == 1
    assert merged["stall_s"] == pytest.approx(2.5) and merged["stalls"] == 4 and merged["stalled"]
    assert merged["max_loop_lag_s"] == pytest.approx(0.9) and merged["extended_tool_timeouts"] == 4


class StallsWhileTheModelWorks:
    """A model call whose server takes 0.6 s, during which the loop also stalls 0.4 s."""

    name = "stalls-in-model-call"
    model = "mock-strong"

    async def run(self, task: Task, ctx: Any) -> AgentOutcome:
        with ctx.model_call("m"):
            await asyncio.sleep(0.05)
            time.sleep(0.4)  # the machine takes the loop while the server is still generating
            await asyncio.sleep(0.2)  # the rest of the server's 0.6 s
        await asyncio.sleep(0.05)
        return AgentOutcome(final_output="ok")


def test_a_stall_while_a_model_request_is_in_flight_stays_the_agents_time(db: Path) -> None:
    table = aeh.run(EventSuite(threading.Event()), adapter=StallsWhileTheModelWorks(), attempts=1,
                    concurrency=1, seed=1, db=db)
    row = _attempt(db, table.run_id)
    assert row["agent_s"] > 0.6, row["agent_s"]  # the server's time ran on under the stall


def _tracker_with_health() -> tuple[Any, HarnessHealth]:
    from aeh.engine.budget import BudgetTracker
    from aeh.models import Budget

    budget = BudgetTracker(Budget())
    health = HarnessHealth(stall_s=0.05)
    budget.health = health
    return budget, health


def test_a_stall_under_way_as_the_reply_is_read_is_given_back() -> None:
    budget, health = _tracker_with_health()
    with budget.awaiting_model():
        due = time.monotonic()
        time.sleep(0.3)
        health.note_lag(due, time.monotonic())  # the loop was late to read the reply
    assert budget.harness_s() == pytest.approx(0.3, abs=0.05)


def test_a_stall_during_a_queue_wait_is_not_subtracted_twice() -> None:
    budget, health = _tracker_with_health()
    time.sleep(0.2)
    with budget.waiting():
        due = time.monotonic()
        time.sleep(0.3)
        health.note_lag(due, time.monotonic())
    assert budget.elapsed_s == pytest.approx(0.2, abs=0.05)


class WorksAround(StallsTheLoop):
    """The same stall, then answers "ok" whatever the tool did (works around a failed call)."""

    async def run(self, task: Task, ctx: Any) -> AgentOutcome:
        outcome = await super().run(task, ctx)
        return AgentOutcome(final_output="ok", status=outcome.status)


def test_a_tool_the_harness_failed_lowers_no_trajectory_dimension(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The call timed out while the harness stalled past the cap (attributed to the harness); the
    agent still answered. error_recovery would score that "worked_around" (0.75) if it counted."""
    monkeypatch.setattr("aeh.engine.context.STALL_CAP_MAX_S", 0.2)
    release = threading.Event()
    table = aeh.run(EventSuite(release), adapter=WorksAround(release, STALL_S, release_after_s=1.0),
                    attempts=1, concurrency=1, seed=1, db=db)
    row = _attempt(db, table.run_id)
    assert row["success"] and '"error_kind":"harness_stall"' in row["tool_calls"].replace(" ", "")
    assert table.harness_health["stall_tool_timeouts"] == 1
    with Store(db) as store:
        frame = store.dimension_scores_frame(table.run_id)
    scores = dict(zip(frame["dimension"].to_list(), frame["score"].to_list(), strict=True))
    assert scores["error_recovery"] == 1.0 and scores["loop_detection"] == 1.0


def test_worker_loops_add_to_the_runs_own_health() -> None:
    from aeh.engine.scheduler import _with_workers

    own = {"stalled": False, "max_loop_lag_s": 0.01, "stall_s": 0.0, "stalls": 0, "stall_threshold_s": 0.02,
           "run_s": 9.0, "extended_tool_timeouts": 0, "stall_tool_timeouts": 0, "worker_queue_max_s": 0.001,
           "load_average_start": 1.0, "load_average_max": 1.5}
    first = {**own, "stalled": True, "max_loop_lag_s": 0.8, "stall_s": 1.25, "stalls": 3, "run_s": 8.0,
             "extended_tool_timeouts": 1, "stall_tool_timeouts": 2, "worker_queue_max_s": 0.3,
             "load_average_start": 4.0, "load_average_max": 6.0}
    second = {**own, "max_loop_lag_s": 0.05, "stall_s": 0.1, "stalls": 2, "run_s": 8.5, "stall_tool_timeouts": 1,
              "load_average_max": None}
    merged = _with_workers(own, [first, second])
    assert merged["stalls"] == 5 and merged["stall_s"] == pytest.approx(1.35)  # counts add up
    assert merged["extended_tool_timeouts"] == 1 and merged["stall_tool_timeouts"] == 3
    assert merged["max_loop_lag_s"] == 0.8 and merged["worker_queue_max_s"] == 0.3  # maxima stay maxima
    assert merged["load_average_max"] == 6.0
    assert merged["stalled"]  # one loop stalled: the run did
    # The run's own time, threshold and starting load: the run's, not a worker's.
    assert merged["run_s"] == 9.0 and merged["stall_threshold_s"] == 0.02 and merged["load_average_start"] == 1.0
    assert merged["worker_loops"] == 2
    assert _with_workers(own, []) == {**own, "worker_loops": 0}  # no workers: the run's own loop only
    assert own["stalls"] == 0 and first["stalls"] == 3  # the summaries themselves are left as they were


def test_a_resumed_run_on_workers_stores_every_part_and_loop() -> None:
    from types import SimpleNamespace

    from aeh.engine._health import health_warnings
    from aeh.engine.fidelity import RunFidelity
    from aeh.engine.scheduler import _store_checks
    from aeh.models import HarnessHealth as StoredHealth
    from aeh.models import RunConfig

    info = SimpleNamespace(config=RunConfig())
    health = HarnessHealth(stall_s=0.05)  # this process's loop: no stall
    worker = HarnessHealth(stall_s=0.05)
    worker.note_lag(1.0, 1.8)
    worker.stall_timeouts = 1
    earlier = (None, StoredHealth(stall_s=2.0, stalls=3, stalled=True, max_loop_lag_s=0.9, worker_loops=2))
    _store_checks(info, RunFidelity(), health, earlier, [worker.summary()])  # type: ignore[arg-type]
    stored = info.config.health
    assert stored.stalls == 4 and stored.stall_s == pytest.approx(2.8) and stored.stall_tool_timeouts == 1
    assert stored.max_loop_lag_s == pytest.approx(0.9) and stored.stalled
    assert stored.worker_loops == 3  # two in the first part, one in this one
    (warning,) = health_warnings(stored.model_dump())
    assert "event loops (its own and 3 worker loops) stalled 2.8 s" in warning
    assert "1 tool call(s) timed out during a stall" in warning
