"""The `trajectory-harness` scoring profile: agent-eval-harness's own definitions of the six
deterministic dimensions, so a run scored here reads as that harness's CI printed it.

They are computed on that harness's step list: a recording's steps as it wrote them (each
span keeps its `index` and `step_type`; a `tool_call` and the `tool_result` paired with it are
one aeh tool call but two steps again here, the error on the result), and for an attempt aeh ran
itself, one call step and one result step per tool call. Where aeh's own definitions differ
(`docs/agent-eval-harness.md`):

- `error_recovery`: every failed step is one failure (a retry that fails again is another);
  after it, the results of the same tool are counted — the first that succeeds makes it
  recovered (within 2) or recovered slowly (later); none, with `loop_n`+ of them, looped; none,
  in a run that ended completed or escalated, recovered slowly; else gave up. Weights 1, 0.6,
  0.2 and 0; mean over failures, 1.0 without one.
- `loop_detection`: calls of one tool with the exactly same input (`json.dumps`, keys sorted)
  `loop_n`+ times are a loop; the score is 1 − 1.5 × (calls in loops, first ones included) /
  calls, not below 0.
- `step_efficiency`: no tool call at all scores 0 (aeh: 1, under the optimum).
- `tool_selection`: the tools used are every step naming one (plan and retry steps too); only a
  forbidden tool halves the F1 (aeh also halves it for a tool outside the allowlist); no expected
  tools scores 1.0.
- `budget_adherence`: the declared caps only (tokens, cost, `max_seconds` as the suite wrote
  them; aeh always caps the wall clock); none declared scores 1.0; a run that ended
  `budget_exceeded` scores at most 0.5.
- `task_completion`: the terminal state as recorded (aeh ends an over-budget recording
  `budget_exhausted`), against the task's acceptable states in that harness's terms; an empty
  answer is no worse than another.

Scores are rounded to 4 decimals, as that harness stores them.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from aeh.grading._assertions import STATUS_STATE, recorded_terminal_state
from aeh.grading.scorers import DimensionScore, Evidence, ScoreInput, ScorerFn, expected_tools, optimal_steps
from aeh.models import Span

__all__ = ["HARNESS_SCORERS", "HarnessStep", "harness_steps", "harness_terminal_states"]

_RECOVERY_WEIGHTS = {"recovered": 1.0, "recovered_slowly": 0.6, "looped": 0.2, "gave_up": 0.0}
_LOOP_PENALTY = 1.5
_BUDGET_EXCEEDED_CEILING = 0.5


@dataclass(frozen=True)
class HarnessStep:
    """One step as that harness counts steps."""

    step_type: str
    tool_name: str | None = None
    tool_input: Any = None
    error: str | None = None
    call: int | None = None
    """The aeh tool call (its index) this step is part of; None for a step that is not one."""

    def signature(self) -> str:
        """Same tool, same input — exactly (that harness's loop key)."""
        payload = self.tool_input if isinstance(self.tool_input, dict) else {}
        return f"{self.tool_name}:{json.dumps(payload, sort_keys=True, default=str)}"


def _recorded_error(span: Span) -> str | None:
    # A call aeh refused during playback (a tool outside the task's allowlist) recorded no error.
    if span.status != "error" or span.attributes.get("error_kind") == "unknown_tool":
        return None
    return str(span.attributes.get("error") or "error")


def _from_spans(spans: list[Span]) -> list[HarnessStep]:
    placed: list[tuple[float, HarnessStep]] = []
    calls = 0  # tool spans are in tool-call order
    for span in spans:
        attrs = span.attributes
        index = attrs.get("index")
        if span.name.startswith("tool:"):
            call, calls = calls, calls + 1
            if not isinstance(index, int | float):
                continue
            name = str(attrs.get("gen_ai.tool.name") or span.name.removeprefix("tool:"))
            error = _recorded_error(span)
            kind = str(attrs.get("step_type", "tool_call"))
            result_at = attrs.get("result_index")
            if isinstance(result_at, int | float):  # a call and its result, one span in aeh
                placed.append((index, HarnessStep(kind, name, attrs.get("args"), call=call)))
                placed.append((result_at, HarnessStep("tool_result", name, {}, error, call=call)))
            else:
                placed.append((index, HarnessStep(kind, name, attrs.get("args"), error, call=call)))
        elif span.name.startswith("step:") and isinstance(index, int | float):
            tool = attrs.get("tool_name")
            placed.append((index, HarnessStep(str(attrs["step_type"]), str(tool) if tool else None,
                                              attrs.get("tool_input"), _recorded_error(span))))
    return [step for _, step in sorted(placed, key=lambda p: p[0])]


def harness_steps(inp: ScoreInput) -> list[HarnessStep]:
    """The attempt's steps as that harness lists them: the recorded ones (spans carrying
    `step_type`), else a call step and a result step per tool call."""
    recorded = [s for s in inp.spans if "step_type" in s.attributes]
    if recorded:
        return _from_spans(recorded)
    steps: list[HarnessStep] = []
    for i, call in enumerate(inp.tool_calls):
        steps.append(HarnessStep("tool_call", call.name, call.args, call=i))
        steps.append(HarnessStep("tool_result", call.name, {},
                                 (call.error or call.error_kind) if call.error_kind is not None else None, call=i))
    return steps


def _terminal(inp: ScoreInput) -> str:
    return recorded_terminal_state(inp.spans, inp.status)[0]


def harness_terminal_states(inp: ScoreInput) -> list[str]:
    """The task's acceptable terminal states in that harness's terms: as its suite wrote them,
    else aeh's acceptable statuses named as that harness names them."""
    task = inp.task
    if task is not None and isinstance(task.metadata.get("terminal_states"), list):
        return [str(s) for s in task.metadata["terminal_states"]]
    statuses = task.acceptable_terminal_states if task is not None else None
    if statuses is None:
        statuses = ["declined"] if task is not None and task.expect_decline else ["answered"]
    named = [STATUS_STATE.get(s, s) for s in statuses]
    if "budget_exhausted" in statuses:
        named.append("timeout")
    return named


def _score(dimension: str, score: float, details: str, cited: list[HarnessStep] | None = None) -> DimensionScore:
    """The score rounded as that harness stores it; evidence cites the aeh tool calls of the cited steps."""
    calls = sorted({s.call for s in cited or [] if s.call is not None})
    return DimensionScore(dimension=dimension, score=round(score, 4), evidence=Evidence(steps=calls, details=details))


def task_completion(inp: ScoreInput) -> DimensionScore:
    """0.4 × terminal state acceptable (as recorded) + 0.6 × share of assertions passed (no
    assertions: the terminal state alone)."""
    state, acceptable = _terminal(inp), harness_terminal_states(inp)
    terminal_ok = state in acceptable
    deciding = [r for r in inp.grader_results if r.tier == 0 and r.kind != "judge_shadow"]
    passed = sum(1 for r in deciding if r.passed is True)
    share = passed / len(deciding) if deciding else float(terminal_ok)
    notes = [f"terminal_state={state} ({'acceptable' if terminal_ok else 'not acceptable'}: {acceptable})",
             f"{passed}/{len(deciding)} assertions passed"]
    return _score("task_completion", 0.4 * terminal_ok + 0.6 * share, "; ".join(notes))


def tool_selection(inp: ScoreInput) -> DimensionScore:
    """F1 of the tools the steps name against the expected set; a forbidden tool halves it."""
    expected = set(expected_tools(inp) or [])
    if not expected:
        return _score("tool_selection", 1.0, "no expected tools: nothing to check")
    steps = harness_steps(inp)
    used = {s.tool_name for s in steps if s.tool_name}
    hits = used & expected
    precision = len(hits) / len(used) if used else 0.0
    recall = len(hits) / len(expected)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    forbidden = used & set(inp.task.forbidden_tools if inp.task is not None else [])
    if forbidden:
        f1 *= 0.5
    bad = [s for s in steps if s.tool_name and (s.tool_name not in expected or s.tool_name in forbidden)]
    details = (f"precision {precision:.2f}, recall {recall:.2f}; missing {sorted(expected - used) or 'none'}; "
               f"unexpected {sorted(used - expected) or 'none'}" + (f"; forbidden {sorted(forbidden)} (halved)"
                                                                   if forbidden else ""))
    return _score("tool_selection", f1, details, bad)


def step_efficiency(inp: ScoreInput) -> DimensionScore | None:
    """Tool-call steps against the optimal count: 1 up to it, 0 at twice it; no call at all is 0."""
    optimal = optimal_steps(inp)
    if not optimal:
        return None
    calls = [s for s in harness_steps(inp) if s.step_type == "tool_call"]
    if not calls:
        return _score("step_efficiency", 0.0, f"no tool calls at all (optimal {optimal})")
    ratio = len(calls) / optimal
    score = 1.0 if ratio <= 1.0 else max(0.0, 2.0 - ratio)
    return _score("step_efficiency", score, f"{len(calls)} tool calls against an optimal {optimal}", calls[optimal:])


def _recovery(steps: list[HarnessStep], at: int, terminal: str, loop_n: int) -> str:
    failure = steps[at]
    after = steps[at + 1:]
    if not after:
        return "gave_up"
    attempts = 0
    for step in after:
        if step.tool_name == failure.tool_name and step.step_type == "tool_result":
            attempts += 1
            if step.error is None:
                return "recovered" if attempts <= 2 else "recovered_slowly"
    if attempts >= loop_n:
        return "looped"
    return "recovered_slowly" if terminal in ("completed", "escalated") else "gave_up"


def error_recovery(inp: ScoreInput) -> DimensionScore:
    """Each failed step recovered (1), recovered slowly (0.6), looped (0.2) or given up (0); the mean."""
    steps = harness_steps(inp)
    failures = [i for i, s in enumerate(steps) if s.error is not None]
    if not failures:
        return _score("error_recovery", 1.0, "no failed steps")
    terminal = _terminal(inp)
    outcomes = [_recovery(steps, i, terminal, inp.loop_n) for i in failures]
    counts = Counter(outcomes)
    return _score("error_recovery", statistics.fmean(_RECOVERY_WEIGHTS[o] for o in outcomes),
                  f"{len(failures)} failed step(s): " + ", ".join(f"{n} {k}" for k, n in counts.items()),
                  [steps[i] for i in failures])


def budget_adherence(inp: ScoreInput) -> DimensionScore:
    """Each declared cap scored apart (1 within, 0 at twice it), the mean; none declared is 1.0;
    a run that ended budget_exceeded scores at most 0.5."""
    task = inp.task
    declared = task.metadata.get("declared_budget") if task is not None else None
    if task is None:
        caps: dict[str, float | None] = {}
    elif isinstance(declared, dict):  # that harness's suite: the caps as written
        caps = {"max_tokens": declared.get("max_tokens"), "max_cost_usd": declared.get("max_cost_usd"),
                "max_seconds": declared.get("max_seconds")}
    else:
        caps = {"max_tokens": task.budget.max_tokens, "max_cost_usd": task.budget.max_cost_usd,
                "max_seconds": task.budget.timeout_s}
    used = {"max_tokens": inp.tokens, "max_cost_usd": inp.cost_usd, "max_seconds": inp.latency_s}
    parts, breaches = [], []
    for axis, cap in caps.items():
        actual = used[axis]
        if not cap or actual is None:
            continue
        usage = actual / cap
        parts.append(1.0 if usage <= 1.0 else max(0.0, 2.0 - usage))
        if usage > 1.0:
            breaches.append(f"{axis} {actual:g}/{cap:g} ({usage:.0%})")
    if not parts:
        return _score("budget_adherence", 1.0, "no declared budget caps")
    score = statistics.fmean(parts)
    if _terminal(inp) == "budget_exceeded":
        breaches.append("ended budget_exceeded")
        score = min(score, _BUDGET_EXCEEDED_CEILING)
    return _score("budget_adherence", score, "; ".join(breaches) or "within every declared cap")


def loop_detection(inp: ScoreInput) -> DimensionScore:
    """1 − 1.5 × the share of tool calls spent in exact repeats (`loop_n`+ of one tool with one input)."""
    calls = [s for s in harness_steps(inp) if s.step_type == "tool_call" and s.tool_name]
    groups: dict[str, list[HarnessStep]] = {}
    for step in calls:
        groups.setdefault(step.signature(), []).append(step)
    loops = {sig: group for sig, group in groups.items() if len(group) >= inp.loop_n}
    if not loops:
        return _score("loop_detection", 1.0, f"no tool call repeated {inp.loop_n}+ times with the same input")
    looped = sum(len(group) for group in loops.values())
    score = max(0.0, 1.0 - _LOOP_PENALTY * looped / max(len(calls), 1))
    names = sorted({sig.split(":", 1)[0] for sig in loops})
    return _score("loop_detection", score,
                  f"{len(loops)} repeated call signature(s) on {names}; {looped}/{len(calls)} calls were repeats",
                  [s for group in loops.values() for s in group])


#: dimension → that harness's definition
HARNESS_SCORERS: dict[str, ScorerFn] = {
    "task_completion": task_completion,
    "tool_selection": tool_selection,
    "step_efficiency": step_efficiency,
    "error_recovery": error_recovery,
    "budget_adherence": budget_adherence,
    "loop_detection": loop_detection,
}
