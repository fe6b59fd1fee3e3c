"""An attempt's workspace is made only when a tool, fixture or adapter needs it, once, and a
kept run still has one directory per attempt."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import aeh
from aeh.engine import scheduler
from aeh.tools import ToolEnv
from aeh.tools.workspace import LazyWorkspace

NO_FILES = "capital_first_alphabetically"  # lookup_capital only: never touches the workspace
WRITES = "draft_and_count"  # write_note then count_words


def _attempt_dirs(root: Path) -> dict[str, list[str]]:
    return {task.name: sorted(p.name for p in task.iterdir()) for task in root.iterdir() if task.is_dir()}


def test_a_workspace_is_made_only_for_attempts_that_use_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, list[str]] = {}
    release = scheduler.release_work_root

    def look_then_release(root: Path, keep: bool) -> None:
        seen.update(_attempt_dirs(root))
        release(root, keep)

    monkeypatch.setattr(scheduler, "release_work_root", look_then_release)
    table = aeh.run("smoke", adapter="mock", attempts=3, seed=1, db=tmp_path / "runs.db", tasks=[NO_FILES, WRITES],
                    work_dir=tmp_path / "work", progress=False, adapter_options={"latency_s": 0})
    assert seen == {WRITES: ["0", "1", "2"]}
    assert table.table.set_index("task_id").loc[WRITES, "successes"] == 3  # the graders found the tool's file


def test_kept_workspaces_have_a_directory_per_attempt(tmp_path: Path) -> None:
    aeh.run("smoke", adapter="mock", attempts=2, seed=1, db=tmp_path / "runs.db", tasks=[NO_FILES, WRITES],
            work_dir=tmp_path / "work", keep_workspaces=True, progress=False, adapter_options={"latency_s": 0})
    (root,) = (tmp_path / "work").iterdir()
    assert _attempt_dirs(root) == {NO_FILES: ["0", "1"], WRITES: ["0", "1"]}
    assert (root / WRITES / "0" / "draft.txt").is_file()


def test_first_use_from_many_threads_makes_the_directory_once(tmp_path: Path) -> None:
    workspace = LazyWorkspace(tmp_path / "task" / "0")
    env = ToolEnv(workspace)
    assert not workspace.path.exists() and not workspace.made
    barrier = threading.Barrier(8)

    def write(i: int) -> None:
        barrier.wait()
        (env.workspace / f"f{i}.txt").write_text(str(i))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(p.name for p in workspace.path.iterdir()) == [f"f{i}.txt" for i in range(8)]


def test_a_leftover_directory_is_emptied_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "task" / "0"
    path.mkdir(parents=True)
    (path / "stale.txt").write_text("from an earlier try")
    workspace = LazyWorkspace(path)
    assert list(workspace.get().iterdir()) == []
    (path / "new.txt").write_text("kept")
    assert [p.name for p in workspace.get().iterdir()] == ["new.txt"]  # later uses leave it alone
