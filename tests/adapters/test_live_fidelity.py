"""Live runs measure the agent, not the server: tools the server dropped, time queued at a
one-request-at-a-time server, abandoned requests, faults that never fired, soft refusals.

Every test talks to a FakeOpenAIServer on 127.0.0.1 configured to behave like
llama-cpp-python's server (see aeh/testing/openai_server.py).
"""

from __future__ import annotations

import time

import pytest
from adapters_support import Reply, calc_task

from aeh.adapters._chat import is_refusal
from aeh.adapters._fidelity import tools_dropped_suspect
from aeh.analysis import format_run_table
from aeh.models import Task

pytestmark = pytest.mark.local_http

LLAMA_LIKE = {"count_prompt_tokens": True, "drop_tools_without_choice": True}


def answer_task(task_id: str = "boxes", *, timeout_s: float = 20.0) -> Task:
    """A task graded on the number only, so a one-turn text answer can pass."""
    return calc_task(task_id, timeout_s=timeout_s,
                     graders=[{"kind": "numeric", "expected": 126, "abs_tol": 1e-6}])


# -- 1. tools silently not offered ---------------------------------------------------------


def test_server_that_drops_tools_is_detected_and_warned(server, run_live):
    srv = server([Reply.text("There are 126 boxes.")], **LLAMA_LIKE)
    res = run_live(srv, [answer_task()], attempts=2)
    spans = res.model_spans()
    a = spans[0].attributes
    # What was sent is on the span …
    assert a["gen_ai.request.tool_names"] == ["calculator", "decline"]
    assert a["aeh.request.tools_offered"] == 2 and a["aeh.request.tool_choice"] == "unset"
    assert "tool_choice" not in srv.requests[0]
    # … and the prompt-token count the server reported shows the tools never reached the prompt.
    assert a["aeh.tools_dropped_suspect"] is True
    assert a["gen_ai.usage.input_tokens"] < a["aeh.tools_min_prompt_tokens"]
    warnings = res.table.warnings
    assert any(w.startswith("TOOLS PROBABLY NOT SEEN BY THE MODEL: 2 of 2 model turns") for w in warnings)
    assert any(w.startswith("NO TOOL CALLS") for w in warnings)
    text = format_run_table(res.table)
    assert text.startswith("⚠ TOOLS PROBABLY NOT SEEN BY THE MODEL")
    checks = res.store.run_info(res.run_id).config.live_checks.model_dump()
    assert checks["tools_dropped_suspect_turns"] == 2 and checks["tool_choice"] == {"unset": 2}


def test_tool_choice_auto_reaches_the_prompt_and_no_drop_is_suspected(server, run_live):
    srv = server([Reply.tool_calls([("calculator", {"expression": "(17 + 25) * 3"})]),
                  Reply.text("There are 126 boxes.")], **LLAMA_LIKE)
    res = run_live(srv, tool_choice="auto")
    assert srv.requests[0]["tool_choice"] == "auto"
    spans = res.model_spans()
    assert [s.attributes["aeh.tools_dropped_suspect"] for s in spans] == [False, False]
    assert spans[0].attributes["aeh.request.tool_choice"] == "auto"
    assert res.table.warnings == []
    assert res.attempt().success


def test_the_drop_rule_on_llama_like_numbers():
    messages = [{"role": "system", "content": "s" * 520}, {"role": "user", "content": "u" * 150}]
    tools = [{"type": "function", "function": {"name": "calculator", "description": "d" * 200,
                                               "parameters": {"type": "object", "properties": {}}}}] * 2
    assert tools_dropped_suspect(162, messages, tools)[0] is True     # tools left out
    assert tools_dropped_suspect(433, messages, tools)[0] is False    # tools rendered
    assert tools_dropped_suspect(162, messages, None)[0] is False     # nothing offered
    assert tools_dropped_suspect(None, messages, tools)[0] is False   # no reported usage


# -- 2. time: agent, queue, grading; cancellation; per-endpoint connections ------------------


def test_one_at_a_time_server_without_a_connection_limit_starves_attempts(server, run_live):
    """The old behaviour, kept visible: queueing at the server eats the agent's budget."""
    srv = server([Reply.text("126", delay_s=0.7)], serial=True)
    res = run_live(srv, [answer_task(timeout_s=1.0)], attempts=2, concurrency=2)
    # The second request waits 0.7 s inside the server, unmeasured: at least that attempt runs out.
    assert "budget_exhausted" in res.buckets()


def test_max_connections_moves_the_queue_to_the_client_where_it_is_not_agent_time(server, run_live):
    """With one connection allowed, the second request waits on the client, not inside the server,
    and that wait is the attempt's queue time. Asserted against what the server itself saw, not
    against wall-clock bounds (which a loaded machine stretches)."""
    srv = server([Reply.text("126", delay_s=0.5)], serial=True)
    res = run_live(srv, [answer_task(timeout_s=60.0)], attempts=2, concurrency=2,
                   run_options={"max_connections": 1})
    assert res.buckets() == [None, None]
    assert srv.max_in_flight == 1
    attempts = [res.attempt(attempt=i) for i in range(2)]
    spans = [res.model_spans(attempt=i)[0].attributes for i in range(2)]
    span = max(spans, key=lambda a: a["aeh.time.client_wait_s"])  # the request that waited
    waited = attempts[spans.index(span)]
    # The queue moved to the client: it waited there for the slot, while inside the server no
    # request waited behind another (each was processed as it arrived).
    assert span["aeh.time.client_wait_s"] > max(srv.queued_s)
    # That wait is the attempt's queue time, which the agent's clock does not count …
    assert waited.queue_s == pytest.approx(span["aeh.time.client_wait_s"], abs=1e-3)
    assert span["aeh.time.queue_s"] == pytest.approx(span["aeh.time.client_wait_s"], abs=1e-6)
    # … while the request itself (the server's 0.5 s) is model time.
    assert span["aeh.time.model_s"] >= 0.5 and waited.latency_s == waited.agent_s
    assert "queued" in format_run_table(res.table)
    assert res.store.run_info(res.run_id).config.spec["max_connections"] == 1


def test_server_reported_timings_take_server_queueing_out_of_agent_time(server, run_live):
    """A server that reports its processing time (llama.cpp `timings`) lets the client tell time
    queued inside the server from model time: the queue it infers covers what the server says it
    made the request wait, and model time is the server's own figure."""
    srv = server([Reply.text("126", delay_s=0.5)], serial=True, timings=True)
    res = run_live(srv, [answer_task()], attempts=2, concurrency=2)
    attempts = [res.attempt(attempt=i) for i in range(2)]
    assert all(a.success for a in attempts)
    assert max(srv.queued_s) > 0  # one request waited inside the server behind the other
    queued = max(attempts, key=lambda a: a.queue_s)
    # The client's request time encloses the server's queueing and processing, so the queue it
    # infers (request time − reported processing) is at least what the server measured.
    assert queued.queue_s >= max(srv.queued_s) - 1e-3
    assert min(a.queue_s for a in attempts) >= min(srv.queued_s) - 1e-3
    model = res.model_spans(attempt=attempts.index(queued))[0].attributes
    assert model["aeh.time.server_reported"] is True and model["aeh.time.model_s"] == pytest.approx(0.5)
    assert model["aeh.time.client_wait_s"] == 0.0  # no client-side limit: all of it was server queue


def test_timed_out_attempt_closes_its_connection(server, run_live):
    srv = server([Reply.text("126", delay_s=5.0)])
    res = run_live(srv, [answer_task(timeout_s=0.6)], retries=0)
    assert res.buckets() == ["budget_exhausted"]
    deadline = time.monotonic() + 30.0  # a wait for the server thread, not a speed bound
    while srv.disconnects < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    # The server saw the client hang up while it was still delaying its reply: the attempt did not
    # wait for the 5 s answer.
    assert srv.disconnects == 1


def test_max_connections_is_validated(server, run_live):
    from aeh.errors import ConfigError

    with pytest.raises(ConfigError, match="max_connections must be an integer >= 1"):
        run_live(None, [answer_task()], run_options={"max_connections": 0}, base_url="http://127.0.0.1:9/v1")


# -- 4. faults that never fire -----------------------------------------------------------


def test_fault_run_with_no_tool_calls_warns(server, run_live):
    srv = server([Reply.text("There are 126 boxes.")])
    res = run_live(srv, [answer_task()], attempts=2, run_options={"fault_rate": 0.3})
    a = res.table
    assert a.faults_planned_rate == pytest.approx(0.3) and a.faults_injected == 0
    assert a.tool_calls == 0
    assert any(w.startswith("NO FAULT INJECTED: fault rate 0.3 planned, 0 faults injected over 0 tool calls")
               for w in a.warnings)
    text = format_run_table(res.table)
    assert "faults: planned rate 0.3, injected 0 over 0 tool calls" in text


# -- 5. soft refusals, run-table columns ------------------------------------------------------


@pytest.mark.parametrize("text", [
    "I'm sorry, but I don't have access to a calculator.",
    "Unfortunately, I do not have access to real-time data.",
    "I am unable to access the file you mention.",
    "As an AI language model, I cannot browse the internet.",
    "As an AI, I don't have the ability to run code.",
])
def test_soft_refusals_are_refusals(text):
    assert is_refusal(text)


@pytest.mark.parametrize("text", [
    "Sorry for the wait: the answer is 126.",
    "I'm sorry to hear that. There are 126 boxes.",
    "126 — sorry, I don't have access to more digits.",
    "As an AI, I computed 126.",
    "I cannot be sure, but it is 126",
    "I don't have a calculator handy, but 42 * 3 = 126.",
])
def test_answers_that_merely_apologise_are_not_refusals(text):
    assert not is_refusal(text)


def test_soft_refusal_is_bucketed_refusal_not_wrong_answer(server, run_live):
    srv = server([Reply.text("I'm sorry, but I don't have access to a calculator.")])
    res = run_live(srv)
    a = res.attempt()
    assert a.status == "declined" and a.failure_bucket.value == "refusal"
    assert res.table.table.loc[0, "failures"] == "ref:1"


def test_run_table_failure_column_and_no_success_cost_line(server, run_live):
    srv = server([Reply.text("There are 60 boxes.")])
    res = run_live(srv, [answer_task()], attempts=2)
    assert res.table.table.loc[0, "failures"] == "wa:2"
    text = format_run_table(res.table)
    header = text.splitlines()[[i for i, line in enumerate(text.splitlines()) if line.startswith("task")][0]]
    assert "cost/attempt" in header and header.rstrip().endswith("failures")
    assert "wa:2" in text
    assert "per success — (no success)" in text and "— —" not in text


@pytest.mark.slow
def test_judge_on_the_agents_server_shares_its_slots_and_never_counts_as_agent_time(
        server, run_live, monkeypatch):
    import json

    def respond(request: dict) -> Reply:
        if "strict grader" in request["messages"][0]["content"]:
            return Reply.text(json.dumps({"passed": True, "reason": "says 126"}), delay_s=0.4)
        return Reply.text("There are 126 boxes.", delay_s=0.2)

    srv = server(respond, serial=True)
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    task = calc_task(timeout_s=60.0, graders=[{"kind": "numeric", "expected": 126, "abs_tol": 1e-6},
                                              {"kind": "judge", "rubric": "says 126"}])
    res = run_live(srv, [task], attempts=3, concurrency=3,
                   run_options={"max_connections": 1, "judge_model": "gpt-4o-mini"})
    assert res.buckets() == [None, None, None]
    # The judge's requests took the same single connection as the agents' …
    assert srv.max_in_flight == 1 and len(srv.requests) == 6
    waits = []
    for i in range(3):
        a = res.attempt(attempt=i)
        (call,) = res.model_spans(attempt=i)
        # … its own judging (the server's 0.4 s) is grading time, and an agent request that waited
        # for the connection (behind another agent or a judge) booked the wait as queue, so no
        # judge request can eat an agent's budget.
        assert a.grading_s >= 0.4
        assert a.queue_s == pytest.approx(call.attributes["aeh.time.client_wait_s"], abs=1e-3)
        waits.append(call.attributes["aeh.time.client_wait_s"])
    assert max(srv.queued_s) < max(waits)  # the queue was the client's, not the server's


def test_preflight_probe_finds_a_server_that_drops_tools(server, run_live):
    srv = server([Reply.text("126")], **LLAMA_LIKE)
    res = run_live(srv, [answer_task()], probe_tools=True)
    probe = res.store.run_info(res.run_id).config.tools_probe
    assert probe["dropped"] is True and probe["prompt_tokens_with"] == probe["prompt_tokens_without"]
    assert [r.get("max_tokens") for r in srv.requests[:2]] == [1, 1] and "tools" in srv.requests[1]
    assert any(w.startswith("TOOLS DROPPED BY THE SERVER (preflight)") for w in res.table.warnings)


def test_preflight_probe_passes_when_tool_choice_is_set(server, run_live):
    srv = server([Reply.text("126")], **LLAMA_LIKE)
    res = run_live(srv, [answer_task()], probe_tools=True, tool_choice="auto")
    probe = res.store.run_info(res.run_id).config.tools_probe
    assert probe["dropped"] is False and probe["tool_choice"] == "auto"
    assert not any("TOOLS" in w for w in res.table.warnings)


def test_single_shot_is_not_warned_for_making_no_tool_call(server, run_live):
    srv = server([Reply.text("126")], count_prompt_tokens=True)
    res = run_live(srv, [answer_task()], adapter="single_shot", attempts=2)
    assert res.table.warnings == []


def test_cli_run_prints_the_warnings_and_the_time_split(server, tmp_path, capsys):
    from aeh.cli import main

    srv = server([Reply.text("126", delay_s=0.05)], **LLAMA_LIKE)
    code = main(["run", "--suite", "toy_math", "--adapter", "react", "--model", "gpt-4o-mini",
                 "--attempts", "1", "--concurrency", "2", "--max-connections", "1", "--seed", "1",
                 "--task", "add_then_multiply", "--log-level", "silent",
                 "--adapter-option", f"base_url={srv.base_url}", "--adapter-option", "api_key=test",
                 "--adapter-option", "retries=0", "--db", str(tmp_path / "runs.db")])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("⚠ TOOLS PROBABLY NOT SEEN BY THE MODEL")
    assert "time: agent" in out and "queued" in out and "grading" in out
