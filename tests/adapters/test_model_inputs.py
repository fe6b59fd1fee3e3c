"""Model spans keep what was sent: react's whole conversation per call, stored once, redacted."""

from __future__ import annotations

import json

import pytest
from adapters_support import Reply, calc_task

from aeh.importers import run_to_otlp
from tests.store_support import span_attributes

pytestmark = pytest.mark.local_http

KEY = "sk-proj-abcdefghijklmnopqrstuvwx12"


def _three_turns(server):
    return server([
        Reply.tool_calls([("calculator", {"expression": "17 + 25"})]),
        Reply.tool_calls([("calculator", {"expression": "42 * 3"})]),
        Reply.text("There are 126 boxes."),
    ])


def test_each_model_span_reads_back_with_its_whole_input(server, run_live):
    srv = _three_turns(server)
    res = run_live(srv)
    spans = res.model_spans()
    assert len(spans) == 3
    for span, request in zip(spans, srv.requests, strict=True):
        # Exactly what the server received, message for message, tools included.
        assert span.attributes["gen_ai.input.messages"] == request["messages"]
        assert span.attributes["gen_ai.tool.definitions"] == request["tools"]
    assert [len(s.attributes["gen_ai.input.messages"]) for s in spans] == [2, 4, 6]
    assert spans[2].attributes["aeh.input.prefix_len"] == 4  # where its new messages start


def test_the_store_keeps_a_growing_conversation_once(server, run_live):
    res = run_live(_three_turns(server))
    stored = [json.loads(a) for a in span_attributes(res.db, "category = 'model'")]
    assert "gen_ai.input.messages" in stored[0] and "aeh.input.messages_new" not in stored[0]
    # Later calls keep only what is new since the previous call, and the tools once.
    assert [len(s.get("aeh.input.messages_new", [])) for s in stored[1:]] == [2, 2]
    assert all("gen_ai.input.messages" not in s and "gen_ai.tool.definitions" not in s for s in stored[1:])
    assert stored[1]["aeh.input.prefix_from"] == res.model_spans()[0].span_id


def test_a_key_in_a_message_is_redacted_in_the_store_and_the_export(server, run_live):
    srv = _three_turns(server)
    task = calc_task()
    task = task.model_copy(update={"prompt": f"{task.prompt} (my key is {KEY})"})
    res = run_live(srv, [task])
    assert KEY in json.dumps(srv.requests[0])  # the model did get it: redaction is the store's
    first = res.model_spans()[0].attributes["gen_ai.input.messages"]
    assert "[REDACTED:" in first[1]["content"] and KEY not in json.dumps(first)
    raw = b"".join(p.read_bytes() for p in res.db.parent.glob(res.db.name + "*"))
    assert KEY.encode() not in raw
    exported = json.dumps(run_to_otlp(res.run_id, res.store))
    assert KEY not in exported and "REDACTED" in exported


def test_spans_frame_restores_whole_inputs_too(server, run_live):
    res = run_live(_three_turns(server))
    frame = res.store.spans_frame(res.run_id).filter(category="model")
    inputs = [json.loads(a)["gen_ai.input.messages"] for a in frame["attributes"]]
    assert inputs == [s.attributes["gen_ai.input.messages"] for s in res.model_spans()]
