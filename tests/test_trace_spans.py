"""The recorder's spans are the spans validation would build, and its scopes nest and fail as
`with` blocks should."""

from __future__ import annotations

import pytest

from aeh.models import Span
from aeh.trace import SpanRecorder


def test_a_recorded_span_equals_the_validated_model() -> None:
    recorder = SpanRecorder("run-1", "task-a", 3)
    with recorder.span("model:call", "model", turn=1) as handle:
        handle.set(tokens=5)
    (span,) = recorder.spans
    validated = Span.model_validate(span.model_dump())
    assert span == validated
    assert span.model_fields_set == {"run_id", "task_id", "attempt", "span_id", "parent_span_id", "category",
                                     "name", "start_ts", "attributes"} | {"end_ts"}
    assert span.model_dump(exclude_unset=True).keys() == span.model_fields_set
    assert span.end_ts is not None and span.end_ts >= span.start_ts
    assert span.attributes == {"turn": 1, "tokens": 5}


def test_scopes_nest_and_an_exception_marks_the_span_failed() -> None:
    recorder = SpanRecorder("run-1", "task-a", 0)
    with pytest.raises(ValueError, match="boom"), recorder.span("attempt", "scheduler") as root:
        with recorder.span("agent", "scheduler") as agent:
            assert agent.depth == root.depth + 1
        raise ValueError("boom")
    agent_span, root_span = recorder.spans
    assert agent_span.parent_span_id == root_span.span_id and agent_span.status == "ok"
    assert root_span.status == "error" and root_span.attributes["error"] == "ValueError: boom"
    with recorder.span("after", "scheduler"):
        pass
    assert recorder.spans[-1].parent_span_id is None  # the failed scope reset the current span
