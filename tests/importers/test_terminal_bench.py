"""Terminal-Bench import on the real droid runs: counts and headline rates match the files.

By default a null `is_resolved` is a failure (the leaderboard's definition); with
`null_as="harness_error"` it leaves n, as the second half of these tests checks.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from realdata_paths import OPUS, SONNET, TB_DIR, tb_runs, tb_submissions

import aeh
from aeh.analysis import SUITE_ROW
from aeh.importers import import_terminal_bench, model_from_submission
from aeh.stats import TaskCounts, compare_tasks
from aeh.store import Store


def _file_counts(submission: str) -> dict[str, tuple[int, int, int]]:
    """task → (resolved, not resolved, null) over the submission's five results.json."""
    out: dict[str, list[int]] = {}
    for d in tb_runs(submission):
        for r in json.loads((d / "results.json").read_text())["results"]:
            row = out.setdefault(r["task_id"], [0, 0, 0])
            row[0 if r["is_resolved"] is True else 1 if r["is_resolved"] is False else 2] += 1
    return {t: (a, b, c) for t, (a, b, c) in out.items()}


def test_model_from_submission_name() -> None:
    assert model_from_submission(OPUS) == "claude-4-1-opus"
    assert model_from_submission(SONNET) == "claude-4-sonnet"
    assert model_from_submission("20250924_droid_gpt-5") == "gpt-5"


@pytest.mark.parametrize("submission", tb_submissions() or ["(real data absent)"])
def test_every_submission_reproduces_its_accuracy(tb_dir: Path, tmp_path: Path, submission: str) -> None:
    """The submission folder imports as given, and the suite rate is the leaderboard's mean accuracy."""
    files = [json.loads((d / "results.json").read_text()) for d in tb_runs(submission)]
    own = [f["accuracy"] for f in files]
    computed = [sum(r["is_resolved"] is True for r in f["results"]) / len(f["results"]) for f in files]
    assert own == pytest.approx(computed)
    rid = import_terminal_bench([tb_dir / submission], db=tmp_path / "r.db")
    attrs = aeh.load_run(rid, db=tmp_path / "r.db")
    assert round(attrs.suite_rate, 4) == round(sum(own) / len(own), 4)
    assert attrs.n_tasks == 80 and attrs.harness_errors == 0 and attrs.attempts_total == 80 * len(files)
    assert attrs.run.model == model_from_submission(submission)
    assert attrs.run.config["agent_name"] == "Factory Droid"  # from run_metadata.json
    assert attrs.import_policy.startswith("null is_resolved as failure (source definition")


@pytest.mark.parametrize(("which", "submission", "nulls"), [(1, OPUS, 9), (2, SONNET, 11)])
def test_counts_equal_the_files(tb_pair: tuple[str, str, str], which: int, submission: str, nulls: int) -> None:
    db, rid = tb_pair[0], tb_pair[which]
    with Store(db) as store:
        info = store.run_info(rid)
    assert info.model == model_from_submission(submission) and info.attempts == 5
    assert info.adapter == "import:terminal-bench" and info.suite == "terminal-bench:terminal-bench-core@0.1.1"
    expected = _file_counts(submission)
    table = aeh.load_run(rid, db=db).table.set_index("task_id")
    assert len(table) == 80 == len(expected)
    for task, (ok, _bad, _null) in expected.items():
        row = table.loc[task]
        assert (row.successes, row.n, row.harness_errors, row.attempts) == (ok, 5, 0, 5), task
    assert sum(null for _ok, _bad, null in expected.values()) == nulls
    attrs = aeh.load_run(rid, db=db)
    assert attrs.harness_errors == 0 and attrs.attempts_total == 400 and not attrs.invalid_measurement
    assert attrs.priced is False and attrs.total_cost_usd is None
    assert sum(attrs.run.config["null_policy"]["null_counts"].values()) == nulls


@pytest.mark.parametrize(("which", "submission", "errors"), [(1, OPUS, 9), (2, SONNET, 11)])
def test_counts_with_nulls_as_harness_errors(tb_pair_excluding_nulls: tuple[str, str, str], which: int,
                                             submission: str, errors: int) -> None:
    db, rid = tb_pair_excluding_nulls[0], tb_pair_excluding_nulls[which]
    expected = _file_counts(submission)
    table = aeh.load_run(rid, db=db).table.set_index("task_id")
    for task, (ok, bad, null) in expected.items():
        row = table.loc[task]
        assert (row.successes, row.n, row.harness_errors, row.attempts) == (ok, ok + bad, null, 5), task
    assert table.harness_errors.sum() == errors
    attrs = aeh.load_run(rid, db=db)
    assert attrs.harness_errors == errors and attrs.attempts_total == 400
    assert attrs.invalid_measurement is True  # 9/400 = 2.25 %, 11/400 = 2.75 % > 2 %
    assert attrs.import_policy.startswith("null is_resolved as harness_error")


def test_attempt_index_is_the_run_directory(tb_pair: tuple[str, str, str]) -> None:
    db, opus, _ = tb_pair
    frame = aeh.attempts(opus, db=db)
    for position, d in enumerate(tb_runs(OPUS)):
        data = json.loads((d / "results.json").read_text())
        mine = frame[frame.attempt == position]
        assert int(mine.success.sum()) == data["n_resolved"]
        assert sorted(mine.task_id) == sorted(r["task_id"] for r in data["results"])
    per_run = frame.groupby("attempt").success.mean().round(4).tolist()
    assert per_run == [0.6, 0.5625, 0.6125, 0.575, 0.5875]  # the README's accuracy per run
    statuses = Counter(frame.status)
    assert statuses["harness_error"] == 0 and statuses["budget_exhausted"] > 0
    nulls = frame[frame.error.fillna("").str.startswith("no test verdict")]
    assert len(nulls) == 9 and not nulls.success.any()
    # opus's nulls: 6 test_timeout → budget_exhausted, 3 parse_error → wrong_answer
    assert Counter(nulls.failure_bucket) == {"budget_exhausted": 6, "wrong_answer": 3}
    timed_out = frame[frame.status == "budget_exhausted"]
    assert (timed_out[~timed_out.success].failure_bucket == "budget_exhausted").all()
    assert (frame[(frame.status == "answered") & ~frame.success].failure_bucket == "wrong_answer").all()
    assert (frame.latency_s > 0).all() and frame.cost_usd.isna().all()


def test_spans(tb_pair: tuple[str, str, str]) -> None:
    db, opus, _ = tb_pair
    spans = aeh.spans(opus, db=db, task_id="hello-world", attempt=0)
    assert sorted(spans.name) == ["agent", "attempt", "tests"]
    root = spans[spans.name == "attempt"].iloc[0]
    agent = spans[spans.name == "agent"].iloc[0]
    assert agent.parent_span_id == root.span_id and root.start_ts <= agent.start_ts < agent.end_ts
    assert aeh.span_attributes(spans[spans.name == "agent"]).iloc[0]["gen_ai.request.model"] == "claude-4-1-opus"


def test_compare_opus_vs_sonnet_default(tb_pair: tuple[str, str, str]) -> None:
    """Nulls as failures: every task keeps its 5 attempts, the suite row pairs all 80 tasks."""
    db, opus, sonnet = tb_pair
    result = aeh.compare(opus, sonnet, db=db)
    frame = result.table
    suite = frame[frame.task_id == SUITE_ROW].iloc[0]
    assert suite.n_a == 80 and result.regressed_tasks == []
    assert suite.rate_a == pytest.approx(0.5875, abs=1e-4) and suite.rate_b == pytest.approx(0.505, abs=1e-4)
    assert suite.delta == pytest.approx(-0.0825, abs=1e-4) and suite.delta_high < 0
    assert not any("harness errors" in w or "suite" in w.split(":")[0] for w in result.warnings)


def test_compare_opus_vs_sonnet(tb_pair_excluding_nulls: tuple[str, str, str]) -> None:
    db, opus, sonnet = tb_pair_excluding_nulls
    result = aeh.compare(opus, sonnet, db=db)
    frame = result.table
    tasks = frame[frame.task_id != SUITE_ROW].set_index("task_id")
    a, b = _file_counts(OPUS), _file_counts(SONNET)
    for t in a:
        assert (tasks.loc[t, "k_a"], tasks.loc[t, "n_a"]) == (a[t][0], a[t][0] + a[t][1])
        assert (tasks.loc[t, "k_b"], tasks.loc[t, "n_b"]) == (b[t][0], b[t][0] + b[t][1])
    expected = compare_tasks([TaskCounts(t, a[t][0], a[t][0] + a[t][1], b[t][0], b[t][0] + b[t][1]) for t in sorted(a)])
    assert [c.regressed for c in expected] == tasks.regressed.tolist()
    # the figures in docs/realdata.md: nothing survives BH at n ≤ 5 per task
    assert result.regressed_tasks == [] and result.improved_tasks == []
    # the smallest p an exact test can give at 5 vs 5 attempts (5/5 → 0/5) is 1/512; over 79
    # tested tasks BH lifts it to q ≈ 0.154, so at n = 5 no single task can be flagged at FDR 0.05
    assert tasks.p_value.idxmin() == "security-vulhub-minio"
    assert tasks.p_value.min() == pytest.approx(1 / 512)
    assert tasks.q_value.min() == pytest.approx(0.1543, abs=1e-4)
    suite = frame[frame.task_id == SUITE_ROW].iloc[0]
    assert suite.n_a == 79  # one task has no valid attempt in opus (all five were harness errors)
    empty = tasks[(tasks.n_a == 0) | (tasks.n_b == 0)]
    assert len(empty) == 1 and empty.iloc[0].n_a == 0
    assert suite.rate_a == pytest.approx(0.6051, abs=1e-4) and suite.rate_b == pytest.approx(0.5215, abs=1e-4)
    assert suite.delta == pytest.approx(-0.0835, abs=1e-4) and suite.se == pytest.approx(0.0307, abs=1e-4)
    # the paired suite difference is significant as a figure, but it flags nothing (see below)
    assert suite.delta_high < 0 and not suite.regressed
    # ... but both runs are over the harness-error limit: no verdict, each run named as the reason
    v = result.verdict
    assert v.status == "cannot judge" and v.regressed is None
    assert [r.check for r in v.cannot_judge] == ["harness_errors", "harness_errors"]
    warnings = result.warnings
    # Same suite hash: no suite warning. At 5 attempts × 79 tasks even 5/5 → 0/5 cannot pass BH,
    # which compare must say.
    assert len(warnings) == 1
    assert any(w.startswith("underpowered:") and "79 tasks" in w for w in warnings)


def test_mixed_models_need_explicit_model(tb_dir: Path, tmp_path: Path) -> None:
    from aeh.errors import ValidationError

    dirs = [tb_runs(OPUS)[0], tb_runs(SONNET)[0]]
    with pytest.raises(ValidationError, match="different submissions"):
        import_terminal_bench(dirs, db=tmp_path / "r.db")
    rid = import_terminal_bench(dirs, db=tmp_path / "r.db", model="mixed", run_id="mixed")
    assert import_terminal_bench([TB_DIR / OPUS], db=tmp_path / "r.db", run_id="by-folder") == "by-folder"
    assert rid == "mixed" and aeh.load_run("mixed", db=tmp_path / "r.db").attempts_total == 160
