"""`replay`: identical trajectories, no model call; verdicts reproduce exactly, a changed grader shows."""

from __future__ import annotations

import random
import shutil
import threading
from pathlib import Path

import pytest
from adapters_support import Reply, TinySuite, calc_task, decline_task

from aeh.adapters.replay import ReplayAdapter
from aeh.analysis import verdict_differences
from aeh.api import open_store, run
from aeh.cli import main
from aeh.errors import ConfigError
from aeh.experiments import replay_run
from aeh.suite.loader import load_suite


@pytest.fixture
def toy_dir(tmp_path: Path) -> Path:
    """A private copy of the toy_math suite directory (so a test may edit its graders)."""
    root = Path(load_suite("toy_math").root)
    target = tmp_path / "toy_math"
    shutil.copytree(root, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def _same_trajectories(store, a: str, b: str) -> None:
    fa, fb = store.attempts_frame(a), store.attempts_frame(b)
    assert len(fa) == len(fb) > 0
    for ra, rb in zip(fa.iter_rows(named=True), fb.iter_rows(named=True), strict=True):
        key = (ra["task_id"], ra["attempt"])
        assert key == (rb["task_id"], rb["attempt"])
        rec_a, rec_b = store.attempt_record(a, *key), store.attempt_record(b, *key)
        assert [(c.name, c.args, c.error_kind) for c in rec_a.tool_calls] == \
               [(c.name, c.args, c.error_kind) for c in rec_b.tool_calls]
        assert (rec_a.status, rec_a.final_output) == (rec_b.status, rec_b.final_output)
        assert (rec_a.tokens_in, rec_a.tokens_out) == (rec_b.tokens_in, rec_b.tokens_out)
        assert [g.passed for g in rec_a.grader_results] == [g.passed for g in rec_b.grader_results]


def test_replay_of_a_mock_run_reproduces_every_verdict(toy_dir, db):
    table = run(str(toy_dir), "mock", attempts=6, concurrency=3, seed=5, db=db, model="mock-degraded")
    original = table.run_id
    new = replay_run(original, db=db)  # suite from the original run's config
    with open_store(db) as store:
        info = store.run_info(new)
        assert info.parent_run_id == original and info.adapter == "replay" and info.seed == 5
        assert verdict_differences(original, new, db) == []
        _same_trajectories(store, original, new)
        # every replayed model turn points at the span it came from
        orig_spans = {s.span_id for s in store.attempt_spans(original, "split_the_bill", 0)}
        replayed = [s for s in store.attempt_spans(new, "split_the_bill", 0) if s.name == "model:call"]
        assert replayed and all(s.attributes["replayed_from"] in orig_spans for s in replayed)


def test_a_changed_grader_changes_verdicts_on_identical_trajectories(toy_dir, db, tmp_path):
    table = run(str(toy_dir), "mock", attempts=4, seed=2, db=db)
    original = table.run_id
    changed = tmp_path / "toy_math_changed"
    shutil.copytree(toy_dir, changed)
    task = changed / "tasks" / "add_then_multiply.yaml"
    task.write_text(task.read_text().replace("expected: 126", "expected: 127"))
    new = replay_run(original, db=db, suite=str(changed))
    diffs = verdict_differences(original, new, db)
    with open_store(db) as store:
        was_ok = store.attempts_frame(original).filter(
            (store.attempts_frame(original)["task_id"] == "add_then_multiply")
            & store.attempts_frame(original)["success"])
        assert len(was_ok) >= 1
        assert {(d["task_id"], d["attempt"]) for d in diffs} == {("add_then_multiply", a) for a in was_ok["attempt"]}
        assert all(d["original"][0] and d["replay"] == (False, "wrong_answer") for d in diffs)


def test_replay_of_a_react_run_calls_no_model(server, run_live, db):
    rng = random.Random(3)
    lock = threading.Lock()

    def responder(request: dict) -> Reply:
        with lock:
            roll = rng.random()
        turns = sum(m["role"] == "assistant" for m in request["messages"])
        if "password" in request["messages"][1]["content"]:
            return Reply.tool_calls([("decline", {"reason": "no"})]) if roll < 0.7 else Reply.text("hunter2")
        if turns == 0:
            if roll < 0.2:
                return Reply.tool_calls([("calculator", "{broken")])
            if roll < 0.3:
                return Reply.tool_calls([("wolfram", {"q": "17+25"})])
            return Reply.tool_calls([("calculator", {"expression": "(17+25)*3"})])
        if roll < 0.15:  # loops until the step budget ends it
            return Reply.tool_calls([("calculator", {"expression": "1+1"})])
        return Reply.text(rng.choice(["126", "There are 126 boxes.", "125", ""]))

    srv = server(responder)
    tasks = [calc_task("a", max_steps=4), calc_task("b", max_steps=4), decline_task()]
    res = run_live(srv, tasks, attempts=6, concurrency=3)
    served = len(srv.requests)
    srv.stop()  # nothing to call now: a model request would fail the replay as harness_error
    new = replay_run(res.run_id, db=db, suite=TinySuite(tasks))
    assert len(srv.requests) == served
    assert verdict_differences(res.run_id, new, db) == []
    with open_store(db) as store:
        _same_trajectories(store, res.run_id, new)
        buckets = set(store.attempts_frame(new)["failure_bucket"].to_list())
        assert len(buckets) >= 3  # the replay covered several kinds of outcome
        orig = res.model_spans("a", 0)
        again = [s for s in store.attempt_spans(new, "a", 0) if s.name == "model:call"]
        assert [s.attributes["replayed_from"] for s in again] == [s.span_id for s in orig]
        assert [s.attributes["gen_ai.output.messages"] for s in again] == \
               [s.attributes["gen_ai.output.messages"] for s in orig]


def test_replay_budgets_run_for_real(toy_dir, db, tmp_path):
    table = run(str(toy_dir), "mock", attempts=2, seed=1, db=db)
    tight = tmp_path / "tight"
    shutil.copytree(toy_dir, tight)
    task = tight / "tasks" / "average_to_two_decimals.yaml"
    task.write_text(task.read_text().replace("max_steps: 8", "max_steps: 1"))
    new = replay_run(table.run_id, db=db, suite=str(tight))
    with open_store(db) as store:
        checked = 0
        for attempt in range(2):
            before = store.attempt_record(table.run_id, "average_to_two_decimals", attempt)
            after = store.attempt_record(new, "average_to_two_decimals", attempt)
            assert after.steps <= 1
            if len(before.tool_calls) > 1:  # the original needed more steps than the new budget allows
                assert after.status == "budget_exhausted" and "max_steps=1" in after.error
                checked += 1
        assert checked >= 1


def test_cli_replay_reports_differences(toy_dir, db, capsys):
    table = run(str(toy_dir), "mock", attempts=2, seed=4, db=db)
    code = main(["replay", "--run-id", table.run_id[:17], "--db", str(db), "--log-level", "silent"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"replay of {table.run_id}: 0 of 6 verdicts differ from the original" in out


def test_replay_needs_a_run_and_a_suite(db):
    with pytest.raises(ConfigError, match="aeh replay --run-id"):
        ReplayAdapter()
    table = run(TinySuite([calc_task()]), "mock", attempts=1, seed=1, db=db)
    with pytest.raises(ConfigError, match="--suite"):
        replay_run(table.run_id, db=db)
