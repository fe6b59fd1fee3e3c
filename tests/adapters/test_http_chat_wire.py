"""The lean chat client sends what the openai SDK sends and reads replies and errors as it does.

Both clients talk to the same FakeOpenAIServer over loopback; the SDK is the reference.
"""

from __future__ import annotations

import openai
import pytest

from aeh.adapters._chat import assistant_message
from aeh.adapters._http_chat import HttpChatClient
from aeh.llm import chat_completion, describe_failure
from aeh.testing.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.local_http

TOOLS = [{"type": "function", "function": {
    "name": "calculator", "description": "Évalue une expression — 2×3",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}}]
REQUEST = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "system", "content": "Be brief."},
                 {"role": "user", "content": "Combien font 17 × 3 ? «réponds» 🙂"},
                 {"role": "assistant", "content": "", "tool_calls": [
                     {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\": \"17*3\"}"}}]},
                 {"role": "tool", "tool_call_id": "call_1", "content": "51"}],
    "temperature": 0.0, "max_tokens": 64, "tools": TOOLS, "tool_choice": "auto",
}
WIRE_HEADERS = ["authorization", "content-type", "accept", "openai-organization", "openai-project"]


async def _both(srv: FakeOpenAIServer, **request):
    """(SDK result or error, lean result or error) for the same request."""
    out = []
    async with openai.AsyncOpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=0, timeout=5) as sdk:
        try:
            out.append(await sdk.chat.completions.create(**request))
        except Exception as exc:  # noqa: BLE001 — compared below
            out.append(exc)
    lean = HttpChatClient(srv.base_url, "sk-test", 5)
    try:
        out.append(await lean.post_chat(request))
    except Exception as exc:  # noqa: BLE001 — compared below
        out.append(exc)
    finally:
        await lean.close()
    return out


async def test_the_wire_request_is_the_sdks(monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-1")
    with FakeOpenAIServer([Reply.text("51")]) as srv:
        await _both(srv, **REQUEST)
        # aeh's SDK path (`http_client="openai"`): the SDK's own post, without create()'s transform
        async with openai.AsyncOpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=0) as sdk:
            await chat_completion(sdk, retries=0, **REQUEST)
    (sdk_line, lean_line, post_line), (sdk_body, lean_body, post_body) = srv.request_lines, srv.raw_bodies
    assert sdk_line == lean_line == post_line == ("POST", "/v1/chat/completions")
    assert srv.requests[0] == srv.requests[1] == srv.requests[2] == REQUEST
    # create() orders keys by its signature; the SDK's post keeps the caller's order, as aeh does:
    # byte for byte the same compact JSON with non-ASCII kept.
    assert lean_body == post_body and len(lean_body) == len(sdk_body)
    assert "×".encode() in lean_body
    sdk_headers, lean_headers, post_headers = srv.request_headers
    assert {h: post_headers.get(h) for h in WIRE_HEADERS} == {h: sdk_headers.get(h) for h in WIRE_HEADERS}
    assert {h: lean_headers.get(h) for h in WIRE_HEADERS} == {h: sdk_headers.get(h) for h in WIRE_HEADERS}
    assert lean_headers["authorization"] == "Bearer sk-test" and lean_headers["openai-project"] == "proj-1"
    assert lean_headers["user-agent"].startswith("aeh/")
    assert sdk_headers["user-agent"].startswith("AsyncOpenAI/Python")
    assert not [h for h in lean_headers if h.startswith("x-stainless")]
    assert [h for h in sdk_headers if h.startswith("x-stainless")]


async def test_a_reply_reads_as_the_sdks():
    reply = Reply.tool_calls([("calculator", {"expression": "17*3"}), ("decline", "")], content="thinking",
                             prompt_tokens=321, completion_tokens=17, model="served-model")
    reply.body["timings"] = {"prompt_ms": 12.5, "predicted_ms": 40.0}
    with FakeOpenAIServer([reply]) as srv:
        sdk, lean = await _both(srv, **REQUEST)
    assert lean.id == sdk.id and lean.model == sdk.model == "served-model"
    assert lean.choices[0].finish_reason == sdk.choices[0].finish_reason == "tool_calls"
    assert assistant_message(lean.choices[0].message) == assistant_message(sdk.choices[0].message)
    assert assistant_message(lean.choices[0].message)["tool_calls"][1]["function"] == {"name": "decline", "arguments": ""}
    assert (lean.usage.prompt_tokens, lean.usage.completion_tokens) == (sdk.usage.prompt_tokens, sdk.usage.completion_tokens) == (321, 17)
    assert lean.timings == sdk.model_extra["timings"]


@pytest.mark.parametrize("reply", [
    Reply.error(400, "tools are not supported"), Reply.error(401, "bad key"), Reply.error(404, "no such model"),
    Reply.error(422, "unprocessable"), Reply.error(429, "slow down", retry_after=1.5), Reply.error(500, "crashed"),
    Reply.error(503, "overloaded"), Reply(status=502, raw=b"<html>bad gateway</html>"), Reply(status=418, raw=b""),
], ids=lambda r: str(r.status))
async def test_an_http_error_is_the_sdks_exception(reply):
    with FakeOpenAIServer([reply]) as srv:
        url = srv.base_url
        sdk, lean = await _both(srv, **REQUEST)
    assert isinstance(sdk, openai.APIStatusError)
    assert type(lean) is type(sdk)
    assert str(lean) == str(sdk) and lean.status_code == sdk.status_code and lean.body == sdk.body
    assert lean.response.headers.get("retry-after") == sdk.response.headers.get("retry-after")
    assert describe_failure(lean, url) == describe_failure(sdk, url)


async def test_an_unparseable_reply_raises_the_same_value_error():
    with FakeOpenAIServer([Reply.garbage(b"{not json")]) as srv:
        sdk, lean = await _both(srv, **REQUEST)
    assert isinstance(sdk, ValueError) and type(lean) is type(sdk) and str(lean) == str(sdk)


@pytest.mark.parametrize("raw", [b"[1, 2]", b"null", b"{\"object\": \"error\"}"])
async def test_a_reply_without_choices_has_none_either_way(raw):
    with FakeOpenAIServer([Reply(raw=raw)]) as srv:
        sdk, lean = await _both(srv, **REQUEST)
    assert not getattr(sdk, "choices", None) and not getattr(lean, "choices", None)
    if not isinstance(sdk, openai.BaseModel):
        assert lean == sdk


async def test_a_refused_connection_and_a_timeout_are_the_sdks_errors():
    with FakeOpenAIServer([Reply.text("late", delay_s=3)]) as srv:
        url = srv.base_url
        async with openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0, timeout=0.3) as sdk:
            with pytest.raises(openai.APITimeoutError) as sdk_timeout:
                await sdk.chat.completions.create(**REQUEST)
        lean = HttpChatClient(url, "k", 0.3)
        with pytest.raises(openai.APITimeoutError) as lean_timeout:
            await lean.post_chat(REQUEST)
        await lean.close()
    assert describe_failure(lean_timeout.value, url) == describe_failure(sdk_timeout.value, url)
    refused = FakeOpenAIServer().start()
    url = refused.base_url
    refused.stop()
    sdk, lean = await _both(type("Dead", (), {"base_url": url})(), **REQUEST)
    assert type(sdk) is type(lean) is openai.APIConnectionError
    assert describe_failure(lean, url) == describe_failure(sdk, url) == f"connection refused at {url}"
