"""The suite.py import deadline (SIGALRM) leaves an alarm someone else set working."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest

from aeh._pyfile import ImportTimedOut, import_file


@pytest.fixture
def own_alarm() -> Any:
    fired: list[float] = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(time.monotonic()))
    saved = signal.setitimer(signal.ITIMER_REAL, 0)
    yield fired
    signal.setitimer(signal.ITIMER_REAL, *saved)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.timeout(30, method="thread")
def test_an_earlier_alarm_still_fires_and_the_import_finishes(tmp_path: Path, own_alarm: list[float]) -> None:
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(0.6)\nDONE = True\n")
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    module = import_file(tmp_path / "slow.py", "t_deadline", time_limit=5)
    assert module.DONE and len(own_alarm) == 1


@pytest.mark.timeout(30, method="thread")
def test_a_later_alarm_is_put_back_with_the_time_it_had_left(tmp_path: Path, own_alarm: list[float]) -> None:
    (tmp_path / "quick.py").write_text("X = 1\n")
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    import_file(tmp_path / "quick.py", "t_deadline", time_limit=1)
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    assert 1.0 < left <= 2.0 and own_alarm == []


@pytest.mark.timeout(30, method="thread")
def test_an_import_past_its_limit_stops(tmp_path: Path, own_alarm: list[float]) -> None:
    (tmp_path / "loop.py").write_text("while True:\n    pass\n")
    started = time.monotonic()
    with pytest.raises(ImportTimedOut):
        import_file(tmp_path / "loop.py", "t_deadline", time_limit=0.3)
    assert time.monotonic() - started < 5 and own_alarm == []
