"""An Inspect sample's events as aeh spans, and its tool calls as aeh `ToolCall`s.

| Inspect event | aeh span |
| --- | --- |
| `span_begin` / `span_end` (solvers, a solver, a tool …) | `scheduler` span `TYPE:NAME`, same tree |
| `model` | `model` span `model:call`: `gen_ai.input.messages`, `gen_ai.output.messages`, usage, cost |
| `model` inside a scorer | `grading` span `judge:scorer`, the same attributes: the grader's spend, not the agent's |
| `tool` | `tools` span `tool:NAME`: arguments, result, error; also one `ToolCall` on the attempt |
| `error` | `scheduler` span `error`, status error, message and traceback |
| `sample_limit` | `scheduler` span `limit:TYPE`, status error |
| `score` | `grading` span `score:SCORER` (scorer spans are `grading` too) |

Other events (state, store, logger, info, sandbox …) are not kept. Times are the events' own
clocks (`timestamp`, `completed`), so span latencies are the recorded ones.

Imported only once the `inspect` extra is known to be installed (`_inspect.py` checks it).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from inspect_ai.event import (
    ErrorEvent,
    Event,
    ModelEvent,
    SampleLimitEvent,
    ScoreEvent,
    SpanBeginEvent,
    SpanEndEvent,
    ToolEvent,
)
from inspect_ai.model import ChatMessage, ModelUsage

from aeh.importers._inspect_usage import usage_cost, usage_tokens
from aeh.models import Span, SpanCategory, ToolCall, ToolErrorKind
from aeh.pricing import PriceTable

__all__ = ["TOOL_ERROR_KINDS", "events_to_spans", "message_dict"]

#: Inspect's `ToolCallError.type` → aeh's error kind. Types not listed (file_not_found, permission,
#: is_a_directory, unicode_decode, limit, approval, cancelled) are the tool's answer to the
#: agent's request, as a shell reports a missing file: the error is kept, the call is not a tool fault.
TOOL_ERROR_KINDS: dict[str, ToolErrorKind] = {
    "parsing": "invalid_args",
    "timeout": "timeout",
    "sandbox_unavailable": "unavailable",
    "unknown": "exception",
}


def _epoch(when: dt.datetime | None) -> float | None:
    return when.timestamp() if when is not None else None


def message_dict(message: ChatMessage) -> dict[str, Any]:
    """An Inspect chat message as an OpenAI-style message (role, text content, tool calls)."""
    out: dict[str, Any] = {"role": message.role, "content": message.text}
    if message.role == "assistant" and message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.function, "arguments": json.dumps(c.arguments)}}
                             for c in message.tool_calls]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
        out["name"] = message.function
    return out


class _Builder:
    """Walks one sample's events in order, opening spans under the Inspect span they belong to."""

    def __init__(self, key: tuple[str, str, int], root_id: str, prices: PriceTable) -> None:
        self.run_id, self.task_id, self.attempt = key
        self.root_id = root_id
        self.prices = prices
        self.spans: list[Span] = []
        self.calls: list[ToolCall] = []
        self._open: dict[str, Span] = {}  # Inspect span id → its aeh span
        self._scoring: set[str] = set()  # Inspect spans at or under a scorer
        #: the usage of model calls made by scorers (a model-graded scorer's judge), by model
        self.scorer_usage: dict[str, ModelUsage] = {}
        self._count = 0

    def _new(self, category: SpanCategory, name: str, inspect_span: str | None, start: float,
             end: float | None, attributes: dict[str, Any], ok: bool = True) -> Span:
        self._count += 1
        parent = self._open.get(inspect_span or "")
        span = Span(run_id=self.run_id, task_id=self.task_id, attempt=self.attempt,
                    span_id=f"{self.root_id.removesuffix('-root')}-e{self._count}",
                    parent_span_id=parent.span_id if parent is not None else self.root_id,
                    category=category, name=name, start_ts=start, end_ts=end,
                    status="ok" if ok else "error", attributes=attributes)
        self.spans.append(span)
        return span

    def add(self, event: Event) -> None:
        start = event.timestamp.timestamp()
        if isinstance(event, SpanBeginEvent):
            category: SpanCategory = "grading" if event.type in ("scorers", "scorer") else "scheduler"
            # the aeh span hangs under the Inspect span's parent, not the span the event sits in
            span = self._new(category, f"{event.type or 'span'}:{event.name}", event.parent_id, start, None,
                             {"inspect.span.id": event.id, "inspect.span.type": event.type})
            self._open[event.id] = span
            if event.type in ("scorers", "scorer") or (event.parent_id or "") in self._scoring:
                self._scoring.add(event.id)
        elif isinstance(event, SpanEndEvent):
            if event.id in self._open:
                self._open[event.id].end_ts = start
        elif isinstance(event, ModelEvent):
            self._model(event, start)
        elif isinstance(event, ToolEvent):
            self._tool(event, start)
        elif isinstance(event, ErrorEvent):
            self._new("scheduler", "error", event.span_id, start, start,
                      {"error": event.error.message, "traceback": event.error.traceback}, ok=False)
        elif isinstance(event, SampleLimitEvent):
            self._new("scheduler", f"limit:{event.type}", event.span_id, start, start,
                      {"inspect.limit.type": event.type, "inspect.limit.value": event.limit,
                       "message": event.message}, ok=False)
        elif isinstance(event, ScoreEvent):
            self._new("grading", f"score:{event.scorer or 'score'}", event.span_id, start, start,
                      {"value": event.score.value, "answer": event.score.answer,
                       "explanation": event.score.explanation, "target": event.target,
                       "intermediate": event.intermediate})

    def _model(self, event: ModelEvent, start: float) -> None:
        usage: ModelUsage | None = event.output.usage
        tokens_in, tokens_out = usage_tokens(usage)
        model = event.output.model or event.model
        cost, source = usage_cost({model: usage} if usage is not None else {}, self.prices)
        end = _epoch(event.completed) or (start + event.working_time if event.working_time is not None else None)
        output = [message_dict(c.message) for c in event.output.choices]
        grader = (event.span_id or "") in self._scoring
        if grader and usage is not None:
            self.scorer_usage[model] = self.scorer_usage[model] + usage if model in self.scorer_usage else usage
        self._new("grading" if grader else "model", "judge:scorer" if grader else "model:call", event.span_id,
                  start, end, ok=event.error is None, attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": event.model,
            "gen_ai.response.model": model, "gen_ai.input.messages": [message_dict(m) for m in event.input],
            "gen_ai.output.messages": output, "gen_ai.usage.input_tokens": tokens_in,
            "gen_ai.usage.output_tokens": tokens_out, "cost_usd": cost, "priced": cost is not None,
            **({"cost_source": source} if source else {}),
            **({"error": event.error} if event.error else {}),
            **({"inspect.cache": event.cache} if event.cache else {}),
        })

    def _tool(self, event: ToolEvent, start: float) -> None:
        end = _epoch(event.completed) or (start + event.working_time if event.working_time is not None else None)
        error = event.error
        kind = TOOL_ERROR_KINDS.get(error.type) if error is not None else None
        result = _result_text(event.result)
        span = self._new("tools", f"tool:{event.function}", event.span_id, start, end, ok=error is None, attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.function,
            "gen_ai.tool.call.id": event.id, "gen_ai.tool.type": "function", "args": dict(event.arguments),
            "result": result, **({"error": error.message, "inspect.error.type": error.type} if error else {}),
        })
        self.calls.append(ToolCall(name=event.function, args=dict(event.arguments), result=result,
                                   error=error.message if error is not None else None, error_kind=kind,
                                   span_id=span.span_id,
                                   latency_s=event.working_time or (max(0.0, end - start) if end else 0.0)))


def _result_text(result: object) -> Any:
    """A tool result as stored: text as is, content parts as their text, anything else as JSON-able."""
    if isinstance(result, str | int | float | bool) or result is None:
        return result
    if isinstance(result, list):
        return "\n".join(str(getattr(part, "text", None) or getattr(part, "type", part)) for part in result)
    return str(getattr(result, "text", None) or result)


def events_to_spans(events: Sequence[Event], key: tuple[str, str, int], root_id: str,
                    prices: PriceTable) -> tuple[list[Span], list[ToolCall], dict[str, ModelUsage]]:
    """The spans (under `root_id`), tool calls and scorers' model usage (by model) of one
    sample's events; `key` is (run, task, attempt)."""
    builder = _Builder(key, root_id, prices)
    for event in events:
        builder.add(event)
    return builder.spans, builder.calls, builder.scorer_usage
