"""What an adapter may see of a task: the prompt, the tools and the budget, never how it is graded.

`agent_task` is the task with every grading field emptied (graders, golden, plan, reference
answer, expected tools and steps, the decline flag, invariants, and the coding block's hashes
and fixture name) and its metadata cut to what the task declares for the agent (`metadata.agent`,
plus the coding block's entry files, title and timeout); `agent_resources` drops the resources
only graders use. Adapters that play a task's known answers back on purpose (the mock, the
`reference` solver) declare `uses_answer_key = True` and get the full task and an `AnswerKey`
instead: a channel of their own, not something every adapter is handed.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeh.models import GoldenTrace, Span, Task
from aeh.trace import SpanSink

if TYPE_CHECKING:
    from aeh.engine.adapter import Adapter

__all__ = ["AGENT_METADATA_KEY", "GRADING_RESOURCES", "AnswerKey", "RoutedSink", "agent_resources", "agent_task",
           "private_paths", "routed", "uses_answer_key"]

#: Resources for graders only: where the fixtures (with reference/ and hidden tests) live, and
#: grading switches.
GRADING_RESOURCES = frozenset({"coding_suite_root", "grading_sandbox", "grading_confinement"})
#: The part of a coding task's metadata a solver is told (`$AEH_ENTRY_FILES`).
_CODING_AGENT_KEYS = ("entry_files", "title", "timeout_seconds")
#: The one metadata field a task declares for its agent; every other field stays with the harness.
AGENT_METADATA_KEY = "agent"


@dataclass(frozen=True)
class AnswerKey:
    """The grading material a scripted adapter plays back; only for `uses_answer_key` adapters."""

    task: Task
    golden: GoldenTrace | None = None
    suite_root: Path | None = None
    resources: dict[str, Any] = field(default_factory=dict)


def uses_answer_key(adapter: Adapter) -> bool:
    return getattr(adapter, "uses_answer_key", False) is True


def agent_task(task: Task) -> Task:
    """A copy of `task` holding only what the agent needs to attempt it."""
    metadata: dict[str, Any] = {}
    if AGENT_METADATA_KEY in task.metadata:  # declared for the agent: handed over as written
        metadata[AGENT_METADATA_KEY] = task.metadata[AGENT_METADATA_KEY]
    coding = task.metadata.get("coding")
    if isinstance(coding, dict):
        metadata["coding"] = {k: coding[k] for k in _CODING_AGENT_KEYS if k in coding}
    # model_copy does not validate: `graders` may be empty here, and nothing re-validates it.
    return task.model_copy(deep=True, update={
        "outcome_graders": [], "golden": None, "plan": [], "reference_answer": None,
        "expect_decline": False, "expected_tools": None, "forbidden_tools": [], "optimal_steps": None,
        "acceptable_terminal_states": None, "weight": None, "invariants": [], "metadata": metadata,
    })


def private_paths(suite_root: Path | None, work_root: Path) -> tuple[Path, ...]:
    """What an adapter's processes must not read: the suite, this run's workspace root and the
    other runs' roots beside it (`aeh-…`: kept workspaces and grading folders of earlier runs)."""
    siblings = sorted(work_root.parent.glob("aeh-2*")) if work_root.parent.is_dir() else []
    return tuple(p for p in (suite_root, work_root, *siblings) if p is not None)


def agent_resources(resources: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in resources.items() if k not in GRADING_RESOURCES}


# The run's sinks (the store writer and its redaction cache hold other attempts' grader evidence)
# are looked up here by number: the recorder an adapter is handed holds the number, not them.
_ROUTES: dict[int, list[SpanSink]] = {}
_NEXT = itertools.count(1)


class RoutedSink:
    """Forwards spans to the sinks registered under its number while the attempt runs."""

    __slots__ = ("_key",)

    def __init__(self, key: int) -> None:
        self._key = key

    def span_started(self, span: Span, depth: int) -> None:
        for sink in _ROUTES.get(self._key, ()):
            sink.span_started(span, depth)

    def span_ended(self, span: Span, depth: int) -> None:
        for sink in _ROUTES.get(self._key, ()):
            sink.span_ended(span, depth)


@contextlib.contextmanager
def routed(sinks: list[SpanSink]) -> Iterator[list[SpanSink]]:
    """[a RoutedSink] standing for `sinks` until the block ends ([] when there are none)."""
    if not sinks:
        yield []
        return
    key = next(_NEXT)
    _ROUTES[key] = list(sinks)
    try:
        yield [RoutedSink(key)]
    finally:
        _ROUTES.pop(key, None)
