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


def test_what_was_allocated_inside_waits_in_the_oldest_generation(collector_enabled: None) -> None:
    with cyclic_gc_paused():
        kept = [[i] for i in range(50_000)]  # far past the young threshold (700)
    more = [[i] for i in range(100)]  # the first allocations after the pause
    # moved there without a walk; a young collection on the way out (what the first allocation
    # after a plain gc.enable() starts) would have left them one generation younger
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(kept) in oldest and id(kept[0]) in oldest and id(kept[-1]) in oldest
    assert gc.get_count()[0] < 700
    assert len(more) == 100


def test_a_cycle_made_inside_is_collected_by_the_next_full_collection(collector_enabled: None) -> None:
    import weakref

    class Node:
        other: Any = None

    with cyclic_gc_paused():
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
    assert gone() is not None  # a cycle: reference counting cannot free it
    gc.collect()
    assert gone() is None


def test_objects_the_caller_froze_stay_frozen(collector_enabled: None) -> None:
    # Checked on an object of the test's own, not by the freeze count, which any frozen object freed
    # by reference counting meanwhile (another test's, another thread's) lowers.
    kept = [object()]
    gc.freeze()
    try:
        with cyclic_gc_paused():
            made = [[i] for i in range(1000)]
        assert gc.get_freeze_count() > 0
        assert not any(o is kept for o in gc.get_objects())  # still frozen: in no generation the collector walks
        assert any(o is made for o in gc.get_objects())  # what was made inside: not frozen with them
    finally:
        gc.unfreeze()
    assert any(o is kept for o in gc.get_objects(generation=2))


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
