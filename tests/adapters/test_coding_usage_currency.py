"""A run keeps one currency: --currency, else the one its usage files report (cost_usd or cost_eur,
never both in one file), never mixed."""

from __future__ import annotations

from pathlib import Path

import pytest

import aeh
from aeh.adapters.command import CommandAdapter, _other_currency, _read_usage
from aeh.analysis import format_run_table
from aeh.errors import AdapterError
from aeh.models import RunConfig
from tests.coding_support import run_coding

GOOD = Path(__file__).resolve().parents[1] / "fixtures" / "seed001" / "fixtures" / "fx-001-clamp"
EUR_USAGE = "printf '%s' '{\"tokens_in\": 10, \"tokens_out\": 5, \"cost_eur\": 0.25}' > \"$AEH_USAGE_FILE\""


def _usage(tmp_path: Path, text: str) -> dict[str, object] | None:
    (tmp_path / "usage.json").write_text(text)
    return _read_usage(tmp_path / "usage.json")


def test_cost_eur_is_read(tmp_path: Path) -> None:
    assert _usage(tmp_path, '{"tokens_in": 1, "cost_eur": 0.5}') == {"tokens_in": 1, "tokens_out": 0,
                                                                        "cost_eur": 0.5}


def test_a_usage_file_in_two_currencies_is_unreadable(tmp_path: Path) -> None:
    usage = _usage(tmp_path, '{"cost_usd": 0.5, "cost_eur": 0.5}')
    assert usage is not None and "more than one currency" in str(usage["error"])


def test_a_report_in_the_other_currency_is_refused_with_the_fix() -> None:
    assert "pass --currency EUR" in str(_other_currency({"cost_eur": 0.5}, "USD"))


def test_a_report_in_the_run_currency_is_taken() -> None:
    assert _other_currency({"cost_eur": 0.5}, "EUR") is None


def test_an_unknown_currency_is_a_config_error() -> None:
    with pytest.raises(AdapterError, match="--currency must be one of USD, EUR"):
        CommandAdapter(solver="noop", currency="GBP")


def test_the_run_records_its_currency() -> None:
    assert CommandAdapter(solver="noop", currency="eur").run_config()["cost_currency"] == "EUR"
    assert CommandAdapter(solver="noop").run_config()["cost_currency"] == "USD"  # until a usage file says


@pytest.mark.slow
def test_a_eur_run_prices_and_prints_in_eur(db: Path) -> None:
    table = run_coding(GOOD, db, EUR_USAGE, adapter_options={"currency": "EUR"})
    assert "total €0.2500" in format_run_table(table)


@pytest.mark.slow
def test_cost_eur_is_taken_as_reported_and_the_run_follows_it(db: Path) -> None:
    table = run_coding(GOOD, db, EUR_USAGE)
    attempt = aeh.attempts(table.run_id, db=db).iloc[0]
    config = table.run.config
    assert (attempt["failure_bucket"], attempt["cost_usd"]) != ("harness_error", None)
    assert (config.cost_currency, config.facts["cost_currency_source"]) == ("EUR", "the usage files")
    assert "total €0.2500" in format_run_table(table)


@pytest.mark.slow
def test_cost_eur_in_a_run_priced_in_usd_is_a_harness_error_never_unpriced_silently(db: Path) -> None:
    table = run_coding(GOOD, db, EUR_USAGE, adapter_options={"currency": "USD"})
    attempt = aeh.attempts(table.run_id, db=db).iloc[0]
    assert (attempt["failure_bucket"], "this run is priced in USD" in attempt["error"]) == ("harness_error", True)


MIXED_USAGE = ("if [ \"$AEH_ATTEMPT\" = 0 ]; then k=cost_eur; else k=cost_usd; fi; "
               "printf '{\"tokens_in\": 1, \"%s\": 0.5}' \"$k\" > \"$AEH_USAGE_FILE\"")


@pytest.mark.slow
def test_a_run_whose_usage_files_mix_currencies_refuses_the_other_with_the_fix(db: Path) -> None:
    table = run_coding(GOOD, db, MIXED_USAGE, attempts=2, concurrency=1)
    frame = aeh.attempts(table.run_id, db=db).set_index("attempt")
    assert frame.loc[0, "failure_bucket"] != "harness_error"
    assert frame.loc[1, "failure_bucket"] == "harness_error"
    assert "earlier usage files reported cost_eur" in frame.loc[1, "error"]
    assert "--currency" in frame.loc[1, "error"]
    assert table.run.config.cost_currency == "EUR"


def test_prices_make_the_reported_cost_irrelevant_to_the_currency() -> None:
    adapter = CommandAdapter(solver="true", price_in=1.0, price_out=2.0, currency="EUR")
    assert adapter._currency_clash({"tokens_in": 1, "tokens_out": 0, "cost_usd": 3.0}) is None


def test_a_resumed_run_keeps_the_currency_its_usage_files_set() -> None:
    adapter = CommandAdapter(solver="true")
    adapter.continue_run(RunConfig.model_validate({"cost_currency": "EUR", "cost_currency_source": "the usage files"}))
    assert adapter.currency == "EUR"
    assert "earlier usage files reported cost_eur" in str(adapter._currency_clash({"cost_usd": 1.0}))


def test_ray_workers_need_the_currency_given() -> None:
    with pytest.raises(AdapterError, match="--executor ray the command adapter needs --currency"):
        CommandAdapter(solver="true").continue_run(RunConfig(), distributed=True)
    CommandAdapter(solver="true", currency="EUR").continue_run(RunConfig(), distributed=True)  # given: fine
    CommandAdapter(solver="noop").continue_run(RunConfig(), distributed=True)  # a built-in solver reports no cost
