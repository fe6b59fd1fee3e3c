"""Redaction happens before rows exist: the raw database never holds the originals."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from aeh.models import GraderResult, InvariantResult, ToolCall
from aeh.store import Redactor, Store
from tests.store_support import raw_store_bytes

EMAIL = "alice.liddell@example.com"
CARD = "4111 1111 1111 1111"
SECRET = "s3cr3t-fixture-token"
KEY = "sk-abcdefghijklmnopqrstuvwxyz0123"
ORIGINALS = [EMAIL, CARD, "4111111111111111", SECRET, KEY]
SURVIVORS = ["4111111111111112", "391"]
DIRTY = f"mail {EMAIL}, card {CARD}, token {SECRET}, key {KEY}, id 4111111111111112, n 391"


def _write_dirty(store: Store, make_run: Any, make_attempt: Any, make_spans: Any) -> None:
    store.create_run(make_run(config={"api_key": KEY, "note": DIRTY}))
    attempt = make_attempt(
        final_output=DIRTY, error=DIRTY,
        tool_calls=[ToolCall(name="send", args={"to": EMAIL, "body": [DIRTY]}, result={"echo": DIRTY},
                             error=DIRTY)],
        grader_results=[GraderResult(kind="contains", name="c", passed=False,
                                     evidence={"seen": DIRTY}, error=DIRTY)],
        invariant_results=[InvariantResult(name="no_leak", passed=False, detail=DIRTY)],
    )  # fmt: skip
    store.write_attempt(attempt, make_spans(prompt=DIRTY, card_number=4111111111111111))


def test_originals_never_reach_sqlite(db_path: Path, make_run: Any, make_attempt: Any,
                                      make_spans: Any) -> None:  # fmt: skip
    store = Store(db_path, redactor=Redactor(secrets=[SECRET]))
    _write_dirty(store, make_run, make_attempt, make_spans)
    # Check the raw bytes while the WAL file still holds the fresh pages, then after close.
    for stage in ("open", "closed"):
        raw = raw_store_bytes(db_path)
        for original in ORIGINALS:
            assert original.encode() not in raw, (stage, original)
        for kept in SURVIVORS:
            assert kept.encode() in raw, (stage, kept)
        store.close()

    conn = sqlite3.connect(db_path)
    row = conn.execute("SELECT final_output, tool_calls, error FROM attempts").fetchone()
    assert "[REDACTED:email]" in row[0] and "[REDACTED:card]" in row[0]
    assert "[REDACTED:secret]" in row[0] and "[REDACTED:api_key]" in row[0]
    assert "4111111111111112" in row[0] and " 391" in row[0]
    dump = "\n".join(conn.iterdump())
    for original in ORIGINALS:
        assert original not in dump


def test_redacted_values_read_back(mem_store: Store, make_run: Any, make_attempt: Any,
                                   make_spans: Any) -> None:  # fmt: skip
    _write_dirty(mem_store, make_run, make_attempt, make_spans)
    rec = mem_store.attempt_record("run-0001", "t1", 0)
    assert rec.tool_calls[0].args["to"] == "[REDACTED:email]"
    assert rec.tool_calls[0].result["echo"].startswith("mail [REDACTED:email]")
    assert "[REDACTED:api_key]" in rec.grader_results[0].evidence["seen"]
    span = mem_store.attempt_spans("run-0001", "t1", 0)[0]
    assert span.attributes["card_number"] == "[REDACTED:card]"
    assert mem_store.run_info("run-0001").config.facts["api_key"] == "[REDACTED:api_key]"


def test_disabled_redactor_keeps_everything(db_path: Path, make_run: Any, make_attempt: Any,
                                            make_spans: Any) -> None:  # fmt: skip
    with Store(db_path, redactor=Redactor(secrets=[SECRET], enabled=False)) as store:
        _write_dirty(store, make_run, make_attempt, make_spans)
        assert store.attempt_record("run-0001", "t1", 0).final_output == DIRTY
    raw = raw_store_bytes(db_path)
    for original in ORIGINALS:
        assert original.encode() in raw


def test_odd_attribute_values_are_stringified_then_redacted(mem_store: Store, make_run: Any,
                                                            make_attempt: Any, make_spans: Any) -> None:  # fmt: skip
    class Thing:
        def __str__(self) -> str:
            return f"Thing(owner={EMAIL})"

    mem_store.create_run(make_run())
    mem_store.write_attempt(make_attempt(), make_spans(obj=Thing(), tags={"b", "a"}, p=Path("/x")))
    attrs = mem_store.attempt_spans("run-0001", "t1", 0)[0].attributes
    assert attrs["obj"] == "Thing(owner=[REDACTED:email])"
    assert attrs["tags"] == ["a", "b"] and attrs["p"] == "/x"
