"""The cost chart's x axis stays legible for many tasks with sub-cent costs."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from aeh.analysis import RunResult  # noqa: E402
from aeh.models import RunInfo  # noqa: E402
from aeh.report import views  # noqa: E402


def _result(table: pd.DataFrame) -> RunResult:
    run = RunInfo(run_id="r", created_at="2026-01-01", aeh_version="0", suite="s", suite_hash="h", adapter="mock",
                  seed=1, attempts=1, concurrency=1, price_table_version="1", price_table_date="2026-01-01")
    return RunResult(table=table, run_id="r", run=run, suite_rate=0.5, suite_low=0.2, suite_high=0.8, suite_se=0.1,
                     suite_rate_method="mean", n_tasks=len(table), attempts_total=len(table), harness_errors=0,
                     harness_error_rate=0.0, invalid_measurement=False)


def test_cost_ticks_are_few_compact_dollars() -> None:
    # 32 tasks costing up to $0.00034 per attempt: the default axis drew nine 7-character
    # labels (0.00000 … 0.00040) that ran into each other.
    table = pd.DataFrame({
        "task_id": [f"task_with_a_long_descriptive_name_{i:02d}" for i in range(32)],
        "cost_per_attempt_usd": [0.0000106 * (i + 1) for i in range(32)],
        "cost_per_success_usd": [0.0000212 * (i + 1) for i in range(32)],
    })
    fig = views.cost_chart(_result(table))
    fig.canvas.draw()
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    shown = [t for t in ax.get_xticklabels() if low <= t.get_position()[0] <= high]
    texts = [t.get_text() for t in shown]
    assert 2 <= len(texts) <= 5 and len(set(texts)) == len(texts)
    assert texts[0] == "$0" and all(t.startswith("$") and len(t) <= 8 for t in texts)
    assert all(t.get_rotation() == 30 for t in shown)
    plt.close(fig)
