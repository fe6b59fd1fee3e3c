"""Every dollar counted: what the judge (grader, tier-2 localization, judged dimensions) cost is in
the run's totals, beside the agent's, in attrs, the CLI cost line and the report header."""

from __future__ import annotations

import json

import pytest

from aeh.analysis import format_run_table, run_table
from aeh.analysis._judged import judge_run
from aeh.grading.judge import JudgeClient
from aeh.report.views import run_header
from aeh.testing.openai_server import FakeOpenAIServer, Reply

from .conftest import Agent, TinySuite, judge_replies, run_tiny


def _grading_span_cost(store, run_id: str) -> float:
    spans = store.spans_frame(run_id).to_pandas()
    total = 0.0
    for cat, attrs in zip(spans["category"], spans["attributes"], strict=True):
        a = json.loads(attrs)
        if cat == "grading" and a.get("cost_usd") is not None:
            total += a["cost_usd"]
    return total


def test_judge_and_localization_cost_are_in_the_run_totals(db, fake_openai):
    fake_openai(judge_replies())
    suite = TinySuite([{"kind": "judge", "rubric": "says 126"}])
    info, store = run_tiny(db, Agent("84 boxes"), judge_model="gpt-4o-mini", suite=suite)
    table = run_table(info.run_id, store)
    a = table
    spent = _grading_span_cost(store, info.run_id)
    assert spent > 0
    assert a.evaluation_cost_usd == pytest.approx(spent)
    assert a.run_cost_usd == pytest.approx(a.total_cost_usd + spent)
    purposes = a.evaluation_spend["by_purpose"]
    assert purposes["judge grader"] == 2 and purposes["tier-2 localization"] >= 1
    cost_line = next(line for line in format_run_table(table).splitlines() if line.startswith("cost "))
    assert f"evaluation ${spent:.4f}" in cost_line and "run total" in cost_line
    assert "cost: agent / evaluation" in run_header(table).data


def test_a_run_without_judge_calls_keeps_its_cost_line(db):
    info, store = run_tiny(db, Agent("126 boxes"))
    table = run_table(info.run_id, store)
    assert table.evaluation_cost_usd == 0.0 and table.evaluation_spend["calls"] == 0
    cost_line = next(line for line in format_run_table(table).splitlines() if line.startswith("cost "))
    assert "evaluation" not in cost_line and cost_line.startswith("cost total $")


def test_judged_dimensions_add_their_spend_to_the_run(db):
    info, store = run_tiny(db, Agent("126 boxes"))
    reply = Reply.text(json.dumps({"score": 1.0, "evidence": [], "reason": "fine"}),
                       prompt_tokens=400, completion_tokens=20, model="gpt-4o-mini")
    with FakeOpenAIServer([reply]) as server:
        judge = JudgeClient("gpt-4o-mini", base_url=server.base_url, api_key="test", backoff_s=0.01)
        summary = judge_run(info.run_id, store, judge=judge, dimensions=["plan_coherence"])
    table = run_table(info.run_id, store)
    assert summary.judge_cost_usd and summary.judge_cost_usd > 0
    assert table.evaluation_cost_usd == pytest.approx(summary.judge_cost_usd)
    assert set(table.evaluation_spend["by_purpose"]) == {"judged dimensions"}
