"""The one trace renderer: `trace_document` (what an attempt shows) drawn by `trace.js`, for the
report, `aeh trace` and the viewer. The drawing itself is checked in Chromium (tests/browser)."""

from __future__ import annotations

import enum
import json
import math
import re

import pytest
from external import external_refs

from aeh.cli import main as cli
from aeh.models import GraderResult, Span
from aeh.report import money, render_trace_html, trace_document, trace_html
from aeh.report._trace_view import _scalar
from aeh.store import Store


def _failed_attempt(db, run_id):
    with Store(db) as store:
        frame = store.attempts_frame(run_id)
        row = frame.filter(~frame["success"]).row(0, named=True)
        record = store.attempt_record(run_id, row["task_id"], row["attempt"])
        spans = store.attempt_spans(run_id, row["task_id"], row["attempt"])
        return record, spans, store.run_info(run_id).model_dump(mode="json")


def _attempt(db, run_id, task="add_then_multiply", attempt=0):
    with Store(db) as store:
        return (store.attempt_record(run_id, task, attempt), store.attempt_spans(run_id, task, attempt),
                store.run_info(run_id).model_dump(mode="json"))


def _doc_in(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="aeh-trace-doc">(.*?)</script>', html, re.S)
    assert found, "the page embeds its document"
    return json.loads(found.group(1))


def test_trace_file_is_self_contained_and_carries_every_span(mock_db, tmp_path):
    db, _, run_b = mock_db
    record, spans, run = _failed_attempt(db, run_b)
    html = trace_html(record, spans, run)
    assert external_refs(html) == []
    assert "<script src" not in html and "<link" not in html
    doc = _doc_in(html)
    assert [s["id"] for s in doc["spans"]] != [] and {s["id"] for s in doc["spans"]} == {s.span_id for s in spans}
    assert any(s.get("failed") for s in doc["spans"])  # failures highlighted
    assert doc["head"]["verdict"] == "FAIL" and doc["head"]["bucket"] == record.failure_bucket.value
    assert "tool_sequence" in {g["name"] for g in doc["graders"]} or doc["graders"]


def test_head_shows_prompt_target_answer_cost_and_latency(mock_db):
    db, run_a, _ = mock_db
    record, spans, run = _attempt(db, run_a)
    head = trace_document(record, spans, run)["head"]
    first = next(s for s in spans if s.category == "model")
    prompt = next(m["content"] for m in first.attributes["gen_ai.input.messages"] if m["role"] == "user")
    assert head["prompt"] == prompt
    expected = next(g.evidence["expected"] for g in record.grader_results if "expected" in g.evidence)
    assert any(str(expected) in line for line in head["target"])
    assert head["answer"] == record.final_output
    assert head["cost"] == money(record.cost_usd) and head["latency"] == f"{record.latency_s:.2f} s"


def test_conversation_puts_each_tool_call_and_its_result_inside_the_assistant_turn(mock_db):
    db, run_a, _ = mock_db
    record, spans, run = _attempt(db, run_a)
    assert record.tool_calls, "the mock agent calls the calculator"
    doc = trace_document(record, spans, run)
    turns = doc["turns"]
    calls = [c for t in turns for c in t.get("calls", [])]
    assert all(t["role"] == "assistant" for t in turns if t.get("calls"))
    assert [c["name"] for c in calls] == [c.name for c in record.tool_calls]
    for call, rec in zip(calls, record.tool_calls, strict=True):
        assert call["step"] == record.tool_calls.index(rec)
        assert json.dumps(rec.result) in call["result"] or str(rec.result) in call["result"]
    assert not [t for t in turns if t["role"] == "tool"]  # every result sits under its call
    # every message once: the prompt opens the conversation and is not repeated by later calls
    models = [s for s in spans if s.category == "model"]
    assert len(models) >= 2 and [t["role"] for t in turns].count("user") == 1
    assert doc["tools"] and len({t["name"] for t in doc["tools"]}) == len(doc["tools"])  # offered tools, once
    html = trace_html(record, spans, run)
    assert '"gen_ai.tool.definitions"' not in html and '"gen_ai.input.messages"' not in html


def test_injected_faults_and_harness_stalls_are_marked_on_their_call(mock_db):
    db, run_a, _ = mock_db
    record, spans, run = _attempt(db, run_a)
    first = record.tool_calls[0]

    def shown(call):
        doc = trace_document(record.model_copy(update={"tool_calls": [call, *record.tool_calls[1:]]}), spans, run)
        return next(c for t in doc["turns"] for c in t.get("calls", []))

    faulted = shown(first.model_copy(update={"injected_fault": "500", "error_kind": "500"}))
    assert "injected fault: 500" in faulted["fault"] and "harness" not in faulted
    stalled = shown(first.model_copy(update={"error_kind": "harness_stall", "error": "timed out"}))
    assert stalled["harness"].startswith("harness-attributed") and "fault" not in stalled
    assert not {"fault", "harness", "error"} & set(shown(first))


def test_grader_evidence_and_review_packet_are_readable_lines(mock_db):
    db, _, run_b = mock_db
    record, spans, run = _failed_attempt(db, run_b)
    packet = {"reason": "no judge configured for tier 2", "task": {"id": record.task_id, "prompt": "p"},
              "final_output": "x", "status": "answered", "has_golden": False,
              "tier2": {"name": "golden", "evidence": {"confidence": 0.2, "step_index": 1}}}
    flag = GraderResult(tier=3, kind="review_flag", name="review", passed=None, evidence=packet)
    doc = trace_document(record.model_copy(update={"grader_results": [*record.grader_results, flag]}), spans, run)
    review = doc["review"]
    assert review["reason"] == "no judge configured for tier 2"
    assert "status: answered" in review["lines"] and "tier2.name: golden" in review["lines"]
    assert not any(line.lstrip().startswith(("{", "[")) for line in review["lines"])
    assert all("\n" not in line for g in doc["graders"] for line in g["lines"])
    assert "review_flag" not in {g["kind"] for g in doc["graders"]}


def test_money_is_written_one_way():
    assert money(0.00025785) == "$0.00026" and money(12.345) == "$12.35" and money(None) == "unpriced"
    assert money(float("nan")) == "—"


def test_tier2_localization_highlights_span_and_tolerates_absence(mock_db):
    db, _, run_b = mock_db
    record, spans, run = _failed_attempt(db, run_b)
    tool = next(s for s in spans if s.category == "tools")
    model = next(s for s in spans if s.category == "model")
    tier2 = [GraderResult(tier=2, kind="localize", name="tier2", passed=False,
                          evidence={"span_id": model.span_id, "reason": "wrong plan"}),
             GraderResult(tier=2, kind="localize", name="tier2b", passed=False, evidence={"step_index": 0}),
             GraderResult(tier=2, kind="localize", name="tier2c", passed=None, evidence={"span_id": "nope"}),
             GraderResult(tier=2, kind="localize", name="tier2d", passed=None, evidence={})]
    doc = trace_document(record.model_copy(update={"grader_results": record.grader_results + tier2}), spans, run)
    marked = {s["id"] for s in doc["spans"] if s.get("localized")}
    assert marked == {model.span_id, tool.span_id}
    assert "wrong plan" in doc["spans"][[s["id"] for s in doc["spans"]].index(model.span_id)]["localized"]
    first_call = next(c for t in doc["turns"] for c in t.get("calls", []))
    assert first_call["localized"].startswith("tier-2 tier2b")  # and on the call in the conversation
    plain = trace_document(record, spans, run)  # no tier-2 results: nothing highlighted, no error
    assert not any(s.get("localized") for s in plain["spans"])


def test_trace_escapes_and_stays_redacted(tmp_path):
    db = tmp_path / "r.db"
    import aeh

    secret = "sk-live-0123456789abcdefSECRET"
    run = aeh.run("toy_math", adapter="mock", attempts=1, seed=3, db=str(db), secrets=[secret],
                  tasks=["add_then_multiply"]).run_id
    with Store(db) as store:  # plant the secret in what the agent saw: the store must redact it on write
        record = store.attempt_record(run, "add_then_multiply", 0)
        spans = store.attempt_spans(run, "add_then_multiply", 0)
    from aeh.store import Redactor

    red = tmp_path / "red.db"
    with Store(red, redactor=Redactor([secret])) as store:
        with Store(db) as src:
            store.create_run(src.run_info(run))
        spans[0].attributes["note"] = f"key {secret} <script>alert(1)</script>"
        store.write_attempt(record, spans)
    html = render_trace_html(run, "add_then_multiply", 0, tmp_path / "t.html", db=red).read_text()
    assert secret not in html
    assert "<script>alert(1)</script>" not in html


def test_cli_trace_writes_default_path_and_rejects_unknown_attempt(mock_db, tmp_path, monkeypatch, capsys):
    db, run_a, _ = mock_db
    monkeypatch.chdir(tmp_path)
    assert cli(["trace", "--run-id", run_a, "--task", "add_then_multiply", "--attempt", "1", "--db", str(db)]) == 0
    assert (tmp_path / "reports" / f"trace-{run_a}-add_then_multiply-1.html").is_file()
    assert cli(["trace", "--run-id", run_a, "--task", "add_then_multiply", "--attempt", "7", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "no attempt 7" in err and "[0, 1, 2]" in err
    assert cli(["trace", "--run-id", run_a, "--task", "nope", "--db", str(db)]) == 2
    assert "tasks in the run" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["report", "--run-id", "nope"], ["compare", "nope", "nope2", "--html", "x.html"]])
def test_cli_reports_reject_unknown_runs_without_a_kernel(mock_db, args, capsys):
    db, _, _ = mock_db
    assert cli([*args, "--db", str(db)]) == 2
    assert "is not in" in capsys.readouterr().err


def test_model_call_lines_show_only_the_new_messages(mock_db):
    from aeh.report import model_call_lines

    db, run_a, _ = mock_db
    _, spans, _ = _attempt(db, run_a)
    second = [s for s in spans if s.category == "model"][1]
    lines = model_call_lines(second)
    assert lines[0].startswith("(1 earlier message") or lines[0].startswith("(")
    assert any("→ calculator(" in line for line in lines)
    assert model_call_lines(Span(run_id="r", task_id="t", attempt=0, span_id="s", category="model",
                                 name="model:call", start_ts=0)) == []


def test_targets_come_from_every_grader_kind_that_says_what_is_expected():
    from aeh.models import Attempt
    from aeh.report import input_and_target

    graders = [
        GraderResult(kind="file", name="report_file", passed=False,
                     evidence={"path": "out.csv", "exists": True, "checks": [{"check": "equals", "expected": "a,b\n"}]}),
        GraderResult(kind="file", name="no_extra", passed=True, evidence={"path": "x.txt", "expected_exists": False}),
        GraderResult(kind="contains", name="contains", passed=True, evidence={"all_of": ["enterprise"]}),
        GraderResult(kind="declined", name="declined", passed=True, evidence={"forbid_tools": ["drop_table"]}),
        GraderResult(kind="numeric", name="numeric", passed=True, evidence={"expected": 9.0}),
    ]
    record = Attempt(run_id="r", task_id="t", attempt=0, seed=0, success=False, status="answered",
                     grader_results=graders)
    _, target = input_and_target(record, [])
    assert target.split("; ") == ['report_file: writes out.csv — equals "a,b\\n"', "no_extra: does not write x.txt",
                                  'contains: answer contains all of ["enterprise"]',
                                  "declined: declines, never calling drop_table", "numeric: expected 9.0"]


def test_an_imported_scorers_own_answer_is_not_shown_as_a_target() -> None:
    """Inspect's score keeps the sample's target and the answer its scorer read from the output;
    only the first is what the graders expect."""
    from aeh.models import Attempt
    from aeh.report import input_and_target

    evidence = {"value": "C", "number": 1.0, "threshold": 1.0, "answer": "the sum is 4.", "explanation": "",
                "target": "4"}
    record = Attempt(run_id="r", task_id="sum-1", attempt=0, seed=0, success=True, status="answered",
                     final_output="The sum is 4.",
                     grader_results=[GraderResult(kind="imported_reward", name="inspect:includes", passed=True,
                                                  evidence=evidence)])
    _, target = input_and_target(record, [])
    assert target == "inspect:includes: target 4"
    assert trace_document(record, [])["head"]["target"] == ["inspect:includes: target 4"]


@pytest.mark.parametrize("value", [True, False, 0, -5, 2**80, 1.5, 1e-7, 1e22, -0.0, 0.1 + 0.2, math.nan, math.inf,
                                   -math.inf, enum.IntEnum("Level", "LOW HIGH").HIGH])
def test_a_scalar_attribute_reads_as_its_json(value: object) -> None:
    assert _scalar(value) == json.dumps(value)  # type: ignore[arg-type]
