"""A coding run's section of the report reads as a run card: the same facts `aeh export run-card` writes."""

from __future__ import annotations

from html import escape
from pathlib import Path

import pytest

import aeh
from aeh.grading import hidden_sha256
from aeh.importers import attempt_card
from aeh.report._coding_views import public_hidden_section, run_card_html
from aeh.store import Store
from tests.coding_support import run_coding

pytestmark = pytest.mark.slow

GOOD = Path(__file__).resolve().parents[1] / "fixtures" / "seed001" / "fixtures" / "fx-001-clamp"


def test_run_card_rows_carry_verdict_tests_hash_and_reproduce_command(tmp_path):
    db = tmp_path / "runs.db"
    run_id = run_coding(GOOD, db, "noop").run_id
    html = run_card_html(run_id, db)
    with Store(db) as store:
        info = store.run_info(run_id)
        card = attempt_card(info, store.attempt_record(run_id, "fx-001-clamp", 0))
    assert card["verdict"] == "PARTIAL"
    row = html[html.index("<tr class='verdict-partial'>"):]
    row = row[:row.index("</tr>")]
    for cell in ("<b>PARTIAL</b>", "<td>2/2</td>", "<td>1/2</td>", hidden_sha256(GOOD), escape(card["reproduce"])):
        assert cell in row
    # the report's coding section carries the card after the per-task table
    section = public_hidden_section(run_id, aeh.load_run(run_id, db).run, db).data
    assert section.index("coding-public-hidden") < section.index("id='run-card'")
