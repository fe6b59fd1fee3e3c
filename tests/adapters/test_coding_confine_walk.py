"""The start folder stays visible to a confined solver; its fixtures' answers do not."""

from __future__ import annotations

from pathlib import Path

from aeh.adapters._confine import fixture_material


def test_fixture_material_finds_hidden_tests_and_their_references_only(tmp_path: Path) -> None:
    fixture = tmp_path / "suites" / "coding" / "csv_dedup"
    for name in ("tests_hidden", "reference", "tests_public", "seed"):
        (fixture / name).mkdir(parents=True)
    (tmp_path / "docs" / "reference").mkdir(parents=True)  # a reference folder that is no fixture's
    (tmp_path / ".venv" / "lib" / "tests_hidden").mkdir(parents=True)  # environments are not walked
    found = set(fixture_material(tmp_path))
    assert found == {fixture / "tests_hidden", fixture / "reference"}
