"""A suite whose async tool holds its event loop with `time.sleep`: on a worker (`--workers`,
Ray), every call is a stall of that worker's loop that the run's stored health must count."""

from __future__ import annotations

from pathlib import Path

from aeh.models import HarnessHealth
from aeh.store import Store

#: How long each tool call holds the loop: far above the stall threshold (0.02 s), and long enough
#: that a worker running two of them stalls past the 1 s that flags a run as stalled.
BLOCK_S = 0.6

#: Mock adapter options under which every attempt calls the tool (no hallucinated tool, no
#: bad arguments, no giving up): the stall each attempt makes is then known.
ALWAYS_CALLS = {"p_decline": 0, "p_give_up": 0, "p_hallucinate": 0, "p_bad_args": 0, "p_loop": 0}

SUITE = '''
import time
from aeh.models import Task, Trace
from aeh.tools import ToolRegistry


async def hold(args, env) -> dict:
    """Answer after holding the event loop (a blocking call inside an async tool)."""
    time.sleep(BLOCK_S)
    return {"text": "HELD"}


class BlockingSuite:
    name = "blocking"
    ids = ["a", "b", "c"]

    def tasks(self):
        return [Task(id=f"hold_{i}", prompt="Call the hold tool.", tools=["hold"], golden=f"hold_{i}",
                     reference_answer="HELD", graders=[{"kind": "contains", "expected": "HELD"}])
                for i in self.ids]

    def tool_registry(self):
        tools = ToolRegistry()
        tools.tool("hold", timeout_s=30)(hold)
        return tools

    def invariants(self):
        return {}

    def golden_traces(self):
        return {f"hold_{i}": Trace(steps=[{"tool": "hold", "args": {}, "result": {"text": "HELD"}}],
                                   final_output="HELD") for i in self.ids}
'''


def blocking_suite(root: Path) -> Path:
    """The suite's directory under `root` (a path every worker of this machine can load)."""
    suite = root / "blocking"
    suite.mkdir()
    (suite / "suite.py").write_text(SUITE.replace("BLOCK_S", repr(BLOCK_S)))
    return suite


def stored_worker_stalls(db: Path, run_id: str, workers: int = 2) -> HarnessHealth:
    """The run's stored health, checked to hold every call's stall: six calls (3 tasks × 2
    attempts), each on whichever worker ran it; the driver's own loop never stalls that long."""
    with Store(db) as store:
        health = store.run_info(run_id).config.health
        frame = store.attempts_frame(run_id)
    calls = frame["tool_calls"].str.count_matches('"name":"hold"', literal=True).to_list()
    assert calls == [1] * 6, calls
    assert health is not None, "no health stored"
    assert health.max_loop_lag_s is not None and health.max_loop_lag_s >= BLOCK_S - 0.05, health
    assert health.stall_s >= 6 * (BLOCK_S - 0.05), health
    assert health.stalled, health  # some worker ran at least 3 of the 6 calls: 1.8 s of stall
    assert health.worker_loops == workers, health
    return health
