"""react and single_shot against a REAL model: SmolLM2-135M served on loopback by llama.cpp's
server through `aeh-llama-server`, with the portable xllamacpp build on every machine (the build an
AVX2-only CPU gets; `AEH_LLAMA_BACKEND=skulk|auto` runs them on another). The other build is started
too (or, on a CPU without AVX-512/AMX, refused by name) by the last test.

Skipped, with the install command, unless a build and the SmolLM2 gguf are found (see
`llama_support.missing`) — except under CI=true or AEH_LLAMA_TESTS=1, where a missing or failing
server fails the tests (`scripts/test.sh` installs both). Run them with `pytest -m llama tests/live`.

A 135M model is a weak agent; these tests check that the harness measures it honestly — every
attempt completes with a verdict, tokens match the server's own counts, a budget really stops
the server generating, and what the server does (drops tools, ignores `tool_choice`, refuses a
schema it cannot turn into a grammar) is reported as the server's doing — not that the model is
any good. Two servers: one with SmolLM2's own chat template (renders no tools) and one with a
ChatML/Hermes template of ours (`fixtures/chatml_tools.jinja`) that puts the tools in the prompt.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
from llama_support import ALIAS, TOOLS_TEMPLATE, backend, chat, missing, slots, start_server, stop_server
from llama_support import metrics as server_metrics

from aeh.api import open_store, run
from aeh.integrations.llama_server import LaunchError
from aeh.models import Task
from aeh.suite import load_suite
from tests.adapters.adapters_support import TinySuite

pytestmark = [pytest.mark.llama, pytest.mark.local_http, pytest.mark.slow]

REQUIRED = os.environ.get("CI", "").lower() == "true" or os.environ.get("AEH_LLAMA_TESTS") == "1"
_WHY = missing()
if _WHY is not None and not REQUIRED:
    pytestmark.append(pytest.mark.skip(reason=_WHY))



def _unavailable(why: str) -> NoReturn:
    if REQUIRED:
        pytest.fail(f"{why} — the llama tests are required when CI=true or AEH_LLAMA_TESTS=1")
    pytest.skip(why)


AGENT_BUCKETS = {None, "tool_error", "malformed_tool_call", "hallucinated_tool", "budget_exhausted",
                 "wrong_answer", "no_answer", "refusal"}


def _serve(tmp_path_factory: pytest.TempPathFactory, name: str, template: Path | None) -> Iterator[str]:
    if _WHY is not None:
        _unavailable(_WHY)
    log = tmp_path_factory.mktemp(name) / "server.log"
    try:
        proc, base_url = start_server(template=template, log=log)
    except RuntimeError as exc:  # e.g. a CPU or libc the binary does not support
        _unavailable(f"the llama server cannot start here: {exc}")
    try:
        yield base_url
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-server with SmolLM2's embedded chat template: the tools never reach the prompt."""
    yield from _serve(tmp_path_factory, "llama", None)


@pytest.fixture(scope="module")
def llama_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-server with a tool-aware ChatML/Hermes template (`--chat-template-file`)."""
    yield from _serve(tmp_path_factory, "llama-tools", TOOLS_TEMPLATE)


def options(base_url: str, **extra: Any) -> dict[str, Any]:
    return {"base_url": base_url, "api_key": "local", "timeout_s": 120, "retries": 1, **extra}


def attempts(db: Path, table: Any) -> Any:
    with open_store(db) as store:
        return store.attempts_frame(table.run_id)


def warnings_of(table: Any, prefix: str) -> list[str]:
    return [w for w in table.warnings if w.startswith(prefix)]


def unhurried(suite: str) -> TinySuite:
    """`suite`'s tasks, tools and invariants with a 10-minute time budget: on a loaded 2-core runner
    serving two llama servers a 135M model can take longer than toy_math's 30 s, and these tests
    are about what the harness reads from a reply, not about the budget (that is
    `test_the_budget_really_stops_the_server_generating`)."""
    base = load_suite(suite)
    tasks = [t.model_copy(update={"budget": t.budget.model_copy(update={"timeout_s": 600.0})}) for t in base.tasks()]
    return TinySuite(tasks)


@pytest.mark.parametrize("adapter", ["react", "single_shot"])
def test_toy_math_over_real_http(llama_tools: str, adapter: str, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    table = run(unhurried("toy_math"), adapter, attempts=1, concurrency=1, seed=1, db=db, model=ALIAS,
                max_connections=1, progress=False,
                adapter_options=options(llama_tools, max_output_tokens=96, tool_choice="auto"))
    with open_store(db) as store:
        frame = store.attempts_frame(table.run_id)
        spans = store.attempt_spans(table.run_id, "add_then_multiply", 0)
    assert len(frame) == 3
    buckets = collections.Counter(frame["failure_bucket"].to_list())
    print(f"\n{adapter} on smollm2: {dict(buckets)}; warnings: {table.warnings}")
    assert set(buckets) <= AGENT_BUCKETS, frame.select("task_id", "status", "error").to_dicts()
    assert frame["tokens_in"].min() > 0 and frame["tokens_out"].sum() > 0  # usage was reported
    assert frame["cost_usd"].sum() == 0.0  # priced (smollm2 is in the table at $0), not unpriced
    model = [s for s in spans if s.name == "model:call"]
    assert model and all("gen_ai.output.messages" in s.attributes for s in model)
    assert all(s.attributes["aeh.time.server_reported"] for s in model)  # llama.cpp `timings` read
    assert not warnings_of(table, "TOOLS PROBABLY NOT SEEN")  # the template puts the tools in the prompt


def test_usage_matches_the_servers_own_counts(llama: str, tmp_path: Path) -> None:
    """Reported tokens on the attempts = the server's /metrics counters over the run, two requests at once.

    llama.cpp's `usage.prompt_tokens` includes the prompt tokens it reused from a slot's cache;
    /metrics splits them into `prompt_tokens_total` (evaluated) and `prompt_tokens_cached_total`,
    and the sum matches exactly, concurrent or not. What cannot match is a request cut off at the
    attempt's budget (a loaded machine): aeh books its prompt as an estimate (≈4 characters a
    token over the request's JSON, scaled by the server's counts for earlier requests once there
    are some; `usage_estimated`) and the output that had streamed in, while the server counts what
    it evaluated and generated before it saw the client go. Such calls are left out of the exact
    comparison and bounded instead.
    """
    before = server_metrics(llama)
    db = tmp_path / "runs.db"
    table = run(unhurried("toy_math"), "single_shot", attempts=1, concurrency=2, seed=1, db=db, model=ALIAS,
                max_connections=2, adapter_options=options(llama, max_output_tokens=48), progress=False)
    frame = attempts(db, table)
    assert frame["status"].to_list().count("harness_error") == 0
    with open_store(db) as store:
        calls = [s.attributes for task_id in frame["task_id"].to_list()
                 for s in store.attempt_spans(table.run_id, task_id, 0) if s.name == "model:call"]
    reported = [a for a in calls if not a.get("usage_estimated")]
    cut_off = [a for a in calls if a.get("usage_estimated")]
    assert all(a.get("aeh.usage.cut_off") for a in cut_off)  # only a cut-off call is estimated
    assert sum(a["gen_ai.usage.input_tokens"] for a in calls) == int(frame["tokens_in"].sum())
    if cut_off:  # let the server notice the closed connections before reading its counters
        time.sleep(5)
    after = server_metrics(llama)

    def delta(name: str) -> int:
        return int(after[f"llamacpp:{name}"] - before.get(f"llamacpp:{name}", 0))

    prompt = delta("prompt_tokens_total") + delta("prompt_tokens_cached_total")
    reported_in = sum(a["gen_ai.usage.input_tokens"] for a in reported)
    reported_out = sum(a["gen_ai.usage.output_tokens"] for a in reported)
    print(f"\nreported {reported_in} in / {reported_out} out on {len(reported)} calls, {len(cut_off)} cut off; "
          f"server: {delta('prompt_tokens_total')} evaluated + {delta('prompt_tokens_cached_total')} cached, "
          f"{delta('tokens_predicted_total')} predicted")
    if not cut_off:
        assert reported_in == prompt
        assert reported_out == delta("tokens_predicted_total")
    else:
        assert reported_in <= prompt and reported_out <= delta("tokens_predicted_total")


def test_the_budget_really_stops_the_server_generating(llama: str, tmp_path: Path) -> None:
    """The attempt's budget cuts a long reply; the server stops generating at once and aeh books
    what had arrived.

    The reply is streamed (the adapters' default): the server writes each token, so its first
    write after the hang-up fails and it cancels the task. A plain request is noticed only when
    llama.cpp polls the socket, after a full second in which no result reached any of its HTTP
    threads — which a monitor reading /metrics (here every 0.1 s, as during the whole check)
    never allows: with `stream=false` the slot was still generating 15 s after the cut.
    """
    task = Task.model_validate({
        "id": "essay", "prompt": "Write a very long essay about the history of mathematics, in detail.",
        "tools": [], "graders": [{"kind": "contains", "substring": "Euclid"}],
        "budget": {"max_steps": 2, "timeout_s": 3.0}})
    # Start from an idle, warm server (a fresh one's first decode pages the model in: seconds under
    # load), so the cut falls mid-generation and whatever is processing afterwards is this request.
    assert chat(llama, {"model": ALIAS, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1})[0] == 200
    idle_by = time.monotonic() + 60
    while any(s.get("is_processing") for s in slots(llama)) and time.monotonic() < idle_by:
        time.sleep(0.2)
    before = server_metrics(llama)
    monitoring = threading.Event()

    def monitor() -> None:
        while not monitoring.wait(0.1):
            server_metrics(llama)

    watcher = threading.Thread(target=monitor, daemon=True)
    watcher.start()
    try:
        table = run(TinySuite([task]), "single_shot", attempts=1, seed=1, db=tmp_path / "runs.db", model=ALIAS,
                    adapter_options=options(llama, max_output_tokens=3000, retries=0), progress=False)
        frame = attempts(tmp_path / "runs.db", table)
        assert frame["failure_bucket"].to_list() == ["budget_exhausted"]
        # The server notices the closed connection at its next token.
        deadline = time.monotonic() + 15
        while any(s.get("is_processing") for s in slots(llama)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(s.get("is_processing") for s in slots(llama)), slots(llama)
        settled = server_metrics(llama)
        time.sleep(1.0)
        # Nothing more is generated once the client hung up, far short of the 3000 tokens allowed.
        assert server_metrics(llama)["llamacpp:tokens_predicted_total"] == settled["llamacpp:tokens_predicted_total"]
    finally:
        monitoring.set()
        watcher.join()
    predicted = settled["llamacpp:tokens_predicted_total"] - before.get("llamacpp:tokens_predicted_total", 0)
    assert predicted < 500
    # Booked for the cut call: the tokens that arrived, never more than the server generated.
    with open_store(tmp_path / "runs.db") as store:
        (cut,) = [s.attributes for s in store.attempt_spans(table.run_id, "essay", 0) if s.name == "model:call"]
    print(f"\ncut off: {cut['aeh.usage.cut_off_output_seen']} tokens arrived, server predicted {predicted:.0f}")
    assert cut["aeh.usage.cut_off"] and cut["aeh.request.stream"]
    assert 0 <= cut["gen_ai.usage.output_tokens"] == int(frame["tokens_out"][0]) <= predicted


def test_embedded_template_drops_tools_and_says_so(llama: str, tmp_path: Path) -> None:
    """SmolLM2's own template renders no tools, whatever tool_choice says."""
    unset = run(unhurried("toy_math"), "react", attempts=1, seed=1, db=tmp_path / "a.db", model=ALIAS, max_connections=1,
                tasks=["add_then_multiply"], progress=False,
                adapter_options=options(llama, max_output_tokens=32, max_turns=1))
    (dropped,) = warnings_of(unset, "TOOLS PROBABLY NOT SEEN BY THE MODEL")
    assert "try --adapter-option tool_choice=auto or required" in dropped
    required = run(unhurried("toy_math"), "react", attempts=1, seed=1, db=tmp_path / "b.db", model=ALIAS, max_connections=1,
                   tasks=["add_then_multiply"], progress=False,
                   adapter_options=options(llama, max_output_tokens=32, max_turns=1, tool_choice="required"))
    (dropped,) = warnings_of(required, "TOOLS PROBABLY NOT SEEN BY THE MODEL")
    assert "tool_choice is already required" in dropped and "--chat-template-file" in dropped


def test_required_tool_choice_is_not_enforced_and_the_run_says_the_server_ignored_it(
        llama, llama_tools: str, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    table = run(unhurried("toy_math"), "react", attempts=1, seed=1, db=db, model=ALIAS, max_connections=1,
                tasks=["add_then_multiply"], progress=False,
                adapter_options=options(llama_tools, max_output_tokens=48, max_turns=1, tool_choice="required"))
    with open_store(db) as store:
        spans = store.attempt_spans(table.run_id, "add_then_multiply", 0)
    (span,) = [s for s in spans if s.name == "model:call"]
    a = span.attributes
    assert a["aeh.request.tool_choice"] == "required" and a["aeh.tools_dropped_suspect"] is False
    # The tools are in this prompt: far more tokens than the same request to the embedded template.
    plain = run(unhurried("toy_math"), "react", attempts=1, seed=1, db=tmp_path / "plain.db", model=ALIAS,
                max_connections=1, tasks=["add_then_multiply"], progress=False,
                adapter_options=options(llama, max_output_tokens=8, max_turns=1, tool_choice="required"))
    plain_in = int(attempts(tmp_path / "plain.db", plain)["tokens_in"][0])
    assert a["gen_ai.usage.input_tokens"] > plain_in + 100
    calls = (a["gen_ai.output.messages"][0].get("tool_calls") or [])
    if calls:  # the model happened to call a tool: nothing was ignored
        assert not warnings_of(table, "SERVER IGNORED tool_choice")
    else:
        assert a["aeh.tool_choice_ignored"] is True
        (ignored,) = warnings_of(table, "SERVER IGNORED tool_choice")
        assert "the server does not enforce tool_choice" in ignored
        assert not warnings_of(table, "NO TOOL CALLS")


PATTERN_TOOL = {"type": "function", "function": {
    "name": "update_ticket", "description": "Update a ticket.",
    "parameters": {"type": "object", "properties": {"ticket_id": {"type": "string", "pattern": "^T\\d{4}$"}},
                   "required": ["ticket_id"]}}}


def test_a_schema_pattern_is_reported_as_the_server_treats_it(llama_tools: str, tmp_path: Path) -> None:
    """core's update_ticket has ticket_id pattern ^T\\d{4}$. What llama.cpp does with it depends on the build:

    - skulk's llama-server converts the schema to GBNF, writes the regex's `\\d` into it, and its
      grammar parser refuses that ("parse: error parsing grammar: unknown escape at \\d" in the
      server log): HTTP 400 "failed to parse grammar" on every request, a harness error named once.
    - xllamacpp is built with LLGuidance: `xllamacpp.json_schema_to_grammar` of that schema is a
      `%llguidance` grammar carrying the JSON schema, whose regex engine knows `\\d`: HTTP 200, the
      attempts are the agent's, and no refusal is reported.
    """
    status, body = chat(llama_tools, {"model": ALIAS, "max_tokens": 8, "tools": [PATTERN_TOOL], "tool_choice": "auto",
                                      "messages": [{"role": "user", "content": "Close ticket T0042."}]})
    assert status == {"skulk": 400, "xllamacpp": 200}[backend().backend], (backend(), status, body)
    table = run("core", "react", attempts=2, seed=1, db=tmp_path / "runs.db", model=ALIAS, max_connections=1,
                tasks=["fm_close_confirmed_ticket"], progress=False,
                adapter_options=options(llama_tools, max_output_tokens=32, tool_choice="auto"))
    assert not warnings_of(table, "MODEL ENDPOINT NEVER ANSWERED")
    if status == 400:
        assert "failed to parse grammar" in body["error"]["message"]
        assert table.harness_errors == 2
        (refused,) = warnings_of(table, "SERVER REFUSED THE REQUEST")
        assert "on 2 model turns" in refused and "failed to parse grammar" in refused
        assert "tool update_ticket field ticket_id pattern ^T\\d{4}$" in refused
        assert "the server's limit, not the agent's failure" in refused
    else:
        import xllamacpp

        grammar = xllamacpp.json_schema_to_grammar(json.dumps(PATTERN_TOOL["function"]["parameters"]))
        assert grammar.startswith("%llguidance") and "^T\\\\d{4}$" in grammar
        assert table.harness_errors == 0 and not warnings_of(table, "SERVER REFUSED")
        assert set(attempts(tmp_path / "runs.db", table)["failure_bucket"].to_list()) <= AGENT_BUCKETS


def test_queue_time_against_llama_is_not_agent_time(llama: str, tmp_path: Path) -> None:
    """Two attempts in flight, one connection: the second waits on the client, not the agent's clock."""
    db = tmp_path / "runs.db"
    table = run(unhurried("toy_math"), "single_shot", attempts=2, concurrency=2, seed=1, db=db, model=ALIAS,
                max_connections=1, tasks=["add_then_multiply"], progress=False,
                adapter_options=options(llama, max_output_tokens=64))
    frame = attempts(db, table)
    assert frame["queue_s"].max() > 0.0
    assert (frame["latency_s"] == frame["agent_s"]).all()


def test_the_other_build_serves_too_or_is_refused_by_name(tmp_path: Path) -> None:
    """Both selection paths, on whatever CPU runs this: the other build serves a real reply where
    this CPU can run it; skulk on a CPU without AVX-512/AMX is refused before it could die with SIGILL."""
    chosen = backend().backend
    other = "xllamacpp" if chosen == "skulk" else "skulk"
    try:
        backend(other)
    except LaunchError as exc:
        done = subprocess.run([sys.executable, "-m", "aeh.integrations.llama_server", "--backend", other],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and str(exc) in done.stderr and "SIGILL" in done.stderr
        return
    log = tmp_path / "server.log"
    proc, base_url = start_server(backend=other, log=log)
    try:
        status, body = chat(base_url, {"model": ALIAS, "max_tokens": 4,
                                       "messages": [{"role": "user", "content": "Say hi."}]})
    finally:
        stop_server(proc)
    assert status == 200 and body["usage"]["completion_tokens"] > 0, body
    assert f"aeh-llama-server: backend {other} (asked for)" in log.read_text()
