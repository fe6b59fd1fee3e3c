"""OpenTelemetry both ways: export to a file and to a loopback OTLP/HTTP receiver, import, round trip."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.api import open_store
from aeh.cli import main as cli_main
from aeh.errors import ValidationError
from aeh.importers._otel import import_otel_files, otlp_to_trajectories, run_to_otlp
from tests.examples_support import load_example


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("otel") / "runs.db"
    table = aeh.run("smoke", adapter="mock", model="mock-degraded", attempts=3, seed=5, db=db, progress=False)
    return db, str(table.run_id)


def _verdicts(run_id: str, db: Path) -> list[tuple[str, int, bool, str | None, str]]:
    rows = aeh.attempts(run_id, db=db).sort_values(["task_id", "attempt"])
    return [(r.task_id, r.attempt, bool(r.success), r.failure_bucket, r.status) for r in rows.itertuples()]


def test_export_uses_genai_conventions(source: tuple[Path, str]) -> None:
    db, run_id = source
    doc = run_to_otlp(run_id, db)
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    attrs = [{kv["key"]: kv["value"] for kv in s["attributes"]} for s in spans]
    tools = [a for a in attrs if a["aeh.category"]["stringValue"] == "tools"]
    models = [a for a in attrs if a["aeh.category"]["stringValue"] == "model"]
    assert tools and models
    assert all(a["gen_ai.operation.name"]["stringValue"] == "execute_tool" and "gen_ai.tool.name" in a
               and "gen_ai.tool.call.arguments" in a for a in tools)
    assert all(a["gen_ai.operation.name"]["stringValue"] == "chat" and "gen_ai.usage.input_tokens" in a
               for a in models)
    assert all(k.startswith(("gen_ai.", "aeh.")) for a in attrs for k in a if a not in models)
    # Model spans also carry OpenInference's flat attributes: what Phoenix shows as Input and Output.
    assert all(k.startswith(("gen_ai.", "aeh.", "llm.", "input.", "output.", "openinference."))
               for a in models for k in a)
    assert len({s["traceId"] for s in spans}) == 15  # one trace per attempt


def _model_inputs(run_id: str, db: Path) -> dict[tuple[str, int], list[Any]]:
    with open_store(db) as store:
        rows = store.spans_frame(run_id).filter(category="model").sort("task_id", "attempt", "start_ts")
    out: dict[tuple[str, int], list[Any]] = {}
    for task, attempt, attributes in rows.select("task_id", "attempt", "attributes").iter_rows():
        a = json.loads(attributes)
        out.setdefault((task, attempt), []).append((a.get("gen_ai.input.messages"), a.get("gen_ai.output.messages")))
    return out


def test_model_messages_export_in_both_conventions(source: tuple[Path, str]) -> None:
    db, run_id = source
    spans = run_to_otlp(run_id, db)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    model = next(s for s in spans if s["name"] == "model:call")
    a = {kv["key"]: next(iter(kv["value"].values())) for kv in model["attributes"]}
    sent = json.loads(a["gen_ai.input.messages"])
    assert sent[0]["role"] == "user" and sent[0]["parts"][0]["type"] == "text"
    assert a["llm.input_messages.0.message.role"] == "user"
    assert a["llm.input_messages.0.message.content"] == sent[0]["parts"][0]["content"]
    assert a["openinference.span.kind"] == "LLM" and json.loads(a["input.value"])[0]["role"] == "user"
    replied = json.loads(a["gen_ai.output.messages"])
    assert replied[0]["role"] == "assistant" and replied[0]["finish_reason"]
    later = [s for s in spans if s["name"] == "model:call" and any(
        kv["key"] == "llm.input_messages.2.message.role" for kv in s["attributes"])]
    assert later, "a later call exports its whole conversation, not only what was new"


def test_export_import_round_trip_keeps_attempts_and_verdicts(source: tuple[Path, str], tmp_path: Path) -> None:
    db, run_id = source
    out = tmp_path / "run.otlp.json"
    code, text, err = cli("export", "otel", run_id, "--db", str(db), "--out", str(out))
    assert code == 0, err
    code, text, err = cli("import", "otel", str(out), "--suite", "smoke", "--db", str(db))
    assert code == 0, err
    new_id = text.splitlines()[0].strip()
    assert _verdicts(new_id, db) == _verdicts(run_id, db)
    assert any(not v[2] for v in _verdicts(run_id, db))  # the round trip covers failures too
    before = aeh.attempts(run_id, db=db).sort_values(["task_id", "attempt"])
    after = aeh.attempts(new_id, db=db).sort_values(["task_id", "attempt"])
    assert after["tokens_in"].tolist() == before["tokens_in"].tolist()
    assert after["n_tool_calls"].tolist() == before["n_tool_calls"].tolist()
    # Every model call's messages come back as they were recorded.
    original = _model_inputs(run_id, db)
    assert _model_inputs(new_id, db) == original
    assert any(len(calls[-1][0]) > 2 for calls in original.values())


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[tuple[str, bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).bodies.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    _Receiver.bodies = []
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_export_to_an_otlp_http_endpoint(source: tuple[Path, str], receiver: str, tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    db, run_id = source
    code, text, err = cli("export", "otel", run_id, "--db", str(db), "--endpoint", receiver)
    assert code == 0, err
    assert "sent" in text
    assert _Receiver.bodies and all(path == "/v1/traces" for path, _ in _Receiver.bodies)
    received: list[dict[str, Any]] = []
    for _, body in _Receiver.bodies:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        received.append(MessageToDict(request))
    sent = run_to_otlp(run_id, db)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    got = [s for doc in received for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    assert len(got) == len(sent)
    assert {s["name"] for s in got} == {s["name"] for s in sent}
    # What the collector got imports as it is: protobuf's JSON mapping writes the ids in base64.
    assert all(len(s["traceId"]) == 24 for s in got)
    out = tmp_path / "received.json"
    out.write_text(json.dumps({"resourceSpans": [rs for doc in received for rs in doc["resourceSpans"]]}))
    new_id = import_otel_files([out], db, suite="smoke")
    assert _verdicts(new_id, db) == _verdicts(run_id, db)
    # The collector's copy keeps the recorded facts: latency within 1%, cost exactly.
    before = aeh.attempts(run_id, db=db).sort_values(["task_id", "attempt"])
    after = aeh.attempts(new_id, db=db).sort_values(["task_id", "attempt"])
    ratio = after["latency_s"].to_numpy() / before["latency_s"].to_numpy()
    assert ((ratio > 0.99) & (ratio < 1.01)).all()
    assert after["cost_usd"].tolist() == before["cost_usd"].tolist()
    assert _model_inputs(new_id, db) == _model_inputs(run_id, db)  # the protobuf bytes held the messages


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def test_import_openinference_and_genai_spans_with_a_custom_task_attribute(tmp_path: Path, db: Path) -> None:
    spans = [
        {"traceId": "a" * 32, "spanId": "1" * 16, "name": "my-agent", "startTimeUnixNano": "1000",
         "endTimeUnixNano": "9000", "attributes": [_attr("openinference.span.kind", "AGENT"),
                                                  _attr("eval.task", "add_then_multiply"),
                                                  _attr("output.value", "There are 126 boxes.")]},
        {"traceId": "a" * 32, "spanId": "2" * 16, "parentSpanId": "1" * 16, "name": "ChatOpenAI",
         "startTimeUnixNano": "2000", "endTimeUnixNano": "3000",
         "attributes": [_attr("openinference.span.kind", "LLM"), _attr("llm.model_name", "gpt-4o-mini"),
                        _attr("llm.token_count.prompt", 50), _attr("llm.token_count.completion", 10)]},
        {"traceId": "a" * 32, "spanId": "3" * 16, "parentSpanId": "1" * 16, "name": "execute_tool calculator",
         "startTimeUnixNano": "4000", "endTimeUnixNano": "5000",
         "attributes": [_attr("gen_ai.operation.name", "execute_tool"), _attr("gen_ai.tool.name", "calculator"),
                        _attr("gen_ai.tool.call.arguments", '{"expression": "(17 + 25) * 3"}'),
                        _attr("gen_ai.tool.call.result", '{"result": 126}')]},
    ]
    f = tmp_path / "agent.json"
    f.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "mine")]},
                                                "scopeSpans": [{"spans": spans}]}]}))
    with pytest.raises(ValidationError, match="eval.task"):
        otlp_to_trajectories(json.loads(f.read_text()), task_attribute="eval.task_id")
    code, out, err = cli("import", "otel", str(f), "--suite", "toy_math", "--task-attribute", "eval.task",
                         "--db", str(db))
    assert code == 0, err
    row = aeh.attempts(out.splitlines()[0].strip(), db=db).iloc[0]
    assert row["success"] and row["tokens_in"] == 50 and row["n_tool_calls"] == 1


def test_otel_example_makes_a_graded_run(tmp_path: Path, db: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    otel_agent = load_example("otel_agent")
    run_id = otel_agent.main(["--out", str(tmp_path / "t.json"), "--db", str(db)])
    rows = aeh.attempts(run_id, db=db)
    assert len(rows) == 4 and rows["success"].all() and (rows["tokens_in"] == 80).all()


def test_round_trip_keeps_injected_faults_cost_and_scores(tmp_path: Path, db: Path) -> None:
    table = aeh.run("smoke", adapter="mock", attempts=3, seed=3, db=db, progress=False,
                    fault_profile={"rates": {"500": 0.5}})
    run_id = str(table.run_id)
    out = tmp_path / "faulty.otlp.json"
    assert cli("export", "otel", run_id, "--db", str(db), "--out", str(out))[0] == 0
    new_id = import_otel_files([out], db, suite="smoke")
    before = aeh.attempts(run_id, db=db).sort_values(["task_id", "attempt"])
    after = aeh.attempts(new_id, db=db).sort_values(["task_id", "attempt"])
    assert before["n_injected_faults"].sum() > 0
    assert after["n_injected_faults"].tolist() == before["n_injected_faults"].tolist()
    assert _verdicts(new_id, db) == _verdicts(run_id, db)
    assert after["cost_usd"].round(9).tolist() == before["cost_usd"].round(9).tolist()
    faults = aeh.spans(new_id, db=db).query("category == 'faults'")
    assert len(faults) == before["n_injected_faults"].sum()
    aeh.scores(run_id, db=db)  # scored at run end; the import is scored the same way
    key = ["task_id", "attempt", "dimension"]
    s_before = aeh.scores(run_id, db=db).table.sort_values(key)[key + ["score"]].reset_index(drop=True)
    s_after = aeh.scores(new_id, db=db).table.sort_values(key)[key + ["score"]].reset_index(drop=True)
    assert len(s_before) > 0
    assert s_after.equals(s_before)


def test_import_reads_the_python_sdk_console_exporter(tmp_path: Path, db: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    out = tmp_path / "console.txt"
    with out.open("w") as sink:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sink)))
        tracer = provider.get_tracer("console-agent")
        with tracer.start_as_current_span("invoke_agent") as agent:
            agent.set_attribute("eval.task_id", "add_then_multiply")
            with tracer.start_as_current_span("chat") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
                chat.set_attribute("gen_ai.usage.input_tokens", 40)
                chat.set_attribute("gen_ai.usage.output_tokens", 9)
            with tracer.start_as_current_span("execute_tool") as tool:
                tool.set_attribute("gen_ai.tool.name", "calculator")
                tool.set_attribute("gen_ai.tool.call.arguments", '{"expression": "(17 + 25) * 3"}')
                tool.set_attribute("gen_ai.tool.call.result", '{"result": 126}')
            agent.set_attribute("output.value", "There are 126 boxes.")
        provider.shutdown()
    assert out.read_text().lstrip().startswith("{\n")  # pretty-printed spans, one after another
    new_id = import_otel_files([out], db, suite="toy_math", task_attribute="eval.task_id")
    row = aeh.attempts(new_id, db=db).iloc[0]
    assert row["success"] and row["tokens_in"] == 40 and row["n_tool_calls"] == 1


def test_an_empty_otlp_file_is_a_listed_problem(tmp_path: Path, db: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"resourceSpans": []}))
    code, out, err = cli("import", "otel", str(empty), "--suite", "smoke", "--db", str(db))
    assert code == 2 and "holds no spans" in err and "Traceback" not in err


def _agent_trace(trace: str, task: str, attempt: int, expression: str, result: float, answer: str) -> list[dict[str, Any]]:
    """One attempt as an instrumented agent records it: its task and attempt under eval.* attributes."""
    root = trace[:16]
    return [
        {"traceId": trace, "spanId": root, "name": "my-agent", "startTimeUnixNano": "1000",
         "endTimeUnixNano": "9000", "attributes": [_attr("openinference.span.kind", "AGENT"),
                                                  _attr("eval.task_id", task), _attr("eval.attempt", attempt),
                                                  _attr("output.value", answer)]},
        {"traceId": trace, "spanId": "f" * 15 + "1", "parentSpanId": root, "name": "execute_tool calculator",
         "startTimeUnixNano": "4000", "endTimeUnixNano": "5000",
         "attributes": [_attr("gen_ai.operation.name", "execute_tool"), _attr("gen_ai.tool.name", "calculator"),
                        _attr("gen_ai.tool.call.arguments", json.dumps({"expression": expression})),
                        _attr("gen_ai.tool.call.result", json.dumps({"result": result}))]},
    ]


def test_a_round_trip_keeps_the_task_attribute_the_run_was_imported_with(tmp_path: Path, db: Path) -> None:
    spans = [*_agent_trace("1" * 32, "add_then_multiply", 0, "(17 + 25) * 3", 126, "There are 126 boxes."),
             *_agent_trace("2" * 32, "add_then_multiply", 1, "17 + 25 * 3", 92, "There are 92 boxes."),
             *_agent_trace("3" * 32, "split_the_bill", 0, "84.60 / 4 + 2", 23.15, "Each friend pays $23.15."),
             *_agent_trace("4" * 32, "split_the_bill", 1, "84.60 / 4", 21.15, "Each friend pays $21.15.")]
    source = tmp_path / "agent.json"
    source.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "mine")]},
                                                     "scopeSpans": [{"spans": spans}]}]}))
    flags = ["--task-attribute", "eval.task_id", "--attempt-attribute", "eval.attempt"]
    code, out, err = cli("import", "otel", str(source), "--suite", "toy_math", *flags, "--db", str(db))
    assert code == 0, err
    imported = out.splitlines()[0].strip()

    exported = tmp_path / "exported.json"
    assert cli("export", "otel", imported, "--db", str(db), "--out", str(exported))[0] == 0
    doc = json.loads(exported.read_text())
    resource = {kv["key"]: kv["value"]["stringValue"] for kv in doc["resourceSpans"][0]["resource"]["attributes"]
                if "stringValue" in kv["value"]}
    assert (resource["aeh.task_attribute"], resource["aeh.attempt_attribute"]) == ("eval.task_id", "eval.attempt")
    carried = {(a["eval.task_id"]["stringValue"], a["eval.attempt"]["intValue"])
               for s in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
               for a in [{kv["key"]: kv["value"] for kv in s["attributes"]}]}
    assert carried == {("add_then_multiply", "0"), ("add_then_multiply", "1"), ("split_the_bill", "0"),
                       ("split_the_bill", "1")}

    code, out, err = cli("import", "otel", str(exported), "--suite", "toy_math", *flags, "--db", str(db))
    assert code == 0, err
    again = out.splitlines()[0].strip()
    assert _verdicts(again, db) == _verdicts(imported, db)
    assert [v[:3] for v in _verdicts(again, db)] == [("add_then_multiply", 0, True), ("add_then_multiply", 1, False),
                                                     ("split_the_bill", 0, True), ("split_the_bill", 1, False)]
    # and the re-imported run exports the same names again
    resource = run_to_otlp(again, db)["resourceSpans"][0]["resource"]["attributes"]
    assert {"key": "aeh.task_attribute", "value": {"stringValue": "eval.task_id"}} in resource


def test_a_run_of_aehs_own_exports_its_own_attribute_names(source: tuple[Path, str]) -> None:
    db, run_id = source
    resource = run_to_otlp(run_id, db)["resourceSpans"][0]["resource"]["attributes"]
    assert {"key": "aeh.task_attribute", "value": {"stringValue": "aeh.task_id"}} in resource
