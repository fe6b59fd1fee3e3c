"""Traces from the real OpenInference and OpenLLMetry instrumentation of the openai client, graded.

The agent below calls a scripted OpenAI-compatible server on loopback through the real `openai`
client, instrumented by the real instrumentation package of each convention; aeh sees only
the spans those libraries wrote (plus the agent's own tool span in the same convention).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.importers import import_otel_files
from aeh.testing.openai_server import FakeOpenAIServer, Reply

pytestmark = [
    pytest.mark.local_http,
    # opentelemetry-instrumentation-openai still declares a pydantic v1-style Config class
    pytest.mark.filterwarnings("ignore:Support for class-based `config` is deprecated:DeprecationWarning"),
]


def _tool_span_attributes(convention: str, expression: str, result: dict[str, Any]) -> dict[str, Any]:
    if convention == "openinference":
        return {"openinference.span.kind": "TOOL", "tool.name": "calculator",
                "input.value": json.dumps({"expression": expression}), "output.value": json.dumps(result)}
    # what OpenLLMetry's @tool decorator records
    return {"traceloop.span.kind": "tool", "traceloop.entity.name": "calculator",
            "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"expression": expression}}),
            "traceloop.entity.output": json.dumps(result)}


def _instrumentor(convention: str) -> Any:
    if convention == "openinference":
        module = pytest.importorskip("openinference.instrumentation.openai")
    else:
        module = pytest.importorskip("opentelemetry.instrumentation.openai")
    return module.OpenAIInstrumentor()


@pytest.mark.parametrize("convention", ["openinference", "openllmetry"])
def test_instrumented_openai_agent_becomes_a_graded_run(convention: str, tmp_path: Path, db: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    import openai
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = _instrumentor(convention)
    instrumentor.instrument(tracer_provider=provider)
    expression = "(17 + 25) * 3"
    replies = [Reply.tool_calls([("calculator", {"expression": expression})], model="gpt-4o-mini"),
               Reply.text("There are 126 boxes.", model="gpt-4o-mini")] * 2
    try:
        with FakeOpenAIServer(replies) as server, openai.OpenAI(base_url=server.base_url, api_key="test") as client:
            tracer = provider.get_tracer("my-agent")
            for _ in range(2):
                with tracer.start_as_current_span("agent") as root:
                    root.set_attribute("eval.task_id", "add_then_multiply")
                    messages: list[Any] = [{"role": "user", "content": "How many boxes?"}]
                    first = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
                    call = first.choices[0].message.tool_calls[0]
                    args = json.loads(call.function.arguments)
                    result = {"result": eval(args["expression"], {"__builtins__": {}})}  # noqa: S307
                    with tracer.start_as_current_span("calculator") as tool:
                        for key, value in _tool_span_attributes(convention, args["expression"], result).items():
                            tool.set_attribute(key, value)
                    messages += [first.choices[0].message, {"role": "tool", "tool_call_id": call.id,
                                                            "content": json.dumps(result)}]
                    client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    finally:
        instrumentor.uninstrument()
    out = tmp_path / "traces.json"
    out.write_text(json.dumps(MessageToDict(encode_spans(exporter.get_finished_spans()))))
    run_id = import_otel_files([out], db, suite="toy_math", task_attribute="eval.task_id", name=convention)
    rows = aeh.attempts(run_id, db=db)
    assert len(rows) == 2
    assert rows["success"].all(), rows[["final_output", "failure_bucket"]]
    assert (rows["final_output"] == "There are 126 boxes.").all()  # the model's last words, no explicit output
    assert (rows["tokens_in"] == 60 + 50).all() and (rows["tokens_out"] == 15 + 10).all()
    assert rows["cost_usd"].notna().all() and (rows["cost_usd"] > 0).all()  # gpt-4o-mini is in the price table
    assert (rows["n_tool_calls"] == 1).all()
    spans = aeh.spans(run_id, db=db)
    tool_args = aeh.span_attributes(spans.query("category == 'tools'")).map(lambda a: a["args"])
    assert all(a == {"expression": expression} for a in tool_args)
    assert (spans["category"] == "model").sum() == 4
