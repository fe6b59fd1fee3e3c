"""Run warnings say what the server did, not what the agent did.

Against a FakeOpenAIServer on 127.0.0.1 scripted like the real behaviour (tests/live/ checks the
same against a real llama-server): a dead endpoint, a server that ignores `tool_choice`, one that
leaves the tools out whatever `tool_choice` says, and one that refuses a tool schema's regex
pattern with HTTP 400 (llama.cpp cannot turn core's `^T\\d{4}$` into a grammar).
"""

from __future__ import annotations

import socket
from typing import Any

import pytest
from adapters_support import Reply, TinySuite, calc_task

from aeh.adapters._fidelity import schema_patterns, tool_choice_ignored
from aeh.analysis import format_run_table
from aeh.models import Task
from aeh.suite.loader import load_suite

pytestmark = pytest.mark.local_http

GRAMMAR_400 = "Failed to initialize samplers: failed to parse grammar"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_dead_endpoint_says_it_never_answered_not_that_the_agent_made_no_tool_call(run_live):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    res = run_live(None, [calc_task("a"), calc_task("b")], attempts=2, base_url=url, api_key="k", retries=0)
    warnings = res.table.warnings
    assert not any(w.startswith("NO TOOL CALLS") for w in warnings), warnings
    (dead,) = [w for w in warnings if w.startswith("MODEL ENDPOINT NEVER ANSWERED")]
    assert "none of 4 model requests got a reply" in dead
    checks = res.table.live_checks
    assert checks["model_turns"] == 4 and checks["model_turns_answered"] == 0


def test_a_server_ignoring_required_tool_choice_is_named_and_not_blamed_on_the_agent(server, run_live):
    srv = server([Reply.text("There are 126 boxes.")], count_prompt_tokens=True)
    res = run_live(srv, attempts=2, tool_choice="required")
    assert all(r["tool_choice"] == "required" for r in srv.requests)
    warnings = res.table.warnings
    (ignored,) = [w for w in warnings if w.startswith("SERVER IGNORED tool_choice")]
    assert "2 model turns sent tool_choice required" in ignored
    assert not any(w.startswith("NO TOOL CALLS") for w in warnings), warnings
    assert not any("try --adapter-option tool_choice" in w for w in warnings), warnings
    assert res.model_spans()[0].attributes["aeh.tool_choice_ignored"] is True
    assert format_run_table(res.table).startswith("⚠ SERVER IGNORED tool_choice")


def test_a_forced_function_answered_with_another_tool_is_ignored_tool_choice(server, run_live):
    forced = {"type": "function", "function": {"name": "calculator"}}
    srv = server([Reply.tool_calls([("decline", {"reason": "no"})])], count_prompt_tokens=True)
    res = run_live(srv, tool_choice=forced)
    assert srv.requests[0]["tool_choice"] == forced
    assert res.table.live_checks["tool_choice_ignored_turns"] == 1
    assert tool_choice_ignored(forced, ["calculator"]) is False
    assert tool_choice_ignored("auto", []) is False and tool_choice_ignored(None, []) is False


def test_tools_dropped_although_tool_choice_is_set_gets_the_template_advice(server, run_live):
    # 5 prompt tokens for a conversation plus two tool schemas: the tools never reached the prompt.
    srv = server([Reply.tool_calls([("calculator", {"expression": "(17 + 25) * 3"})], prompt_tokens=5),
                  Reply.text("126", prompt_tokens=5)])
    res = run_live(srv, tool_choice="required")
    (dropped,) = [w for w in res.table.warnings if w.startswith("TOOLS PROBABLY NOT SEEN")]
    assert "tool_choice is already required" in dropped and "--chat-template-file" in dropped
    assert "try --adapter-option tool_choice" not in dropped


def test_tools_dropped_with_tool_choice_unset_still_advises_setting_it(server, run_live):
    srv = server([Reply.text("There are 126 boxes.")], count_prompt_tokens=True, drop_tools_without_choice=True)
    res = run_live(srv)
    (dropped,) = [w for w in res.table.warnings if w.startswith("TOOLS PROBABLY NOT SEEN")]
    assert "try --adapter-option tool_choice=auto or required" in dropped


class _CoreTicketSuite(TinySuite):
    """One task offering core's update_ticket, whose ticket_id schema has the pattern ^T\\d{4}$."""

    def __init__(self) -> None:
        super().__init__([Task.model_validate({
            "id": "ticket", "prompt": "Close ticket T1007.", "tools": ["update_ticket"],
            "graders": [{"kind": "contains", "substring": "closed"}], "budget": {"max_steps": 3, "timeout_s": 20}})])
        self._registry = load_suite("core").tool_registry()


def _grammar_server(request: dict[str, Any]) -> Reply:
    return Reply.error(400, GRAMMAR_400) if schema_patterns(request.get("tools")) else Reply.text("closed")


def test_a_400_for_a_schema_pattern_is_named_once_with_the_tool_and_pattern(server, run_live):
    srv = server(_grammar_server)
    res = run_live(srv, _CoreTicketSuite().tasks(), attempts=3, suite=_CoreTicketSuite())
    assert res.table.harness_errors == 3
    warnings = res.table.warnings
    (refused,) = [w for w in warnings if w.startswith("SERVER REFUSED THE REQUEST")]
    assert "on 3 model turns" in refused and GRAMMAR_400 in refused
    assert "tool update_ticket field ticket_id pattern ^T\\d{4}$" in refused
    assert "the server's limit, not the agent's failure" in refused
    # Only the pattern llama.cpp refuses is named: status/priority's ^(a|b)$ alternatives pass.
    assert "field status" not in refused and "[0-9] passes" in refused
    assert not any(w.startswith(("MODEL ENDPOINT NEVER ANSWERED", "NO TOOL CALLS")) for w in warnings), warnings
    assert format_run_table(res.table).count("SERVER REFUSED THE REQUEST") == 1


def test_schema_patterns_walks_nested_fields():
    schema = load_suite("core").tool_registry().schemas(["update_ticket"])
    found = {(p["tool"], p["field"]) for p in schema_patterns(schema)}
    assert ("update_ticket", "ticket_id") in found
    nested = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "a": {"type": "object", "properties": {"b": {"type": "string", "pattern": "^x$"}}}}}}}]
    assert schema_patterns(nested) == [{"tool": "f", "field": "a.b", "pattern": "^x$"}]
    assert schema_patterns(None) == []


def test_a_400_about_something_else_names_no_pattern(server, run_live):
    srv = server([Reply.error(400, "the request exceeds the available context size")])
    res = run_live(srv, _CoreTicketSuite().tasks(), suite=_CoreTicketSuite())
    (refused,) = [w for w in res.table.warnings if w.startswith("SERVER REFUSED THE REQUEST")]
    assert "context size" in refused and "pattern" not in refused
