"""Imports keep the source's facts: recorded times, tokens and costs, whole trajectories, and a file
of another format is refused with what it looks like."""

from __future__ import annotations

import datetime as dt
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.cli import main as cli_main

T0 = 1764500000.0


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _by_attempt(run_id: str, db: Path) -> Any:
    return aeh.attempts(run_id, db=db).sort_values(["task_id", "attempt"]).reset_index(drop=True)


def _price_file(tmp_path: Path, models: dict[str, tuple[float, float]]) -> Path:
    path = tmp_path / "prices.yaml"
    rows = "\n".join(f"  {m}: {{input_per_mtok: {i}, output_per_mtok: {o}}}" for m, (i, o) in models.items())
    path.write_text(f'version: "test-1"\ndate: "2026-12-01"\ncurrency: USD\nmodels:\n{rows}\n')
    return path


def _trajectory(attempt: int, *, calls: int = 1, model: str = "gpt-4o-mini", seconds: float = 3.8,
                **step: Any) -> dict[str, Any]:
    start = T0 + 100 * attempt
    steps: list[dict[str, Any]] = [{"kind": "model", "name": "plan", "model": model, "tokens_in": 480,
                                    "tokens_out": 40, "start_ts": start, "end_ts": start + seconds, **step}]
    for k in range(calls):
        steps.append({"kind": "tool", "name": "calculator", "args": {"expression": "(17 + 25) * 3"},
                      "result": {"result": 126}, "start_ts": start + seconds + k, "end_ts": start + seconds + k + 0.5})
    return {"task_id": "add_then_multiply", "attempt": attempt, "final_output": "There are 126 boxes.",
            "model": model, "start_ts": start, "end_ts": start + seconds + calls, "steps": steps}


def _write_jsonl(path: Path, trajectories: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in trajectories))
    return path


# -- OTLP round trip --------------------------------------------------------------------------
def test_otlp_round_trip_keeps_latency_within_1_percent_and_cost_exactly(tmp_path: Path, db: Path) -> None:
    # Priced by a table of its own: an import that re-priced from the shipped table would differ.
    prices = _price_file(tmp_path, {"mock-degraded": (7.0, 21.0)})
    table = aeh.run("smoke", adapter="mock", model="mock-degraded", attempts=2, seed=5, db=db, progress=False,
                    price_table=prices)
    run_id = str(table.run_id)
    out = tmp_path / "run.otlp.json"
    assert cli("export", "otel", run_id, "--db", str(db), "--out", str(out))[0] == 0
    code, text, err = cli("import", "otel", str(out), "--suite", "smoke", "--db", str(db))
    assert code == 0, err
    new_id = text.splitlines()[0].strip()
    before, after = _by_attempt(run_id, db), _by_attempt(new_id, db)
    assert (before["latency_s"] > 0.002).all()  # the replay itself takes about a millisecond
    ratio = after["latency_s"] / before["latency_s"]
    assert ratio.between(0.99, 1.01).all(), list(zip(before["latency_s"], after["latency_s"], strict=True))
    assert after["cost_usd"].tolist() == before["cost_usd"].tolist()
    # Span timestamps are the recorded ones, not the replay's.
    tools_before = aeh.spans(run_id, db=db).query("category == 'tools'").sort_values("start_ts")
    tools_after = aeh.spans(new_id, db=db).query("category == 'tools'").sort_values("start_ts")
    assert tools_after["start_ts"].round(6).tolist() == tools_before["start_ts"].round(6).tolist()
    model_spans = aeh.span_attributes(aeh.spans(new_id, db=db).query("category == 'model'"))
    assert all(a.get("cost_source") == "recorded" for a in model_spans)


def test_otel_sdk_protobuf_file_imports_with_its_recorded_clock(tmp_path: Path, db: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("my-agent")
    start = 1_764_500_000_000_000_000
    with tracer.start_as_current_span("invoke_agent", start_time=start, end_on_exit=False) as agent:
        agent.set_attribute("eval.task_id", "add_then_multiply")
        agent.set_attribute("output.value", "There are 126 boxes.")
        chat = tracer.start_span("chat", start_time=start + 10**8)
        chat.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                             "gen_ai.usage.input_tokens": 480, "gen_ai.usage.output_tokens": 40})
        chat.end(end_time=start + 39 * 10**8)  # a 3.8 s model call
        tool = tracer.start_span("execute_tool", start_time=start + 40 * 10**8)
        tool.set_attributes({"gen_ai.tool.name": "calculator",
                             "gen_ai.tool.call.arguments": '{"expression": "(17 + 25) * 3"}',
                             "gen_ai.tool.call.result": '{"result": 126}'})
        tool.end(end_time=start + 41 * 10**8)
        agent.end(end_time=start + 42 * 10**8)
    provider.shutdown()
    out = tmp_path / "traces.pb"
    out.write_bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())
    code, text, err = cli("import", "otel", str(out), "--suite", "toy_math", "--task-attribute", "eval.task_id",
                          "--db", str(db))
    assert code == 0, err
    row = _by_attempt(text.splitlines()[0].strip(), db).iloc[0]
    assert row["success"] and row["tokens_in"] == 480
    assert row["latency_s"] == pytest.approx(4.2, rel=1e-6)
    model = aeh.spans(text.splitlines()[0].strip(), db=db).query("category == 'model'").iloc[0]
    assert model["end_ts"] - model["start_ts"] == pytest.approx(3.8, rel=1e-6)


# -- trajectories ------------------------------------------------------------------------------
def test_trajectory_import_keeps_recorded_latency_and_span_times(tmp_path: Path, db: Path) -> None:
    f = _write_jsonl(tmp_path / "t.jsonl", [_trajectory(0, seconds=3.8), _trajectory(1, seconds=0.37)])
    code, text, err = cli("import", "trajectory", str(f), "--suite", "toy_math", "--db", str(db))
    assert code == 0, err
    run_id = text.splitlines()[0].strip()
    rows = _by_attempt(run_id, db)
    assert rows["latency_s"].tolist() == pytest.approx([4.8, 1.37])
    model = aeh.spans(run_id, db=db).query("category == 'model'").sort_values("start_ts")
    assert model["start_ts"].tolist() == [T0, T0 + 100]
    assert (model["end_ts"] - model["start_ts"]).tolist() == pytest.approx([3.8, 0.37])
    agent = aeh.spans(run_id, db=db).query("name == 'agent'").sort_values("attempt")
    assert agent["start_ts"].tolist() == [T0, T0 + 100]
    assert (agent["end_ts"] - agent["start_ts"]).tolist() == pytest.approx([4.8, 1.37])


def test_recorded_time_over_the_wall_clock_budget_is_reported_exceeded(tmp_path: Path, db: Path) -> None:
    f = _write_jsonl(tmp_path / "slow.jsonl", [_trajectory(0, seconds=45.0), _trajectory(1)])
    code, text, err = cli("grade", str(f), "--suite", "toy_math", "--db", str(db))  # timeout_s: 30
    assert code == 0, err
    assert "⚠ 1 of 2 recorded trajectories exceeded the suite's budget (timeout_s 1×)" in text  # the table's warnings
    run_id = aeh.runs(db=db)["run_id"].iloc[0]
    rows = _by_attempt(run_id, db)
    assert rows["status"].tolist() == ["budget_exhausted", "answered"]
    assert rows["latency_s"].iloc[0] == pytest.approx(46.0)
    budget = aeh.scores(run_id, db=db).table.query("dimension == 'budget_adherence' and attempt == 0")["score"]
    assert budget.iloc[0] < 1.0  # the wall-clock axis is scored on the recorded 46 s


def test_a_recording_longer_than_the_step_budget_is_kept_whole(tmp_path: Path, db: Path) -> None:
    trajectories = [_trajectory(i, calls=9 if i < 3 else 2) for i in range(10)]  # toy_math: max_steps 6
    f = _write_jsonl(tmp_path / "long.jsonl", trajectories)
    code, text, err = cli("import", "trajectory", str(f), "--suite", "toy_math", "--db", str(db))
    assert code == 0, err
    assert "warning: 3 of 10 recorded trajectories exceeded the suite's budget (max_steps 3×): kept whole" in err
    assert "3 of 10 recorded trajectories" in aeh.load_run(text.splitlines()[0].strip(), db=db).warnings[-1]
    rows = _by_attempt(text.splitlines()[0].strip(), db)
    assert rows["n_tool_calls"].tolist() == [9, 9, 9] + [2] * 7
    assert rows["status"].tolist() == ["budget_exhausted"] * 3 + ["answered"] * 7
    assert rows["success"].all()  # the whole recording is graded: the answer was right
    spans = aeh.spans(text.splitlines()[0].strip(), db=db)
    exceeded = aeh.span_attributes(spans.query("name == 'budget:exceeded'"))
    assert [a["aeh.budget.exceeded"] for a in exceeded] == [["max_steps=6 (recorded 9 tool calls)"]] * 3
    summary = aeh.load_run(text.splitlines()[0].strip(), db=db).run.config.facts["recorded_over_budget"]
    assert summary == {"trajectories": 3, "of": 10, "limits": {"max_steps": 3}}


def test_a_failed_over_budget_recording_is_bucketed_budget_exhausted(tmp_path: Path, db: Path) -> None:
    wrong = {**_trajectory(0, calls=9), "final_output": "There are 125 boxes."}
    f = _write_jsonl(tmp_path / "wrong.jsonl", [wrong])
    code, text, err = cli("import", "trajectory", str(f), "--suite", "toy_math", "--db", str(db))
    assert code == 0, err
    row = _by_attempt(text.splitlines()[0].strip(), db).iloc[0]
    assert not row["success"] and row["failure_bucket"] == "budget_exhausted" and row["n_tool_calls"] == 9


# -- tokens, cost, --price-table ---------------------------------------------------------------
@pytest.mark.parametrize("command", [("import", "trajectory"), ("grade",)])
def test_price_table_prices_recorded_tokens(command: tuple[str, ...], tmp_path: Path, db: Path) -> None:
    f = _write_jsonl(tmp_path / "mine.jsonl", [_trajectory(0, model="my-model")])
    code, text, err = cli(*command, str(f), "--suite", "toy_math", "--db", str(db))
    assert code == 0, err
    if command[0] == "import":
        assert "no token counts" not in text
        assert "cost unpriced (520 tokens recorded of model 'my-model'" in text
    prices = _price_file(tmp_path, {"my-model": (1.0, 10.0)})
    code, text, err = cli(*command, str(f), "--suite", "toy_math", "--db", str(db), "--price-table", str(prices))
    assert code == 0, err
    run_id = aeh.runs(db=db)["run_id"].iloc[0]
    assert _by_attempt(run_id, db)["cost_usd"].iloc[0] == pytest.approx((480 * 1.0 + 40 * 10.0) / 1e6)
    assert aeh.runs(db=db).iloc[0]["price_table_version"] == "test-1"


def test_a_recorded_cost_is_kept_as_recorded(tmp_path: Path, db: Path) -> None:
    f = _write_jsonl(tmp_path / "cost.jsonl", [_trajectory(0, cost_usd=0.0123), _trajectory(1, model="my-model",
                                                                                          cost_usd=0.5)])
    code, text, err = cli("import", "trajectory", str(f), "--suite", "toy_math", "--db", str(db))
    assert code == 0, err
    run_id = text.splitlines()[0].strip()
    assert _by_attempt(run_id, db)["cost_usd"].tolist() == [0.0123, 0.5]
    assert "cost $0.5123" in text
    spans = aeh.span_attributes(aeh.spans(run_id, db=db).query("category == 'model'"))
    assert all(a["cost_source"] == "recorded" and a["priced"] for a in spans)


def test_no_token_counts_is_said_only_when_there_are_none(tmp_path: Path, db: Path) -> None:
    bare = {"task_id": "add_then_multiply", "final_output": "There are 126 boxes.",
            "steps": [{"kind": "model", "name": "plan"}]}
    f = _write_jsonl(tmp_path / "bare.jsonl", [bare])
    code, text, err = cli("import", "trajectory", str(f), "--suite", "toy_math", "--db", str(db))
    assert code == 0, err
    assert "cost unpriced (no token counts)" in text


def test_otel_import_takes_a_price_table(tmp_path: Path, db: Path) -> None:
    span = {"traceId": "a" * 32, "spanId": "1" * 16, "name": "chat", "startTimeUnixNano": str(int(T0 * 1e9)),
            "endTimeUnixNano": str(int((T0 + 3.8) * 1e9)),
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                           {"key": "gen_ai.request.model", "value": {"stringValue": "my-model"}},
                           {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "480"}},
                           {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "40"}},
                           {"key": "aeh.task_id", "value": {"stringValue": "add_then_multiply"}}]}
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    prices = _price_file(tmp_path, {"my-model": (1.0, 10.0)})
    code, text, err = cli("import", "otel", str(f), "--suite", "toy_math", "--db", str(db), "--price-table",
                          str(prices))
    assert code == 0, err
    row = _by_attempt(text.splitlines()[0].strip(), db).iloc[0]
    assert row["cost_usd"] == pytest.approx(880 / 1e6) and row["latency_s"] == pytest.approx(3.8)


# -- Phoenix's span JSON -----------------------------------------------------------------------
def _phoenix_span(span_id: str, name: str, kind: str, start: float, end: float, parent: str | None = None,
                  status: str = "OK", **attributes: Any) -> dict[str, Any]:
    """A span as Phoenix's REST API returns it (GET /v1/projects/{project}/spans): the span kind
    beside the flattened attributes, ISO times, status_code / status_message."""
    iso = "%Y-%m-%dT%H:%M:%S.%f+00:00"
    return {"id": f"U3BhbjI{span_id}", "name": name, "context": {"trace_id": "b" * 32, "span_id": span_id},
            "span_kind": kind, "parent_id": parent,
            "start_time": dt.datetime.fromtimestamp(start, dt.UTC).strftime(iso),
            "end_time": dt.datetime.fromtimestamp(end, dt.UTC).strftime(iso),
            "status_code": status, "status_message": "" if status == "OK" else "calculator failed",
            "attributes": attributes, "events": []}


def _phoenix_export(tmp_path: Path) -> Path:
    root = "1" * 16
    spans = [
        _phoenix_span(root, "agent", "AGENT", T0, T0 + 5.0, **{"eval.task": "add_then_multiply",
                                                              "output.value": "There are 126 boxes."}),
        _phoenix_span("2" * 16, "ChatCompletion", "LLM", T0 + 0.1, T0 + 3.9, root, **{
            "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 480, "llm.token_count.completion": 40,
            "llm.token_count.total": 520}),
        _phoenix_span("3" * 16, "calculator", "TOOL", T0 + 4.0, T0 + 4.5, root, **{
            "tool.name": "calculator", "input.value": json.dumps({"expression": "(17 + 25) * 3"}),
            "output.value": json.dumps({"result": 126})}),
    ]
    f = tmp_path / "phoenix_spans.json"
    f.write_text(json.dumps({"data": spans, "next_cursor": None}))
    return f


def test_phoenix_span_json_is_read_with_its_token_counts(tmp_path: Path, db: Path) -> None:
    f = _phoenix_export(tmp_path)
    code, text, err = cli("import", "otel", str(f), "--suite", "toy_math", "--task-attribute", "eval.task",
                          "--db", str(db))
    assert code == 0, err
    row = _by_attempt(text.splitlines()[0].strip(), db).iloc[0]
    assert row["success"] and row["tokens_in"] == 480 and row["tokens_out"] == 40 and row["n_tool_calls"] == 1
    assert row["cost_usd"] == pytest.approx((480 * 0.15 + 40 * 0.60) / 1e6)
    assert row["latency_s"] == pytest.approx(5.0, rel=1e-6)


def test_phoenix_error_status_is_a_failed_tool_call(tmp_path: Path, db: Path) -> None:
    f = _phoenix_export(tmp_path)
    doc = json.loads(f.read_text())
    doc["data"][2].update(status_code="ERROR", status_message="calculator failed")
    f.write_text(json.dumps(doc["data"]))  # the bare list of spans reads the same
    code, text, err = cli("import", "otel", str(f), "--suite", "toy_math", "--task-attribute", "eval.task",
                          "--db", str(db))
    assert code == 0, err
    run_id = text.splitlines()[0].strip()
    tools = aeh.spans(run_id, db=db).query("category == 'tools'")
    assert tools["status"].tolist() == ["error"]
    assert aeh.span_attributes(tools).tolist()[0]["error"] == "calculator failed"
    assert _by_attempt(run_id, db).iloc[0]["failure_bucket"] == "tool_error"


# -- a file that is not the format it claims -----------------------------------------------------
def test_wrong_format_files_are_refused_with_what_they_look_like(tmp_path: Path, db: Path) -> None:
    trajectories = _write_jsonl(tmp_path / "t.jsonl", [_trajectory(0)])
    otlp = tmp_path / "otlp.json"
    otlp.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": []}]}]}))
    phoenix = _phoenix_export(tmp_path)
    tau = tmp_path / "tau.json"
    tau.write_text(json.dumps([{"task_id": 0, "trial": 0, "reward": 1.0, "info": {}, "traj": []}]))
    cases = [
        (("import", "otel", str(trajectories)), "this looks like an aeh trajectory file: use aeh import trajectory"),
        (("import", "otel", str(tau)), "this looks like τ-bench historical trajectories: use aeh import tau-bench"),
        (("import", "trajectory", str(otlp)), "this looks like OTLP JSON traces — use aeh import otel"),
        (("grade", str(phoenix)), "this looks like Phoenix span JSON — use aeh import otel"),
    ]
    for argv, expected in cases:
        code, out, err = cli(*argv, "--suite", "toy_math", "--db", str(db))
        assert code == 2, (argv, out, err)
        assert expected in err, (argv, err)
        assert "Traceback" not in err


def test_otlp_protobuf_given_as_a_trajectory_is_refused_as_such(tmp_path: Path, db: Path) -> None:
    pytest.importorskip("opentelemetry.proto")
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

    span = PbSpan(trace_id=b"\xaa" * 16, span_id=b"\xbb" * 8, name="chat", start_time_unix_nano=1,
                  end_time_unix_nano=2)
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])])
    f = tmp_path / "traces.bin"
    f.write_bytes(request.SerializeToString())
    code, out, err = cli("import", "trajectory", str(f), "--suite", "toy_math", "--db", str(db))
    assert code == 2 and "this looks like OTLP protobuf (binary) — use aeh import otel" in err, err
    assert "Traceback" not in err


def test_recorded_run_keeps_its_clock_and_a_billed_cost(db: Path) -> None:
    with aeh.RecordedRun("toy_math", db=db, agent="mine") as session:
        with session.record("add_then_multiply") as rec:
            rec.model_call("my-model", 480, 40, cost_usd=0.0042)
            rec.tool("calculator", {"expression": "(17 + 25) * 3"}, {"result": 126})
            rec.answer("There are 126 boxes.")
    trajectory = session.trajectories[0]
    assert trajectory.start_ts is not None and trajectory.end_ts is not None
    row = _by_attempt(str(session.run_id), db).iloc[0]
    assert row["success"] and row["cost_usd"] == 0.0042
    assert row["latency_s"] == pytest.approx(trajectory.end_ts - trajectory.start_ts)


def test_an_over_budget_import_survives_an_otlp_round_trip(tmp_path: Path, db: Path) -> None:
    f = _write_jsonl(tmp_path / "long.jsonl", [_trajectory(0, calls=9), _trajectory(1)])
    code, text, err = cli("import", "trajectory", str(f), "--suite", "toy_math", "--db", str(db))
    assert code == 0, err
    first = text.splitlines()[0].strip()
    out = tmp_path / "again.otlp.json"
    assert cli("export", "otel", first, "--db", str(db), "--out", str(out))[0] == 0
    code, text, err = cli("import", "otel", str(out), "--suite", "toy_math", "--db", str(db))
    assert code == 0, err
    keys = ["success", "status", "failure_bucket", "n_tool_calls", "cost_usd"]
    before, after = _by_attempt(first, db), _by_attempt(text.splitlines()[0].strip(), db)
    assert before["success"].all() and before["status"].tolist() == ["budget_exhausted", "answered"]
    assert after[keys].to_dict("records") == before[keys].to_dict("records")
    assert after["latency_s"].tolist() == pytest.approx(before["latency_s"].tolist(), rel=1e-6)


def test_phoenix_otlpv1_span_json_is_read(tmp_path: Path, db: Path) -> None:
    """Phoenix's GET /v1/projects/{project}/spans/otlpv1: OTLP spans with snake_case names."""

    def kv(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": {"int_value": value} if isinstance(value, int) else {"string_value": value}}

    nanos = int(T0 * 1e9)
    spans = [
        {"trace_id": "c" * 32, "span_id": "1" * 16, "parent_span_id": None, "name": "agent",
         "start_time_unix_nano": nanos, "end_time_unix_nano": nanos + 5 * 10**9, "status": {"code": 1},
         "attributes": [kv("openinference.span.kind", "AGENT"), kv("eval.task", "add_then_multiply"),
                        kv("output.value", "There are 126 boxes.")]},
        {"trace_id": "c" * 32, "span_id": "2" * 16, "parent_span_id": "1" * 16, "name": "ChatCompletion",
         "start_time_unix_nano": nanos + 10**8, "end_time_unix_nano": nanos + 39 * 10**8, "status": {"code": 1},
         "attributes": [kv("openinference.span.kind", "LLM"), kv("llm.model_name", "gpt-4o-mini"),
                        kv("llm.token_count.prompt", 480), kv("llm.token_count.completion", 40)]},
        {"trace_id": "c" * 32, "span_id": "3" * 16, "parent_span_id": "1" * 16, "name": "calculator",
         "start_time_unix_nano": nanos + 4 * 10**9, "end_time_unix_nano": nanos + 45 * 10**8, "status": {"code": 1},
         "attributes": [kv("openinference.span.kind", "TOOL"), kv("tool.name", "calculator"),
                        kv("input.value", json.dumps({"expression": "(17 + 25) * 3"})),
                        kv("output.value", json.dumps({"result": 126}))]},
    ]
    f = tmp_path / "otlpv1.json"
    f.write_text(json.dumps({"data": spans, "next_cursor": None}))
    code, text, err = cli("import", "otel", str(f), "--suite", "toy_math", "--task-attribute", "eval.task",
                          "--db", str(db))
    assert code == 0, err
    row = _by_attempt(text.splitlines()[0].strip(), db).iloc[0]
    assert row["success"] and row["tokens_in"] == 480 and row["latency_s"] == pytest.approx(5.0)


def test_a_phoenix_dataframe_as_json_is_refused_with_the_export_to_use(tmp_path: Path, db: Path) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([{"context.span_id": "1" * 16, "context.trace_id": "b" * 32, "name": "ChatCompletion",
                           "span_kind": "LLM", "attributes.llm.token_count.prompt": 480}])
    f = tmp_path / "frame.json"
    f.write_text(frame.to_json(orient="records"))
    code, out, err = cli("import", "otel", str(f), "--suite", "toy_math", "--db", str(db))
    assert code == 2 and "this looks like a Phoenix spans DataFrame written as JSON records" in err, err
    assert "GET /v1/projects/PROJECT/spans" in err
