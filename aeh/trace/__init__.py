"""The span recorder: every model call, tool call, fault and grading step becomes a span.

One recorder per attempt. The current span lives in a context variable, so nested `with
recorder.span(...)` blocks form a tree even when many attempts interleave on one event loop.
Finished spans go to every sink (logger, store) in the order they close.
"""

from __future__ import annotations

import contextvars
import json
import os
import random
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Protocol

from aeh.models import Span

__all__ = ["INPUT_MESSAGES", "OUTPUT_MESSAGES", "TOOL_DEFINITIONS", "RecordsSpans", "SpanHandle", "SpanNotes",
           "SpanRecorder", "SpanSink", "compact_attributes", "compact_inputs", "expand_attributes", "full_inputs",
           "genai_parts", "jsonable", "model_input", "new_id"]

_current_span: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "aeh_current_span", default=None
)


# One os.urandom per process, not per span: urandom costs ~80 µs a call in some sandboxes, and a
# run opens a dozen spans per attempt. 64 random bits keep ids unique across merged stores.
_ids = random.Random(int.from_bytes(os.urandom(16), "big"))
os.register_at_fork(after_in_child=lambda: _ids.seed(int.from_bytes(os.urandom(16), "big")))


def new_id() -> str:
    """A span id: 16 hex digits."""
    return f"{_ids.getrandbits(64):016x}"



def jsonable(value: Any) -> Any:
    """`value` if JSON can hold it, else its JSON rendering (pydantic models dumped, others as str)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:  # most tool arguments and results
        return value
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        if hasattr(value, "model_dump"):
            try:
                return value.model_dump(mode="json")
            except Exception:  # noqa: BLE001 - a best-effort rendering, never a crash
                pass
        return json.loads(json.dumps(value, default=str))

class SpanSink(Protocol):
    """Receives spans. `start` is for live logging; `end` carries the finished record."""

    def span_started(self, span: Span, depth: int) -> None: ...

    def span_ended(self, span: Span, depth: int) -> None: ...


class SpanNotes(Protocol):
    """What a block inside `recorder.span(...)` may do to its open span (`SpanHandle` is aeh's)."""

    def set(self, **attributes: Any) -> None: ...

    def fail(self, message: str, **attributes: Any) -> None: ...


class RecordsSpans(Protocol):
    """What graders, the judge and the chat client record through: a `SpanRecorder`, or a stand-in
    that drops everything when there is no attempt to record into."""

    def span(self, name: str, category: str, **attributes: Any) -> AbstractContextManager[SpanNotes]: ...

    def event(self, name: str, category: str, status: str = "ok", **attributes: Any) -> object: ...


class SpanHandle:
    """The open span a `with recorder.span(...)` block works on."""

    def __init__(self, span: Span, depth: int) -> None:
        self.span = span
        self.depth = depth

    @property
    def span_id(self) -> str:
        return self.span.span_id

    def set(self, **attributes: Any) -> None:
        self.span.attributes.update(attributes)

    def fail(self, message: str, **attributes: Any) -> None:
        self.span.status = "error"
        self.span.attributes["error"] = message
        self.span.attributes.update(attributes)


_SPAN_FIELDS = frozenset({"run_id", "task_id", "attempt", "span_id", "parent_span_id", "category", "name",
                          "start_ts", "attributes"})


def _new_span(run_id: str, task_id: str, attempt: int, span_id: str, parent: str | None, category: str,
              name: str, start_ts: float, attributes: dict[str, Any]) -> Span:
    """`Span(...)` without validation: every field comes from the recorder itself, typed, and a
    run opens a dozen spans an attempt (validating one costs more than the rest of opening it)."""
    span = Span.__new__(Span)
    object.__setattr__(span, "__dict__", {
        "run_id": run_id, "task_id": task_id, "attempt": attempt, "span_id": span_id,
        "parent_span_id": parent, "category": category, "name": name, "start_ts": start_ts,
        "end_ts": None, "status": "ok", "attributes": attributes,
    })
    object.__setattr__(span, "__pydantic_fields_set__", set(_SPAN_FIELDS))
    object.__setattr__(span, "__pydantic_extra__", None)
    object.__setattr__(span, "__pydantic_private__", None)
    return span


class _SpanScope:
    """`with recorder.span(...)`: the span opens on entering and closes on leaving the block (a
    class, not a generator: it is entered a dozen times an attempt)."""

    __slots__ = ("_attributes", "_category", "_handle", "_name", "_recorder", "_token")

    def __init__(self, recorder: SpanRecorder, name: str, category: str, attributes: dict[str, Any]) -> None:
        self._recorder, self._name, self._category, self._attributes = recorder, name, category, attributes

    def __enter__(self) -> SpanHandle:
        self._handle = handle = self._recorder._open(self._name, self._category, self._attributes)
        self._token = _current_span.set(handle.span_id)
        return handle

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        handle = self._handle
        if exc is not None and handle.span.status != "error":
            handle.fail(f"{type(exc).__name__}: {exc}")
        _current_span.reset(self._token)
        self._recorder._close(handle)


class SpanRecorder:
    """Opens spans for one attempt and hands finished ones to the sinks."""

    def __init__(
        self, run_id: str, task_id: str, attempt: int, sinks: list[SpanSink] | None = None
    ) -> None:
        self.run_id = run_id
        self.task_id = task_id
        self.attempt = attempt
        self.sinks = list(sinks or [])
        self.spans: list[Span] = []
        self._depth: dict[str, int] = {}

    def _open(self, name: str, category: str, attributes: dict[str, Any]) -> SpanHandle:
        parent = _current_span.get()
        if parent is not None and parent not in self._depth:
            parent = None  # a span of another recorder (e.g. nested runs) is not our parent
        depth = 0 if parent is None else self._depth[parent] + 1
        span = _new_span(self.run_id, self.task_id, self.attempt, new_id(), parent, category, name,
                         time.time(), dict(attributes))
        self._depth[span.span_id] = depth
        for sink in self.sinks:
            sink.span_started(span, depth)
        return SpanHandle(span, depth)

    def _close(self, handle: SpanHandle) -> None:
        handle.span.end_ts = time.time()
        self.spans.append(handle.span)
        for sink in self.sinks:
            sink.span_ended(handle.span, handle.depth)

    def span(self, name: str, category: str, **attributes: Any) -> _SpanScope:
        """Open a child of the current span; an exception marks it failed and propagates."""
        return _SpanScope(self, name, category, attributes)

    def event(self, name: str, category: str, status: str = "ok", **attributes: Any) -> Span:
        """Record a zero-length span under the current one (a fault, a cost entry …)."""
        handle = self._open(name, category, attributes)
        if status == "error":
            handle.span.status = "error"
        self._close(handle)
        return handle.span


# -- model inputs ---------------------------------------------------------------------------------
#: A model span's attributes for what it sent and got back (OpenTelemetry GenAI names). The messages
#: are chat messages: `{"role", "content", "tool_calls"?, "tool_call_id"?}`; `genai_parts` gives the
#: conventions' `{"role", "parts": [...]}` shape.
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
#: The stored (compact) form: a model span keeps only the messages that were not already the
#: first `PREFIX_LEN` messages of the input of the earlier model span `PREFIX_FROM`.
PREFIX_FROM = "aeh.input.prefix_from"
PREFIX_LEN = "aeh.input.prefix_len"
NEW_MESSAGES = "aeh.input.messages_new"
TOOLS_FROM = "aeh.tool.definitions_from"
INCOMPLETE = "aeh.input.incomplete"


def model_input(messages: Any = None, tools: Any = None) -> dict[str, Any]:
    """A model span's input attributes: a copy of `messages` (and `tools`) as they were sent, so
    the caller appending to its list afterwards does not change what the span says was sent."""
    out: dict[str, Any] = {}
    if messages is not None:
        out[INPUT_MESSAGES] = [dict(m) if isinstance(m, dict) else m for m in messages]
    if tools:
        out[TOOL_DEFINITIONS] = list(tools)
    return out


def _is_model(span: Span) -> bool:
    return span.category == "model"


def _by_attempt(spans: Sequence[Span]) -> dict[tuple[str, str, int], list[int]]:
    """Indexes of the model spans of each attempt, in start order (write order breaks ties)."""
    groups: dict[tuple[str, str, int], list[int]] = {}
    for i, s in enumerate(spans):
        if _is_model(s):
            groups.setdefault((s.run_id, s.task_id, s.attempt), []).append(i)
    for idx in groups.values():
        idx.sort(key=lambda i: spans[i].start_ts)
    return groups


def _common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x is not y and x != y:
            break
        n += 1
    return n


def compact_inputs(spans: Sequence[Span]) -> list[Span]:
    """The spans as the store keeps them: a model span whose input starts with the previous model
    call's input (a conversation growing turn by turn) keeps only the messages after that prefix,
    and tool definitions equal to the previous call's are kept once. `full_inputs` undoes it."""
    return [s if attrs is s.attributes else s.model_copy(update={"attributes": attrs})
            for s, attrs in zip(spans, compact_attributes(spans), strict=True)]


def compact_attributes(spans: Sequence[Span]) -> list[dict[str, Any]]:
    """The attributes `compact_inputs` gives each span, without copying the spans: a span's own
    attributes dict where nothing is compacted."""
    out = [s.attributes for s in spans]
    for idx in _by_attempt(spans).values():
        prev_id: str | None = None
        prev_messages: list[Any] | None = None
        tools_at: tuple[str, Any] | None = None
        for i in idx:
            attrs = spans[i].attributes
            messages = attrs.get(INPUT_MESSAGES)
            tools = attrs.get(TOOL_DEFINITIONS)
            new = None
            if isinstance(messages, list):
                k = _common_prefix(prev_messages, messages) if prev_messages is not None else 0
                if k and prev_id is not None:
                    new = dict(attrs)
                    del new[INPUT_MESSAGES]
                    new.update({PREFIX_FROM: prev_id, PREFIX_LEN: k, NEW_MESSAGES: messages[k:]})
                prev_id, prev_messages = spans[i].span_id, messages
            if tools is not None:
                if tools_at is not None and tools_at[1] == tools:
                    new = dict(attrs) if new is None else new
                    del new[TOOL_DEFINITIONS]
                    new[TOOLS_FROM] = tools_at[0]
                else:
                    tools_at = (spans[i].span_id, tools)
            if new is not None:
                out[i] = new
    return out


def expand_attributes(model_attrs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`full_inputs` over one attempt's model spans as {span_id: attributes}; returns the
    attributes that changed (a span whose earlier part is missing is marked `aeh.input.incomplete`)."""
    full: dict[str, list[Any] | None] = {}

    def messages_of(span_id: str, seen: frozenset[str]) -> list[Any] | None:
        if span_id in full:
            return full[span_id]
        attrs = model_attrs.get(span_id)
        if attrs is None or span_id in seen:
            return None
        if NEW_MESSAGES not in attrs:  # whole (never compacted, or already restored)
            got = attrs.get(INPUT_MESSAGES)
            full[span_id] = got if isinstance(got, list) else None
            return full[span_id]
        base = messages_of(str(attrs[PREFIX_FROM]), seen | {span_id})
        k = attrs.get(PREFIX_LEN)
        new = attrs.get(NEW_MESSAGES) or []
        ok = base is not None and isinstance(k, int) and len(base) >= k
        full[span_id] = (base[:k] + list(new)) if ok and base is not None and isinstance(k, int) else None
        return full[span_id]

    changed: dict[str, dict[str, Any]] = {}
    for span_id, attrs in model_attrs.items():
        if NEW_MESSAGES not in attrs and TOOLS_FROM not in attrs:
            continue
        new = dict(attrs)
        if NEW_MESSAGES in attrs:
            got = messages_of(span_id, frozenset())
            del new[NEW_MESSAGES]
            new[INPUT_MESSAGES] = got if got is not None else list(attrs.get(NEW_MESSAGES) or [])
            if got is None:
                new[INCOMPLETE] = True
        if TOOLS_FROM in attrs:
            source = model_attrs.get(str(attrs[TOOLS_FROM])) or {}
            if TOOL_DEFINITIONS in source:
                new[TOOL_DEFINITIONS] = source[TOOL_DEFINITIONS]
            else:
                new[INCOMPLETE] = True
            del new[TOOLS_FROM]
        changed[span_id] = new
    return changed


def full_inputs(spans: Sequence[Span]) -> list[Span]:
    """The spans with every model span's whole input (`gen_ai.input.messages`, and
    `gen_ai.tool.definitions`) restored from the store's compact form; other spans unchanged.

    A restored span keeps `aeh.input.prefix_len`: its input's first that many messages are the
    previous call's, the rest are new with this call."""
    out = list(spans)
    for idx in _by_attempt(spans).values():
        changed = expand_attributes({spans[i].span_id: spans[i].attributes for i in idx})
        for i in idx:
            if spans[i].span_id in changed:
                out[i] = spans[i].model_copy(update={"attributes": changed[spans[i].span_id]})
    return out


def genai_parts(messages: Any) -> list[dict[str, Any]]:
    """Chat messages in the GenAI conventions' shape: `{"role", "parts": [{"type": "text",
    "content"} | {"type": "tool_call", "id", "name", "arguments"} | {"type": "tool_call_response",
    "id", "response"}]}` (messages already in that shape pass through)."""
    out: list[dict[str, Any]] = []
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, dict):
            out.append({"role": "user", "parts": [{"type": "text", "content": str(m)}]})
            continue
        if isinstance(m.get("parts"), list):
            out.append(m)
            continue
        role = str(m.get("role") or "user")
        content = m.get("content")
        parts: list[dict[str, Any]] = []
        if role == "tool":
            parts.append({"type": "tool_call_response", "id": m.get("tool_call_id"), "response": content})
        elif isinstance(content, list):  # content parts (`{"type": "text", "text": …}`)
            parts.extend({"type": "text", "content": p.get("text", "")} if isinstance(p, dict)
                         and p.get("type") == "text" else {"type": str(p.get("type", "data"))
                                                           if isinstance(p, dict) else "text", "content": p}
                         for p in content)
        elif content not in (None, ""):
            parts.append({"type": "text", "content": str(content)})
        for call in m.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            fn: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
            args = fn.get("arguments", call.get("args"))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    pass
            parts.append({"type": "tool_call", "id": call.get("id"), "name": fn.get("name") or call.get("name"),
                          "arguments": args})
        entry: dict[str, Any] = {"role": role, "parts": parts}
        if m.get("finish_reason"):
            entry["finish_reason"] = m["finish_reason"]
        out.append(entry)
    return out
