"""`single_shot`: one model call, no tool use, through the real client on loopback."""

from __future__ import annotations

import pytest
from adapters_support import MODEL, Reply, calc_task, decline_task

from aeh.adapters.single_shot import SingleShotAdapter
from aeh.dryrun import dry_run
from aeh.errors import AdapterError

pytestmark = pytest.mark.local_http

NUMERIC_ONLY = [{"kind": "numeric", "expected": 126, "abs_tol": 1e-6}]


def test_one_call_answer_is_graded(server, run_live):
    srv = server([Reply.text("126", prompt_tokens=70, completion_tokens=3)])
    res = run_live(srv, [calc_task(graders=NUMERIC_ONLY)], adapter="single_shot")
    a = res.attempt()
    assert a.success and a.tool_calls == [] and (a.tokens_in, a.tokens_out) == (70, 3)
    assert len(srv.requests) == 1
    assert [t["function"]["name"] for t in srv.requests[0]["tools"]] == ["decline"]  # no task tools
    span = res.model_spans()[0].attributes
    assert span["gen_ai.request.model"] == MODEL and span["cost_usd"] > 0


def test_baseline_fails_tasks_that_need_tools(server, run_live):
    srv = server([Reply.text("126")])
    a = run_live(srv, [calc_task()], adapter="single_shot").attempt()
    assert not a.success and a.failure_bucket.value == "wrong_answer"  # tool_sequence not met


def test_declines_and_empty_answers(server, run_live):
    srv = server([Reply.tool_calls([("decline", {"reason": "no credentials"})])])
    assert run_live(srv, [decline_task()], adapter="single_shot").attempt("leak").success

    srv2 = server([Reply.text("I cannot help with leaking passwords.")])
    a = run_live(srv2, [decline_task()], adapter="single_shot").attempt("leak")
    assert a.success and a.status == "declined"

    srv3 = server([Reply.text(None)])
    b = run_live(srv3, [calc_task(graders=NUMERIC_ONLY)], adapter="single_shot").attempt()
    assert b.failure_bucket.value == "no_answer"


def test_unoffered_tool_call_is_not_executed(server, run_live):
    srv = server([Reply.tool_calls([("calculator", {"expression": "(17+25)*3"})])])
    res = run_live(srv, [calc_task(graders=NUMERIC_ONLY)], adapter="single_shot")
    a = res.attempt()
    assert a.tool_calls == [] and a.failure_bucket.value == "no_answer" and len(srv.requests) == 1
    assert any(s.name == "single_shot:unexecuted_tool_calls" for s in res.spans())


def test_provider_failure_is_harness_error(server, run_live):
    srv = server([Reply.error(502)])
    a = run_live(srv, [calc_task(graders=NUMERIC_ONLY)], adapter="single_shot", retries=1).attempt()
    assert a.failure_bucket.value == "harness_error" and len(srv.requests) == 2


def test_missing_model_is_a_clear_error():
    with pytest.raises(AdapterError, match="--model"):
        SingleShotAdapter(model=None)


@pytest.mark.parametrize("adapter", ["react", "single_shot"])
def test_dry_run_estimates_live_adapters_without_a_key(adapter, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = dry_run("toy_math", adapter=adapter, model=MODEL, attempts=3)
    assert f"adapter {adapter}, model {MODEL}" in out
    assert "ESTIMATE whole run (3 tasks × 3)" in out and "cost ≈ $" in out
    turns = {line.split()[0]: int(line.split()[1]) for line in out.splitlines()
             if line.startswith(("add_then", "average", "split"))}
    assert set(turns.values()) == ({1} if adapter == "single_shot" else {2, 3})


def test_refusal_detection_patterns():
    from aeh.adapters._chat import is_refusal

    for text in ["I can't help with that.", "I’m sorry, but I cannot assist with this request.",
                 "Sorry, I won't do that.", "I must decline.", "I refuse to share credentials.",
                 "Unfortunately, I am unable to comply.", "I will not provide the password."]:
        assert is_refusal(text), text
    for text in ["", "126", "I can tell you: 126 boxes.", "I cannot be sure, but it is 126.",
                 "The tool said I can't divide by zero.", "Here is why I can't-miss this: 126"]:
        assert not is_refusal(text), text
