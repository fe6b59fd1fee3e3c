"""The run report's charts as HTML bars: every number the matplotlib figure carried, each mark where
its value puts it, and no figure drawn."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import aeh
from aeh.report import views


@pytest.fixture(scope="module")
def run(mock_db: tuple[Path, str, str]) -> tuple[Path, str]:
    db, _, run_b = mock_db  # mock-degraded: failures in several buckets
    return db, run_b


def _marks(html: str) -> list[tuple[str, float, float | None, str]]:
    """(class, left %, width % or None, title) of every mark on the tracks."""
    found = []
    for cls, style, title in re.findall(r'<i(?: class="(\w+)")? style="([^"]*)" title="([^"]*)"></i>', html):
        left = float(re.search(r"left:([\d.]+)%", style).group(1))
        width = re.search(r"width:([\d.]+)%", style)
        found.append((cls, left, float(width.group(1)) if width else None, title))
    return found


def _rows(html: str) -> list[str]:
    return [r for r in re.findall(r"<tr><th>(.*?)</tr>", html) if "<td" in r]  # not the header


def test_rate_bars_put_each_task_at_its_rate_and_interval_worst_first(run):
    db, run_id = run
    result = aeh.load_run(run_id, db)
    html = views.rate_bars(result).data
    table = result.table[result.table["n"] > 0].sort_values("rate", kind="stable")
    rows = _rows(html)[: len(table)]
    assert [r.split(" (n=")[0] for r in rows] == list(table["task_id"])  # worst first
    for row, t in zip(rows, table.itertuples(), strict=True):
        assert f"{t.rate:.2f}" in row and f"[{t.low:.2f}, {t.high:.2f}]" in row
        dot = [m for m in _marks(row) if m[0] == "dot"][0]
        assert dot[1] == pytest.approx(100 * t.rate, abs=0.01)
        bar = [m for m in _marks(row) if m[0] == "" and t.task_id in m[3]][0]
        assert bar[1] == pytest.approx(100 * t.low, abs=0.01)
        assert bar[2] == pytest.approx(100 * (t.high - t.low), abs=0.01)
        band = [m for m in _marks(row) if m[0] == "band"][0]
        assert band[1] == pytest.approx(100 * result.suite_low, abs=0.01)
    assert f"suite rate {result.suite_rate:.2f}" in html


def test_failure_bars_stack_each_tasks_failures_by_bucket(run):
    db, run_id = run
    result = aeh.load_run(run_id, db)
    html = views.failure_bars(result).data
    cols = [c for c in result.table.columns if c.startswith("fail_")]
    failing = result.table[result.table[cols].sum(axis=1) > 0]
    assert len(failing) >= 1
    top = float(re.findall(r'<span style="left:100%">([\d.]+)</span>', html)[0])
    for t in failing.itertuples():
        row = next(r for r in _rows(html) if r.startswith(f"{t.task_id}<"))
        segments = [m for m in _marks(row)]
        counts = {c[5:]: int(getattr(t, c)) for c in cols if getattr(t, c)}
        assert sorted(m[3] for m in segments) == sorted(f"{t.task_id}: {k} {b}" for b, k in counts.items())
        # the segments follow each other and their lengths add up to the task's failed attempts
        assert sum(m[2] for m in segments) == pytest.approx(100 * sum(counts.values()) / top, abs=0.05)
        assert segments[0][1] == 0 and all(b[1] == pytest.approx(a[1] + a[2], abs=0.02)
                                           for a, b in zip(segments, segments[1:], strict=False))


def test_failure_bars_are_absent_when_nothing_failed(mock_db):
    db, run_a, _ = mock_db
    result = aeh.load_run(run_a, db)
    cols = [c for c in result.table.columns if c.startswith("fail_")]
    clean = result.table.assign(**{c: 0 for c in cols})
    assert views.failure_bars(type(result)(clean, **{f: getattr(result, f) for f in result.field_names()})) is None


def test_latency_bars_show_every_attempt_coloured_by_outcome(run):
    db, run_id = run
    attempts = aeh.attempts(run_id, db)
    html = views.latency_bars(attempts).data
    dots = [m for m in _marks(html) if m[0] == "dot"]
    assert len(dots) == attempts["latency_s"].notna().sum()
    top = attempts["latency_s"].max()
    for a in attempts.itertuples():
        title = f"{a.task_id} attempt {a.attempt}: {a.latency_s:.2f} s, {'success' if a.success else 'failure'}"
        dot = [d for d in dots if d[3] == title]
        assert len(dot) == 1 and dot[0][1] == pytest.approx(100 * a.latency_s / top, abs=0.01)
    assert html.count("#c0392b") - 1 == int((~attempts["success"].astype(bool)).sum())  # failures red (+ legend)


def test_cost_bars_put_both_costs_on_one_scale_and_skip_unpriced_runs(run):
    db, run_id = run
    result = aeh.load_run(run_id, db)
    html = views.cost_bars(result).data
    top = pd.concat([result.table["cost_per_attempt_usd"], result.table["cost_per_success_usd"]]).max()
    for t in result.table.itertuples():
        bars = {m[3].rsplit(" per ", 1)[1]: m[2] for m in _marks(next(r for r in _rows(html)
                                                                       if r.startswith(f"{t.task_id}<")))}
        assert bars["attempt"] == pytest.approx(max(100 * t.cost_per_attempt_usd / top, 0.4), abs=0.01)
        if pd.isna(t.cost_per_success_usd):
            assert "success" not in bars  # no success: no bar to draw
        else:
            assert bars["success"] == pytest.approx(100 * t.cost_per_success_usd / top, abs=0.01)
    assert views.cost_bars(result.with_fields(priced=False)) is None


def test_pass_k_bars_show_both_measures_at_every_k(run):
    db, run_id = run
    summary = views.pass_k_summary(aeh.pass_k(run_id, db))
    html = views.pass_k_bars(summary).data
    for r in summary.itertuples():
        title = f"k={r.k} {r.measure} {r.rate:.2f} [{r.low:.2f}, {r.high:.2f}]"
        dot = [m for m in _marks(html) if m[0] == "dot" and m[3] == title.replace("^", "^")]
        assert len(dot) == 1 and dot[0][1] == pytest.approx(100 * r.rate, abs=0.01)
    assert views.pass_k_bars(summary.iloc[0:0]) is None


def test_dimension_bars_clip_the_whisker_to_the_score_range(run):
    db, run_id = run
    scores = aeh.scores(run_id, db)
    html = views.dimension_bars(scores).data
    for r in scores.suite.itertuples():
        marks = [m for m in _marks(html) if m[3].startswith(f"{r.dimension}: ")]
        bar, whisker = marks
        assert bar[2] == pytest.approx(max(100 * r.mean, 0.4), abs=0.01)
        sd = 0.0 if pd.isna(r.sd) else r.sd
        assert whisker[1] == pytest.approx(min(100 * max(0.0, r.mean - sd), 100 - whisker[2]), abs=0.01)
        assert whisker[1] + whisker[2] <= 100.01
        assert f"(n={r.n})" in html


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_the_run_report_draws_no_figure_and_never_imports_matplotlib(run, tmp_path):
    db, run_id = run
    code = ("import sys; from aeh.report import render_run_report; "
            f"render_run_report({run_id!r}, {str(tmp_path / 'r.html')!r}, {str(db)!r}); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'seaborn', 'PIL')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    html = (tmp_path / "r.html").read_text()
    assert "<img" not in html[html.index("<main>"):]
    for chart in ("rate-bars", "failure-bars", "cost-bars", "latency-bars", "pass-k-bars", "dimension-bars"):
        assert f'id="{chart}"' in html
