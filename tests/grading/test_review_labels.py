"""Human review: export packets, label them, import labels, and feed κ as the rater "human"."""

from __future__ import annotations

import json
import sqlite3

import pytest

import aeh
from aeh.cli import main as cli
from aeh.errors import ValidationError
from aeh.store import Store, applied_versions, human_label_pairs, import_labels, review_packets, write_review_jsonl
from aeh.testing.openai_server import Reply

from .conftest import Agent, TinySuite, judge_replies, run_tiny

WRONG = ("17 + 25", "42 * 2")


def test_labels_table_is_a_migration(db):
    Store(db).close()
    conn = sqlite3.connect(db)
    assert 2 in applied_versions(conn)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(human_labels)")]
    assert cols == ["run_id", "task_id", "attempt", "label", "reviewer", "note", "created_at"]


def test_export_label_import_round_trip_feeds_agreement(db, tmp_path):
    info, store = run_tiny(db, Agent("84 boxes", WRONG))
    packets = review_packets(store, info.run_id)
    assert [(p["task_id"], p["flagged"], p["label"]) for p in packets] == [
        ("no_golden", True, None), ("with_golden", True, None)]
    out = write_review_jsonl(packets, tmp_path / "review.jsonl")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["packet"]["reason"] and lines[0]["label"] is None
    lines[0].update(label=False, reviewer="ann@example.com", note="wrong product")
    lines[1].update(label=True, note="the grader is too strict")  # human disagrees
    out.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert import_labels(store, out) == 2
    pairs = human_label_pairs(store, info.run_id)
    assert pairs.columns == ["task_id", "attempt", "programmatic", "judge"]
    assert pairs.to_dicts() == [
        {"task_id": "no_golden", "attempt": 0, "programmatic": False, "judge": False},
        {"task_id": "with_golden", "attempt": 0, "programmatic": False, "judge": True}]
    frame = aeh.agreement(info.run_id, db)
    assert list(frame["rater"]) == ["judge", "human"]
    human = frame.table.set_index("rater").loc["human"]
    assert human["n"] == 2 and human["both_fail"] == 1 and human["prog_fail_rater_pass"] == 1
    # labels are stored redacted and re-import replaces rather than duplicates
    assert review_packets(store, info.run_id)[0]["reviewer"] == "[REDACTED:email]"
    assert import_labels(store, out) == 2
    assert human_label_pairs(store, info.run_id).height == 2


def test_include_unflagged_lets_people_label_successes(db):
    info, store = run_tiny(db, Agent("126 boxes", ("42 * 3",)))
    assert review_packets(store, info.run_id) == []
    everyone = review_packets(store, info.run_id, include_unflagged=True)
    assert [(p["flagged"], p["packet"]["success"]) for p in everyone] == [(False, True), (False, True)]


def test_bad_label_file_names_file_line_and_field(db, tmp_path):
    info, store = run_tiny(db, Agent("84 boxes", WRONG), tasks=["no_golden"])
    path = tmp_path / "labels.jsonl"
    rows = [
        {"run_id": info.run_id, "task_id": "no_golden", "attempt": 0, "label": "maybe"},
        {"run_id": info.run_id, "task_id": "no_golden", "attempt": 9, "label": True},
        {"run_id": info.run_id, "task_id": "no_golden", "attempt": 0, "label": None},  # skipped
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{oops\n")
    with pytest.raises(ValidationError) as info_:
        import_labels(store, path)
    message = str(info_.value)
    assert f"{path}:1:label: Input should be a valid boolean" in message
    assert f"{path}:2:attempt: run {info.run_id} has no attempt 9" in message
    assert f"{path}:4:-: not JSON" in message
    assert human_label_pairs(store, info.run_id).height == 0  # nothing written


def test_review_cli_lists_exports_and_imports(db, tmp_path, capsys):
    info, _ = run_tiny(db, Agent("84 boxes", WRONG))
    out = tmp_path / "out.jsonl"
    assert cli(["review", "--run-id", info.run_id[:12], "--export", str(out), "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "2 attempt(s) flagged" in text and "no golden trace" in text and "exported 2" in text
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    for line in lines:
        line["label"] = False
    out.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert cli(["review", "--run-id", info.run_id, "--import", str(out), "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "imported 2 label(s)" in text and "label=fail" in text
    assert cli(["review", "--run-id", "nope", "--db", str(db)]) == 2


def test_judge_agreement_cli(db, fake_openai, capsys):
    info, _ = run_tiny(db, Agent("84 boxes", WRONG))
    assert cli(["judge-agreement", "--run-id", info.run_id, "--db", str(db)]) == 0
    assert "no judge verdicts in this run" in capsys.readouterr().out

    verdicts = iter([True, False])
    fake_openai(judge_replies(grader=lambda r: Reply.text(json.dumps({"passed": next(verdicts), "reason": "r"}))))
    suite = TinySuite([{"kind": "judge", "rubric": "says 126"}])
    db2 = db.with_name("judged.db")
    info2, store2 = run_tiny(db2, Agent("126 boxes", ("42 * 3",)), judge_model="gpt-4o-mini", suite=suite)
    assert cli(["judge-agreement", "--run-id", info2.run_id, "--db", str(db2)]) == 0
    text = capsys.readouterr().out
    assert "rater: judge vs programmatic" in text
    # Two pairs are no basis for a κ: it says so instead of printing a number.
    assert "κ: not enough data (n = 2 < 10)" in text and "κ =" not in text
    assert "judge verdicts: 2 attempted, 2 valid, 0 failed" in text
    assert "programmatic pass" in text and "trusted (κ ≥ 0.7, n ≥ 10): no" in text
