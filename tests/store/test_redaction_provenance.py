"""A run's redaction record names the rules its store wrote with, and a reader skips its own pass
over stored text only when those are exactly its rules: a raw write, a resume by another aeh, a
carried record or unreadable rules all leave the reader's pass on."""

from __future__ import annotations

from pathlib import Path

import pytest

from aeh.models import Attempt, RedactionRecord, RunConfig, RunInfo, Span
from aeh.report import trace_document
from aeh.store import Redactor, Store, _redact, redaction_record, redactor_for_stored_text, rules_digest

EMAIL = "jane.doe@example.org"


def _info(config: RunConfig) -> RunInfo:
    return RunInfo(run_id="r1", created_at="2025-01-01T00:00:00Z", aeh_version="0", suite="s", suite_hash="h",
                   adapter="mock", model=None, seed=1, attempts=1, concurrency=1, price_table_version="v",
                   price_table_date="d", config=config)


def _attempt() -> tuple[Attempt, list[Span]]:
    attempt = Attempt(run_id="r1", task_id="t1", attempt=0, seed=1, success=True, status="answered",
                      final_output=f"mail {EMAIL}", tokens_in=0, tokens_out=0, latency_s=0.1, steps=1)
    span = Span(run_id="r1", task_id="t1", attempt=0, span_id="s1", category="tools", name="tool:read",
                start_ts=1.0, end_ts=1.5, attributes={"result": f"to {EMAIL}"})
    return attempt, [span]


def _stored(tmp_path: Path, writer: Redactor, record: RedactionRecord) -> tuple[RunConfig, str]:
    """Write one attempt with `writer`, its run claiming `record`; the stored config and the
    trace document a reader draws of the attempt, as JSON text."""
    with Store(tmp_path / "runs.db", redactor=writer) as store:
        store.create_run(_info(RunConfig(redaction=record)))
        store.write_attempt(*_attempt())
        info = store.run_info("r1")
        doc = trace_document(store.attempt_record("r1", "t1", 0), store.attempt_spans("r1", "t1", 0),
                             info.model_dump(mode="json"))
    return info.config, str(doc)


def test_a_run_written_through_these_rules_is_read_without_a_second_pass(tmp_path: Path) -> None:
    writer = Redactor()
    config, doc = _stored(tmp_path, writer, redaction_record(writer))
    assert config.redaction is not None and config.redaction.rules == rules_digest() is not None
    assert not redactor_for_stored_text(config).enabled
    assert not redactor_for_stored_text(config.model_dump(mode="json")).enabled  # a run dumped to JSON
    assert EMAIL not in doc and "[REDACTED:email]" in doc  # the store's own pass


def test_a_raw_write_under_a_record_that_claims_these_rules_is_redacted_by_the_reader(tmp_path: Path) -> None:
    # the record was made by a redacting store; this store writes raw: it cannot vouch for the rules
    config, doc = _stored(tmp_path, Redactor(enabled=False), redaction_record(Redactor()))
    assert config.redaction is not None and config.redaction.enabled and config.redaction.rules is None
    assert redactor_for_stored_text(config).enabled
    assert EMAIL not in doc and "[REDACTED:email]" in doc  # the reader's pass caught it


def test_a_record_naming_other_rules_leaves_the_readers_pass_on(tmp_path: Path) -> None:
    carried = RedactionRecord(enabled=True, rules="0000000000000000")  # an older aeh's, or an import's
    config, _ = _stored(tmp_path, Redactor(), carried)
    assert config.redaction is not None and config.redaction.rules is None
    assert redactor_for_stored_text(config).enabled


def test_a_resume_by_a_store_with_other_rules_clears_the_claim(tmp_path: Path) -> None:
    writer = Redactor()
    with Store(tmp_path / "runs.db", redactor=writer) as store:
        store.create_run(_info(RunConfig(redaction=redaction_record(writer))))
        first = store.run_info("r1").config
    assert not redactor_for_stored_text(first).enabled
    with Store(tmp_path / "runs.db", redactor=Redactor(enabled=False)) as raw:  # resumed, written raw
        raw.update_run("r1", status="running", config=first)
        resumed = raw.run_info("r1").config
    assert resumed.redaction is not None and resumed.redaction.rules is None
    assert redactor_for_stored_text(resumed).enabled


@pytest.mark.parametrize("record", [None, RedactionRecord(enabled=True), RedactionRecord(enabled=False)])
def test_without_a_claim_the_reader_redacts_unless_the_run_is_raw_on_purpose(record: RedactionRecord | None) -> None:
    reader = redactor_for_stored_text(RunConfig(redaction=record))
    assert reader.enabled is (record is None or record.enabled)


def test_unreadable_rules_vouch_for_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    record = redaction_record(Redactor())
    assert not redactor_for_stored_text(RunConfig(redaction=record)).enabled
    monkeypatch.setattr(_redact, "_RULE_MODULES", ("_redact.py", "no_such_rules.py"))
    _redact.rules_digest.cache_clear()
    try:
        assert rules_digest() is None
        assert redactor_for_stored_text(RunConfig(redaction=record)).enabled
        assert redaction_record(Redactor()).rules is None
    finally:
        monkeypatch.undo()
        _redact.rules_digest.cache_clear()
    assert rules_digest() == record.rules


def test_the_digest_covers_every_rule_module() -> None:
    # a change to any module that decides what is redacted changes the digest
    here = Path(_redact.__file__).parent
    imported = {line.split()[1].rsplit(".", 1)[-1] + ".py" for line in (here / "_redact.py").read_text().splitlines()
                if line.startswith("from aeh.store._") and "_json" not in line}
    assert imported <= set(_redact._RULE_MODULES)
