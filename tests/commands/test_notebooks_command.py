"""`aeh notebooks copy DIR`: editable copies of the shipped notebooks; an edited copy is kept."""

from __future__ import annotations

from pathlib import Path

from aeh.report import NOTEBOOKS, notebooks_dir
from tests.commands.test_cli import run_cli


def test_copy_writes_every_shipped_notebook_and_names_each(tmp_path: Path) -> None:
    code, out, _ = run_cli("notebooks", "copy", str(tmp_path / "nb"))
    assert code == 0
    for name in NOTEBOOKS:
        copy = tmp_path / "nb" / f"{name}.ipynb"
        assert copy.read_bytes() == (notebooks_dir() / f"{name}.ipynb").read_bytes()
        assert f"wrote {copy}" in out
    code, out, _ = run_cli("notebooks", "copy", str(tmp_path / "nb"))
    assert code == 0 and "wrote" not in out and out.count("unchanged") == len(NOTEBOOKS)


def test_an_edited_copy_is_kept_without_force(tmp_path: Path) -> None:
    run_cli("notebooks", "copy", str(tmp_path))
    edited = tmp_path / "explore.ipynb"
    edited.write_text('{"cells": []}')
    (tmp_path / "run_suite.ipynb").unlink()  # a missing one is not written either: nothing is, on refusal
    code, out, err = run_cli("notebooks", "copy", str(tmp_path))
    assert code == 2
    assert str(edited) in err and "--force" in err
    assert edited.read_text() == '{"cells": []}' and not (tmp_path / "run_suite.ipynb").exists()

    code, out, _ = run_cli("notebooks", "copy", str(tmp_path), "--force")
    assert code == 0 and f"wrote {edited}" in out and f"wrote {tmp_path / 'run_suite.ipynb'}" in out
    assert edited.read_bytes() == (notebooks_dir() / "explore.ipynb").read_bytes()


def test_copy_into_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("x")
    code, _, err = run_cli("notebooks", "copy", str(target))
    assert code == 2 and f"{target}: not a folder" in err


def test_the_default_folder_is_notebooks_in_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli("notebooks", "copy")
    assert code == 0 and (tmp_path / "notebooks" / "run_suite.ipynb").is_file()
    assert "jupyter lab notebooks" in out


def test_the_shipped_notebooks_are_real_files_inside_the_package() -> None:
    folder = notebooks_dir()
    assert folder.parent.name == "_bundled" and folder.parent.parent.name == "aeh"
    assert all(p.is_file() and not p.is_symlink() for p in folder.iterdir())
