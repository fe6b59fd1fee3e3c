"""An unreachable or failing endpoint: every attempt is a harness error, and the run says why."""

from __future__ import annotations

import io
import socket
import struct
import threading
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from adapters_support import MODEL, calc_task

from aeh.analysis import format_run_table, run_table
from aeh.cli import main
from aeh.engine.attempt import PROVIDER_FAILING
from aeh.testing.openai_server import Reply


def _closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now: connecting is refused at once
    return port


def test_connection_refused_is_named_once_in_the_table_and_its_attrs(run_live, db: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    res = run_live(None, [calc_task("a"), calc_task("b")], attempts=2, base_url=url,
                   api_key="test-key", retries=1)
    attrs = res.table
    assert attrs.harness_errors == 4 and attrs.invalid_measurement
    assert attrs.harness_error_causes == [
        {"cause": f"model provider failed after 2 tries: connection refused at {url}", "attempts": 4}]
    text = format_run_table(res.table)
    line = next(ln for ln in text.splitlines() if ln.startswith("harness errors"))
    assert "NOT A VALID MEASUREMENT" in line
    assert f"most common cause: model provider failed after 2 tries: connection refused at {url} (4 attempts)" in line
    assert text.count("connection refused") == 1
    # Derived from what is stored, so a later report says the same.
    assert run_table(res.run_id, db).harness_error_causes == attrs.harness_error_causes


def test_cli_run_against_a_dead_endpoint_exits_3_and_names_the_cause(db: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["run", "--suite", "toy_math", "--adapter", "react", "--model", MODEL,
                     "--attempts", "1", "--db", str(db), "--adapter-option", f"base_url={url}",
                     "--adapter-option", "api_key=test-key", "--adapter-option", "retries=0"])
    assert code == 3
    assert "NOT A VALID MEASUREMENT" in out.getvalue()
    shown = out.getvalue() + err.getvalue()
    assert shown.count(f"connection refused at {url}") == 1, shown


def test_a_500_names_the_servers_message(server, run_live) -> None:
    srv = server([Reply.error(500, "upstream model crashed: out of memory")])
    res = run_live(srv, retries=0)
    error = res.attempt().error
    assert f"HTTP 500 from {srv.base_url.rstrip('/')}: upstream model crashed: out of memory" in error
    retry = next(s for s in res.spans() if s.name == "model:retry")
    assert "upstream model crashed" in retry.attributes["error"]


def _agent_free(res) -> None:
    attempt = res.attempt()
    assert attempt.status == "harness_error" and attempt.failure_bucket == "harness_error"
    assert attempt.cost_usd == 0 and attempt.tokens_in == 0 and attempt.tokens_out == 0
    assert res.table.total_cost_usd == 0 and res.table.harness_errors == 1
    assert res.table.live_checks.get("first_reply_exhausted", 0) == 0
    assert not any(w.startswith("MODEL SERVER NEVER ANSWERED") for w in res.table.warnings)
    call = res.model_spans()[0].attributes
    assert not call.get("aeh.usage.cut_off") and call["aeh.provider.failed_tries"] >= 1


def test_time_running_out_while_a_refused_connection_is_retried_is_a_harness_error_at_no_cost(run_live) -> None:
    """The attempt's budget ends in the backoff between refused tries: not budget_exhausted, nothing priced."""
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    res = run_live(None, [calc_task(timeout_s=0.5)], base_url=url, api_key="test-key", retries=20, backoff_s=0.2)
    error = res.attempt().error
    assert error == f"{PROVIDER_FAILING}: connection refused at {url}"
    _agent_free(res)


def test_time_running_out_while_a_5xx_is_retried_is_a_harness_error_at_no_cost(server, run_live) -> None:
    srv = server([Reply.error(503, "loading model")] * 30)
    res = run_live(srv, [calc_task(timeout_s=0.5)], retries=20, backoff_s=0.2)
    assert res.attempt().error.startswith(f"{PROVIDER_FAILING}: HTTP 503 from {srv.base_url.rstrip('/')}: ")
    _agent_free(res)


def test_time_running_out_while_a_reset_connection_is_retried_is_a_harness_error_at_no_cost(run_live) -> None:
    """A server that accepts and closes at once, with an RST: the client sees a reset or a dropped connection."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    stop = threading.Event()

    def reset_all() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    thread = threading.Thread(target=reset_all, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        res = run_live(None, [calc_task(timeout_s=0.5)], base_url=url, api_key="test-key", retries=20,
                       backoff_s=0.2)
    finally:
        stop.set()
        thread.join()
        listener.close()
    assert res.attempt().error.startswith(f"{PROVIDER_FAILING}: ")
    assert url in res.attempt().error
    _agent_free(res)


def test_a_dns_failure_is_a_harness_error_naming_the_host(run_live) -> None:
    res = run_live(None, [calc_task(timeout_s=5.0)], base_url="http://no-such-host.invalid/v1", api_key="k",
                   retries=0)
    attempt = res.attempt()
    assert attempt.status == "harness_error" and attempt.cost_usd == 0
    assert "cannot resolve the host of http://no-such-host.invalid/v1" in attempt.error
