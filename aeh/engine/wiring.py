"""`RunWiring`: what a run is wired with that is not an option — the collaborators the engine
calls (judge, hooks, fault injection, an executor elsewhere, the stored run being resumed).

The options themselves are the frozen `RunSpec` (`aeh/engine/runspec.py`), declared once; the
engine reads them from there. `wire_run` (`aeh/engine/runplan.py`) builds the wiring a spec asks
for; nothing here is stored as given, and nothing here has a default a spec also declares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from aeh.models import Attempt, RunInfo, Span, Task
from aeh.store import HEARTBEAT_S

if TYPE_CHECKING:
    from aeh.grading.judge import Judge

__all__ = ["RunExecutor", "RunProgress", "RunWiring"]


class RunProgress:
    """Observer of a run's progress; the logger implements it. All methods are optional."""

    def run_started(self, info: RunInfo, tasks: list[Task]) -> None: ...

    def attempt_finished(self, attempt: Attempt) -> None: ...

    def task_finished(self, task_id: str, attempts: list[Attempt]) -> None:
        """All of a task's attempts are done: their verdicts, buckets, costs and timings
        (tool calls, grader evidence and outputs are left out; read them from the store)."""

    def run_finished(self, info: RunInfo) -> None: ...


class RunExecutor(Protocol):
    """Runs a run's pending attempts elsewhere (e.g. on Ray workers) and hands each result back.

    `deliver(attempt, spans)` is called in this process, on its event loop, once per attempt;
    it writes the attempt to the store, so this process stays the store's only writer.

    An executor whose workers run attempts on event loops of their own may also have
    `worker_health() -> list[dict]`: each worker loop's `HarnessHealth.summary()` for the run it
    last ran, which the run adds to its stored health (a stall in a worker is then in the run's).
    """

    async def run(self, info: RunInfo, pending: list[tuple[Task, int]],
                  deliver: Callable[[Attempt, list[Span]], None]) -> None: ...


@dataclass
class RunWiring:
    """The non-serialisable side of a run: built by `wire_run(spec)`, filled in by its callers."""

    judge: Judge | None = None
    """The judge client the `judge` grader and tier-2 localization call (with `--judge-model`)."""
    tier2_prompt_version: str | None = None
    """Stamped on the run when a judge is wired (the tier-2 prompt it localizes with)."""
    fault_profile: dict[str, Any] | None = None
    """The fault profile as resolved from the spec's file or mapping and overrides (stored on the run)."""
    fault_factory: Callable[..., Any] | None = None
    """Builds each attempt's fault injector from `fault_profile`."""
    after_failure: list[Any] = field(default_factory=list)
    """Hooks run on a failed attempt (tier-2 localization, tier-3 review flag)."""
    after_grading: list[Any] = field(default_factory=list)
    """Hooks run on every graded attempt (the shadow judge of `--judge-all`)."""
    facts: dict[str, Any] = field(default_factory=dict)
    """What the caller found while wiring and the run records (its redaction, a tools probe)."""
    resume: RunInfo | None = None
    """A stored, unfinished run to continue: only its missing (task, attempt) pairs run, with its
    seed, so the result equals an uninterrupted run. Checked against the suite by the caller."""
    executor: RunExecutor | None = None
    """Where attempts run: None in this process; a `RunExecutor` (aeh.integrations.ray) elsewhere."""
    heartbeat_s: float = HEARTBEAT_S
    """How often the stored run's heartbeat is refreshed while it executes."""
