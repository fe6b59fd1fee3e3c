"""A model call cut off at the budget still cost its prompt, and a server that never answered is
named as such — not a plain budget_exhausted charged silently to the agent."""

from __future__ import annotations

import json

import pytest
from adapters_support import MODEL, calc_task

from aeh.analysis import format_run_table
from aeh.engine.attempt import BEFORE_FIRST_REPLY
from aeh.pricing import load_price_table
from aeh.testing.openai_server import Reply


def test_a_call_cut_off_before_the_first_reply_counts_its_prompt_and_names_the_server(server, run_live):
    srv = server([Reply.text("126", delay_s=5.0)])
    res = run_live(srv, [calc_task(timeout_s=0.5)], attempts=2)
    attempt = res.attempt()
    assert attempt.status == "budget_exhausted" and attempt.failure_bucket == "budget_exhausted"
    assert attempt.error.endswith(BEFORE_FIRST_REPLY)
    # The server read the prompt: estimated from the request, priced, counted in the attempt.
    call = res.model_spans()[0].attributes
    assert call["usage_estimated"] and call["aeh.usage.cut_off"] and call["aeh.model.before_first_reply"]
    assert call["gen_ai.usage.input_tokens"] > 50 and call["gen_ai.usage.output_tokens"] == 0
    expected = load_price_table().price(MODEL, call["gen_ai.usage.input_tokens"], 0)
    assert call["cost_usd"] == pytest.approx(expected) and expected > 0
    assert attempt.tokens_in == call["gen_ai.usage.input_tokens"]
    assert attempt.cost_usd == pytest.approx(expected)
    assert res.table.total_cost_usd > 0
    # Named in the run's checks and warnings, with the advice.
    assert res.table.live_checks["first_reply_exhausted"] == 2
    warning = next(w for w in res.table.warnings if w.startswith("MODEL SERVER NEVER ANSWERED"))
    assert "2 of 2 attempts" in warning and "--max-connections" in warning
    assert "MODEL SERVER NEVER ANSWERED" in format_run_table(res.table)


def test_a_call_cut_off_after_earlier_replies_is_a_plain_budget_exhaustion(server, run_live):
    calc = Reply.tool_calls([("calculator", {"expression": "(17 + 25) * 3"})], prompt_tokens=80)
    srv = server([calc, Reply.text("126", delay_s=5.0)])
    res = run_live(srv, [calc_task(timeout_s=1.0)])
    attempt = res.attempt()
    assert attempt.status == "budget_exhausted" and BEFORE_FIRST_REPLY not in attempt.error
    first, cut = res.model_spans()
    assert first.attributes["gen_ai.usage.input_tokens"] == 80 and not first.attributes.get("usage_estimated")
    assert cut.attributes["aeh.usage.cut_off"] and not cut.attributes["aeh.model.before_first_reply"]
    assert attempt.tokens_in == 80 + cut.attributes["gen_ai.usage.input_tokens"]
    assert "first_reply_exhausted" in res.table.live_checks
    assert not any(w.startswith("MODEL SERVER NEVER ANSWERED") for w in res.table.warnings)
    assert json.dumps(cut.attributes)  # stored attributes stay JSON


def test_a_cut_off_prompt_is_scaled_by_what_the_server_counted_for_earlier_requests(server, run_live):
    """The ~4-characters-a-token estimate runs over the request's JSON; once the run's server has
    reported prompt counts for requests of the same kind, the estimate is scaled to its counting."""
    replies = iter([Reply.text("There are 126 boxes.")])

    def respond(request: dict) -> Reply:
        return next(replies, Reply.text("126", delay_s=5.0))

    srv = server(respond, count_prompt_tokens=True)  # the fake counts content, not JSON
    task = calc_task(timeout_s=1.0, graders=[{"kind": "numeric", "expected": 126, "abs_tol": 1e-6}])
    res = run_live(srv, [task], attempts=2, concurrency=1, retries=0)
    answered, cut = (res.model_spans(attempt=i)[0].attributes for i in range(2))
    assert not answered.get("usage_estimated") and cut["aeh.usage.cut_off"]
    # The same prompt both times: the scaled estimate is the server's own count for it.
    assert cut["gen_ai.usage.input_tokens"] == answered["gen_ai.usage.input_tokens"]
    assert cut["aeh.usage.estimate_basis"] == "characters/4 scaled by the server's counts"
    assert srv.requests[0]["messages"] == srv.requests[1]["messages"]


def test_the_first_cut_off_of_a_run_says_its_estimate_is_characters(server, run_live):
    srv = server([Reply.text("126", delay_s=5.0)])
    res = run_live(srv, [calc_task(timeout_s=0.5)], retries=0)
    call = res.model_spans()[0].attributes
    assert call["aeh.usage.estimate_basis"] == "characters/4" and call["gen_ai.usage.input_tokens"] > 50
