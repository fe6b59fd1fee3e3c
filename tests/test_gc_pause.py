"""The cyclic collector is paused around `aeh report`'s one burst of work and restored after it."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from aeh._util.gc_pause import cyclic_gc_paused


@pytest.fixture
def collector_enabled() -> Any:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_off_inside_and_back_on_after(collector_enabled: None) -> None:
    with cyclic_gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_comes_back_when_the_work_raises(collector_enabled: None) -> None:
    with pytest.raises(RuntimeError), cyclic_gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_the_caller_had_disabled_stays_disabled(collector_enabled: None) -> None:
    gc.disable()
    with cyclic_gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_aeh_report_renders_with_the_collector_paused_and_restores_it(
        collector_enabled: None, mock_db: tuple[Path, str, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import aeh.report
    from aeh.cli import main

    seen: list[bool] = []

    def render(run_id: str, out: str | None, **_: Any) -> Path:
        seen.append(gc.isenabled())
        return Path(out or tmp_path / "r.html")

    monkeypatch.setattr(aeh.report, "render_run_report", render)
    db, _, run_id = mock_db
    assert main(["report", "--run-id", run_id, "--db", str(db), "--out", str(tmp_path / "r.html")]) == 0
    assert seen == [False]
    assert gc.isenabled()
