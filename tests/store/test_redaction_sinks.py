"""The sinks beside the store: the run logger at every level and format, a Store passed in,
user span sinks, and the redaction record a run keeps."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from aeh.logs import RunLogger
from aeh.models import Attempt, RedactionRecord, RunConfig, RunInfo, Span
from aeh.store import RedactingSink, Redactor, Store, redaction_record, redactor_for_run, using_store

KEY = "sk-proj-Abc123Def456Ghi789Jkl012Mno"
EMAIL = "jane.doe@example.org"
# The key sits past the 80 characters a log line keeps of a value: redaction must come before the cut.
LONG = "x" * 70 + " " + KEY


def _span(**attrs: object) -> Span:
    return Span(run_id="r1", task_id="t1", attempt=0, span_id="s1", category="tools", name="tool:read",
                start_ts=1.0, end_ts=1.5, attributes=dict(attrs))


def _attempt() -> Attempt:
    return Attempt(run_id="r1", task_id="t1", attempt=0, seed=1, success=True, status="answered",
                   final_output=f"mail {EMAIL}", tokens_in=0, tokens_out=0, latency_s=0.1, steps=1)


def _info() -> RunInfo:
    return RunInfo(run_id="r1", created_at="2025-01-01T00:00:00Z", aeh_version="0", suite="s", suite_hash="h",
                   adapter="mock", model=None, seed=1, attempts=1, concurrency=1, price_table_version="v",
                   price_table_date="d", config={"note": f"owner {EMAIL}"})


@pytest.mark.parametrize("level", ["steps", "calls", "trace"])
@pytest.mark.parametrize("fmt", ["pretty", "jsonl"])
def test_logger_redacts_every_level_and_format(level: str, fmt: str) -> None:
    stream = io.StringIO()
    log = RunLogger(level=level, fmt=fmt, stream=stream, redactor=Redactor(["hunter2"]))
    log.run_started(_info(), [])
    span = _span(args={"to": EMAIL, KEY: 1}, result=LONG, error="pw hunter2")
    log.span_started(span, 0)
    log.span_ended(span, 0)
    log.attempt_finished(_attempt())
    log.run_finished(_info())
    text = stream.getvalue()
    assert "tool:read" in text and "[REDACTED:" in text
    assert EMAIL not in text and "hunter2" not in text and "sk-proj" not in text
    assert span.attributes["result"] == LONG  # the span graders read is untouched


def test_logger_without_redaction_shows_the_raw_values() -> None:
    # The check above can fail: with redaction off the same lines hold the raw values.
    stream = io.StringIO()
    RunLogger(level="trace", fmt="jsonl", stream=stream, redactor=Redactor(enabled=False)).span_ended(
        _span(args={"to": EMAIL}), 0)
    assert EMAIL in stream.getvalue()


def test_a_store_passed_in_redacts_the_run_secrets_for_the_run_only(tmp_path: Path) -> None:
    with Store(tmp_path / "runs.db") as store:
        own = store.redactor
        with using_store(store, secrets=["opal-Vector-77"]) as same:
            assert same is store
            assert store.redactor.redact_text("x opal-Vector-77") == "x [REDACTED:secret]"
        assert store.redactor is own and own.redact_text("opal-Vector-77") == "opal-Vector-77"


def test_user_sinks_get_redacted_copies() -> None:
    got: list[Span] = []

    class Collect:
        def span_started(self, span: Span, depth: int) -> None:
            pass

        def span_ended(self, span: Span, depth: int) -> None:
            got.append(span)

    span = _span(result=f"to {EMAIL}")
    RedactingSink(Collect(), Redactor()).span_ended(span, 0)
    assert got[0].attributes["result"] == "to [REDACTED:email]"
    assert span.attributes["result"] == f"to {EMAIL}"


def test_redaction_record_keeps_fingerprints_not_secrets() -> None:
    record = redaction_record(Redactor(["opal-Vector-77"]))
    assert record.enabled is True and len(record.secret_fingerprints) == 1
    assert "opal" not in str(record)
    assert redactor_for_run(RunConfig(redaction=record)).enabled
    assert not redactor_for_run({"redaction": {"enabled": False}}).enabled  # a run's config as JSON
    assert not redactor_for_run(RunConfig(redaction=RedactionRecord(enabled=False))).enabled
    assert redactor_for_run({}).enabled and redactor_for_run(None).enabled
