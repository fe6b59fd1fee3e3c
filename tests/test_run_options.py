"""`aeh.run` options: a typo is a clear error, and progress shows only where someone watches."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

import aeh
from aeh.api import _progress_for
from aeh.engine.progress import BarProgress, interactive
from aeh.errors import ConfigError
from aeh.logs import RunLogger


def test_unknown_option_names_it_suggests_and_lists_the_valid_ones(db: Path) -> None:
    with pytest.raises(ConfigError) as err:
        aeh.run("smoke", attempts=1, db=db, fault_profil="x.yaml")
    text = str(err.value)
    assert "'fault_profil'" in text and "did you mean 'fault_profile'" in text
    assert "valid options:" in text and "judge_model" in text and "progress" in text
    assert not db.exists()  # refused before anything ran


def test_progress_is_off_under_pytest_and_forced_by_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not interactive()
    assert isinstance(_progress_for(None, "silent"), RunLogger)
    assert isinstance(_progress_for(True, "silent"), BarProgress)
    assert isinstance(_progress_for(False, "silent"), RunLogger)
    monkeypatch.setattr(sys, "stderr", type("Tty", (io.StringIO,), {"isatty": lambda self: True})())
    assert interactive() and isinstance(_progress_for(None, "silent"), BarProgress)


def test_progress_bar_counts_every_attempt(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = aeh.run("smoke", adapter="mock", attempts=2, seed=1, db=db, progress=True)
    err = capsys.readouterr().err
    total = int(table["n"].sum() + table["harness_errors"].sum())
    assert f"{total}/{total}" in err and "attempt" in err


def test_the_shell_an_in_process_report_leaves_is_not_jupyter(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from aeh.engine.progress import in_jupyter

    left = types.SimpleNamespace(aeh_report_shell=True)
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: left))
    assert not in_jupyter() and not interactive()
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: object()))
    assert in_jupyter() and interactive()
