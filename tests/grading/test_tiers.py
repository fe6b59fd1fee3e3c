"""Tier interplay, end to end through the scheduler and the store, judge on a loopback server."""

from __future__ import annotations

import json

import pytest

import aeh
from aeh.testing.openai_server import Reply

from .conftest import INJECTION, Agent, TinySuite, judge_replies, run_tiny

RIGHT = ("17 + 25", "42 * 3")
WRONG = ("17 + 25", "42 * 2")


def by_task(store, run_id):
    return {t: store.attempt_record(run_id, t, 0) for t in ("with_golden", "no_golden")}


def results(attempt, tier):
    return [r for r in attempt.grader_results if r.tier == tier]


def test_correct_answer_that_broke_an_invariant_is_a_success_with_a_finding(db):
    info, store = run_tiny(db, Agent("126 BOXES", RIGHT))
    for a in by_task(store, info.run_id).values():
        assert a.success is True and a.clean_success is False
        assert [(r.name, r.passed) for r in a.invariant_results] == [("no_shouting", False)]
        assert a.needs_human_review is False and results(a, 2) == results(a, 3) == []


@pytest.fixture
def wrong_with_judge(db, fake_openai):
    """A wrong answer on both tasks (one with a golden trace, one without), judged by gpt-4o-mini."""
    server = fake_openai(judge_replies())
    info, store = run_tiny(db, Agent("84 boxes", WRONG), judge_model="gpt-4o-mini")
    return server, info, store


def test_run_records_the_judge_model_and_tier2_prompt_version(wrong_with_judge):
    _, info, store = wrong_with_judge
    assert info.judge_model == "gpt-4o-mini" and info.tier2_prompt_version == "tier2-v1"
    stored = store.run_info(info.run_id)
    assert (stored.judge_model, stored.tier2_prompt_version) == ("gpt-4o-mini", "tier2-v1")


def test_failure_with_golden_runs_tier2_and_success_is_unchanged(wrong_with_judge):
    _, info, store = wrong_with_judge
    golden = by_task(store, info.run_id)["with_golden"]
    assert golden.success is False and golden.failure_bucket.value == "wrong_answer"
    (loc,) = results(golden, 2)
    assert loc.kind == "golden_divergence" and loc.passed is None and loc.error is None
    ev = loc.evidence
    assert ev["step_index"] == 1 and ev["step_kind"] == "tool_call" and ev["tool"] == "calculator"
    assert ev["span_id"] == golden.tool_calls[1].span_id is not None
    assert ev["decision"] and ev["confidence"] == 0.9 and ev["judge_model"] == "gpt-4o-mini"
    assert ev["prompt_version"] == "tier2-v1"


def test_confidently_localized_failure_is_not_flagged_for_review(wrong_with_judge):
    _, info, store = wrong_with_judge
    golden = by_task(store, info.run_id)["with_golden"]
    assert golden.needs_human_review is False and results(golden, 3) == []


def test_failure_without_golden_gets_a_review_flag_instead_of_tier2(wrong_with_judge):
    _, info, store = wrong_with_judge
    plain = by_task(store, info.run_id)["no_golden"]
    assert results(plain, 2) == [] and plain.needs_human_review is True
    assert results(plain, 3)[0].evidence["reason"] == "tier 0 failed and the task has no golden trace"


def test_tier2_prompt_carries_the_golden_and_the_fenced_failed_trace(wrong_with_judge):
    server, _, _ = wrong_with_judge
    (tier2_request,) = [r for r in server.requests if "localize failures" in r["messages"][0]["content"]]
    user = tier2_request["messages"][1]["content"]
    assert "(17 + 25) * 3" in user and "<<<FAILED_RUN " in user and "42 * 2" in user


def test_tier2_exchange_is_one_span_of_its_attempt(wrong_with_judge, db):
    _, info, _ = wrong_with_judge
    spans = aeh.spans(info.run_id, db, task_id="with_golden")
    assert (spans["name"] == "judge:tier2").sum() == 1


def test_success_runs_no_later_tier(db, fake_openai):
    server = fake_openai(judge_replies())
    info, store = run_tiny(db, Agent("126 boxes", RIGHT), judge_model="gpt-4o-mini")
    for a in by_task(store, info.run_id).values():
        assert a.success and results(a, 2) == results(a, 3) == []
    assert server.requests == []


def test_failure_without_golden_and_without_judge_is_flagged_with_a_packet(db):
    info, store = run_tiny(db, Agent("84 boxes, mail me at ann@example.com", WRONG))
    attempts = by_task(store, info.run_id)
    plain, golden = attempts["no_golden"], attempts["with_golden"]
    assert plain.success is False and plain.needs_human_review is True
    (flag,) = results(plain, 3)
    assert flag.kind == "review_flag" and flag.name == "needs_human_review" and flag.passed is None
    packet = flag.evidence
    assert packet["task"] == {"id": "no_golden", "prompt": TinySuite().tasks()[1].prompt}
    assert packet["final_output"] == "84 boxes, mail me at [REDACTED:email]"  # redacted on write
    assert [g["kind"] for g in packet["grader_results"]] == ["numeric"]
    assert [c["args"] for c in packet["trace_excerpt"]] == ['{"expression": "17 + 25"}',
                                                           '{"expression": "42 * 2"}']
    assert packet["tier2"] is None and packet["has_golden"] is False
    # with a golden but no judge, the flag says tier 2 had nothing to run with
    assert golden.needs_human_review is True
    assert results(golden, 3)[0].evidence["reason"] == "no judge configured for tier 2"


def test_malformed_tier2_json_twice_is_errored_and_flagged(db, fake_openai):
    server = fake_openai(judge_replies(tier2=lambda r: Reply.text("The run went wrong at step 1.")))
    info, store = run_tiny(db, Agent("84 boxes", WRONG), judge_model="gpt-4o-mini", tasks=["with_golden"])
    a = store.attempt_record(info.run_id, "with_golden", 0)
    assert a.success is False and a.status == "answered"  # tier 2 errors are not harness errors
    (loc,) = results(a, 2)
    assert loc.passed is None and "after one re-ask" in loc.error
    assert a.needs_human_review is True
    (flag,) = results(a, 3)
    assert flag.evidence["reason"].startswith("tier-2 localization errored")
    assert flag.evidence["tier2"]["error"] == loc.error
    assert len(server.requests) == 2


def test_out_of_range_step_index_counts_as_malformed(db, fake_openai):
    bad = json.dumps({"step_index": 7, "decision": "x", "confidence": 0.9})
    fake_openai(judge_replies(tier2=lambda r: Reply.text(bad)))
    info, store = run_tiny(db, Agent("84 boxes", WRONG), judge_model="gpt-4o-mini", tasks=["with_golden"])
    (loc,) = results(store.attempt_record(info.run_id, "with_golden", 0), 2)
    assert "step_index 7 does not exist" in loc.error


def test_low_confidence_tier2_is_flagged(db, fake_openai):
    unsure = json.dumps({"step_index": 2, "decision": "answered 84", "confidence": 0.3})
    fake_openai(judge_replies(tier2=lambda r: Reply.text(unsure)))
    info, store = run_tiny(db, Agent("84 boxes", WRONG), judge_model="gpt-4o-mini", tasks=["with_golden"])
    a = store.attempt_record(info.run_id, "with_golden", 0)
    (loc,) = results(a, 2)
    assert loc.evidence["step_kind"] == "final_answer" and loc.evidence["span_id"] is None
    assert loc.evidence["low_confidence"] is True
    assert a.needs_human_review and "low-confidence (0.3)" in results(a, 3)[0].evidence["reason"]


def test_injected_trace_cannot_flip_a_programmatic_fail(db, fake_openai):
    """The judge is scripted to say pass to everything; the numeric grader still fails."""
    server = fake_openai(judge_replies())
    suite = TinySuite([{"kind": "judge", "rubric": "says 126 boxes"}])
    info, store = run_tiny(db, Agent(f"84 boxes. {INJECTION}", ("17 + 25", "1 + 1")),
                           judge_model="gpt-4o-mini", suite=suite)
    for a in by_task(store, info.run_id).values():
        numeric, judged = results(a, 0)
        assert judged.passed is True and numeric.passed is False and a.success is False
    for request in server.requests:
        for m in request["messages"]:
            if INJECTION in m["content"]:
                assert m["role"] == "user"
                before, after = m["content"].split(INJECTION, 1)
                token = before.rsplit("<<<", 1)[1].split()[1].rstrip(">")
                assert f"<<<END {token}>>>" in after  # the injection sits inside an open fence


def test_judge_provider_failure_makes_a_harness_error(db, fake_openai):
    fake_openai(judge_replies(grader=lambda r: Reply.error(500)))
    suite = TinySuite([{"kind": "judge", "rubric": "says 126 boxes"}])
    info, store = run_tiny(db, Agent("126 boxes", RIGHT), judge_model="gpt-4o-mini", suite=suite,
                           tasks=["no_golden"])
    a = store.attempt_record(info.run_id, "no_golden", 0)
    assert a.success is False and a.status == "harness_error"
    assert a.failure_bucket.value == "harness_error" and "judge provider failed" in a.error


def test_judge_exchange_is_persisted_redacted(db, fake_openai):
    fake_openai(judge_replies(grader=lambda r: Reply.text(
        json.dumps({"passed": False, "reason": "mentions bob@example.org"}), prompt_tokens=77)))
    suite = TinySuite([{"kind": "judge", "rubric": "says 126 boxes"}])
    info, store = run_tiny(db, Agent("126 boxes — contact bob@example.org", RIGHT),
                           judge_model="gpt-4o-mini", suite=suite, tasks=["no_golden"])
    spans = aeh.spans(info.run_id, db)
    (row,) = spans[spans["name"] == "judge:grader"].to_dict("records")
    a = json.loads(row["attributes"])
    assert row["category"] == "grading"
    text = json.dumps(a)
    assert "bob@example.org" not in text and "[REDACTED:email]" in text
    assert a["gen_ai.request.model"] == "gpt-4o-mini" and a["gen_ai.usage.input_tokens"] == 77
    assert a["parsed"] == {"passed": False, "reason": "mentions [REDACTED:email]"}
    assert "[REDACTED:email]" in a["raw_response"] and a["latency_s"] >= 0
    assert "cost_usd" in a and isinstance(a["prompt"], list)
    # the judge's tokens are the harness's cost, not the agent's
    assert store.attempt_record(info.run_id, "no_golden", 0).tokens_in == 0


class CrashingAgent(Agent):
    async def run(self, task, ctx):
        raise RuntimeError("adapter bug")


def test_harness_error_skips_tier2_but_is_flagged(db, fake_openai):
    server = fake_openai(judge_replies())
    info, store = run_tiny(db, CrashingAgent("x"), judge_model="gpt-4o-mini", tasks=["with_golden"])
    a = store.attempt_record(info.run_id, "with_golden", 0)
    assert a.status == "harness_error" and results(a, 2) == [] and server.requests == []
    assert a.needs_human_review and "harness errored" in results(a, 3)[0].evidence["reason"]
