"""The agent sees only its task: nothing reachable from what an adapter is handed is grading material.

A capturing adapter keeps the (task, context) it receives for every attempt of a suite with
graders, golden traces, plans and reference answers; a bounded walk over their attributes fails
on any grader spec, golden trace, plan step, answer key, reference answer, or a path into a
fixture's `reference/` or `tests_hidden/`.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.engine._agent_view import AnswerKey, agent_task
from aeh.models import AgentOutcome, GoldenStep, GoldenTrace, GraderSpec, PlanStep, Task
from aeh.suite import load_suite

REPO = Path(__file__).resolve().parents[2]
_SKIP = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)
_ATOMS = (str, bytes, int, float, bool, type(None), Path)
MATERIAL = (GraderSpec, GoldenTrace, GoldenStep, PlanStep, AnswerKey)


class Capture:
    """Walks what it is handed the moment it is handed it (later, grading has added its spans)."""

    name = "capture"
    model = "capture"

    def __init__(self, forbidden: list[str]) -> None:
        self.forbidden = forbidden
        self.found: dict[str, list[str]] = {}
        self.seen: list[tuple[Task, Any]] = []

    async def run(self, task: Task, ctx: Any) -> AgentOutcome:
        self.found[f"{task.id}/{ctx.attempt}"] = walk((task, ctx), self.forbidden)
        self.seen.append((task, ctx))
        return AgentOutcome(final_output="no idea", status="answered")


def _children(obj: Any) -> list[tuple[str, Any]]:
    if isinstance(obj, dict):
        return [(f"[{k!r}]", v) for k, v in obj.items()] + [(f"<key {k!r}>", k) for k in obj]
    if isinstance(obj, list | tuple | set | frozenset):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    out = [(f".{k}", v) for k, v in getattr(obj, "__dict__", {}).items()]
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if hasattr(obj, slot):
                out.append((f".{slot}", getattr(obj, slot)))
    extra = getattr(obj, "__pydantic_extra__", None)
    if extra:
        out += [(f".{k}", v) for k, v in extra.items()]
    return out


def walk(root: Any, forbidden_text: list[str], max_nodes: int = 200_000, max_depth: int = 14) -> list[str]:
    """Paths from `root` to grading material (bounded: nodes and depth)."""
    found: list[str] = []
    seen: set[int] = set()
    stack: list[tuple[str, Any, int]] = [("ctx", root, 0)]
    while stack and len(seen) < max_nodes:
        where, obj, depth = stack.pop()
        if id(obj) in seen or isinstance(obj, _SKIP):
            continue
        seen.add(id(obj))
        if isinstance(obj, MATERIAL):
            found.append(f"{where}: {type(obj).__name__}")
            continue
        if isinstance(obj, _ATOMS):
            text = str(obj)
            hits = [t for t in forbidden_text if t and t in text]
            if hits or "tests_hidden" in text or "/reference" in text:
                found.append(f"{where}: {text[:80]!r}")
            continue
        if depth < max_depth:
            stack += [(where + name, child, depth + 1) for name, child in _children(obj)]
    return found


def _answers(suite: Any) -> list[str]:
    # Long enough not to be a word of some prompt or path by chance.
    texts = [t.reference_answer for t in suite.tasks() if t.reference_answer]
    texts += [g.final_output for g in suite.golden_traces().values() if g.final_output]
    return [t for t in texts if t and len(t) >= 12]


@pytest.mark.parametrize("suite_name", ["core", "smoke",
                                        pytest.param("coding", marks=pytest.mark.slow)])  # grades via pytest
def test_no_grading_material_is_reachable_from_the_adapter(suite_name, tmp_path, db):
    suite = load_suite(str(REPO / "suites" / suite_name))
    capture = Capture(_answers(suite))
    # Two attempts each, concurrently: a later attempt must not reach an earlier one's grading.
    aeh.run(suite, adapter=capture, attempts=2, concurrency=2, seed=1, db=db, progress=False,
            work_dir=tmp_path / "ws")
    assert len(capture.seen) == 2 * len(suite.tasks())
    assert {k: v for k, v in capture.found.items() if v} == {}
    full = {t.id: t for t in suite.tasks()}
    for task, ctx in capture.seen:
        # What the agent needs is still there.
        assert task.prompt == full[task.id].prompt and ctx.task.tools == full[task.id].tools
        assert ctx.answer_key is None


def test_the_walk_finds_what_the_engine_used_to_hand_over():
    suite = load_suite(str(REPO / "suites" / "core"))
    task = next(t for t in suite.tasks() if t.golden)
    golden = suite.golden_traces()[task.golden]
    assert walk(task, _answers(suite)), "a full task carries its graders"
    assert walk({"golden": golden}, []), "a golden trace is material"
    assert walk(agent_task(task), _answers(suite)) == []


def test_the_mock_still_plays_its_plan_through_the_answer_key(db):
    table = aeh.run(str(REPO / "suites" / "core"), adapter="mock", model="mock-strong", attempts=1, seed=1,
                    db=db, progress=False)
    assert table["successes"].sum() >= 0.8 * len(table)


def test_only_the_agent_field_of_metadata_reaches_the_agent():
    suite = load_suite(str(REPO / "suites" / "core"))
    task = suite.tasks()[0].model_copy(update={"metadata": {
        "agent": {"hint": "use the calculator"}, "answer": "forty-two", "notes": {"expected": 42},
        "coding": {"fixture": "fx", "entry_files": ["a.py"], "hidden_sha256": "ab" * 32}}})
    seen = agent_task(task).metadata
    assert seen == {"agent": {"hint": "use the calculator"}, "coding": {"entry_files": ["a.py"]}}
    assert task.metadata["answer"] == "forty-two", "the harness keeps the full task"
    assert "agent" not in agent_task(suite.tasks()[0]).metadata
