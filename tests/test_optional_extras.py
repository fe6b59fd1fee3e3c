"""Features that need the `jupyter` extra say so by name when it is missing."""

from __future__ import annotations

import pytest

import aeh._util.optional as optional
from aeh._util.install import install_command
from aeh.cli import main
from aeh.errors import AehError, MissingExtraError


def _hide(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    real = optional.find_spec
    monkeypatch.setattr(optional, "find_spec", lambda name: None if name in names else real(name))


def test_require_extra_names_feature_missing_modules_and_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "papermill", "seaborn")
    with pytest.raises(MissingExtraError) as info:
        optional.require_extra("an HTML report")
    message = str(info.value)
    assert "an HTML report" in message and "papermill, seaborn" in message
    assert install_command("jupyter") in message
    assert isinstance(info.value, AehError) and info.value.exit_code == 2


def test_require_extra_is_silent_when_installed() -> None:
    optional.require_extra("an HTML report", ("json",))


def test_report_without_the_extra_is_a_clean_cli_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "runs.db"
    assert main(["run", "--suite", "toy_math", "--attempts", "1", "--seed", "1", "--db", str(db),
                 "--log-level", "silent"]) == 0
    _hide(monkeypatch, "papermill")
    code = main(["report", "--db", str(db), "--out", str(tmp_path / "r.html")])
    assert code == 2
    err = capsys.readouterr().err
    assert "needs the optional 'jupyter' tools" in err and "papermill" in err
    assert not (tmp_path / "r.html").exists()
