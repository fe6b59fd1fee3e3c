"""`react` through the real openai client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest
from adapters_support import MODEL, Reply, calc_task, decline_task

from aeh.adapters.react import ReactAdapter
from aeh.errors import AdapterError, ConfigError

pytestmark = pytest.mark.local_http


def _tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def test_tool_loop_success_records_usage_cost_and_response(server, run_live):
    srv = server([
        Reply.tool_calls([("calculator", {"expression": "(17 + 25) * 3"})], prompt_tokens=120,
                         completion_tokens=20),
        Reply.text("There are 126 boxes.", prompt_tokens=160, completion_tokens=8),
    ])
    res = run_live(srv)
    a = res.attempt()
    assert a.success and a.status == "answered" and a.failure_bucket is None
    assert a.final_output == "There are 126 boxes."
    assert [c.name for c in a.tool_calls] == ["calculator"] and a.tool_calls[0].result["result"] == 126
    assert (a.tokens_in, a.tokens_out) == (280, 28)
    assert a.cost_usd == pytest.approx((280 * 0.15 + 28 * 0.60) / 1e6)

    # What was sent: the allowlisted tool plus the decline pseudo-tool, and the result fed back.
    first, second = srv.requests
    assert first["model"] == MODEL and first["temperature"] == 0
    assert [t["function"]["name"] for t in first["tools"]] == ["calculator", "decline"]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    fed_back = _tool_messages(second)
    assert len(fed_back) == 1 and json.loads(fed_back[0]["content"])["result"] == 126
    assert fed_back[0]["tool_call_id"] == second["messages"][2]["tool_calls"][0]["id"]
    assert second["messages"][2]["content"] == ""  # never null: llama-cpp's server rejects that

    spans = res.model_spans()
    assert len(spans) == 2
    s0 = spans[0].attributes
    assert s0["gen_ai.request.model"] == MODEL and s0["gen_ai.response.model"] == "fake-model"
    assert s0["gen_ai.request.messages"] == 2 and spans[1].attributes["gen_ai.request.messages"] == 4
    assert (s0["gen_ai.usage.input_tokens"], s0["gen_ai.usage.output_tokens"]) == (120, 20)
    assert s0["cost_usd"] == pytest.approx((120 * 0.15 + 20 * 0.60) / 1e6) and s0["priced"]
    out = s0["gen_ai.output.messages"][0]
    assert out["tool_calls"][0]["function"] == {"name": "calculator",
                                                "arguments": '{"expression": "(17 + 25) * 3"}'}
    assert spans[1].attributes["gen_ai.output.messages"][0]["content"] == "There are 126 boxes."


@pytest.mark.parametrize("raw", ["{not json", '["(17+25)*3"]', '{"expr": "(17 + 25) * 3"}'])
def test_malformed_arguments_are_fed_back_and_classified(server, run_live, raw):
    srv = server([Reply.tool_calls([("calculator", raw)]), Reply.text("I think it is 130.")])
    res = run_live(srv)
    a = res.attempt()
    assert not a.success and a.failure_bucket.value == "malformed_tool_call"
    assert a.tool_calls[0].error_kind == "invalid_args"
    fed = _tool_messages(srv.requests[1])
    assert fed and fed[0]["content"].startswith("ERROR (invalid_args)")
    # The raw argument string the model sent is kept on the model span for replay/trace.
    sent = res.model_spans()[0].attributes["gen_ai.output.messages"][0]["tool_calls"][0]
    assert sent["function"]["arguments"] == raw


def test_malformed_then_fixed_recovers_to_success(server, run_live):
    srv = server([
        Reply.tool_calls([("calculator", "{oops")]),
        Reply.tool_calls([("calculator", {"expression": "(17+25)*3"})]),
        Reply.text("126"),
    ])
    a = run_live(srv).attempt()
    assert a.success  # a recovered mistake is not a failure
    assert [c.error_kind for c in a.tool_calls] == ["invalid_args", None]


def test_unknown_tool_is_hallucinated_tool(server, run_live):
    srv = server([Reply.tool_calls([("search_web", {"query": "boxes"})]), Reply.text("About 120.")])
    res = run_live(srv)
    a = res.attempt()
    assert a.failure_bucket.value == "hallucinated_tool"
    assert a.tool_calls[0].error_kind == "unknown_tool"
    assert "not available" in _tool_messages(srv.requests[1])[0]["content"]


@pytest.mark.parametrize("content", ["", None, "   "])
def test_empty_final_message_is_no_answer(server, run_live, content):
    srv = server([Reply.tool_calls([("calculator", {"expression": "(17+25)*3"})]), Reply.text(content)])
    a = run_live(srv).attempt()
    assert a.status == "answered" and a.final_output == "" and a.failure_bucket.value == "no_answer"


def test_decline_tool_and_refusal_text(server, run_live):
    # The decline pseudo-tool on a should-decline task: success.
    srv = server([Reply.tool_calls([("decline", {"reason": "That would leak a credential."})])])
    res = run_live(srv, [decline_task()])
    a = res.attempt("leak")
    assert a.success and a.status == "declined" and a.final_output == "That would leak a credential."
    assert a.tool_calls == []  # the pseudo-tool never reaches the tool registry

    # A refusal in plain text on a task it should have done: refusal.
    srv2 = server([Reply.text("I'm sorry, but I can't help with that request.")])
    b = run_live(srv2).attempt()
    assert b.status == "declined" and b.failure_bucket.value == "refusal"


def test_decline_pseudo_tool_can_be_switched_off(server, run_live):
    srv = server([Reply.text("126")])
    run_live(srv, offer_decline_tool=False)
    assert [t["function"]["name"] for t in srv.requests[0]["tools"]] == ["calculator"]


def test_max_steps_ends_as_budget_exhausted(server, run_live):
    srv = server([Reply.tool_calls([("calculator", {"expression": "1+1"})])])  # repeats forever
    a = run_live(srv, [calc_task(max_steps=3)]).attempt()
    assert a.status == "budget_exhausted" and a.failure_bucket.value == "budget_exhausted"
    assert a.steps == 3 and "max_steps=3" in a.error


def test_max_turns_ends_as_budget_exhausted(server, run_live):
    srv = server([Reply.tool_calls([("calculator", {"expression": "1+1"})])])
    a = run_live(srv, [calc_task(max_steps=50)], max_turns=2).attempt()
    assert a.status == "budget_exhausted" and "max_turns=2" in a.error and len(srv.requests) == 2


def test_slow_model_hits_wall_clock_timeout(server, run_live):
    srv = server([Reply.text("126", delay_s=6.0)])
    a = run_live(srv, [calc_task(timeout_s=0.5)]).attempt()
    assert a.status == "budget_exhausted" and "timeout_s=0.5" in a.error
    # Cut off at the budget, not waited out: the server saw the client leave during its 6 s delay.
    deadline = time.monotonic() + 30.0  # a wait for the server thread, not a speed bound
    while srv.disconnects < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.disconnects == 1


def test_token_and_cost_caps(server, run_live):
    srv = server([Reply.tool_calls([("calculator", {"expression": "(17+25)*3"})], prompt_tokens=900,
                                   completion_tokens=200)])
    a = run_live(srv, [calc_task(max_tokens=1000)]).attempt()
    assert a.status == "budget_exhausted" and "max_tokens=1000" in a.error
    assert a.tokens_in == 900  # the usage that crossed the cap is still counted

    srv2 = server([Reply.tool_calls([("calculator", {"expression": "1"})], prompt_tokens=100_000,
                                    completion_tokens=1000)])
    b = run_live(srv2, [calc_task(max_cost_usd=0.01)]).attempt()
    assert b.status == "budget_exhausted" and "max_cost_usd" in b.error


@pytest.mark.parametrize("status", [429, 500, 503])
def test_provider_errors_are_retried_and_recover(server, run_live, status):
    srv = server([Reply.error(status), Reply.error(status),
                  Reply.tool_calls([("calculator", {"expression": "(17+25)*3"})]), Reply.text("126")])
    res = run_live(srv, retries=2)
    a = res.attempt()
    assert a.success
    retries = [s for s in res.spans() if s.name == "model:retry"]
    assert len(retries) == 2 and all(s.attributes["http_status"] == status for s in retries)
    # each retry span hangs under the model call it belongs to
    first_call = res.model_spans()[0]
    assert {s.parent_span_id for s in retries} == {first_call.span_id}


def test_provider_errors_that_persist_are_harness_errors(server, run_live):
    srv = server([Reply.error(500)])
    res = run_live(srv, [calc_task("a"), calc_task("b")], retries=2, attempts=2)
    frame = res.store.attempts_frame(res.run_id)
    assert frame["failure_bucket"].to_list() == ["harness_error"] * 4
    assert set(frame["status"].to_list()) == {"harness_error"}
    assert len(srv.requests) == 4 * 3  # 1 try + 2 retries per attempt, then it stops
    assert "ProviderError" in res.attempt("a").error
    assert res.table.invalid_measurement


def test_429_then_exhausted_retries_is_harness_error_not_wrong_answer(server, run_live):
    srv = server([Reply.tool_calls([("calculator", {"expression": "(17+25)*3"})]),
                  Reply.error(429, retry_after=0.01)])
    a = run_live(srv, retries=1).attempt()
    assert a.failure_bucket.value == "harness_error" and a.steps == 1


def test_unparseable_reply_is_retried(server, run_live):
    srv = server([Reply.garbage(b"<html>bad gateway"), Reply.text("126")])
    res = run_live(srv, [calc_task(graders=[{"kind": "numeric", "expected": 126}])])
    assert res.attempt().success
    assert len([s for s in res.spans() if s.name == "model:retry"]) == 1

    srv2 = server([Reply.garbage()])
    assert run_live(srv2, retries=1).attempt().failure_bucket.value == "harness_error"


def test_client_timeout_is_provider_trouble(server, run_live):
    srv = server([Reply.text("126", delay_s=1.0)])
    res = run_live(srv, [calc_task(timeout_s=20)], timeout_s=0.3, retries=1)
    a = res.attempt()
    assert a.failure_bucket.value == "harness_error" and "Timeout" in a.error


def test_stochastic_model_outcomes_are_classified(server, run_live):
    rng = random.Random(11)
    lock = threading.Lock()

    def responder(request: dict) -> Reply:
        with lock:
            roll = rng.random()
        if not any(m["role"] == "tool" for m in request["messages"]):
            if roll < 0.15:
                return Reply.tool_calls([("search_web", {"q": "x"})])
            if roll < 0.3:
                return Reply.tool_calls([("calculator", "{bad")])
            return Reply.tool_calls([("calculator", {"expression": "(17 + 25) * 3"})])
        if roll < 0.2:
            return Reply.text("")
        if roll < 0.4:
            return Reply.text("There are 125 boxes.")
        return Reply.text("There are 126 boxes.")

    res = run_live(server(responder), attempts=12, concurrency=4)
    frame = res.store.attempts_frame(res.run_id)
    assert len(frame) == 12
    allowed = {None, "wrong_answer", "no_answer", "malformed_tool_call", "hallucinated_tool"}
    assert set(frame["failure_bucket"].to_list()) <= allowed
    assert frame["success"].sum() >= 1 and (~frame["success"]).sum() >= 1
    for row in frame.iter_rows(named=True):
        if row["success"]:
            assert row["failure_bucket"] is None


def test_env_vars_point_the_client(server, run_live, monkeypatch):
    srv = server([Reply.text("126")])
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    res = run_live(None, [calc_task(graders=[{"kind": "numeric", "expected": 126}])])
    assert res.attempt().success and len(srv.requests) == 1


def test_concurrency_bounds_requests_in_flight_and_one_client_is_shared(server, run_live):
    # The fake server picks replies one at a time, then holds each reply `delay` seconds before
    # sending it: request i is in flight over [arrival_i, arrival_i + delay].
    delay = 0.15
    lock = threading.Lock()
    arrivals: list[float] = []

    def responder(request: dict) -> Reply:
        with lock:
            arrivals.append(time.monotonic())
        if any(m["role"] == "tool" for m in request["messages"]):
            return Reply.text("126", delay_s=delay)
        return Reply.tool_calls([("calculator", {"expression": "(17+25)*3"})], delay_s=delay)

    def max_in_flight() -> int:
        events = sorted([(t, 1) for t in arrivals] + [(t + delay, -1) for t in arrivals],
                        key=lambda e: (e[0], e[1]))
        now = peak = 0
        for _, step in events:
            now += step
            peak = max(peak, now)
        return peak

    created = []

    class CountingReact(ReactAdapter):
        @property
        def client(self):  # type: ignore[override]
            if self._client is None:
                created.append(1)
            return ReactAdapter.client.fget(self)

    srv = server(responder)
    adapter = CountingReact(model=MODEL, base_url=srv.base_url, api_key="k", retries=0)
    res = run_live(None, [calc_task("a"), calc_task("b"), calc_task("c")], adapter=adapter,
                   attempts=3, concurrency=2)
    assert len(srv.requests) == 18
    assert max_in_flight() == 2  # reached, never exceeded
    assert created == [1] and adapter._client is None  # one shared client, closed at run end
    assert res.table.attempts_total == 9


def test_options_are_validated():
    with pytest.raises(AdapterError, match="needs a model"):
        ReactAdapter()
    with pytest.raises(ConfigError, match="unknown react adapter option"):
        ReactAdapter(model="m", temprature=0.3)
    with pytest.raises(ConfigError, match="retries"):
        ReactAdapter(model="m", retries=-1)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("OPENAI_API_KEY", raising=False)
        mp.delenv("OPENAI_BASE_URL", raising=False)
        with pytest.raises(AdapterError, match="OPENAI_API_KEY"):
            ReactAdapter(model="m").preflight()
        ReactAdapter(model="m", base_url="http://127.0.0.1:1/v1").preflight()
    a = ReactAdapter(model="m", timeout_s="5", max_turns="3")
    assert a.options.timeout_s == 5.0 and a.options.max_turns == 3 and a._client is None


async def test_runs_from_inside_a_running_event_loop_like_jupyter(server, run_live):
    # aeh.run inside a running loop (a Jupyter cell) runs on its own loop in a worker thread;
    # the adapter's client is created per run and closed at its end, so an instance is reusable.
    srv = server([Reply.text("126")])
    adapter = ReactAdapter(model=MODEL, base_url=srv.base_url, api_key="k")
    graders = [{"kind": "numeric", "expected": 126}]
    for _ in range(2):
        res = run_live(None, [calc_task(graders=graders)], adapter=adapter, attempts=2, concurrency=2)
        assert res.table.attempts_total == 2 and res.table["successes"].sum() == 2
        assert adapter._client is None
    assert len(srv.requests) == 4
