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
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from aeh.models import Span

__all__ = ["RecordsSpans", "SpanHandle", "SpanNotes", "SpanRecorder", "SpanSink", "jsonable", "new_id"]

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
        span = Span(
            run_id=self.run_id,
            task_id=self.task_id,
            attempt=self.attempt,
            span_id=new_id(),
            parent_span_id=parent,
            category=category,
            name=name,
            start_ts=time.time(),
            attributes=dict(attributes),
        )
        self._depth[span.span_id] = depth
        for sink in self.sinks:
            sink.span_started(span, depth)
        return SpanHandle(span, depth)

    def _close(self, handle: SpanHandle) -> None:
        handle.span.end_ts = time.time()
        self.spans.append(handle.span)
        for sink in self.sinks:
            sink.span_ended(handle.span, handle.depth)

    @contextmanager
    def span(self, name: str, category: str, **attributes: Any) -> Iterator[SpanHandle]:
        """Open a child of the current span; an exception marks it failed and propagates."""
        handle = self._open(name, category, attributes)
        token = _current_span.set(handle.span_id)
        try:
            yield handle
        except BaseException as exc:
            if handle.span.status != "error":
                handle.fail(f"{type(exc).__name__}: {exc}")
            raise
        finally:
            _current_span.reset(token)
            self._close(handle)

    def event(self, name: str, category: str, status: str = "ok", **attributes: Any) -> Span:
        """Record a zero-length span under the current one (a fault, a cost entry …)."""
        handle = self._open(name, category, attributes)
        if status == "error":
            handle.span.status = "error"
        self._close(handle)
        return handle.span
