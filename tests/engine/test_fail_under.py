"""`aeh run --fail-under RATE`: the run's own pass mark, exit 1 below it."""

from __future__ import annotations

from pathlib import Path

import pytest

import aeh
from aeh.cli import main as cli_main
from aeh.errors import ConfigError

FLOOR = "def agent(task, tools):\n    return 'not the answer'\n"  # the floor: every attempt fails


def _floor(tmp_path: Path) -> str:
    path = tmp_path / "floor_agent.py"
    path.write_text(FLOOR)
    return f"{path}:agent"


def _run(db: Path, *extra: str) -> list[str]:
    return ["run", "--suite", "smoke", "--task", "count_inbox_words", "--attempts", "1", "--seed", "1",
            "--db", str(db), "--log-level", "silent", *extra]


def test_a_rate_below_the_mark_exits_1(tmp_path: Path, db: Path) -> None:
    assert cli_main(_run(db, "--agent", _floor(tmp_path), "--model-free", "--fail-under", "0.5")) == 1


def test_the_gate_line_names_rate_mark_and_flag(tmp_path: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli_main(_run(db, "--agent", _floor(tmp_path), "--model-free", "--fail-under", "0.5"))
    assert "suite rate 0.000 is below 0.5: failed the --fail-under gate" in capsys.readouterr().out


def test_a_rate_that_meets_the_mark_exits_0(db: Path) -> None:
    assert cli_main(_run(db, "--fail-under", "0")) == 0


def test_a_mark_outside_0_to_1_is_refused(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(_run(db, "--fail-under", "1.5")) == 2
    assert "fail_under must be a number from 0 to 1, got 1.5" in capsys.readouterr().err


def test_the_library_exposes_the_verdict(db: Path) -> None:
    table = aeh.run("smoke", tasks=["count_inbox_words"], attempts=1, seed=1, db=db, fail_under=0.0)
    assert table.fail_under.met is True


def test_the_mark_is_stored_on_the_spec(db: Path) -> None:
    table = aeh.run("smoke", tasks=["count_inbox_words"], attempts=1, seed=1, db=db, fail_under=0.25)
    assert table.run.config.spec["fail_under"] == 0.25


def test_the_library_refuses_a_mark_above_1() -> None:
    with pytest.raises(ConfigError, match="fail_under must be a number from 0 to 1"):
        aeh.run("smoke", fail_under=2)
