"""Without inspect-ai the Inspect import says how to install it (the core install does without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

import aeh._util.optional as optional
from aeh._util.install import install_command
from aeh.errors import MissingExtraError
from aeh.importers import import_inspect_logs


def test_a_missing_inspect_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = optional.find_spec
    monkeypatch.setattr(optional, "find_spec", lambda name: None if name == "inspect_ai" else real(name))
    log = tmp_path / "x.eval"
    log.write_bytes(b"PK")
    with pytest.raises(MissingExtraError) as info:
        import_inspect_logs([log], db=tmp_path / "r.db")
    assert install_command("inspect") in str(info.value)
