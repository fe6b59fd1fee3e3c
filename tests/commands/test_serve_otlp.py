"""`aeh serve otlp`: the OpenTelemetry SDK's own exporter sends traces, the stored run grades them."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.importers import serve_otlp

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

_GOOD = "There are 126 boxes."


def _attr(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}


def _send_with_sdk(endpoint: str, runs: list[tuple[str, int, str]]) -> None:
    """One trace per (task, attempt, answer), as an instrumented agent would export them."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    tracer = provider.get_tracer("agent")
    for task, attempt, answer in runs:
        with tracer.start_as_current_span("invoke_agent") as agent:
            agent.set_attribute("eval.task_id", task)
            agent.set_attribute("eval.attempt", attempt)
            with tracer.start_as_current_span("execute_tool") as tool:
                tool.set_attribute("gen_ai.tool.name", "calculator")
                tool.set_attribute("gen_ai.tool.call.arguments", '{"expression": "(17 + 25) * 3"}')
                tool.set_attribute("gen_ai.tool.call.result", '{"result": 126}')
            agent.set_attribute("output.value", answer)
    provider.shutdown()


def _post(url: str, body: bytes, content_type: str = "application/json",
          encoding: str | None = None) -> tuple[int, dict[str, str], bytes]:
    headers = {"Content-Type": content_type, **({"Content-Encoding": encoding} if encoding else {})}
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _trace(task: str, answer: str, trace_id: str) -> dict[str, Any]:
    root = {"traceId": trace_id, "spanId": "1" * 16, "name": "agent", "startTimeUnixNano": "1000",
            "endTimeUnixNano": "9000", "attributes": [_attr("eval.task_id", task), _attr("output.value", answer)]}
    tool = {"traceId": trace_id, "spanId": "2" * 16, "parentSpanId": "1" * 16, "name": "execute_tool",
            "startTimeUnixNano": "2000", "endTimeUnixNano": "3000",
            "attributes": [_attr("gen_ai.tool.name", "calculator"),
                           _attr("gen_ai.tool.call.arguments", '{"expression": "(17 + 25) * 3"}'),
                           _attr("gen_ai.tool.call.result", '{"result": 126}')]}
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [tool, root]}]}]}


class _Served:
    """`serve_otlp` on a free loopback port, on a thread, stopped by the test."""

    def __init__(self, db: Path, **options: Any) -> None:
        self.stop = threading.Event()
        self.listening = threading.Event()
        self.url = ""
        self.run_id: str | None = None
        self.warnings: list[str] = []
        self._options = {"task_attribute": "eval.task_id", "attempt_attribute": "eval.attempt", **options}
        self._thread = threading.Thread(target=self._serve, args=(db,), daemon=True)

    def _ready(self, host: str, port: int) -> None:
        self.url = f"http://{host}:{port}"
        self.listening.set()

    def _serve(self, db: Path) -> None:
        self.run_id = serve_otlp("toy_math", db, port=0, ready=self._ready, stop=self.stop,
                                 warn=self.warnings.append, **self._options)

    def __enter__(self) -> _Served:
        self._thread.start()
        assert self.listening.wait(60)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(60)


@pytest.fixture
def served(db: Path) -> Iterator[_Served]:
    with _Served(db) as s:
        yield s


@pytest.mark.slow
def test_the_cli_grades_what_the_sdk_exporter_sends(db: Path) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen([sys.executable, "-m", "aeh.cli", "serve", "otlp", "--suite", "toy_math", "--port", "0",
                               "--task-attribute", "eval.task_id", "--attempt-attribute", "eval.attempt",
                               "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = line.split()[2].removesuffix("/v1/traces")
        _send_with_sdk(f"{url}/v1/traces", [("add_then_multiply", 0, _GOOD), ("add_then_multiply", 1, "12 boxes"),
                                            ("split_the_bill", 0, "no idea")])
        assert _post(f"{url}/v1/stop", b"")[0] == 200
        out, err = server.communicate(timeout=120)
    finally:
        server.kill()
    assert server.returncode == 0, err
    run_id = out.splitlines()[0]
    rows = aeh.attempts(run_id, db=db).sort_values(["task_id", "attempt"])
    verdicts = list(zip(rows["task_id"], rows["attempt"], rows["success"], strict=True))
    assert verdicts == [("add_then_multiply", 0, True), ("add_then_multiply", 1, False), ("split_the_bill", 0, False)]


def test_sdk_protobuf_traces_are_graded_into_one_run(db: Path) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    with _Served(db) as s:
        _send_with_sdk(f"{s.url}/v1/traces", [("add_then_multiply", 0, _GOOD), ("add_then_multiply", 1, "12 boxes")])
    assert s.run_id is not None
    rows = aeh.attempts(s.run_id, db=db).sort_values("attempt")
    assert rows["success"].tolist() == [True, False]


def test_the_stopped_run_is_finished_with_the_attempts_it_received(db: Path) -> None:
    with _Served(db) as s:
        assert _post(f"{s.url}/v1/traces", json.dumps(_trace("add_then_multiply", _GOOD, "a" * 32)).encode())[0] == 200
    assert s.run_id is not None
    info = aeh.runs(db=db).set_index("run_id").loc[s.run_id]
    assert (info["status"], info["attempts"]) == ("finished", 1)


def test_a_gzip_json_post_is_answered_with_partial_success(served: _Served) -> None:
    body = gzip.compress(json.dumps(_trace("add_then_multiply", _GOOD, "b" * 32)).encode())
    status, _, answer = _post(f"{served.url}/v1/traces", body, encoding="gzip")
    assert (status, json.loads(answer)) == (200, {"partialSuccess": {}})


def test_an_unknown_task_is_reported_in_the_answer(served: _Served) -> None:
    status, _, answer = _post(f"{served.url}/v1/traces", json.dumps(_trace("no_such_task", _GOOD, "c" * 32)).encode())
    assert json.loads(answer)["partialSuccess"] == {"rejectedSpans": "2",
                                                    "errorMessage": "task 'no_such_task' is not in suite 'toy_math'"}


def test_a_malformed_body_is_400_naming_the_field(served: _Served) -> None:
    document = _trace("add_then_multiply", _GOOD, "d" * 32)
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = "soon"
    status, _, answer = _post(f"{served.url}/v1/traces", json.dumps(document).encode())
    assert (status, "startTimeUnixNano" in json.loads(answer)["message"]) == (400, True)


def test_a_body_that_is_not_json_is_400(served: _Served) -> None:
    status, _, answer = _post(f"{served.url}/v1/traces", b"{not json")
    assert (status, json.loads(answer)["message"].startswith("the body is not valid JSON")) == (400, True)


def test_a_full_queue_answers_429_with_retry_after(db: Path) -> None:
    from aeh.importers._otel_live import LiveTraces
    from aeh.importers._otlp_http import OtlpReceiver
    from aeh.suite.loader import load_suite

    live = LiveTraces(load_suite("toy_math"), task_attribute="eval.task_id", queue_size=1)  # nothing drains it
    receiver = OtlpReceiver(live, port=0).start()
    try:
        url = "http://{}:{}/v1/traces".format(*receiver.address)
        _post(url, json.dumps(_trace("add_then_multiply", _GOOD, "e" * 32)).encode())
        status, headers, _ = _post(url, json.dumps(_trace("add_then_multiply", _GOOD, "f" * 32)).encode())
    finally:
        receiver.close()
    assert (status, headers.get("Retry-After")) == (429, "1")


@pytest.mark.parametrize(("change", "named"), [
    (lambda span: span["attributes"].append({"key": "n", "value": {"intValue": "9" * 5000}}), "intValue"),
    (lambda span: span.update(startTimeUnixNano="9000", endTimeUnixNano="10"), "endTimeUnixNano"),
])
def test_a_hostile_span_is_400_naming_the_field(served: _Served, change: Any, named: str) -> None:
    document = _trace("add_then_multiply", _GOOD, "e" * 32)
    change(document["resourceSpans"][0]["scopeSpans"][0]["spans"][0])
    status, _, answer = _post(f"{served.url}/v1/traces", json.dumps(document).encode())
    assert (status, named in json.loads(answer)["message"]) == (400, True), answer
