"""τ-bench import on the real gpt-4o airline file: pass^k reproduced straight from the JSON."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest

import aeh
from aeh.pricing import load_price_table
from aeh.store import Store


def _passes_per_task(tau_file: Path) -> dict[str, int]:
    records = json.loads(tau_file.read_text())
    counts: Counter[str] = Counter()
    for r in records:
        counts[str(r["task_id"])] += r["reward"] == 1.0
    return {str(t): counts[str(t)] for t in {r["task_id"] for r in records}}


def test_run_metadata(tau_run: tuple[str, str], tau_file: Path) -> None:
    db, rid = tau_run
    with Store(db) as store:
        info = store.run_info(rid)
    prices = load_price_table()
    assert (info.suite, info.adapter, info.model, info.seed, info.attempts) == (
        "tau-bench-airline", "import:tau-bench", "gpt-4o", 0, 4)
    assert info.suite_hash == hashlib.sha256(tau_file.read_bytes()).hexdigest()[:16]
    assert (info.price_table_version, info.price_table_date) == (prices.version, prices.date)
    assert info.status == "finished"
    assert info.config.facts["user_cost_usd"] == pytest.approx(0.503, abs=5e-4)


def test_suite_pass1_is_84_of_200_exactly(tau_run: tuple[str, str]) -> None:
    db, rid = tau_run
    table = aeh.load_run(rid, db=db)
    assert len(table) == 50 and (table["n"] == 4).all() and table["successes"].sum() == 84
    assert table.harness_errors == 0
    suite = aeh.pass_k(rid, db=db).table.query("task_id == '<suite>'").set_index("k")
    assert suite.loc[1, "pass_hat_k"] == pytest.approx(0.42, abs=1e-15)
    assert Fraction(suite.loc[1, "pass_hat_k"]).limit_denominator(1000) == Fraction(84, 200)
    assert table.suite_rate == pytest.approx(0.42, abs=1e-15)
    assert "source definition" in table.import_policy  # the run says how records were counted


def test_pass_hat_k_reproduced_from_the_json(tau_run: tuple[str, str], tau_file: Path) -> None:
    db, rid = tau_run
    per_task = _passes_per_task(tau_file)
    assert sorted(Counter(per_task.values()).items()) == [(0, 14), (1, 12), (2, 10), (3, 4), (4, 10)]
    suite = aeh.pass_k(rid, db=db).table.query("task_id == '<suite>'").set_index("k")
    for k in (1, 2, 3, 4):
        direct = sum(Fraction(comb(c, k), comb(4, k)) for c in per_task.values()) / len(per_task)
        assert suite.loc[k, "pass_hat_k"] == pytest.approx(float(direct), abs=1e-12), k
        at_k = sum(1 - Fraction(comb(4 - c, k), comb(4, k)) for c in per_task.values()) / len(per_task)
        assert suite.loc[k, "pass_at_k"] == pytest.approx(float(at_k), abs=1e-12), k
    # the figures in docs/realdata.md
    assert [round(suite.loc[k, "pass_hat_k"], 4) for k in (1, 2, 3, 4)] == [0.42, 0.2733, 0.22, 0.2]


def test_attempts_statuses_costs(tau_run: tuple[str, str]) -> None:
    db, rid = tau_run
    frame = aeh.attempts(rid, db=db)
    assert len(frame) == 200 and frame["success"].sum() == 84
    capped = frame[frame.status == "budget_exhausted"]
    assert sorted(zip(capped.task_id, capped.attempt, strict=False)) == [("2", 1), ("33", 0), ("46", 3), ("9", 2), ("9", 3)]
    assert not capped.success.any()
    assert (frame.loc[frame.status != "budget_exhausted", "status"] == "answered").all()
    assert frame["failure_bucket"][frame.success].isna().all()
    assert frame["failure_bucket"][~frame.success].notna().all()
    assert frame["cost_usd"].isna().all() and (frame["tokens_in"] == 0).all()
    assert frame["n_tool_calls"].sum() == 1164
    assert frame["grader:tau_bench_reward"].sum() == 84
    table = aeh.load_run(rid, db=db)
    assert table.priced is False and table.total_cost_usd is None


def test_tool_calls_and_spans(tau_run: tuple[str, str], tau_file: Path) -> None:
    db, rid = tau_run
    record = next(r for r in json.loads(tau_file.read_text()) if r["task_id"] == 0 and r["trial"] == 0)
    assistant = [m for m in record["traj"] if m["role"] == "assistant"]
    calls = [tc for m in assistant for tc in (m.get("tool_calls") or [])]
    results = {m["tool_call_id"]: m["content"] for m in record["traj"] if m["role"] == "tool"}
    with Store(db) as store:
        stored = store.attempt_record(rid, "0", 0)
    assert [c.name for c in stored.tool_calls] == [c["function"]["name"] for c in calls]
    assert stored.tool_calls[0].args == json.loads(calls[0]["function"]["arguments"])
    assert isinstance(stored.tool_calls[0].result, str) and stored.tool_calls[0].result
    assert len(stored.tool_calls[0].result) == len(results[calls[0]["id"]]) or "[REDACTED" in stored.tool_calls[0].result
    assert stored.final_output == next(m["content"] for m in reversed(assistant) if m.get("content")) \
        or "[REDACTED" in (stored.final_output or "")
    assert stored.grader_results[0].kind == "imported_reward" and stored.grader_results[0].evidence["reward"] == record["reward"]
    spans = aeh.spans(rid, db=db, task_id="0", attempt=0)
    assert Counter(spans.category) == {"scheduler": 1, "model": len(assistant), "tools": len(calls)}
    root = spans[spans.parent_span_id.isna()].iloc[0]
    assert root["name"] == "attempt" and root.span_id == stored.root_span_id
    model_ids = set(spans[spans.category == "model"].span_id)
    assert set(spans[spans.category == "model"].parent_span_id) == {root.span_id}
    tools = spans[spans.category == "tools"]
    assert set(tools.parent_span_id) <= model_ids
    attrs = aeh.span_attributes(tools).iloc[0]
    assert attrs["gen_ai.tool.name"] == calls[0]["function"]["name"]
    assert attrs["gen_ai.tool.call.id"] == calls[0]["id"] and attrs["gen_ai.operation.name"] == "execute_tool"
    assert aeh.span_attributes(spans, "gen_ai.request.model")[spans.category == "model"].iloc[0] == "gpt-4o"
    all_spans = aeh.spans(rid, db=db)
    assert (all_spans.category == "model").sum() == 2454 and (all_spans.category == "tools").sum() == 1164
