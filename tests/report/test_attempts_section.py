"""The report's attempts section, built directly from a stored run (no notebook, no kernel)."""

from __future__ import annotations

import base64
import gzip
import json
import math
import re

import pytest
from external import external_refs

from aeh.analysis import BUCKET_ABBREVIATIONS
from aeh.report._attempts import _packed, attempts_data, attempts_section, bucket_legend_html
from aeh.store import Store


def _payload(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="aeh-attempts-data">(.*?)</script>', html, re.S)
    assert found, "the attempts data is embedded as JSON"
    assert "<" not in found.group(1)  # nothing in the data can close the script element
    return json.loads(found.group(1))


def test_every_attempt_with_its_answer_and_trace(mock_db):
    db, _, run_b = mock_db
    data = attempts_data(run_b, db)
    with Store(db) as store:
        frame = store.attempts_frame(run_b, ["task_id", "attempt", "success", "final_output", "failure_bucket"])
    expected = {(t, a): (ok, out or "", b or "") for t, a, ok, out, b in frame.iter_rows()}
    assert data.total == len(expected) == len(data.rows) and data.left_out == 0
    for row in data.rows:
        ok, answer, bucket = expected[(row["task"], row["attempt"])]
        assert (row["ok"], row["answer"], row["bucket"]) == (ok, answer, bucket)
        assert row["short"] == BUCKET_ABBREVIATIONS.get(bucket, bucket)
        doc = data.traces[row["trace"]]
        assert (doc["head"]["task"], doc["head"]["attempt"], doc["head"]["answer"]) == (row["task"], row["attempt"],
                                                                                        answer)
        assert data.tasks[row["task"]]["input"] == doc["head"]["prompt"]  # the input column
        assert data.tasks[row["task"]]["target"]  # the target column, from the graders
    assert [(r["task"], r["attempt"]) for r in data.rows] == sorted(expected)
    assert any(r["dims"] for r in data.rows)  # trajectory dimension scores ride along
    # each embedded trace is the one `aeh trace` draws, with its dimension scores and cited steps
    from aeh.report import attempt_scores, trace_document

    with Store(db) as store:
        info = store.run_info(run_b)
        for row in data.rows:
            key = (run_b, row["task"], row["attempt"])
            alone = trace_document(store.attempt_record(*key), store.attempt_spans(*key),
                                   info.model_dump(mode="json"), scores=attempt_scores(store, *key))
            assert data.traces[row["trace"]] == alone and alone["dims"]


def test_a_capped_table_keeps_failed_attempts_first_and_says_what_is_left_out(mock_db):
    db, _, run_b = mock_db
    full = attempts_data(run_b, db)
    failed = [r for r in full.rows if not r["ok"]]
    assert failed and len(failed) < full.total
    capped = attempts_data(run_b, db, limit=len(failed), trace_limit=1)
    assert [r for r in capped.rows if r["ok"]] == [] and len(capped.rows) == len(failed)
    assert capped.left_out == full.total - len(failed)
    assert sum(r["trace"] >= 0 for r in capped.rows) == len(capped.traces) == 1
    html = attempts_section(run_b, db, limit=len(failed), trace_limit=1).data
    note = re.search(r'id="attempts-left-out">(.*?)</p>', html, re.S)
    assert note and f"so {capped.left_out} are left out" in note.group(1)
    assert "aeh trace --run-id" in note.group(1)
    assert f"The traces of {len(failed) - 1} attempts" in html


def test_the_section_is_self_contained_and_carries_the_legend(mock_db):
    db, _, run_b = mock_db
    html = attempts_section(run_b, db).data
    assert external_refs(html) == []
    payload = _payload(html)
    assert len(payload["rows"]) == attempts_data(run_b, db).total
    # the traces ride as one gzip-compressed JSON list, drawn by the one trace page embedded once
    docs = json.loads(gzip.decompress(base64.b64decode(payload["traces_gz"])))
    assert [(d["head"]["task"], d["head"]["attempt"]) for d in docs] == [
        (r["task"], r["attempt"]) for r in payload["rows"] if r["trace"] >= 0]
    assert payload["data_mark"] in payload["trace_shell"] and html.count("aehTraceRender") == 1
    assert 'id="bucket-legend"' in html and 'id="attempts-table"' in html


def test_bucket_legend_comes_from_the_cli_abbreviations():
    legend = bucket_legend_html()
    for bucket, short in BUCKET_ABBREVIATIONS.items():
        assert f"<code>{short}</code> {bucket}" in legend


def _unpacked(blob: str) -> str:
    return gzip.decompress(base64.b64decode(blob)).decode()


def test_packed_traces_are_the_standard_compact_json_of_the_documents(mock_db):
    db, _, run_b = mock_db
    docs = attempts_data(run_b, db).traces
    assert _unpacked(_packed(docs)) == json.dumps(docs, ensure_ascii=False, separators=(",", ":"))


def test_packed_traces_stay_json_the_browser_parses():
    # `JSON.parse` refuses NaN and Infinity (what `json.dumps` writes for them): they are null
    assert json.loads(_unpacked(_packed([{"score": math.nan, "cost": math.inf, "ok": 0.5}])),
                      parse_constant=pytest.fail) == [{"score": None, "cost": None, "ok": 0.5}]
    # a value orjson refuses still packs, through the standard encoder
    big = [{"seed": 2**70, "steps": {1: "non-string key"}, "text": "é ✓", "score": math.nan}]
    assert json.loads(_unpacked(_packed(big)), parse_constant=pytest.fail) == [
        {"seed": 2**70, "steps": {"1": "non-string key"}, "text": "é ✓", "score": None}]


def test_a_run_traced_whole_is_read_at_once_and_draws_the_same_traces(mock_db, monkeypatch):
    """Every attempt traced: the run's attempts and spans come in three queries, not two per attempt,
    and the documents are the ones reading each attempt gives."""
    db, _, run_b = mock_db
    one_at_a_time: list[tuple[str, int]] = []
    spans_of = Store.attempt_spans

    def counted(self, run_id, task_id, attempt):
        one_at_a_time.append((task_id, attempt))
        return spans_of(self, run_id, task_id, attempt)

    monkeypatch.setattr(Store, "attempt_spans", counted)
    together = attempts_data(run_b, db)
    assert one_at_a_time == [] and len(together.traces) == together.total
    monkeypatch.setattr(Store, "attempts_with_spans", lambda self, run_id: [])
    apart = attempts_data(run_b, db)
    assert len(one_at_a_time) == together.total
    assert apart == together
