"""Is this run measuring the agent? Per-run checks of what a live run actually did.

Collected as attempts finish (`RunFidelity.add`) and stored on the run as
`RunConfig.live_checks`; `aeh.run_table` turns them into `attrs["warnings"]`, which the CLI run
table prints and the report shows in its header. The checks:

- **the endpoint**: a run where no model request got a reply (a dead or unreachable endpoint:
  nothing was measured), and requests the server refused (HTTP 4xx) once per message, naming
  the tool schema patterns a grammar-building server (llama.cpp) cannot take;
- **tools not offered**: model turns that offered tools but whose server-reported prompt tokens
  could not contain the schemas (`aeh.tools_dropped_suspect`, see `aeh.adapters._fidelity`),
  replies that ignored a `tool_choice` obliging a tool call (the server's doing), and a run
  where tools were offered on every answered turn and the agent made no tool call at all;
- **faults that never fired**: a fault rate > 0 with no fault injected (nothing to inject into
  when the agent calls no tool);
- **judge verdicts**: how many were attempted, valid, failed (by reason) or automatic (no judge
  call, e.g. an empty final output); unparseable shadow verdicts (`--judge-all`) apart, since
  they decide nothing and flag nothing;
- **time**: the attempt time split into agent, queue and grading seconds.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from aeh._util.lazy import lazy_module
from aeh.engine._spend import EvaluationSpend
from aeh.models import Attempt, Span
from aeh.tools.faults import FaultProfile

if TYPE_CHECKING:
    from aeh.grading import judge as grading_judge
    from aeh.grading import shadow as grading_shadow
else:
    # loaded by the first judge verdict a run counts: a report reads `warnings_from` without them
    grading_judge, grading_shadow = lazy_module("aeh.grading.judge"), lazy_module("aeh.grading.shadow")

__all__ = ["JUDGE_KINDS", "RunFidelity", "judge_verdict_status", "warnings_from"]

JUDGE_KINDS = ("judge", "judge_shadow")


def judge_verdict_status(passed: bool | None, evidence: dict[str, Any], error: str | None) -> str:
    """`valid`, `automatic` (decided without a judge call), `unparseable` (the judge's reply never
    parsed: counted as not passed) or `failed:<reason>`."""
    if evidence.get("automatic"):
        return "automatic"
    if evidence.get("judge_unparseable"):
        return "unparseable"
    if passed is not None:
        return "valid"
    return f"failed:{evidence.get('judge_error_kind') or grading_judge.judge_error_kind(error)}"


class RunFidelity:
    def __init__(self, fault_profile: dict[str, Any] | None = None) -> None:
        self.planned_rate = _planned_rate(fault_profile)
        self.attempts = 0
        self.model_turns = 0
        self.turns_with_tools = 0
        self.turns_with_task_tools = 0
        """Turns that offered a task tool (not only the `decline` pseudo-tool, as single_shot does)."""
        self.suspect_turns = 0
        self.turns_answered = 0
        """Model requests that got a reply (a failed or cancelled request has none)."""
        self.answered_task_tool_turns = 0
        self.tool_choice_ignored = 0
        self.refused: Counter[str] = Counter()
        """HTTP 4xx refusals of model requests, by the server's message."""
        self.refused_patterns: dict[str, dict[str, str]] = {}
        self.tool_choices: Counter[str] = Counter()
        self.tool_calls = 0
        self.faults_injected = 0
        self.judge: Counter[str] = Counter()
        self.agent_s = 0.0
        self.queue_s = 0.0
        self.grading_s = 0.0
        self.spend = EvaluationSpend()
        self.first_reply_exhausted = 0
        """Attempts whose budget ran out before the model server ever answered them."""

    def add(self, attempt: Attempt, spans: list[Span]) -> None:
        self.attempts += 1
        self.tool_calls += len(attempt.tool_calls)
        self.faults_injected += sum(c.injected_fault is not None for c in attempt.tool_calls)
        self.agent_s += attempt.agent_s or 0.0
        self.queue_s += attempt.queue_s or 0.0
        self.grading_s += attempt.grading_s or 0.0
        self.spend.add_spans(spans)
        for span in spans:
            if span.name == "agent" and span.attributes.get("aeh.budget.before_first_reply"):
                self.first_reply_exhausted += 1
            if span.category != "model" or span.name != "model:call":
                continue
            self._add_model_span(span)
        for g in attempt.grader_results:
            if g.kind in JUDGE_KINDS:
                status = judge_verdict_status(g.passed, g.evidence, g.error)
                self.judge[status] += 1
                if g.kind == grading_shadow.SHADOW_KIND and status == "unparseable":
                    self.judge["shadow_unparseable"] += 1

    def _add_model_span(self, span: Span) -> None:
        a = span.attributes
        self.model_turns += 1
        # A request that failed or was cut off leaves its span failed and without a reply.
        answered = "gen_ai.output.messages" in a or span.status != "error"
        self.turns_answered += answered
        if a.get("aeh.provider.refused_status"):
            message = str(a.get("aeh.provider.refused_message") or "")
            self.refused[message] += 1
            for p in a.get("aeh.request.schema_patterns") or []:
                self.refused_patterns.setdefault(f"{p.get('tool')}.{p.get('field')}", p)
        self.tool_choice_ignored += bool(a.get("aeh.tool_choice_ignored"))
        if a.get("aeh.request.tools_offered"):
            self.turns_with_tools += 1
            self.tool_choices[str(a.get("aeh.request.tool_choice"))] += 1
            if a.get("aeh.tools_dropped_suspect"):
                self.suspect_turns += 1
            if any(n != "decline" for n in a.get("gen_ai.request.tool_names") or []):
                self.turns_with_task_tools += 1
                self.answered_task_tool_turns += answered

    def summary(self) -> dict[str, Any]:
        failed = {k.split(":", 1)[1]: v for k, v in sorted(self.judge.items()) if k.startswith("failed:")}
        out: dict[str, Any] = {
            "attempts": self.attempts,
            "model_turns": self.model_turns,
            "turns_with_tools": self.turns_with_tools,
            "turns_with_task_tools": self.turns_with_task_tools,
            "tools_dropped_suspect_turns": self.suspect_turns,
            "model_turns_answered": self.turns_answered,
            "answered_turns_with_task_tools": self.answered_task_tool_turns,
            "tool_choice_ignored_turns": self.tool_choice_ignored,
            "refused": [{"message": m, "turns": n} for m, n in self.refused.most_common()],
            "refused_schema_patterns": list(self.refused_patterns.values()),
            "tool_choice": dict(self.tool_choices),
            "tool_calls": self.tool_calls,
            "faults_planned_rate": self.planned_rate,
            "faults_injected": self.faults_injected,
            "judge_verdicts": {
                "attempted": sum(self.judge.values()) - self.judge.get("automatic", 0)
                - self.judge.get("shadow_unparseable", 0),
                "valid": self.judge.get("valid", 0),
                "failed": sum(failed.values()),
                "failed_by_reason": failed,
                "unparseable": self.judge.get("unparseable", 0),
                "shadow_unparseable": self.judge.get("shadow_unparseable", 0),
                "automatic": self.judge.get("automatic", 0),
            },
            "time_s": {"agent": round(self.agent_s, 3), "queue": round(self.queue_s, 3),
                       "grading": round(self.grading_s, 3)},
            "evaluation_spend": self.spend.summary(),
            "first_reply_exhausted": self.first_reply_exhausted,
        }
        out["warnings"] = warnings_from(out)
        return out


def _planned_rate(profile: dict[str, Any] | None) -> float | None:
    if not profile:
        return None
    try:
        return FaultProfile.model_validate(profile).total_rate
    except Exception:  # an imported or older profile shape: no planned rate to check against
        return None


def warnings_from(checks: dict[str, Any]) -> list[str]:
    """The loud one-line warnings a run table and report print."""
    out: list[str] = []
    probe = checks.get("tools_probe") or {}
    if probe.get("dropped"):
        out.append(
            f"TOOLS DROPPED BY THE SERVER (preflight): a request with a tool reported "
            f"{probe.get('prompt_tokens_with')} prompt tokens, the same request without it "
            f"{probe.get('prompt_tokens_without')} (tool_choice {probe.get('tool_choice')}) — "
            + _dropped_advice([str(probe.get("tool_choice"))]))
    out += _endpoint_warnings(checks)
    turns = checks.get("turns_with_tools") or 0
    suspect = checks.get("tools_dropped_suspect_turns") or 0
    choices = list(checks.get("tool_choice") or {})
    choice = ", ".join(choices) or "unset"
    if suspect:
        out.append(
            f"TOOLS PROBABLY NOT SEEN BY THE MODEL: {suspect} of {turns} model turns offered tools but "
            f"the server reported too few prompt tokens to contain them (tool_choice {choice}) — "
            + _dropped_advice(choices))
    ignored = checks.get("tool_choice_ignored_turns") or 0
    if ignored:
        out.append(
            f"SERVER IGNORED tool_choice: {ignored} model turns sent tool_choice {choice}, which obliges a "
            "tool call, and the server replied without one — the server does not enforce tool_choice, "
            "so these replies say nothing about the agent's choice of tools")
    # Only turns that got a reply count: a dead endpoint offered tools to no model at all.
    answered = checks.get("model_turns_answered", checks.get("model_turns")) or 0
    task_turns = checks.get("answered_turns_with_task_tools", checks.get("turns_with_task_tools", turns)) or 0
    if task_turns and not checks.get("tool_calls") and task_turns == answered and not ignored:
        out.append(f"NO TOOL CALLS: tools were offered on all {task_turns} answered model turns and the agent "
                   f"made no tool call in {checks.get('attempts')} attempts (tool_choice {choice})")
    rate = checks.get("faults_planned_rate")
    if rate and not checks.get("faults_injected"):
        out.append(f"NO FAULT INJECTED: fault rate {rate:g} planned, 0 faults injected over "
                   f"{checks.get('tool_calls', 0)} tool calls — the agent made "
                   + ("no tool call to inject into" if not checks.get("tool_calls") else "too few tool calls"))
    out += _judge_warnings(checks.get("judge_verdicts") or {})
    return out + _first_reply_warnings(checks)


def _dropped_advice(choices: list[str]) -> str:
    """What to try when tools did not reach the prompt: tool_choice only if it is not set yet."""
    if not choices or set(choices) <= {"unset", "None", "auto"}:
        return ("some servers drop tools when tool_choice is unset; try --adapter-option "
                "tool_choice=auto or required")
    return (f"tool_choice is already {', '.join(choices)}: the server's chat template leaves tools out "
            "(llama-server: serve with --jinja --chat-template-file of a tool-aware template)")


def _endpoint_warnings(checks: dict[str, Any]) -> list[str]:
    out: list[str] = []
    turns = checks.get("model_turns") or 0
    if turns and checks.get("model_turns_answered") == 0 and not checks.get("refused"):
        # The cause is on the harness-errors line, named once.
        out.append(f"MODEL ENDPOINT NEVER ANSWERED: none of {turns} model requests got a reply — no model "
                   "turn completed, so no verdict of this run is about the agent (cause: see harness errors)")
    for refusal in checks.get("refused") or []:
        text = (f"SERVER REFUSED THE REQUEST on {refusal['turns']} model turns: {refusal['message']}")
        patterns = checks.get("refused_schema_patterns") or []
        likely = [p for p in patterns if _grammar_unfriendly(str(p.get("pattern")))]
        if patterns and _GRAMMAR_TROUBLE.search(refusal["message"]):
            named = "; ".join(f"tool {p['tool']} field {p['field']} pattern {p['pattern']}"
                              for p in likely or patterns)
            text += (f" — the tool schemas carry regex patterns ({named}) that a server building a grammar "
                     "from them (llama.cpp) may not support: the server's limit, not the agent's failure")
            if likely:
                text += " (llama-server takes no shorthand class such as \\d and needs ^…$: [0-9] passes)"
        out.append(text)
    return out


#: A refusal about the schemas (llama.cpp: "failed to parse grammar", "JSON schema conversion failed").
_GRAMMAR_TROUBLE = re.compile(r"grammar|schema|pattern|parser", re.IGNORECASE)


def _grammar_unfriendly(pattern: str) -> bool:
    """A pattern llama.cpp's schema-to-grammar conversion refuses (checked against llama-server:
    `^T\\d{4}$` fails to parse, an unanchored `T\\d{4}` must start with ^ and end with $;
    `^T[0-9]{4}$` and `^(a|b)$` are accepted)."""
    return bool(re.search(r"\\[dDwWsS]", pattern)) or not (pattern.startswith("^") and pattern.endswith("$"))


def _first_reply_warnings(checks: dict[str, Any]) -> list[str]:
    """The warning for attempts whose budget ran out before the model server ever answered them."""
    n = checks.get("first_reply_exhausted") or 0
    if not n:
        return []
    return [f"MODEL SERVER NEVER ANSWERED: {n} of {checks.get('attempts', n)} attempts ran out of budget "
            "waiting for the server's first reply (budget_exhausted, but the agent never got a turn) — the "
            "server is queueing more requests than it serves; limit requests in flight with "
            "--max-connections N (time waiting for a slot is queue time, not the agent's)"]


def _judge_warnings(judge: dict[str, Any]) -> list[str]:
    out: list[str] = []
    shadow = judge.get("shadow_unparseable") or 0
    deciding = (judge.get("unparseable") or 0) - shadow
    if deciding:
        out.append(f"JUDGE COULD NOT PARSE ITS VERDICT on {deciding} attempt(s): the agent's "
                   "answer derailed it; counted as not passed (bucket judge_unparseable) and flagged "
                   "for review — see `aeh review`")
    if shadow:
        out.append(f"SHADOW JUDGE COULD NOT PARSE ITS VERDICT on {shadow} attempt(s): those shadow verdicts "
                   "are left out of judge agreement (κ); the attempts keep the verdicts of their own "
                   "graders and are not flagged for review")
    if judge.get("failed"):
        reasons = ", ".join(f"{k} {v}" for k, v in (judge.get("failed_by_reason") or {}).items())
        out.append(f"JUDGE VERDICTS FAILED: {judge['failed']} of {judge.get('attempted', 0)} judge calls "
                   f"gave no verdict ({reasons}); {judge.get('valid', 0)} valid, "
                   f"{judge.get('automatic', 0)} automatic (no judge call)")
    return out
