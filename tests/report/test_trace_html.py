"""`aeh trace` / render_trace_html: one self-contained HTML file per attempt."""

from __future__ import annotations

import re

import pytest
from external import external_refs

from aeh.cli import main as cli
from aeh.models import GraderResult
from aeh.report import render_trace_html, trace_html
from aeh.store import Store


def _failed_attempt(db, run_id):
    with Store(db) as store:
        frame = store.attempts_frame(run_id)
        row = frame.filter(~frame["success"]).row(0, named=True)
        record = store.attempt_record(run_id, row["task_id"], row["attempt"])
        spans = store.attempt_spans(run_id, row["task_id"], row["attempt"])
        return record, spans, store.run_info(run_id).model_dump(mode="json")


def test_trace_file_is_self_contained_and_shows_the_tree(mock_db, tmp_path):
    db, _, run_b = mock_db
    record, spans, _ = _failed_attempt(db, run_b)
    out = render_trace_html(run_b, record.task_id, record.attempt, tmp_path / "t.html", db=db)
    html = out.read_text()
    assert external_refs(html) == []
    assert "<script src" not in html and "<link" not in html
    assert html.count('class="node') == len(spans)  # every span is a node
    for s in spans:
        assert f'data-span-id="{s.span_id}"' in html
    assert "model:call" in html and "tool:" in html and "grading" in html
    assert "Attempt failed" in html
    assert re.search(r'class="node[^"]*\bfailed\b', html)  # failures highlighted
    assert "tool_sequence" in html  # grader verdicts listed


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
    html = trace_html(record.model_copy(update={"grader_results": record.grader_results + tier2}), spans, run)
    localized = re.findall(r'<li class="([^"]*)" data-span-id="([^"]+)"', html)
    marked = {sid for cls, sid in localized if "localized" in cls.split()}
    assert marked == {model.span_id, tool.span_id}
    assert "wrong plan" in html
    plain = trace_html(record, spans, run)  # no tier-2 results: nothing highlighted, no error
    assert not any("localized" in cls.split() for cls, _ in re.findall(r'<li class="([^"]*)" data-span-id="([^"]+)"', plain))


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


def test_model_spans_show_their_input_and_output_messages(mock_db, tmp_path):
    db, run_a, _ = mock_db
    out = render_trace_html(run_a, "add_then_multiply", 0, tmp_path / "t.html", db=db)
    html = out.read_text()
    with Store(db) as store:
        spans = [s for s in store.attempt_spans(run_a, "add_then_multiply", 0) if s.category == "model"]
    assert html.count('class="aeh-msgs aeh-input"') == len(spans) >= 2
    last = spans[-1].attributes["gen_ai.input.messages"]
    assert f"input · {len(last)} messages" in html and "aeh-msg aeh-tool" in html
    assert "→ calculator(" in html
    assert '"gen_ai.input.messages"' not in html  # shown as messages, not dumped again as JSON


def test_long_message_text_shows_its_start_and_opens_in_full(tmp_path):
    from aeh.models import Span
    from aeh.report import messages_html

    text = "x" * 1000 + "THE END"
    span = Span(run_id="r", task_id="t", attempt=0, span_id="s", category="model", name="model:call",
                start_ts=0, attributes={"gen_ai.input.messages": [{"role": "user", "content": text}]})
    html = messages_html(span)
    assert "show all 1,007 characters" in html
    head, _, rest = html.partition("<details><summary>show all")
    assert "THE END" not in head and "THE END" in rest
