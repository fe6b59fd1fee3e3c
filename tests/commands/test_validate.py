"""`aeh validate FIXTURE…`: exit 0 when every fixture keeps the contract, 1 (the coding harness's
contract error) with file:field: what — fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from aeh.cli import main

SEED001 = Path(__file__).resolve().parents[1] / "fixtures" / "seed001"


def test_a_missing_path_exits_1_with_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nowhere")]) == 1
    assert "no such directory — pass a fixture directory" in capsys.readouterr().out


def test_a_folder_that_is_no_fixture_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "fx").mkdir()
    (tmp_path / "fx" / "task.json").write_text("[]")
    assert main(["validate", str(tmp_path / "fx")]) == 1
    assert "task.json:(file): must be a JSON object" in capsys.readouterr().out


@pytest.mark.slow
def test_a_good_folder_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(SEED001 / "fixtures")]) == 0


@pytest.mark.slow
def test_one_broken_fixture_among_good_ones_exits_1_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", str(SEED001 / "fixtures" / "fx-001-clamp"), str(SEED001 / "broken" / "fx-900-broken")])
    out = capsys.readouterr().out
    assert (code, "fx-900-broken:contract: seed half: the seed must fail at least one hidden test" in out,
            "— put the bug in seed/" in out) == (1, True, True)
