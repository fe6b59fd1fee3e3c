"""Price lookup: exact names, explicit aliases and dated snapshots only; anything else unpriced."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import aeh
from aeh.errors import ValidationError
from aeh.pricing import PriceTable, load_price_table

MTOK = 1_000_000


def _table(tmp_path: Path, models: str) -> PriceTable:
    file = tmp_path / "prices.yaml"
    file.write_text(f'version: "t-1"\ndate: "2026-11-30"\nmodels:\n{models}')
    return load_price_table(file)


def test_a_longer_name_never_takes_a_shorter_names_price(tmp_path: Path) -> None:
    # The old longest-prefix fallback billed all three as the entry they start with.
    table = _table(tmp_path, "  gpt-5: {input_per_mtok: 1.25, output_per_mtok: 10.0}\n"
                             "  claude-sonnet-4: {input_per_mtok: 3.0, output_per_mtok: 15.0}\n")
    for model in ("gpt-5-nano", "gpt-5-pro", "claude-sonnet-4-5", "gpt-5-2025-08-07"):
        assert table.lookup(model) is None
        assert table.price(model, MTOK, MTOK) is None


def test_the_shipped_table_prices_the_issue_models_exactly() -> None:
    table = load_price_table()
    assert table.price("gpt-5", MTOK, MTOK) == pytest.approx(11.25)
    assert table.price("gpt-5-nano", MTOK, MTOK) == pytest.approx(0.45)
    assert table.price("gpt-5-pro", MTOK, MTOK) == pytest.approx(135.0)
    # Anthropic bills more above 200k input tokens per call; within that the rate is flat.
    assert table.price("claude-sonnet-4-5", 100_000, MTOK) == pytest.approx(15.3)
    assert table.price("claude-sonnet-4-5", 100_000, MTOK) == table.price("claude-sonnet-4", 100_000, MTOK)
    assert table.lookup("gpt-5-nano") != table.lookup("gpt-5")


@pytest.mark.parametrize(("snapshot", "base"), [
    ("gpt-4o-2024-08-06", "gpt-4o"),
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("gpt-5-nano-2025-08-07", "gpt-5-nano"),
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
    ("claude-sonnet-4-20250514", "claude-sonnet-4"),
])
def test_listed_dated_snapshots_are_priced_as_their_base(snapshot: str, base: str) -> None:
    table = load_price_table()
    assert table.lookup(snapshot) is not None and table.lookup(snapshot) == table.lookup(base)


def test_unlisted_names_of_a_known_family_are_unpriced() -> None:
    table = load_price_table()
    for model in ("gpt-5-codex", "gpt-4o-2099-01-01", "claude-sonnet-4-5-banana", "gpt-5-nano-ultra", "gpt-4"):
        assert table.lookup(model) is None, model
    # A snapshot that kept its launch price is its own entry, not gpt-4o's.
    assert table.price("gpt-4o-2024-05-13", MTOK, MTOK) == pytest.approx(20.0)


def test_snapshot_patterns_price_only_whole_dated_names(tmp_path: Path) -> None:
    table = _table(tmp_path, (
        "  gpt-4o:\n    input_per_mtok: 2.5\n    output_per_mtok: 10.0\n"
        "    snapshots: ['gpt-4o-\\d{4}-\\d{2}-\\d{2}']\n"
        "  claude-x:\n    input_per_mtok: 1.0\n    output_per_mtok: 1.0\n"
        # Even a careless pattern cannot price a different model: only dated names are tried.
        "    snapshots: ['claude-x.*']\n"))
    assert table.lookup("gpt-4o-2024-08-06") == table.lookup("gpt-4o")
    assert table.lookup("gpt-4o-2024-13-45") is None  # not a date
    assert table.lookup("gpt-4o-mini-2024-07-18") is None  # not a whole match
    assert table.lookup("claude-x-20250101") == table.lookup("claude-x")
    assert table.lookup("claude-x-pro") is None


def test_a_bad_snapshot_regex_names_file_field_and_fix(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as err:
        _table(tmp_path, "  gpt-4o: {input_per_mtok: 1, output_per_mtok: 1, snapshots: ['gpt-4o-(\\d{8}']}\n")
    text = str(err.value)
    assert "prices.yaml:models.gpt-4o.snapshots.0" in text
    assert "invalid regular expression" in text and "fully matches the dated names only" in text


def test_an_alias_claimed_twice_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"models\.b\.aliases\.0: 'a' already names the entry 'a'"):
        _table(tmp_path, "  a: {input_per_mtok: 1, output_per_mtok: 1}\n"
                         "  b: {input_per_mtok: 2, output_per_mtok: 2, aliases: [a]}\n")


def test_a_call_above_the_priced_context_is_unpriced(tmp_path: Path) -> None:
    table = _table(tmp_path, "  m: {input_per_mtok: 3, output_per_mtok: 15, max_input_tokens: 200000}\n")
    assert table.price("m", 200_000, 0) == pytest.approx(0.6)
    assert table.price("m", 200_001, 0) is None


def test_an_unpriced_model_warns_once_per_run_naming_it(
        tmp_path: Path, db: Path, caplog: pytest.LogCaptureFixture) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text('version: "t-1"\ndate: "2026-11-30"\nmodels:\n  other: {input_per_mtok: 1, output_per_mtok: 1}\n')
    with caplog.at_level(logging.WARNING, logger="aeh.pricing"):
        table = aeh.run("toy_math", attempts=3, seed=1, db=db, price_table=prices)
    assert table["cost_usd"].isna().all()
    warnings = [r.getMessage() for r in caplog.records if r.name == "aeh.pricing"]
    assert len(warnings) == 1 and "'mock-strong'" in warnings[0] and "unpriced" in warnings[0]
