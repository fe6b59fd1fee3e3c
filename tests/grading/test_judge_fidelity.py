"""The judge does not starve the agent or hide its failures: structured output first, a bounded
re-ask, its own connection slots after the agent's time is measured, and honest agreement output."""

from __future__ import annotations

import itertools
import json

from aeh.analysis import agreement, format_run_table, run_table
from aeh.commands.judge_agreement import format_agreement
from aeh.grading.judge import REASK_EXCERPT_CHARS, JudgeClient, judge_error_kind
from aeh.grading.judge_grader import JudgeVerdict
from aeh.testing.openai_server import FakeOpenAIServer, Reply
from aeh.trace import SpanRecorder

from .conftest import Agent, TinySuite, judge_replies, run_tiny

MESSAGES = [{"role": "system", "content": "grade"}, {"role": "user", "content": "is it good?"}]
GOOD = json.dumps({"passed": True, "reason": "it is"})


def client(server: FakeOpenAIServer, **kw) -> JudgeClient:
    kw.setdefault("backoff_s", 0.01)
    return JudgeClient("gpt-4o-mini", base_url=server.base_url, api_key="test", **kw)


async def test_reask_sends_a_bounded_excerpt_of_the_bad_reply():
    bad = "x" * 3800
    with FakeOpenAIServer([Reply.text(bad), Reply.text(GOOD)]) as server:
        verdict, error = await client(server).verdict(MESSAGES, JudgeVerdict)
    assert error is None and verdict.passed
    echoed = server.requests[1]["messages"][-2]
    assert echoed["role"] == "assistant"
    assert len(echoed["content"]) < REASK_EXCERPT_CHARS + 60 and "3300 characters cut" in echoed["content"]


async def test_structured_output_falls_back_when_refused_and_remembers():
    with FakeOpenAIServer([Reply.text(GOOD)], reject_response_format={"json_schema"}) as server:
        judge = client(server)
        rec = SpanRecorder("r", "t", 0)
        first, _ = await judge.verdict(MESSAGES, JudgeVerdict, recorder=rec)
        second, _ = await judge.verdict(MESSAGES, JudgeVerdict)
    assert first.passed and second.passed
    kinds = [(r.get("response_format") or {}).get("type") for r in server.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]  # refused once, then remembered
    assert any(s.name == "judge:response_format_fallback" for s in rec.spans)


async def test_no_structured_output_at_all_falls_back_to_free_text():
    with FakeOpenAIServer([Reply.text(GOOD)],
                          reject_response_format={"json_schema", "json_object"}) as server:
        verdict, error = await client(server).verdict(MESSAGES, JudgeVerdict)
    assert error is None and verdict.passed
    assert "response_format" not in server.requests[-1]


async def test_a_context_overflow_400_is_not_mistaken_for_a_format_refusal():
    with FakeOpenAIServer([Reply.error(400, "maximum context length is 2048 tokens")]) as server:
        verdict, error = await client(server).verdict(MESSAGES, JudgeVerdict)
    assert verdict is None and "400" in error and len(server.requests) == 1


def test_judge_error_kinds():
    assert judge_error_kind("judge provider failed: model provider failed after 3 tries: "
                            "request timed out at http://x/v1") == "timeout"
    assert judge_error_kind("judge reply was not valid JudgeVerdict JSON after one re-ask: x") == "wrong_shape"
    assert judge_error_kind("judge provider failed: … HTTP 500 from http://x/v1: boom") == "http_error"
    assert judge_error_kind("this task has a `judge` grader but the run has no judge — …") == "no_judge"


def test_judge_time_is_grading_time_not_agent_time(db, fake_openai):
    fake_openai(judge_replies(grader=lambda r: Reply.text(GOOD, delay_s=0.8)))
    suite = TinySuite([{"kind": "judge", "rubric": "says 126"}])
    info, store = run_tiny(db, Agent("126 boxes", ("42 * 3",)), judge_model="gpt-4o-mini", suite=suite,
                           tasks=["no_golden"])
    a = store.attempt_record(info.run_id, "no_golden", 0)
    assert a.success
    assert a.grading_s >= 0.8 and a.latency_s < 0.5 and a.agent_s == a.latency_s
    table = run_table(info.run_id, store)
    assert table.table.loc[0, "latency_p50_s"] < 0.5
    assert table.time_split_s["grading"] >= 0.8


def test_judge_calls_take_their_own_connection_slots(db, fake_openai):
    """--judge-max-connections bounds judge requests, whatever the attempts in flight."""
    srv = fake_openai(judge_replies(grader=lambda r: Reply.text(GOOD, delay_s=0.2)))
    suite = TinySuite([{"kind": "judge", "rubric": "says 126"}])
    import asyncio

    from aeh.api import open_store
    from aeh.engine.runplan import plan_run
    from aeh.engine.scheduler import execute_run
    from aeh.pricing import load_price_table

    spec, options = plan_run(attempts=3, concurrency=3, seed=1, judge_model="gpt-4o-mini",
                             judge_max_connections=1)
    with open_store(db) as store:
        asyncio.run(execute_run(suite, Agent("126 boxes", ("42 * 3",)), store, load_price_table(), spec, options))
    assert srv.max_in_flight == 1 and len(srv.requests) == 6
    assert options.judge is not None and options.judge._client is None  # closed at run end, not left to GC


def test_agreement_shows_failed_and_automatic_verdicts_and_refuses_small_n(db, fake_openai):
    replies = itertools.chain([Reply.text(GOOD)], itertools.repeat(Reply.error(500)))
    fake_openai(judge_replies(grader=lambda r: next(replies)))
    suite = TinySuite([{"kind": "judge", "rubric": "says 126"}])
    info, store = run_tiny(db, Agent("126 boxes", ("42 * 3",)), judge_model="gpt-4o-mini", suite=suite)
    frame = agreement(info.run_id, db)
    counts = frame.judge_verdicts
    assert counts == {"attempted": 2, "valid": 1, "failed": 1, "failed_by_reason": {"http_error": 1},
                      "unparseable": 0, "automatic": 0}
    text = format_agreement(frame)
    assert "judge verdicts: 2 attempted, 1 valid, 1 failed (http_error 1); 0 automatic" in text
    assert "WARNING: 1 of 2 judge verdicts failed" in text
    assert "κ: not enough data (n = 1 < 10)" in text and "κ =" not in text
    table = run_table(info.run_id, db)
    assert any(w.startswith("JUDGE VERDICTS FAILED: 1 of 2") for w in table.warnings)
    assert "judge verdicts: 2 attempted, 1 valid, 1 failed (http_error 1), 0 automatic" in format_run_table(table)


def test_automatic_verdicts_are_counted_apart_and_left_out_of_kappa(db, fake_openai):
    fake_openai(judge_replies())
    suite = TinySuite([{"kind": "judge", "rubric": "says 126"}])
    info, _ = run_tiny(db, Agent("", ("42 * 3",)), judge_model="gpt-4o-mini", suite=suite)
    frame = agreement(info.run_id, db)
    assert frame.judge_verdicts["automatic"] == 2
    assert frame.judge_verdicts["attempted"] == 0
    assert int(frame.table.set_index("rater").loc["judge", "n"]) == 0
    assert "2 automatic (no judge call, left out of κ)" in format_agreement(frame)
