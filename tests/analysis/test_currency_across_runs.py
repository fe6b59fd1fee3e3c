"""Costs of runs kept in different currencies are never compared or added as if they were one."""

from __future__ import annotations

from pathlib import Path

import pytest

import aeh
from aeh.analysis._compare import comparison_warnings
from tests.coding_support import run_coding

GOOD = Path(__file__).resolve().parents[1] / "fixtures" / "seed001" / "fixtures" / "fx-001-clamp"


def _usage(field: str, value: float) -> str:
    return f"printf '%s' '{{\"tokens_in\": 10, \"tokens_out\": 5, \"{field}\": {value}}}' > \"$AEH_USAGE_FILE\""


def test_compare_warns_when_the_two_runs_keep_costs_in_different_currencies() -> None:
    usd = {"run_id": "a", "status": "finished", "config": {}}
    eur = {"run_id": "b", "status": "finished", "config": {"cost_currency": "EUR"}}
    assert comparison_warnings(usd, dict(usd, run_id="c")) == []
    (warning,) = comparison_warnings(usd, eur)
    assert "different currencies (USD → EUR)" in warning and "--currency USD" in warning


@pytest.mark.slow
def test_matrix_keeps_each_solvers_currency_and_warns_across_them(db: Path) -> None:
    eur = run_coding(GOOD, db, _usage("cost_eur", 0.25), adapter_options={"currency": "EUR", "label": "solver-x"})
    usd = run_coding(GOOD, db, _usage("cost_usd", 0.5), adapter_options={"label": "solver-y"})
    result = aeh.matrix([eur.run_id, usd.run_id], db=db)
    rows = result.table.set_index("label")
    assert rows.loc["solver-x", ["cost_currency", "cost_total_usd"]].tolist() == ["EUR", 0.25]
    assert rows.loc["solver-y", ["cost_currency", "cost_total_usd"]].tolist() == ["USD", 0.5]
    assert any("different currencies (solver-x EUR, solver-y USD)" in w for w in result.warnings)


@pytest.mark.slow
def test_one_solver_label_over_runs_in_two_currencies_has_no_total(db: Path) -> None:
    eur = run_coding(GOOD, db, _usage("cost_eur", 0.25), adapter_options={"currency": "EUR", "label": "solver-x"})
    usd = run_coding(GOOD, db, _usage("cost_usd", 0.5), adapter_options={"label": "solver-x"})
    result = aeh.matrix([eur.run_id, usd.run_id], db=db)
    row = result.table.set_index("label").loc["solver-x"]
    assert row["cost_currency"] == "EUR/USD" and row["cost_total_usd"] != row["cost_total_usd"]  # nan
    assert any("more than one currency" in w for w in result.warnings)
