"""The suite.py import deadline (SIGALRM) leaves an alarm someone else set working."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest

from aeh._util.pyfile import ImportTimedOut, import_file


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


def _in_thread(fn: Any) -> Any:
    """fn() on a worker thread (as aeh.run does inside a running event loop): its result or exception."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(fn).result(timeout=60)


@pytest.mark.timeout(60, method="thread")
@pytest.mark.parametrize("body", ["import time\nwhile True:\n    time.sleep(1)\n", "while True:\n    pass\n",
                                  "while True:\n    try:\n        pass\n    except Exception:\n        pass\n"])
def test_the_deadline_holds_off_the_main_thread(tmp_path: Path, body: str) -> None:
    (tmp_path / "loop.py").write_text(body)
    started = time.monotonic()
    with pytest.raises(ImportTimedOut):
        _in_thread(lambda: import_file(tmp_path / "loop.py", "t_deadline", time_limit=0.3))
    assert time.monotonic() - started < 5


@pytest.mark.timeout(60, method="thread")
def test_a_quick_import_off_the_main_thread_leaves_nothing_behind(tmp_path: Path) -> None:
    (tmp_path / "quick.py").write_text("X = 1\n")

    def work() -> int:
        module = import_file(tmp_path / "quick.py", "t_deadline", time_limit=0.2)
        time.sleep(0.5)  # past the limit: no watchdog may still raise here
        return int(module.X)

    assert _in_thread(work) == 1


@pytest.mark.timeout(90, method="thread")
def test_a_suite_that_never_finishes_importing_is_refused_inside_a_running_loop(tmp_path: Path, monkeypatch) -> None:
    import asyncio

    import aeh
    from aeh.errors import SuiteLoadError

    suite = tmp_path / "loops"
    (suite / "tasks").mkdir(parents=True)
    (suite / "suite.yaml").write_text("name: loops\ndescription: loops at import\n")
    (suite / "suite.py").write_text("import time\nwhile True:\n    time.sleep(1)\n")
    monkeypatch.setenv("AEH_SUITE_IMPORT_TIMEOUT", "1")

    async def notebook() -> None:  # Jupyter: aeh.run runs the suite on a worker thread
        aeh.run(str(suite), adapter="mock", db=tmp_path / "runs.db", progress=False)

    started = time.monotonic()
    with pytest.raises(SuiteLoadError) as caught:
        asyncio.run(notebook())
    assert time.monotonic() - started < 30
    assert caught.value.exit_code == 2
    assert "suite.py" in str(caught.value) and "did not finish within 1 s" in str(caught.value)
