"""`trajectory_diff(run_a, run_b, task_id)`: one task's steps under two runs, aligned, and where they diverge.

A step is a tool call (the unit the trajectory scorers count). Steps are aligned by their key,
the tool name plus its arguments as canonical JSON, with difflib's SequenceMatcher (longest
matching blocks, no junk heuristic). Inside a block that differs, steps are paired again by tool
name alone, so the same tool called with other arguments reads as one *changed* step rather
than a deletion and an insertion.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from html import escape
from typing import Any

import pandas as pd

from aeh.analysis._result_frame import ResultFrame
from aeh.errors import ConfigError
from aeh.models import Attempt, ToolCall
from aeh.store import AttemptFilter, StoreLike, attempt_page, using_store

__all__ = ["CHANGED_STEP", "ONLY_A_STEP", "ONLY_B_STEP", "SAME_STEP", "AlignedStep", "Step", "TrajectoryDiff",
           "align_steps", "diff_attempts", "trajectory_diff"]

#: The op of an aligned row: the same call on both sides, one tool called with other arguments,
#: or a step only one side made.
SAME_STEP, CHANGED_STEP, ONLY_A_STEP, ONLY_B_STEP = "same", "changed", "only in A", "only in B"
SAME, CHANGED, ONLY_A, ONLY_B = SAME_STEP, CHANGED_STEP, ONLY_A_STEP, ONLY_B_STEP
_SIGN = {SAME: "=", CHANGED: "~", ONLY_A: "-", ONLY_B: "+"}
_COLOUR = {SAME: "", CHANGED: "#fff3bf", ONLY_A: "#fbe3e0", ONLY_B: "#e3f4e1"}
_MAX_ATTEMPTS = 10_000  # attempts of one task looked at to pick the default pair
_COLUMNS = ["row", "op", "step_a", "step_b", "tool_a", "tool_b", "args_a", "args_b", "changed_args",
            "result_a", "result_b"]


@dataclass(frozen=True)
class Step:
    """One step of a trajectory: a tool call with its arguments and what came back."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    error: str | None = None
    span_id: str | None = None

    @classmethod
    def from_tool_call(cls, call: ToolCall) -> Step:
        """The step a recorded tool call is."""
        return cls(name=call.name, args=dict(call.args), result=call.result, error=call.error, span_id=call.span_id)

    @property
    def key(self) -> str:
        """What alignment compares: tool name and canonical arguments."""
        return self.name + " " + _canonical(self.args)


@dataclass(frozen=True)
class AlignedStep:
    """One row of the alignment: a step of A, of B, or of both (`index_*` is None on the missing side)."""

    op: str
    index_a: int | None
    index_b: int | None
    step_a: Step | None
    step_b: Step | None
    #: argument names whose values differ (CHANGED rows)
    changed_args: list[str] = field(default_factory=list)


class TrajectoryDiff(ResultFrame):
    """The aligned steps of one task under two runs, one row each; `.first_divergence` is the first
    row that differs."""

    steps: list[AlignedStep]
    task_id: str
    run_a: str
    run_b: str
    attempt_a: int
    attempt_b: int
    success_a: bool
    success_b: bool
    answer_a: str | None
    answer_b: str | None
    #: index into `steps` of the first row that is not SAME, None when the step sequences match
    first_divergence: int | None
    #: SequenceMatcher's similarity of the two key sequences (1.0 = identical)
    similarity: float

    @property
    def identical(self) -> bool:
        """Both runs made the same calls with the same arguments, in the same order."""
        return self.first_divergence is None

    def _title(self) -> str:
        return (f"trajectory diff of {self.task_id}: A {_side(self.run_a, self.attempt_a, self.success_a)} "
                f"vs B {_side(self.run_b, self.attempt_b, self.success_b)}")

    def divergence_text(self) -> str:
        """Where the trajectories part, in words."""
        if self.first_divergence is None:
            return f"identical step sequences ({len(self.steps)} steps)"
        row = self.steps[self.first_divergence]
        at = [f"step {row.index_a} of A" if row.index_a is not None else None,
              f"step {row.index_b} of B" if row.index_b is not None else None]
        return f"diverge at row {self.first_divergence} ({row.op}: {', '.join(a for a in at if a)})"

    def _text(self) -> str:
        lines = [self._title(), self.divergence_text()]
        for i, row in enumerate(self.steps):
            mark = "▶" if i == self.first_divergence else " "
            a = "" if row.index_a is None else str(row.index_a)
            b = "" if row.index_b is None else str(row.index_b)
            lines.append(f"{mark} {_SIGN[row.op]} {a:>3} {b:>3}  {_step_text(row)}")
        lines.append(f"answers: A {self.answer_a!r} · B {self.answer_b!r}")
        return "\n".join(lines)

    def _repr_html_(self) -> str | None:
        if not self._as_returned():
            return super()._repr_html_()
        head = (f"<div class='aeh-result'><b>{escape(self._title())}</b>"
                f"<div class='aeh-divergence'>{escape(self.divergence_text())}</div></div>")
        body = []
        for i, row in enumerate(self.steps):
            style = f" style='background:{_COLOUR[row.op]}'" if _COLOUR[row.op] else ""
            mark = "▶ diverges here" if i == self.first_divergence else ""
            cells = [mark, _SIGN[row.op] + " " + row.op,
                     "" if row.index_a is None else str(row.index_a), _side_html(row.step_a, row.changed_args),
                     "" if row.index_b is None else str(row.index_b), _side_html(row.step_b, row.changed_args)]
            body.append(f"<tr class='aeh-diff-row' data-op='{escape(row.op)}'{style}>"
                        + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        header = "".join(f"<th>{h}</th>" for h in ("", "op", "A step", "A call", "B step", "B call"))
        answers = (f"<p>answer A: <code>{escape(str(self.answer_a))}</code> · "
                   f"answer B: <code>{escape(str(self.answer_b))}</code></p>")
        return (head + f"<table class='aeh-trajectory-diff'><thead><tr>{header}</tr></thead><tbody>"
                + "".join(body) + "</tbody></table>" + answers)


def _side(run: str, attempt: int, ok: bool) -> str:
    return f"{run} #{attempt} ({'passed' if ok else 'failed'})"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False, separators=(",", ":"))


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else _canonical(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _step_text(row: AlignedStep) -> str:
    a, b = row.step_a, row.step_b
    if row.op == SAME and a is not None:
        return f"{a.name} {_short(a.args)}"
    if row.op == CHANGED and a is not None and b is not None:
        return f"{a.name} {_short(a.args)} → {_short(b.args)} (args: {', '.join(row.changed_args) or '-'})"
    step = a if a is not None else b
    return f"{step.name} {_short(step.args)}" if step is not None else ""


def _side_html(step: Step | None, changed: list[str]) -> str:
    if step is None:
        return ""
    args = ", ".join(f"<b>{escape(k)}</b>={escape(_short(v, 60))}" if k in changed else
                     f"{escape(k)}={escape(_short(v, 60))}" for k, v in step.args.items())
    outcome = (f"<div style='color:#b00'>error: {escape(_short(step.error))}</div>" if step.error
               else f"<div style='color:#555'>→ {escape(_short(step.result))}</div>")
    return f"<code>{escape(step.name)}({args})</code>{outcome}"


def _changed_args(a: Step, b: Step) -> list[str]:
    keys = list(dict.fromkeys([*a.args, *b.args]))
    return [k for k in keys if _canonical(a.args.get(k)) != _canonical(b.args.get(k)) or (k in a.args) != (k in b.args)]


def align_steps(steps_a: Sequence[Step], steps_b: Sequence[Step]) -> list[AlignedStep]:
    """Align two step sequences by tool name and arguments; differing blocks are re-paired by tool name."""
    rows: list[AlignedStep] = []
    keys_a, keys_b = [s.key for s in steps_a], [s.key for s in steps_b]
    for op, i1, i2, j1, j2 in SequenceMatcher(None, keys_a, keys_b, autojunk=False).get_opcodes():
        if op == "equal":
            rows += [AlignedStep(SAME, i, j, steps_a[i], steps_b[j]) for i, j in zip(range(i1, i2), range(j1, j2),
                                                                                    strict=True)]
        else:
            rows += _pair_by_name(steps_a, steps_b, i1, i2, j1, j2)
    return rows


def _pair_by_name(steps_a: Sequence[Step], steps_b: Sequence[Step], i1: int, i2: int, j1: int, j2: int
                  ) -> list[AlignedStep]:
    """A block that differs: steps of one tool paired in order (CHANGED), the rest only on one side."""
    rows: list[AlignedStep] = []
    names_a = [s.name for s in steps_a[i1:i2]]
    names_b = [s.name for s in steps_b[j1:j2]]
    for op, a1, a2, b1, b2 in SequenceMatcher(None, names_a, names_b, autojunk=False).get_opcodes():
        if op == "equal":
            for i, j in zip(range(i1 + a1, i1 + a2), range(j1 + b1, j1 + b2), strict=True):
                rows.append(AlignedStep(CHANGED, i, j, steps_a[i], steps_b[j], _changed_args(steps_a[i], steps_b[j])))
            continue
        rows += [AlignedStep(ONLY_A, i, None, steps_a[i], None) for i in range(i1 + a1, i1 + a2)]
        rows += [AlignedStep(ONLY_B, None, j, None, steps_b[j]) for j in range(j1 + b1, j1 + b2)]
    return rows


def diff_attempts(a: Attempt, b: Attempt) -> TrajectoryDiff:
    """The trajectory diff of two recorded attempts of one task."""
    steps_a = [Step.from_tool_call(c) for c in a.tool_calls]
    steps_b = [Step.from_tool_call(c) for c in b.tool_calls]
    rows = align_steps(steps_a, steps_b)
    first = next((i for i, r in enumerate(rows) if r.op != SAME), None)
    similarity = SequenceMatcher(None, [s.key for s in steps_a], [s.key for s in steps_b], autojunk=False).ratio()
    table = pd.DataFrame([{
        "row": i, "op": r.op, "step_a": r.index_a, "step_b": r.index_b,
        "tool_a": r.step_a.name if r.step_a else None, "tool_b": r.step_b.name if r.step_b else None,
        "args_a": _canonical(r.step_a.args) if r.step_a else None,
        "args_b": _canonical(r.step_b.args) if r.step_b else None,
        "changed_args": ", ".join(r.changed_args),
        "result_a": _short(r.step_a.error or r.step_a.result) if r.step_a else None,
        "result_b": _short(r.step_b.error or r.step_b.result) if r.step_b else None,
    } for i, r in enumerate(rows)], columns=_COLUMNS).astype({"step_a": "Int64", "step_b": "Int64"})
    return TrajectoryDiff(table=table, steps=rows, task_id=a.task_id, run_a=a.run_id, run_b=b.run_id,
                          attempt_a=a.attempt, attempt_b=b.attempt, success_a=a.success, success_b=b.success,
                          answer_a=a.final_output, answer_b=b.final_output, first_divergence=first,
                          similarity=float(similarity))


def _pick(found: list[tuple[int, bool]], want_success: bool) -> int:
    """The first attempt with the wanted outcome, else the first attempt."""
    return next((n for n, ok in found if ok == want_success), found[0][0])


def trajectory_diff(run_a: str, run_b: str, task_id: str, db: StoreLike = None, *,
                    attempt_a: int | None = None, attempt_b: int | None = None) -> TrajectoryDiff:
    """Align task `task_id`'s steps (tool calls) under run A and run B and show where they diverge.

    By default A's first passing attempt is set against B's first failing one (the question a
    regression asks), falling back to each run's first attempt; `attempt_a` / `attempt_b` pick others.
    """
    with using_store(db) as store, store.snapshot():
        records = []
        for run, chosen, want in ((run_a, attempt_a, True), (run_b, attempt_b, False)):
            full = store.resolve_run_id(run)
            page = attempt_page(store, full, AttemptFilter(task_id=task_id), limit=_MAX_ATTEMPTS)
            found = [(r.attempt, r.success) for r in page.rows]
            if not found:
                raise ConfigError(f"run {full} has no attempt of task {task_id!r} — pick a task both runs ran "
                                  f"(aeh.attempts({full[:12]!r}) lists them)")
            number = chosen if chosen is not None else _pick(found, want)
            records.append(store.attempt_record(full, task_id, number))
    return diff_attempts(records[0], records[1])
