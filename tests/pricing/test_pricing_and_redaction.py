"""Cost from a user's own price table; unpriced is never free; redaction on write from the CLI."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import aeh
from aeh.errors import ValidationError
from aeh.pricing import load_price_table
from tests.commands.test_cli import run_cli
from tests.store_support import span_attributes

TABLE = """
version: "custom-7"
date: "2026-10-01"
models:
  mock-strong: {input_per_mtok: 1000.0, output_per_mtok: 0.0}
"""


def test_own_price_table_prices_and_is_stamped(tmp_path: Path, db: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(TABLE)
    table = aeh.run("toy_math", attempts=2, seed=1, db=db, price_table=prices)
    info = aeh.runs(db).iloc[0]
    assert (info.price_table_version, info.price_table_date) == ("custom-7", "2026-10-01")
    tokens_in = table["tokens_in"].sum()
    assert table.total_cost_usd == pytest.approx(tokens_in * 1000.0 / 1e6)


def test_model_missing_from_the_table_is_unpriced_not_free(tmp_path: Path, db: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(TABLE.replace("mock-strong", "some-other-model"))
    code, out, _ = run_cli("run", "--suite", "toy_math", "--attempts", "1", "--seed", "1", "--db", str(db),
                           "--price-table", str(prices), "--log-level", "silent")
    assert code == 0 and "cost unpriced" in out and "$0.0000" not in out
    table = aeh.load_run(aeh.runs(db).iloc[0].run_id, db)
    assert table["cost_usd"].isna().all() and not table["priced"].any()
    assert table.total_cost_usd is None


def test_bad_price_table_names_file_and_field(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text('version: "1"\ndate: "2026-01-01"\nmodels:\n  m: {input_per_mtok: -1, output_per_mtok: 0}\n')
    with pytest.raises(ValidationError, match=r"prices\.yaml:models\.m\.input_per_mtok"):
        load_price_table(prices)


def _stored_text(db: Path) -> str:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT final_output, tool_calls FROM attempts").fetchall()
    conn.close()
    return "\n".join(f"{a} {b}" for a, b in rows) + "\n".join(span_attributes(db))


@pytest.mark.parametrize("redact", [True, False])
def test_cli_secret_is_redacted_on_write_unless_no_redact(db: Path, redact: bool) -> None:
    secret = "Each friend pays"  # text the agent really writes, declared secret for this test
    args = ["run", "--suite", "toy_math", "--task", "split_the_bill", "--attempts", "2", "--seed", "1",
            "--db", str(db), "--log-level", "silent", "--secret", secret]
    code, _, _ = run_cli(*args, *([] if redact else ["--no-redact"]))
    assert code == 0
    text = _stored_text(db)
    assert (secret in text) is (not redact)
    assert ("[REDACTED:secret]" in text) is redact
