"""One rule for where the store is; reading a missing store is an error that creates nothing."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import aeh
from aeh.cli import main
from aeh.errors import AehError
from aeh.store import Store, locate_store, open_store, resolve_db_path


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/project/runs.db with the working directory at tmp/project/notebooks/deeper."""
    project = tmp_path / "project"
    deeper = project / "notebooks" / "deeper"
    deeper.mkdir(parents=True)
    Store(project / "runs.db").close()
    monkeypatch.chdir(deeper)
    monkeypatch.delenv("AEH_DB", raising=False)
    return project


def test_walks_up_to_the_nearest_runs_db(tree: Path) -> None:
    where = locate_store()
    assert where.path == tree / "runs.db"
    assert "walking up" in where.how and where.exists
    assert "store: " in str(where)


def test_explicit_path_then_env_win_over_the_walk(tree: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEH_DB", str(tmp_path / "env.db"))
    assert resolve_db_path() == tmp_path / "env.db"
    assert locate_store().how == "from $AEH_DB"
    assert resolve_db_path(tmp_path / "x.db") == tmp_path / "x.db"


def test_default_is_runs_db_in_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    monkeypatch.delenv("AEH_DB", raising=False)
    if locate_store().path != empty / "runs.db":  # a runs.db above /tmp would be found first
        pytest.skip("a runs.db exists above the temp dir")
    assert not locate_store().exists and "does not exist yet" in str(locate_store())


def test_reading_a_missing_store_names_the_path_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "x.db"
    with pytest.raises(AehError) as err:
        open_store(missing, must_exist=True)
    text = str(err.value)
    assert str(missing) in text and "$AEH_DB" in text
    assert "aeh run --suite smoke --adapter mock" in text
    assert not missing.parent.exists()
    with pytest.raises(AehError):
        aeh.runs(missing)
    assert not missing.parent.exists()


def test_writing_creates_the_store(tmp_path: Path) -> None:
    path = tmp_path / "new" / "runs.db"
    open_store(path, must_exist=False).close()
    assert path.is_file()


def test_the_library_reads_the_store_found_by_walking_up(tree: Path) -> None:
    aeh.run("smoke", adapter="mock", attempts=1, seed=1, db=tree / "runs.db")
    assert len(aeh.runs()) == 1  # no db given: found from notebooks/deeper


@pytest.mark.parametrize("argv", [
    ["runs"], ["compare", "aaa", "bbb"], ["report", "--run-id", "aaa"],
    ["trace", "--run-id", "aaa", "--task", "t", "--attempt", "0"], ["review", "--run-id", "aaa"],
    ["judge-agreement", "--run-id", "aaa"], ["drift", "--suite", "smoke"], ["replay", "--run-id", "aaa"],
])
def test_read_commands_refuse_a_missing_store(argv: list[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "x.db"
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([*argv, "--db", str(missing)])
    assert code == 2
    assert f"no run store at {missing}" in err.getvalue()
    assert "aeh run --suite smoke --adapter mock" in err.getvalue()
    assert not missing.parent.exists()


def test_open_store_creates_a_missing_store_by_default(tmp_path: Path) -> None:
    path = tmp_path / "new" / "runs.db"
    open_store(path).close()
    assert path.exists()


def test_the_api_open_store_is_the_store_one() -> None:
    from aeh import api, store

    assert api.open_store is store.open_store
