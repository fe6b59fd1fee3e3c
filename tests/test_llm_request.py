"""`aeh.llm.chat_completion` sends exactly what `client.chat.completions.create` sends.

It posts the body itself (skipping the SDK's per-call TypedDict transform, ~1 ms of CPU), so the
wire request — body, path, auth header — and the parsed reply must match the SDK's own.
"""

from __future__ import annotations

import pytest
from openai.types.chat import ChatCompletion

from aeh.adapters._chat import DECLINE_TOOL
from aeh.llm import ProviderError, chat_completion, make_client
from aeh.testing.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.local_http

REQUEST = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "add 2 and 3"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "5"},
    ],
    "temperature": 0.0,
    "max_tokens": 64,
    "tools": [DECLINE_TOOL],
    "tool_choice": "auto",
    "response_format": {"type": "json_schema", "json_schema": {"name": "V", "schema": {"type": "object"}}},
}


async def test_the_wire_request_and_the_reply_match_the_sdk_create():
    with FakeOpenAIServer([Reply.tool_calls([("add", {"a": 1, "b": 2})], content="thinking")]) as server:
        client = make_client(server.base_url, "sk-test")
        try:
            ours = await chat_completion(client, retries=0, **REQUEST)
            theirs = await client.chat.completions.create(**REQUEST)
        finally:
            await client.close()
    assert server.requests[0] == server.requests[1] == REQUEST
    ours_headers, their_headers = server.request_headers
    assert ours_headers["authorization"] == their_headers["authorization"] == "Bearer sk-test"
    assert ours_headers["content-type"] == their_headers["content-type"] == "application/json"
    assert type(ours) is type(theirs) is ChatCompletion
    assert ours.model_dump(exclude={"id"}) == theirs.model_dump(exclude={"id"})
    assert ours.choices[0].message.tool_calls[0].function.name == "add"


async def test_http_errors_still_map_to_provider_errors():
    with FakeOpenAIServer([Reply.error(400, "bad tool schema")]) as server:
        client = make_client(server.base_url, "sk-test")
        try:
            with pytest.raises(ProviderError, match="bad tool schema") as caught:
                await chat_completion(client, retries=0, **REQUEST)
        finally:
            await client.close()
    assert caught.value.kind == "refused" and caught.value.status_code == 400
