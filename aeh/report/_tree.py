"""An attempt's spans as a tree, plus the tier-2 localization: shared by the HTML trace and the widget."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aeh.models import GraderResult, Span, ToolCall

__all__ = ["SpanNode", "build_tree", "cited_span_ids", "localized_span_ids", "span_label", "walk"]


@dataclass
class SpanNode:
    span: Span
    depth: int = 0
    children: list[SpanNode] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """The span itself errored, or a grader it records did not pass."""
        attrs = self.span.attributes
        return self.span.status == "error" or attrs.get("passed") is False or bool(attrs.get("broken"))


def build_tree(spans: list[Span]) -> list[SpanNode]:
    """Roots (spans without a known parent) with their children, in start order."""
    nodes = {s.span_id: SpanNode(s) for s in spans}
    roots: list[SpanNode] = []
    for s in spans:
        parent = nodes.get(s.parent_span_id) if s.parent_span_id else None
        (parent.children if parent is not None else roots).append(nodes[s.span_id])

    def set_depth(node: SpanNode, depth: int) -> None:
        node.depth = depth
        for child in node.children:
            set_depth(child, depth + 1)

    for root in roots:
        set_depth(root, 0)
    return roots


def walk(roots: list[SpanNode]) -> list[SpanNode]:
    """Every node, depth first."""
    out: list[SpanNode] = []
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def localized_span_ids(spans: list[Span], graders: list[GraderResult]) -> dict[str, str]:
    """span_id → why it is highlighted, from tier-2 results (evidence `span_id` and/or `step_index`).

    A `step_index` without a `span_id` points at the step_index-th tool call span (0-based).
    Missing or unmatched evidence is tolerated: nothing is highlighted.
    """
    tool_spans = [s for s in spans if s.category == "tools"]
    known = {s.span_id for s in spans}
    found: dict[str, str] = {}
    for g in graders:
        if g.tier != 2:
            continue
        evidence: dict[str, Any] = g.evidence or {}
        reason = f"tier-2 {g.name}: " + str(evidence.get("reason") or evidence.get("explanation") or "localized here")
        span_id = evidence.get("span_id")
        if span_id in known:
            found[str(span_id)] = reason
            continue
        step = evidence.get("step_index")
        if isinstance(step, int) and 0 <= step < len(tool_spans):
            found[tool_spans[step].span_id] = reason + f" (step {step})"
    return found


def span_label(span: Span) -> str:
    """A one-line summary: name, then what matters for its category."""
    a = span.attributes
    duration = f" {span.end_ts - span.start_ts:.3f}s" if span.end_ts is not None else ""
    extra = ""
    if span.category == "model":
        tin, tout = a.get("gen_ai.usage.input_tokens"), a.get("gen_ai.usage.output_tokens")
        if tin is not None or tout is not None:
            extra = f" tokens {tin}→{tout}"
    elif span.category == "tools" and "args" in a:
        extra = " " + _short(a.get("args"))
    elif "passed" in a:
        extra = " passed" if a["passed"] else " n/a" if a["passed"] is None else " not passed"
        if a["passed"] is False:
            reason = _not_passed_reason(a)
            extra += f" — {_short(reason)}" if reason else ""
    elif span.category == "faults":
        extra = " " + _short({k: v for k, v in a.items() if k in ("fault", "kind", "mode", "tool")})
    if span.status == "error" and a.get("error") and a.get("passed") is not False:
        extra += f" — error: {_short(a['error'])}"
    return f"{span.name}{extra}{duration}"


def _not_passed_reason(a: dict[str, Any]) -> str | None:
    """Why a grader did not pass: its own message, else the telling part of its evidence.

    Graders record the bare word "failed" as their error; repeating it says nothing.
    """
    error = a.get("error")
    if error and str(error).strip().lower() not in ("failed", "fail", "false"):
        return str(error)
    raw = a.get("evidence")
    ev: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if "expected" in ev and ("extracted" in ev or "got" in ev):
        return f"expected {_short(ev['expected'], 30)}, got {_short(ev.get('extracted', ev.get('got')), 30)}"
    for key, say in (("missing_from", "missing"), ("forbidden_called", "forbidden called"),
                     ("missing", "missing"), ("reason", "")):
        if ev.get(key):
            return f"{say} {_short(ev[key], 60)}".strip()
    return None


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else _json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False, sort_keys=False)


def cited_span_ids(tool_calls: list[ToolCall], scores: list[tuple[str, float, dict[str, Any]]]) -> dict[str, str]:
    """span id → "dimension 0.50, …" for every step a trajectory dimension's evidence cites.

    Steps are tool calls in call order (the scorers' indices); `scores` are (dimension, score,
    evidence) of one attempt. A cited index with no tool call (or no span) is skipped.
    """
    cited: dict[str, list[str]] = {}
    for dimension, score, evidence in sorted(scores):
        for index in evidence.get("steps") or []:
            if isinstance(index, int) and 0 <= index < len(tool_calls):
                span_id = tool_calls[index].span_id
                if span_id:
                    cited.setdefault(span_id, []).append(f"{dimension} {score:.2f}")
    return {sid: ", ".join(dims) for sid, dims in cited.items()}
