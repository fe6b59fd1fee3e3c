"""Per-attempt results.json and run_card.md: verdict, tests, hidden-set hash, sandbox, reproduce command."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from aeh.cli import main
from tests.coding_support import run_coding

pytestmark = pytest.mark.slow

GOOD = Path(__file__).resolve().parents[1] / "fixtures" / "seed001" / "fixtures" / "fx-001-clamp"


def _card(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "fx-001-clamp" / "attempt-0" / "results.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def noop_card(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, Path]:
    tmp = tmp_path_factory.mktemp("card")
    db = tmp / "runs.db"
    run_coding(GOOD, db, "noop", run_card=tmp / "cards")
    return _card(tmp / "cards"), tmp, db


def test_a_noop_attempt_is_partial(noop_card: tuple[dict[str, Any], Path, Path]) -> None:
    assert noop_card[0]["verdict"] == "PARTIAL"


def test_the_card_holds_the_public_and_hidden_counts(noop_card: tuple[dict[str, Any], Path, Path]) -> None:
    assert noop_card[0]["tests"] | {"failing": len(noop_card[0]["tests"]["failing"])} == {
        "public": {"passed": 2, "total": 2}, "hidden": {"passed": 1, "total": 2}, "failing": 1}


def test_the_card_holds_the_hidden_set_hash_the_run_recorded(noop_card: tuple[dict[str, Any], Path, Path]) -> None:
    from aeh.grading import hidden_sha256

    assert noop_card[0]["hidden_sha256"] == hidden_sha256(GOOD)


def test_the_markdown_card_shows_verdict_and_reproduce_command(noop_card: tuple[dict[str, Any], Path, Path]) -> None:
    text = (noop_card[1] / "cards" / "fx-001-clamp" / "attempt-0" / "run_card.md").read_text()
    assert ("PARTIAL" in text.splitlines()[0], noop_card[0]["reproduce"] in text) == (True, True)


def test_the_reproduce_command_gives_the_same_verdict(noop_card: tuple[dict[str, Any], Path, Path]) -> None:
    card, tmp, db = noop_card
    argv = shlex.split(card["reproduce"])[1:] + ["--db", str(db), "--run-card", str(tmp / "again")]
    assert main(argv) == 0
    again = _card(tmp / "again")
    assert (again["seed"], again["tests"]) == (card["seed"], card["tests"])


def test_export_run_card_writes_the_same_card(noop_card: tuple[dict[str, Any], Path, Path]) -> None:
    card, tmp, db = noop_card
    assert main(["export", "run-card", card["run_id"], "--out", str(tmp / "exported"), "--db", str(db)]) == 0
    assert _card(tmp / "exported") == card
