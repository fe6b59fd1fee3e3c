#!/usr/bin/env python3
"""An agent instrumented with OpenTelemetry (GenAI conventions), its traces graded by aeh.

    pip install -e '.[otel]'             # in the aeh checkout (the distribution is aeh-harness)
    python examples/otel_agent.py --out traces.otlp.json [--db runs.db]
    aeh import otel traces.otlp.json --suite toy_math --task-attribute eval.task_id   # the same, from the shell

The agent knows nothing of aeh: it opens an `invoke_agent` span per task with `eval.task_id`,
a `chat` span with `gen_ai.usage.*` for its (scripted) model call and an `execute_tool` span
for its own calculator, as any GenAI-instrumented agent would. The spans are written as OTLP
JSON (what a collector's file exporter stores) and `aeh import otel` grades them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

EXPRESSIONS = {"add_then_multiply": ("(17 + 25) * 3", "There are {} boxes."),
               "split_the_bill": ("84.60 / 4 + 2.00", "Each friend pays ${}.")}


def run_agent(tracer: object, task_id: str) -> None:
    expression, template = EXPRESSIONS[task_id]
    with tracer.start_as_current_span("invoke_agent calc-agent") as agent:  # type: ignore[attr-defined]
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.set_attribute("eval.task_id", task_id)
        with tracer.start_as_current_span("chat scripted-model") as chat:  # type: ignore[attr-defined]
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.usage.input_tokens", 80)
            chat.set_attribute("gen_ai.usage.output_tokens", 12)
        with tracer.start_as_current_span("execute_tool calculator") as tool:  # type: ignore[attr-defined]
            value = round(eval(expression, {"__builtins__": {}}), 2)  # noqa: S307 - a fixed expression
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "calculator")
            tool.set_attribute("gen_ai.tool.call.arguments", json.dumps({"expression": expression}))
            tool.set_attribute("gen_ai.tool.call.result", json.dumps({"result": value}))
        agent.set_attribute("output.value", template.format(value))


def otlp_json(spans: object) -> dict[str, object]:
    """The spans as protobuf's JSON mapping writes them (ids in base64; aeh also reads the spec's hex)."""
    return MessageToDict(encode_spans(spans))  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="traces.otlp.json")
    parser.add_argument("--db", default=None, help="store path (default: aeh's default store)")
    args = parser.parse_args(argv)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("calc-agent")
    for task_id in EXPRESSIONS:
        for _ in range(2):
            run_agent(tracer, task_id)
    Path(args.out).write_text(json.dumps(otlp_json(exporter.get_finished_spans())), encoding="utf-8")

    import aeh
    from aeh.plugins import import_otel_files

    run_id = import_otel_files([args.out], args.db, suite="toy_math", task_attribute="eval.task_id")
    print(aeh.attempts(run_id, db=args.db)[["task_id", "attempt", "success", "tokens_in"]].to_string())
    print(f"stored run {run_id}")
    return run_id


if __name__ == "__main__":
    main()
