"""One attempt's trace as HTML: messages in and out, tool calls and results, grader verdicts,
judge exchanges with their raw prompt and response, and the steps trajectory scorers cite.

Model spans carry their messages as OpenTelemetry GenAI attributes (`gen_ai.input.messages`,
`gen_ai.output.messages`: a JSON list of `{"role", "parts": [...]}` or `{"role", "content"}`);
a span without them shows whatever attributes it has.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from aeh.models import Attempt, Span
from aeh.report import build_tree, cited_span_ids, localized_span_ids, span_label, walk
from aeh.viewer._cells import money, verdict_html

__all__ = ["INPUT_MESSAGES", "OUTPUT_MESSAGES", "messages_html", "trace_html"]

INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
_JUDGE_KEYS = ("prompt", "raw_response", "parsed", "exchange")
_LIMIT = 20_000  # characters of one value shown; a huge tool result would freeze the page


def _pretty(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=2, default=str, ensure_ascii=False)
    return text if len(text) <= _LIMIT else text[:_LIMIT] + f"\n… ({len(text) - _LIMIT:,} more characters)"


def _pre(value: Any) -> str:
    return f"<pre>{escape(_pretty(value))}</pre>"


def _messages(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        return value
    return None


def _part_html(part: Any) -> str:
    if not isinstance(part, dict):
        return _pre(part)
    kind = part.get("type")
    if kind == "text" or (kind is None and "content" in part):
        return _pre(part.get("content", ""))
    if kind == "tool_call":
        return (f"<div class='aeh-tool-call'>→ tool call <code>{escape(str(part.get('name')))}</code>"
                f"{_pre(part.get('arguments'))}</div>")
    if kind == "tool_call_response":
        return f"<div class='aeh-tool-result'>← tool result{_pre(part.get('response', part.get('result')))}</div>"
    return _pre(part)


def messages_html(value: Any, title: str) -> str:
    """A GenAI message list (`[{"role", "parts"}]` or `[{"role", "content"}]`) as role-labelled blocks."""
    found = _messages(value)
    if found is None:
        return f"<div><b>{escape(title)}</b>{_pre(value)}</div>"
    blocks = []
    for m in found:
        role = escape(str(m.get("role", "?")))
        parts = m.get("parts")
        body = ("".join(_part_html(p) for p in parts) if isinstance(parts, list)
                else _pre(m.get("content", "")) if isinstance(m.get("content"), str)
                else _pre({k: v for k, v in m.items() if k != "role"}))
        blocks.append(f"<div class='aeh-message' data-role='{role}'><span class='aeh-role'>{role}</span>{body}</div>")
    return f"<div class='aeh-messages'><b>{escape(title)}</b> ({len(found)}){''.join(blocks)}</div>"


def _span_body(span: Span) -> str:
    attrs = dict(span.attributes)
    parts = []
    if span.category == "model":
        for key, title in ((INPUT_MESSAGES, "input messages"), (OUTPUT_MESSAGES, "output messages")):
            if key in attrs:
                parts.append(messages_html(attrs.pop(key), title))
        if not parts:
            parts.append("<div style='color:#555'>no messages recorded on this span (older runs keep only counts)"
                         "</div>")
    if any(k in attrs for k in ("prompt", "raw_response")):
        for key in _JUDGE_KEYS:
            if key in attrs:
                value = attrs.pop(key)
                parts.append(messages_html(value, f"judge {key}") if _messages(value) is not None
                             else f"<div><b>judge {escape(key)}</b>{_pre(value)}</div>")
    for key in ("args", "result", "error", "evidence", "final_output"):
        if key in attrs:
            parts.append(f"<div><b>{escape(key)}</b>{_pre(attrs.pop(key))}</div>")
    if attrs:
        parts.append(f"<div><b>attributes</b>{_pre(attrs)}</div>")
    return "".join(parts)


def _graders_html(record: Attempt) -> str:
    if not record.grader_results:
        return "<p><i>no grader verdicts stored</i></p>"
    rows = []
    for g in record.grader_results:
        mark = "✓" if g.passed else "—" if g.passed is None else "✗"
        colour = "#197a2c" if g.passed else "#555" if g.passed is None else "#b3261e"
        rows.append(f"<tr><td>{g.tier}</td><td>{escape(g.kind)}</td><td>{escape(g.name)}</td>"
                    f"<td style='color:{colour}'>{mark}</td><td>{escape(g.error or '')}</td>"
                    f"<td><pre>{escape(_pretty(g.evidence)[:2000])}</pre></td></tr>")
    return ("<b>grader verdicts</b><table class='aeh-graders'><thead><tr><th>tier</th><th>kind</th><th>name</th>"
            "<th>passed</th><th>error</th><th>evidence</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _scores_html(scores: list[tuple[str, float, dict[str, Any]]]) -> str:
    if not scores:
        return ""
    rows = "".join(f"<tr><td>{escape(d)}</td><td>{s:.2f}</td><td>{escape(', '.join(map(str, e.get('steps') or [])))}"
                   f"</td><td>{escape(str(e.get('details') or ''))[:300]}</td></tr>" for d, s, e in sorted(scores))
    return ("<b>trajectory dimensions</b><table class='aeh-scores'><thead><tr><th>dimension</th><th>score</th>"
            "<th>cited steps</th><th>details</th></tr></thead><tbody>" + rows + "</tbody></table>")


def trace_html(record: Attempt, spans: list[Span], scores: list[tuple[str, float, dict[str, Any]]],
               *, cited_only: bool = False) -> str:
    """The whole attempt on one page; with `cited_only`, only the spans a dimension cites (and tier-2 marks)."""
    cited = cited_span_ids(record.tool_calls, scores)
    localized = localized_span_ids(spans, record.grader_results)
    steps = {c.span_id: i for i, c in enumerate(record.tool_calls) if c.span_id}
    head = (f"<h3 style='margin:4px 0'>{escape(record.task_id)} #{record.attempt} · "
            f"{verdict_html(record.success, record.failure_bucket.value if record.failure_bucket else None)}</h3>"
            f"<div>run {escape(record.run_id)} · {record.steps} steps · {len(record.tool_calls)} tool calls · "
            f"cost {money(record.cost_usd)} · latency {record.latency_s:.2f} s · tokens "
            f"{record.tokens_in}→{record.tokens_out}</div>"
            f"<div><b>answer</b>{_pre(record.final_output or '—')}</div>"
            + (f"<div style='color:#b3261e'><b>error</b>{_pre(record.error)}</div>" if record.error else ""))
    rows = []
    for node in walk(build_tree(spans)):
        s = node.span
        if cited_only and s.span_id not in cited and s.span_id not in localized:
            continue
        marks = ""
        if s.span_id in steps:
            marks += f" <span class='aeh-step'>step {steps[s.span_id]}</span>"
        if s.span_id in cited:
            marks += f" <span class='aeh-cited' style='background:#ece5f7'>◆ cited: {escape(cited[s.span_id])}</span>"
        if s.span_id in localized:
            marks += f" <span class='aeh-localized' style='background:#fff3bf'>⚠ {escape(localized[s.span_id])}</span>"
        colour = "#fbe3e0" if node.failed else "#f4f5f7"
        open_ = " open" if s.category == "model" or s.span_id in cited else ""
        rows.append(f"<details class='aeh-span' data-category='{escape(s.category)}'{open_} "
                    f"style='margin-left:{node.depth * 16}px'><summary style='background:{colour}'>"
                    f"[{escape(s.category)}] {escape(span_label(s))}{marks}</summary>{_span_body(s)}</details>")
    spans_html = "".join(rows) or "<p><i>no span matches</i></p>"
    return (f"<div class='aeh-view aeh-trace'>{head}{_graders_html(record)}{_scores_html(scores)}"
            f"<b>spans</b> ({len(rows)} shown of {len(spans)})"
            f"<div class='aeh-spans'>{spans_html}</div></div>")
