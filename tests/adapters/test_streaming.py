"""Live adapters stream their requests: the reply read back from server-sent events is the reply a
plain request gets, and a budget cut mid-reply hangs up at once and books the tokens that arrived.

Unit tests feed `StreamReply` by hand; the rest talk to a FakeOpenAIServer over loopback, which
streams as llama.cpp and OpenAI do (aeh/testing/openai_server.py).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time

import openai
import pytest
from adapters_support import Reply, calc_task

from aeh.adapters._chat import assistant_message
from aeh.adapters._http_chat import HttpChatClient
from aeh.adapters._stream import StreamError, StreamReply, StreamTruncated
from aeh.llm import ProviderError, chat_completion
from aeh.testing.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.local_http


def _sse(*events: object) -> bytes:
    return b"".join(b"data: " + (e if isinstance(e, bytes) else json.dumps(e).encode()) + b"\n\n" for e in events)


def _chunk(delta: dict, finish: str | None = None, **top: object) -> dict:
    return {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **top}


LLAMA_LIKE_STREAM = _sse(
    _chunk({"role": "assistant", "content": None}),
    _chunk({"content": "The"}), _chunk({"content": " answer"}),
    _chunk({"reasoning_content": "think"}), _chunk({"reasoning_content": "ing"}),
    _chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                            "function": {"name": "calculator", "arguments": ""}}]}),
    _chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "add"}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"expression\": "}}]}),
    _chunk({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "\"2*3\"}"}}]}),
    _chunk({}, "tool_calls", timings={"prompt_ms": 10.0, "predicted_ms": 30.0}),
    {"id": "c1", "model": "m", "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7,
                                                        "total_tokens": 18}},
    b"[DONE]")


def test_a_stream_fed_a_byte_at_a_time_reads_back_as_the_whole_reply():
    stream = StreamReply()
    for i in range(len(LLAMA_LIKE_STREAM)):
        stream.feed(LLAMA_LIKE_STREAM[i:i + 1])
    reply = stream.reply()
    (choice,) = reply["choices"]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["role"] == "assistant" and message["content"] == "The answer"
    assert message["reasoning_content"] == "thinking"
    assert message["tool_calls"] == [
        {"id": "call_a", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\": \"2*3\"}"}},
        {"id": "call_b", "type": "function", "function": {"name": "add", "arguments": "{}"}}]
    assert reply["usage"]["prompt_tokens"] == 11 and reply["timings"]["predicted_ms"] == 30.0
    assert reply["id"] == "c1" and reply["model"] == "m" and reply["object"] == "chat.completion"
    assert stream.output_events == 7 and stream.done  # 2 content + 5 tool-call deltas


def test_comments_crlf_and_a_last_event_without_its_blank_line():
    stream = StreamReply()
    stream.feed(b": keep-alive\r\n\r\n" + _sse(_chunk({"content": "hi"})).replace(b"\n", b"\r\n")
                + b"data: " + json.dumps(_chunk({}, "stop")).encode())
    assert stream.reply()["choices"][0]["message"]["content"] == "hi"


def test_a_stream_cut_short_is_truncated_not_a_reply():
    stream = StreamReply()
    stream.feed(_sse(_chunk({"content": "The"}), _chunk({"content": " ans"})))
    assert stream.output_events == 2
    with pytest.raises(StreamTruncated, match="before \\[DONE\\]"):
        stream.reply()


def test_an_error_event_carries_its_status():
    stream = StreamReply()
    with pytest.raises(StreamError) as caught:
        stream.feed(_sse({"error": {"code": 400, "message": "the context is full", "type": "exceed_context_size_error"}}))
    assert caught.value.status == 400 and "the context is full" in str(caught.value)
    with pytest.raises(StreamError) as caught:
        StreamReply().feed(_sse({"error": {"message": "boom"}}))
    assert caught.value.status == 500


REQUEST = {"model": "fake-model", "messages": [{"role": "user", "content": "What is 2*3? Use the tool."}]}


@pytest.mark.parametrize("transport", ["aeh", "httpx"])
@pytest.mark.parametrize("reply", [
    Reply.text("There are 126 boxes, counted twice.", prompt_tokens=41, completion_tokens=9),
    Reply.tool_calls([("calculator", {"expression": "(17 + 25) * 3"}), ("calculator", "{\"expression\": \"1\"}")],
                     content="Let me compute.")], ids=["text", "tool_calls"])
async def test_a_streamed_reply_is_the_plain_reply(transport, reply):
    with FakeOpenAIServer([reply], timings=True) as srv:
        client = HttpChatClient(srv.base_url, "k", 5, transport=transport)
        try:
            plain = await client.post_chat(REQUEST)
            streams: list = []
            streamed = await client.post_chat({**REQUEST, "stream": True, "stream_options": {"include_usage": True}},
                                              streams=streams)
        finally:
            await client.close()
    assert srv.requests[1]["stream"] is True and "stream" not in srv.requests[0]
    (stream,) = streams
    assert stream.done and stream.output_events == srv.chunks_sent > 1
    assert assistant_message(streamed.choices[0].message) == assistant_message(plain.choices[0].message)
    assert streamed.choices[0].finish_reason == plain.choices[0].finish_reason
    assert streamed.usage == plain.usage and streamed.model == plain.model
    def processing(timings: dict) -> dict:  # the fake's queued_ms is measured per request
        return {k: v for k, v in timings.items() if k != "queued_ms"}

    assert processing(streamed.timings) == processing(plain.timings)


async def test_a_server_that_ignores_stream_is_read_as_json():
    with FakeOpenAIServer([Reply.text("126")], ignore_stream=True) as srv:
        client = HttpChatClient(srv.base_url, "k", 5)
        try:
            reply = await client.post_chat({**REQUEST, "stream": True})
        finally:
            await client.close()
    assert reply.choices[0].message.content == "126" and srv.chunks_sent == 0


@pytest.mark.parametrize(("code", "retried"), [(500, True), (400, False)])
async def test_an_error_event_is_the_servers_status_error(code, retried):
    error = Reply(raw=_sse({"error": {"code": code, "message": "slot failed", "type": "server_error"}}),
                  headers={"content-type": "text/event-stream"})
    with FakeOpenAIServer([error]) as srv:
        client = HttpChatClient(srv.base_url, "k", 5)
        try:
            with pytest.raises(ProviderError, match="slot failed") as caught:
                await chat_completion(client, retries=1, backoff_s=0.01, **REQUEST, stream=True)
        finally:
            await client.close()
    assert caught.value.status_code == code
    assert len(srv.requests) == (2 if retried else 1)  # 5xx retried, 4xx refused at once


async def test_a_stream_that_stops_before_done_is_a_connection_error():
    cut = Reply(raw=_sse(_chunk({"content": "The"})), headers={"content-type": "text/event-stream"})
    with FakeOpenAIServer([cut]) as srv:
        client = HttpChatClient(srv.base_url, "k", 5)
        try:
            with pytest.raises(openai.APIConnectionError, match="before \\[DONE\\]"):
                await client.post_chat({**REQUEST, "stream": True})
        finally:
            await client.close()


# -- the live adapters --------------------------------------------------------------------


def test_the_adapters_stream_and_ask_for_usage(server, run_live):
    srv = server([Reply.tool_calls([("calculator", {"expression": "(17 + 25) * 3"})], prompt_tokens=80,
                                   completion_tokens=12),
                  Reply.text("There are 126 boxes.", prompt_tokens=95, completion_tokens=6)])
    res = run_live(srv)
    assert res.attempt().success
    assert all(r["stream"] is True and r["stream_options"] == {"include_usage": True} for r in srv.requests)
    first, second = res.model_spans()
    assert first.attributes["aeh.request.stream"] is True
    assert (first.attributes["gen_ai.usage.input_tokens"], first.attributes["gen_ai.usage.output_tokens"]) == (80, 12)
    assert not first.attributes.get("usage_estimated")
    assert res.attempt().tokens_in == 80 + 95


def test_stream_false_sends_the_plain_request(server, run_live):
    srv = server([Reply.text("There are 126 boxes.")])
    res = run_live(srv, [calc_task(graders=[{"kind": "numeric", "expected": 126}])], stream="false")
    assert res.attempt().success
    assert "stream" not in srv.requests[0] and "stream_options" not in srv.requests[0]
    assert res.model_spans()[0].attributes["aeh.request.stream"] is False


def test_a_budget_cut_mid_stream_hangs_up_at_once_and_books_the_tokens_that_arrived(server, run_live):
    essay = dataclasses.replace(Reply.text(" ".join(f"word{i}" for i in range(400))), stream_delay_s=0.02)
    srv = server([essay])
    res = run_live(srv, [calc_task(timeout_s=1.0)], retries=0)
    attempt = res.attempt()
    assert attempt.status == "budget_exhausted"
    # The server saw the hang-up at its next write: it stopped far short of the 400 words.
    deadline = time.monotonic() + 3.0
    while srv.disconnects < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert srv.disconnects == 1 and 0 < srv.chunks_sent < 400
    (cut,) = res.model_spans()
    a = cut.attributes
    assert a["aeh.usage.cut_off"] and a["usage_estimated"]
    # What arrived is booked as output (a floor: at most the chunks the server wrote).
    assert 0 < a["aeh.usage.cut_off_output_seen"] == a["gen_ai.usage.output_tokens"] <= srv.chunks_sent
    assert attempt.tokens_out == a["gen_ai.usage.output_tokens"]
    # The server had begun to answer: not "the model server never answered".
    assert a["aeh.model.before_first_reply"] is False
    assert not any(w.startswith("MODEL SERVER NEVER ANSWERED") for w in res.table.warnings)


@pytest.mark.slow  # a fresh interpreter imports aeh and the SDK: seconds
def test_the_sdk_is_imported_at_warm_up_not_inside_the_first_attempt():
    """Every request reads the SDK's error classes; importing them took seconds on a loaded machine,
    and inside the first attempt that cut its budget before the model call was sent."""
    code = ("import asyncio, sys\n"
            "from aeh.adapters.single_shot import SingleShotAdapter\n"
            "adapter = SingleShotAdapter(model='m', base_url='http://127.0.0.1:9/v1')\n"
            "before = 'openai' in sys.modules\n"
            "asyncio.run(adapter.warm_up())\n"
            "print(before, 'openai' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["False", "True"]
