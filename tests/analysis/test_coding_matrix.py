"""aeh.matrix: solve rate with Wilson, the hidden gap against the noop floor, honest cost."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import aeh
from aeh.analysis._matrix import format_matrix
from aeh.stats import wilson_interval
from tests.coding_support import mini_suite, run_coding

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("matrix")
    suite, db = mini_suite(base / "suite"), base / "runs.db"
    fix = f'cp "{suite}/$AEH_TASK_ID/reference/"*.py .'
    half = f'test "$AEH_TASK_ID" = csv_dedup && {fix}; true'  # solves one of the two fixtures
    usage = "printf '{\"tokens_in\": 1000, \"tokens_out\": 100}' > \"$AEH_USAGE_FILE\""
    ids = {
        "noop": run_coding(suite, db, "noop", attempts=2).run_id,
        "reference": run_coding(suite, db, "reference", attempts=2).run_id,
        "half": run_coding(suite, db, f"{half}; {usage}", attempts=2,
                           adapter_options={"label": "half", "price_in": 1.0, "price_out": 10.0}).run_id,
        "half2": run_coding(suite, db, f"{half}; {usage}", attempts=1, seed=2,
                            adapter_options={"label": "half", "price_in": 1.0, "price_out": 10.0}).run_id,
        "unpriced": run_coding(suite, db, half, attempts=2, adapter_options={"label": "unpriced"}).run_id,
    }
    return db, ids


@pytest.fixture(scope="module")
def matrix(runs):
    """The matrix over every run: noop floor, reference ceiling, a half solver twice, one unpriced."""
    db, ids = runs
    return aeh.matrix([ids["noop"], ids["reference"], ids["half"], ids["half2"], ids["unpriced"]], db=db)


def test_matrix_orders_by_solve_rate_and_names_floor_and_ceiling(matrix):
    rows = matrix.table.set_index("label")
    assert list(matrix["label"]) == ["reference", "half", "unpriced", "noop"]
    assert rows.loc["noop", "role"] == "floor" and rows.loc["reference", "role"] == "ceiling"
    assert matrix.floor == "noop" and matrix.ceiling == "reference"


def test_matrix_counts_solved_attempts_pooling_two_runs_of_one_label(matrix):
    rows = matrix.table.set_index("label")
    assert (rows.loc["noop", "solved"], rows.loc["noop", "n"]) == (0, 4)
    assert (rows.loc["reference", "solved"], rows.loc["reference", "n"]) == (4, 4)
    assert (rows.loc["half", "solved"], rows.loc["half", "n"]) == (3, 6)


def test_matrix_solve_interval_is_wilson_of_the_pooled_counts(matrix):
    rows = matrix.table.set_index("label")
    low, high = wilson_interval(3, 6)
    assert rows.loc["half", "solve_low"] == pytest.approx(low) and rows.loc["half", "solve_high"] == pytest.approx(high)


def test_hidden_gap_is_what_the_full_public_rate_hides(matrix):
    rows = matrix.table.set_index("label")
    # the public rate is full for everyone (the seed is green on public): it is not the signal
    assert (matrix["public_rate"] == 1.0).all()
    assert rows.loc["noop", "hidden_gap"] == pytest.approx(1.0) and rows.loc["reference", "hidden_gap"] == 0


def test_rates_against_floor_and_ceiling(matrix):
    rows = matrix.table.set_index("label")
    assert rows.loc["half", "floor_gap"] == pytest.approx(1.0)
    assert rows.loc["half", "above_floor"] == pytest.approx(0.5)
    assert rows.loc["reference", "above_floor"] == pytest.approx(1.0)
    assert rows.loc["half", "below_ceiling"] == pytest.approx(0.5)


def test_cost_per_solved_counts_every_attempt_of_the_label(matrix):
    rows = matrix.table.set_index("label")
    # 6 attempts × (1000 × 1 + 100 × 10) / 1e6 = 0.012 over 3 solved
    assert rows.loc["half", "cost_total_usd"] == pytest.approx(0.012)
    assert rows.loc["half", "cost_per_solved_usd"] == pytest.approx(0.004)


def test_unpriced_label_has_no_cost_per_solved_and_a_warning(matrix):
    assert math.isnan(matrix.table.set_index("label").loc["unpriced", "cost_per_solved_usd"])
    assert any("unpriced: cost unknown" in w for w in matrix.warnings)


def test_matrix_with_a_floor_gives_no_floor_warning(matrix):
    assert not any("no floor" in w for w in matrix.warnings)


def test_formatted_matrix_names_roles_and_the_unpriced_warning(matrix):
    text = format_matrix(matrix)
    assert "reference" in text and "floor" in text and "WARNING: unpriced" in text


def test_without_a_floor_the_matrix_warns_instead_of_printing_a_gap(runs):
    db, ids = runs
    m = aeh.matrix([ids["reference"], ids["half"]], db=db)
    assert m["hidden_gap"].isna().all() and m["above_floor"].isna().all()
    assert any("no floor run" in w for w in m.warnings)
    assert "WARNING: no floor run" in format_matrix(m)
    assert not m["solve_rate"].isna().any()


def test_matrix_cli_and_notebook(runs, capsys, tmp_path):
    db, ids = runs
    from aeh.cli import main

    assert main(["matrix", ids["noop"], ids["reference"], ids["half"], "--db", str(db),
                 "--csv", str(tmp_path / "m.csv")]) == 0
    out = capsys.readouterr().out
    assert "ceiling" in out and "floor" in out and (tmp_path / "m.csv").is_file()
    pytest.importorskip("papermill")
    import nbformat

    from aeh.report import execute_notebook

    done = execute_notebook("coding_matrix", {"run_ids": ",".join([ids["noop"], ids["reference"], ids["half"]]),
                                              "db": str(db)}, tmp_path / "matrix.ipynb")
    nb = nbformat.read(done, as_version=4)
    html = "".join(o.get("data", {}).get("text/html", "") for c in nb.cells for o in c.get("outputs", []))
    assert "coding-matrix" in html and "ceiling" in html and "floor" in html
    assert any("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))
