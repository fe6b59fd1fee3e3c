"""The notebooks' tables: percentages, intervals, bars, a key; the no-judge explanation."""

from __future__ import annotations

import re

import pytest

import aeh
from aeh.report import tables, views


def _html(obj) -> str:
    return obj.data


@pytest.fixture(scope="module")
def runs(mock_db):
    db, a, b = mock_db
    return str(db), a, b


def test_rate_table_shows_percent_interval_bar_and_key(runs) -> None:
    db, _, b = runs
    result = aeh.load_run(b, db)
    html = _html(tables.rate_table(result))
    assert html.startswith('<div id="rate-table"')
    row = result.table.iloc[0]
    assert f"{row.rate:.0%}" in html and f"[{row.low:.0%}, {row.high:.0%}]" in html
    assert "linear-gradient" in html  # the rate's bar
    assert "aeh-key" in html and "Wilson 95%" in html
    assert len(re.findall(r"<tr>", html)) == len(result.table) + 1


def test_attempts_table_shades_failures_caps_rows_and_escapes_answers(runs) -> None:
    db, _, b = runs
    rows = aeh.attempts(b, db)
    rows.loc[rows.index[0], "final_output"] = "<script>alert(1)</script>"
    html = _html(tables.attempts_table(rows, limit=3))
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert f"{len(rows) - 3} more not shown" in html
    failed = {i for i, ok in enumerate(rows.success) if not ok}
    assert failed, "run B (mock-degraded) has failed attempts"
    assert _shaded_rows(_html(tables.attempts_table(rows)), "#fbe3e0") == failed


def _shaded_rows(html: str, colour: str) -> set[int]:
    """Body rows whose every cell is shaded with `colour`."""
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = body.split("<tr>")[1:]
    return {i for i, row in enumerate(rows)
            if row.count("<td") == row.count(f"background-color:{colour}") > 0}


def test_compare_table_keeps_its_id_and_marks_regressions(runs) -> None:
    db, a, b = runs
    comparison = aeh.compare(a, b, db)
    html = _html(tables.compare_table(comparison))
    assert 'id="compare-table"' in html and "q (BH)" in html and "SUITE (paired)" in html
    if comparison.table["regressed"].any():
        assert "REGRESSED" in html and "#fbe3e0" in html


def test_pass_k_and_recovery_tables(runs) -> None:
    db, _, b = runs
    summary = views.pass_k_summary(aeh.pass_k(b, db))
    html = _html(tables.pass_k_table(summary))
    assert 'id="pass-k-table"' in html and "pass^k" in html and "pass@k" in html
    import pandas as pd

    curve = pd.DataFrame({"mode": ["burst"], "rate": [0.3], "n": [10], "successes": [7], "success_rate": [0.7],
                          "low": [0.4], "high": [0.9]})
    html = _html(tables.recovery_table(curve))
    assert "30%" in html and "70%" in html and "[40%, 90%]" in html


def test_a_run_without_judge_verdicts_explains_why_kappa_is_absent(runs) -> None:
    db, _, b = runs
    result = aeh.agreement(b, db)
    html = _html(tables.no_judge_html(result))
    assert "No judge verdicts in this run" in html and "κ is absent" in html
    assert "--judge-model M --judge-all" in html and "aeh review --run-id RUN --all --export" in html
    assert f"at least {result.min_n} attempts" in html
    table = _html(tables.agreement_table(result))
    assert "nan" not in table.lower().replace("nanos", "") and "aeh-key" in table
