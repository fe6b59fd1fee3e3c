"""The per-task totals SQLite aggregates equal the row-level polars computation they replaced."""

from __future__ import annotations

import random

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import aeh
from aeh.analysis._compare import _counts
from aeh.analysis._run_table import BUCKET_ABBREVIATIONS, harness_error_causes
from aeh.analysis._task_totals import AGENT_BUCKETS, harness_errors, task_totals, with_rates_and_costs
from aeh.models import Attempt, InvariantResult, ToolCall
from aeh.store import Store
from tests.analysis.conftest import make_info

#: The attempt columns the row-level computation read.
ROW_COLUMNS = ["task_id", "attempt", "success", "clean_success", "failure_bucket", "tokens_in", "tokens_out",
               "cost_usd", "latency_s", "n_injected_faults", "needs_human_review", "error", "n_tool_calls",
               "queue_s", "grading_s"]
#: Sums of floats: SQLite adds in row order, polars compensates; they agree to rounding.
FLOAT_SUMS = ["cost_usd", "cost_per_attempt_usd", "cost_per_success_usd", "queue_s", "grading_s"]


def row_level_totals(attempts: pl.DataFrame) -> pl.DataFrame:
    """The per-task aggregation as it was done before, over every attempt row in polars."""
    harness = (pl.col("failure_bucket") == "harness_error").fill_null(False)
    valid = ~harness
    buckets = [(pl.col("failure_bucket") == b).fill_null(False).filter(valid).sum().alias(f"fail_{b}")
               for b in AGENT_BUCKETS]
    grouped = attempts.group_by("task_id", maintain_order=True).agg(
        pl.len().alias("attempts"), valid.sum().alias("n"),
        pl.col("success").filter(valid).sum().alias("successes"),
        (pl.col("clean_success") & pl.col("success")).filter(valid).sum().alias("clean_successes"),
        (pl.col("success") & ~pl.col("clean_success")).filter(valid).sum().alias("successes_breaking_invariants"),
        harness.sum().alias("harness_errors"), *buckets,
        pl.col("tokens_in").sum().alias("tokens_in"), pl.col("tokens_out").sum().alias("tokens_out"),
        pl.col("cost_usd").is_null().any().alias("_unpriced"), pl.col("cost_usd").sum().alias("cost_usd"),
        pl.col("latency_s").quantile(0.5, "linear").alias("latency_p50_s"),
        pl.col("latency_s").quantile(0.9, "linear").alias("latency_p90_s"),
        pl.col("n_injected_faults").sum().alias("injected_faults"),
        pl.col("n_tool_calls").sum().alias("tool_calls"),
        pl.col("queue_s").sum().alias("queue_s"), pl.col("grading_s").sum().alias("grading_s"),
        pl.col("needs_human_review").sum().alias("needs_review"),
    )
    return with_rates_and_costs(grouped).sort("task_id")  # the shared finishing step, not under test


def random_attempt(rng: random.Random, run_id: str, task_id: str, k: int, unpriced: bool,
                   all_harness: bool = False) -> Attempt:
    roll = rng.random()
    harness = all_harness or roll < 0.15
    success = not harness and roll < 0.6
    bucket = "harness_error" if harness else (None if success else rng.choice(AGENT_BUCKETS))
    calls = [ToolCall(name="t", injected_fault=rng.choice([None, None, "timeout", "500"]))
             for _ in range(rng.randint(0, 3))]
    return Attempt(
        run_id=run_id, task_id=task_id, attempt=k, seed=k, success=success,
        status="harness_error" if harness else "answered", failure_bucket=bucket,
        error=rng.choice(["ProviderError: connection refused\nat x", "timeout", None]) if harness else None,
        tokens_in=rng.randint(0, 5000), tokens_out=rng.randint(0, 500),
        cost_usd=None if unpriced and rng.random() < 0.5 else rng.random() / 37,
        latency_s=rng.choice([0.5, 1.25, rng.random() * 9]),  # ties as well as spread
        queue_s=rng.choice([None, rng.random()]), grading_s=rng.choice([None, rng.random() / 3]),
        tool_calls=calls, needs_human_review=rng.random() < 0.1,
        invariant_results=[InvariantResult(name="inv", passed=rng.random() < 0.8)],
    )


def random_run(store: Store, run_id: str, seed: int) -> None:
    """Tasks with 1–40 attempts (some all harness errors, some unpriced), attempt numbers with gaps
    where a harness error was retried under a new number, written shuffled over several batches."""
    rng = random.Random(seed)
    store.create_run(make_info(run_id))
    attempts = []
    for t in range(60):
        task_id = f"t{rng.randint(0, 10**6):07d}"
        numbers = sorted(rng.sample(range(80), rng.choice([1, 2, 5, 40])))
        unpriced = t % 7 == 0
        attempts += [random_attempt(rng, run_id, task_id, k, unpriced) for k in numbers]
        if t % 11 == 0:  # a task whose every attempt is a harness error: n = 0
            attempts += [random_attempt(rng, run_id, f"h{t}", k, False, all_harness=True) for k in range(3)]
    rng.shuffle(attempts)
    for i in range(0, len(attempts), 97):
        store.write_attempts([(a, []) for a in attempts[i:i + 97]])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sql_totals_equal_the_row_level_computation(seed: int) -> None:
    with Store.memory() as store:
        random_run(store, "r", seed)
        rows = store.attempts_frame("r", columns=ROW_COLUMNS)
        with store.snapshot():
            new = task_totals(store, "r")
            errors = harness_errors(store, "r")
    old = row_level_totals(rows)
    assert new.height == old.height > 60 and new["task_id"].to_list() == sorted(new["task_id"])
    assert (new["harness_errors"] > 0).sum() > 10 and (new["n"] == 0).any() and not new["priced"].all()
    assert new["needs_review"].sum() > 0 and new["injected_faults"].sum() > 0
    exact = [c for c in old.columns if c not in FLOAT_SUMS]
    assert_frame_equal(new.select(exact), old.select(exact), check_exact=True)  # counts, quantiles, rate
    assert_frame_equal(new.select(old.columns), old, check_exact=False, rel_tol=1e-12, abs_tol=0.0)
    old_errors = rows.filter(pl.col("failure_bucket") == "harness_error")["error"].to_list()
    assert errors == old_errors and harness_error_causes(errors)[0]["attempts"] >= 1


def test_compare_counts_equal_the_full_table() -> None:
    with Store.memory() as store:
        random_run(store, "r", 4)
        full, counts = aeh.load_run("r", db=store), _counts(store, "r")
    cols = list(counts.table.columns)
    assert cols == ["task_id", "n", "successes", "rate", "low", "high", "harness_errors", "attempts"]
    assert counts.table.equals(full.table[cols])
    for key in ("suite_rate", "suite_low", "suite_high", "harness_error_rate", "invalid_measurement", "run"):
        assert getattr(counts, key) == getattr(full, key)


def test_failures_column_lists_most_common_first() -> None:
    with Store.memory() as store:
        random_run(store, "r", 5)
        table = aeh.load_run("r", db=store)
    for row in table.table.to_dict("records"):  # the per-row reference the column was built with before
        counts = sorted([(b, row[f"fail_{b}"]) for b in AGENT_BUCKETS if row[f"fail_{b}"]], key=lambda c: -c[1])
        assert row["failures"] == " ".join(f"{BUCKET_ABBREVIATIONS[b]}:{n}" for b, n in counts)
    assert table["failures"].str.contains(" ").any()  # some tasks fail in more than one way


def test_empty_run_gives_an_empty_table() -> None:
    with Store.memory() as store:
        store.create_run(make_info("e"))
        table = aeh.load_run("e", db=store)
    assert table.table.empty and table.attempts_total == 0 and table.harness_error_causes == []
