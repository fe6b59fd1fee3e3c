"""`aeh.trace`: model inputs stored compact and read back whole."""

from __future__ import annotations

from typing import Any

from aeh.models import Span
from aeh.trace import compact_inputs, full_inputs, genai_parts


def _model(span_id: str, ts: float, messages: list[Any], tools: list[Any] | None = None) -> Span:
    attrs: dict[str, Any] = {"gen_ai.input.messages": messages}
    if tools is not None:
        attrs["gen_ai.tool.definitions"] = tools
    return Span(run_id="r", task_id="t", attempt=0, span_id=span_id, category="model", name="model:call",
                start_ts=ts, attributes=attrs)


U = {"role": "user", "content": "hi"}
A = {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "function": {"name": "f", "arguments": "{}"}}]}
T = {"role": "tool", "tool_call_id": "c0", "content": "42"}
TOOLS = [{"type": "function", "function": {"name": "f"}}]


def test_compact_then_full_is_the_identity_on_inputs() -> None:
    spans = [_model("a", 1, [U], TOOLS), _model("b", 2, [U, A, T], TOOLS), _model("c", 3, [U, A, T, A, T], TOOLS)]
    stored = compact_inputs(spans)
    assert stored[2].attributes["aeh.input.messages_new"] == [A, T]
    assert "gen_ai.tool.definitions" not in stored[2].attributes
    back = full_inputs(stored)
    assert [s.attributes["gen_ai.input.messages"] for s in back] == [s.attributes["gen_ai.input.messages"]
                                                                    for s in spans]
    assert all(s.attributes["gen_ai.tool.definitions"] == TOOLS for s in back)
    assert full_inputs(back) == back  # reading twice changes nothing
    assert spans[1].attributes == {"gen_ai.input.messages": [U, A, T], "gen_ai.tool.definitions": TOOLS}


def test_an_input_that_does_not_continue_the_last_one_is_kept_whole() -> None:
    other = {"role": "user", "content": "a new question"}
    stored = compact_inputs([_model("a", 1, [U, A]), _model("b", 2, [other, A])])
    assert stored[1].attributes["gen_ai.input.messages"] == [other, A]


def test_a_missing_earlier_span_is_marked_incomplete_not_guessed() -> None:
    stored = compact_inputs([_model("a", 1, [U]), _model("b", 2, [U, A])])
    back = full_inputs(stored[1:])
    assert back[0].attributes["gen_ai.input.messages"] == [A] and back[0].attributes["aeh.input.incomplete"]


def test_chat_messages_in_the_genai_parts_shape() -> None:
    assert genai_parts([U, A, T]) == [
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c0", "name": "f", "arguments": {}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c0", "response": "42"}]},
    ]
