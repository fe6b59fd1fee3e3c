"""Trajectory dimension scorers: six deterministic scores of one attempt's tool-call sequence.

A scorer is a function `fn(inp: ScoreInput) -> DimensionScore | None` registered on
`default_scorers` (third-party dimensions arrive through the `aeh.scorers` entry-point group and
register the same way, with `@scorer("name")`). None means the dimension does not apply to the
attempt (nothing to measure it against): it is skipped, never credited.

Every scorer is a pure function of the stored attempt — its tool calls, terminal status, final
output, grader verdicts, tokens, cost and time — plus the task, so any stored run (live, mock,
replayed, imported) can be scored again without re-running it and gets the same numbers.

Steps are tool calls, indexed from 0 in call order; evidence cites those indices.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, model_validator

from aeh._util.registry import Registry
from aeh.models import Attempt, GoldenTrace, GraderResult, Span, Task, ToolCall

__all__ = [
    "BUILTIN_SCORERS",
    "DEFAULT_LOOP_N",
    "DETERMINISTIC_DIMENSIONS",
    "DimensionScore",
    "Evidence",
    "ScoreInput",
    "default_scorers",
    "learned_optimal_steps",
    "normalise_args",
    "optimal_steps",
    "overall_score",
    "score_attempt",
    "scorer",
]

DEFAULT_LOOP_N = 3
#: A tool call that timed out while the harness itself stalled (machine load): the trajectory
#: dimensions leave it out — it is neither the agent's failure nor its step nor a repeat.
HARNESS_STALL = "harness_stall"
DETERMINISTIC_DIMENSIONS: tuple[str, ...] = (
    "task_completion", "tool_selection", "step_efficiency", "error_recovery", "budget_adherence",
    "loop_detection",
)
#: Grader kinds that never decide success and so never count as the task's assertions.
_NON_DECIDING = frozenset({"judge_shadow"})


class Evidence(BaseModel):
    """What a score rests on: step indices (tool calls, from 0) and/or details."""

    steps: list[int] = Field(default_factory=list)
    details: str = ""
    dropped_steps: list[int] = Field(default_factory=list)
    """Step indices a judge cited that the trajectory does not back (removed from `steps`)."""


class DimensionScore(BaseModel):
    """One dimension's score of one attempt. A score below 1.0 must cite steps or details."""

    dimension: str
    score: float = Field(ge=0.0, le=1.0)
    evidence: Evidence = Field(default_factory=Evidence)

    @model_validator(mode="after")
    def _evidence_required(self) -> DimensionScore:
        if self.score < 1.0 and not self.evidence.steps and not self.evidence.details.strip():
            raise ValueError(
                f"{self.dimension}: a score below 1.0 ({self.score:.3f}) must cite step indices or details"
            )
        return self


@dataclass
class ScoreInput:
    """Everything a trajectory scorer may look at for one attempt."""

    task: Task | None
    tool_calls: list[ToolCall]
    status: str = "answered"
    final_output: str | None = None
    grader_results: list[GraderResult] = field(default_factory=list)
    tokens: int = 0
    cost_usd: float | None = 0.0
    latency_s: float = 0.0
    golden: GoldenTrace | None = None
    optimal_steps: int | None = None
    """A learned optimal step count (median of passing attempts), for a task that declares none."""
    loop_n: int = DEFAULT_LOOP_N
    spans: Sequence[Span] = ()
    """The attempt's spans, for scorers that read what a recording kept (given to the scoring
    profiles that ask for them; empty otherwise)."""

    @classmethod
    def of_attempt(cls, a: Attempt, task: Task | None, golden: GoldenTrace | None = None, *,
                   optimal_steps: int | None = None, loop_n: int = DEFAULT_LOOP_N,
                   spans: Sequence[Span] = ()) -> ScoreInput:
        """What the scorers see of a finished (or stored) attempt."""
        return cls(task=task, tool_calls=list(a.tool_calls), status=a.status, final_output=a.final_output,
                   grader_results=list(a.grader_results), tokens=a.tokens_in + a.tokens_out,
                   cost_usd=a.cost_usd, latency_s=a.latency_s, golden=golden, optimal_steps=optimal_steps,
                   loop_n=loop_n, spans=spans)


ScorerFn = Callable[[ScoreInput], "DimensionScore | None"]

#: Name → scorer function.
default_scorers: Registry[ScorerFn] = Registry("trajectory scorer", group="aeh.scorers")


def scorer(name: str) -> Callable[[ScorerFn], ScorerFn]:
    """Register `fn` as the scorer of dimension `name`."""

    def add(fn: ScorerFn) -> ScorerFn:
        default_scorers.register(name, fn)
        return fn

    return add


def score_attempt(inp: ScoreInput, dimensions: Sequence[str] | None = None, *,
                  on_error: Callable[[str, Exception], None] | None = None,
                  replacing: Mapping[str, ScorerFn] | None = None) -> list[DimensionScore]:
    """Every registered (or the named) dimension's score of one attempt; skipped ones left out.

    `replacing` (a scoring profile's scorers) scores the dimensions it names in place of the
    registered scorer. A scorer that raises propagates, unless `on_error(dimension, exc)` is
    given: then that dimension is left out of this attempt's scores (a broken third-party scorer
    loses its dimension, not the attempt).
    """
    out: list[DimensionScore] = []
    for name in dimensions or default_scorers.names():
        try:
            fn = (replacing or {}).get(name) or default_scorers.get(name)
            result = fn(inp)
        except Exception as exc:
            if on_error is None:
                raise
            on_error(name, exc)
            continue
        if result is not None:
            out.append(result)
    return out


def overall_score(scores: Sequence[DimensionScore]) -> float | None:
    """The unweighted mean of the scored dimensions (None when none was scored)."""
    return statistics.fmean(s.score for s in scores) if scores else None


# -- task facts ----------------------------------------------------------------------------------


def _meta(task: Task | None, key: str) -> Any:
    return None if task is None else getattr(task, key)


def expected_tools(inp: ScoreInput) -> list[str] | None:
    """The tools a good trajectory uses: task metadata, else the golden trace, else the plan."""
    declared = _meta(inp.task, "expected_tools")
    if declared is not None:
        return list(declared)
    if inp.golden is not None and inp.golden.steps:
        return sorted({s.tool for s in inp.golden.steps})
    if inp.task is not None and inp.task.plan:
        return sorted({s.tool for s in inp.task.plan})
    if inp.task is not None and inp.task.expect_decline:
        return []
    return None


def optimal_steps(inp: ScoreInput) -> int | None:
    """The task's declared `optimal_steps`, else the learned count, else the golden trace's or plan's length."""
    declared = _meta(inp.task, "optimal_steps")
    if declared:
        return int(declared)
    if inp.optimal_steps:
        return inp.optimal_steps
    if inp.golden is not None and inp.golden.steps:
        return len(inp.golden.steps)
    if inp.task is not None and inp.task.plan:
        return len(inp.task.plan)
    return None


def learned_optimal_steps(step_counts: Sequence[int], last_n: int = 20) -> int | None:
    """The median step count of the last `last_n` passing attempts (at least 1)."""
    recent = list(step_counts)[-last_n:]
    if not recent:
        return None
    return max(1, round(statistics.median(recent)))


def normalise_args(args: Any) -> str:
    """Arguments with the differences that do not change a call removed: key order, case,
    whitespace, punctuation around words and float noise. Two calls with equal normalised
    arguments are near-identical."""

    def norm(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k).strip().lower(): norm(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
        if isinstance(v, list | tuple):
            return [norm(x) for x in v]
        if isinstance(v, float):
            return round(v, 6)
        if isinstance(v, str):
            return re.sub(r"\s+", " ", re.sub(r"[^\w\s./-]", "", v.casefold())).strip()
        return v

    return json.dumps(norm(args), sort_keys=True, default=str)


def _exact_args(args: Any) -> str:
    return json.dumps(args, sort_keys=True, default=str)


# -- the six deterministic dimensions -----------------------------------------------------------


def task_completion(inp: ScoreInput) -> DimensionScore:
    """0.4 for an acceptable terminal state + 0.6 × share of the task's assertions that passed."""
    acceptable = _meta(inp.task, "acceptable_terminal_states")
    if acceptable is None:
        acceptable = ["declined"] if inp.task is not None and inp.task.expect_decline else ["answered"]
    answered_empty = inp.status == "answered" and not (inp.final_output or "").strip()
    terminal_ok = inp.status in acceptable and not answered_empty
    deciding = [r for r in inp.grader_results if r.tier == 0 and r.kind not in _NON_DECIDING]
    passed = sum(1 for r in deciding if r.passed is True)
    share = passed / len(deciding) if deciding else (1.0 if terminal_ok else 0.0)
    score = 0.4 * terminal_ok + 0.6 * share
    notes = []
    if not terminal_ok:
        shown = "answered with nothing" if answered_empty else inp.status
        notes.append(f"terminal state {shown!r} not in acceptable {list(acceptable)}")
    failed = [r.name for r in deciding if r.passed is not True]
    if failed:
        notes.append(f"assertions failed: {', '.join(failed)} ({passed}/{len(deciding)} passed)")
    return DimensionScore(dimension="task_completion", score=round(score, 6),
                          evidence=Evidence(details="; ".join(notes)))


def tool_selection(inp: ScoreInput) -> DimensionScore | None:
    """F1 of the tools used against the expected set; any forbidden tool halves the score."""
    expected = expected_tools(inp)
    if expected is None:
        return None
    used = [c.name for c in inp.tool_calls]
    used_set, want = set(used), set(expected)
    if not want and not used_set:
        f1 = 1.0
    else:
        hit = len(used_set & want)
        precision = hit / len(used_set) if used_set else 0.0
        recall = hit / len(want) if want else 0.0
        f1 = 0.0 if hit == 0 else 2 * precision * recall / (precision + recall)
    forbidden = set(_meta(inp.task, "forbidden_tools") or [])
    allowed = set(inp.task.tools) if inp.task is not None and inp.task.tools else None
    bad_steps = [i for i, c in enumerate(inp.tool_calls)
                 if c.name in forbidden or (allowed is not None and c.name not in allowed)
                 or c.error_kind == "unknown_tool"]
    score = f1 / 2 if bad_steps else f1
    notes = []
    if want - used_set:
        notes.append(f"expected tool(s) not used: {', '.join(sorted(want - used_set))}")
    if used_set - want:
        notes.append(f"unexpected tool(s): {', '.join(sorted(used_set - want))}")
    if bad_steps:
        notes.append("forbidden or unoffered tool called (score halved)")
    extra = [i for i, c in enumerate(inp.tool_calls) if c.name not in want]
    return DimensionScore(dimension="tool_selection", score=round(score, 6),
                          evidence=Evidence(steps=sorted(set(bad_steps) | set(extra)), details="; ".join(notes)))


def step_efficiency(inp: ScoreInput) -> DimensionScore | None:
    """1.0 at or under the optimal step count, falling linearly to 0 at twice it."""
    optimal = optimal_steps(inp)
    if not optimal:
        return None
    steps = sum(c.error_kind != HARNESS_STALL for c in inp.tool_calls)  # a call the harness failed is no step
    score = 1.0 if steps <= optimal else max(0.0, 1.0 - (steps - optimal) / optimal)
    evidence = Evidence()
    if score < 1.0:
        evidence = Evidence(steps=list(range(optimal, steps)),
                            details=f"{steps} steps against an optimal {optimal}")
    return DimensionScore(dimension="step_efficiency", score=round(score, 6), evidence=evidence)


_RECOVERY_SCORES = {"recovered": 1.0, "worked_around": 0.75, "recovered_slowly": 0.5, "looped": 0.25,
                    "gave_up": 0.0}


def classify_failures(inp: ScoreInput) -> list[tuple[int, str]]:
    """(step, outcome) for every failed tool call: recovered (the very next call is that tool, working),
    recovered_slowly (a later call to it works), looped (the same failing call `loop_n`+ times),
    worked_around (never fixed, but the attempt still answered), gave_up."""
    calls = inp.tool_calls
    answered = inp.status == "answered" and bool((inp.final_output or "").strip())
    out: list[tuple[int, str]] = []
    open_failures: set[tuple[str, str]] = set()  # a retry of a still-failing call is the same failure
    for i, call in enumerate(calls):
        if call.error_kind == HARNESS_STALL:  # the harness's failure: nothing for the agent to recover from
            continue
        if call.error_kind is None:
            open_failures = {k for k in open_failures if k[0] != call.name}
            continue
        key = (call.name, normalise_args(call.args))
        if key in open_failures:
            continue
        open_failures.add(key)
        later_same = [j for j in range(i + 1, len(calls))
                      if calls[j].name == call.name and calls[j].error_kind != HARNESS_STALL]
        fixed = next((j for j in later_same if calls[j].error_kind is None), None)
        signature = normalise_args(call.args)
        repeats = sum(1 for j in range(i, len(calls)) if calls[j].name == call.name
                      and calls[j].error_kind not in (None, HARNESS_STALL)
                      and normalise_args(calls[j].args) == signature)
        if repeats >= inp.loop_n:
            outcome = "looped"
        elif fixed is not None:
            outcome = "recovered" if fixed == i + 1 else "recovered_slowly"
        elif answered:
            outcome = "worked_around"
        else:
            outcome = "gave_up"
        out.append((i, outcome))
    return out


def error_recovery(inp: ScoreInput) -> DimensionScore:
    """Mean recovery over tool failures (injected or real); 1.0 when nothing failed."""
    found = classify_failures(inp)
    if not found:
        return DimensionScore(dimension="error_recovery", score=1.0,
                              evidence=Evidence(details="no tool failures"))
    score = statistics.fmean(_RECOVERY_SCORES[o] for _, o in found)
    bad = [(i, o) for i, o in found if o != "recovered"]
    return DimensionScore(
        dimension="error_recovery", score=round(score, 6),
        evidence=Evidence(steps=[i for i, _ in bad],
                          details="; ".join(f"step {i}: {o}" for i, o in found)))


def budget_adherence(inp: ScoreInput) -> DimensionScore | None:
    """Each declared cap (tokens, cost, wall clock) scored apart: 1.0 within it, falling to 0 at
    twice it; the mean over declared axes. Undeclared axes are skipped, not credited."""
    if inp.task is None:
        return None
    b = inp.task.budget
    axes: list[tuple[str, float | None, float | None]] = [
        ("tokens", inp.tokens, b.max_tokens), ("cost_usd", inp.cost_usd, b.max_cost_usd),
        ("wall_s", inp.latency_s, b.timeout_s),
    ]
    parts, notes = [], []
    for name, used, cap in axes:
        if cap is None:
            continue
        if used is None:
            notes.append(f"{name}: unmeasured (skipped)")
            continue
        s = 1.0 if used <= cap else max(0.0, 1.0 - (used - cap) / cap)
        parts.append(s)
        if s < 1.0:
            notes.append(f"{name}: {used:g} over cap {cap:g}")
    if not parts:
        return None
    return DimensionScore(dimension="budget_adherence", score=round(statistics.fmean(parts), 6),
                          evidence=Evidence(details="; ".join(notes)))


def find_loops(calls: Sequence[ToolCall], loop_n: int = DEFAULT_LOOP_N) -> list[dict[str, Any]]:
    """Groups of `loop_n`+ calls to one tool with one (normalised) input, in first-call order.
    `exact` is False when the inputs differ only in ways normalisation removes."""
    per_tool = Counter(c.name for c in calls)
    if not per_tool or max(per_tool.values()) < loop_n:
        return []  # no tool was called often enough to loop: skip normalising every input
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, c in enumerate(calls):
        if per_tool[c.name] >= loop_n and c.error_kind != HARNESS_STALL:  # a retry after a harness stall is no loop
            groups[(c.name, normalise_args(c.args))].append(i)
    loops = []
    for (tool, _), steps in groups.items():
        if len(steps) >= loop_n:
            exact = len({_exact_args(calls[i].args) for i in steps}) == 1
            loops.append({"tool": tool, "steps": steps, "exact": exact})
    return sorted(loops, key=lambda g: g["steps"][0])


def loop_detection(inp: ScoreInput) -> DimensionScore:
    """1 − the share of the run's steps spent repeating a looped call (the first call of each
    loop is the honest one). One 40-step loop costs far more than four 3-step ones."""
    calls = inp.tool_calls
    loops = find_loops(calls, inp.loop_n)
    if not loops:
        return DimensionScore(dimension="loop_detection", score=1.0)
    wasted = sum(len(g["steps"]) - 1 for g in loops)
    score = max(0.0, 1.0 - wasted / len(calls))
    details = "; ".join(
        f"{g['tool']} ×{len(g['steps'])} with {'the same' if g['exact'] else 'near-identical'} input"
        for g in loops)
    steps = sorted(i for g in loops for i in g["steps"][1:])
    return DimensionScore(dimension="loop_detection", score=round(score, 6),
                          evidence=Evidence(steps=steps, details=details))


#: The shipped dimensions.
BUILTIN_SCORERS: dict[str, ScorerFn] = {
    "task_completion": task_completion,
    "tool_selection": tool_selection,
    "step_efficiency": step_efficiency,
    "error_recovery": error_recovery,
    "budget_adherence": budget_adherence,
    "loop_detection": loop_detection,
}
for _name, _fn in BUILTIN_SCORERS.items():
    default_scorers.register(_name, _fn)
