"""Fixtures described by `task.json`, loaded without a `suite.yaml`.

The layout is the coding-fixture one (`seed/`, `tests_public/`, `tests_hidden/`, `reference/`)
with the task in `task.json` — the same keys as `task.yaml` (id, title, prompt, entry_files,
timeout_seconds, taxonomy). A path is either one fixture (it holds `task.json`) or a folder of
them; either loads as a coding suite named after the path, graded by `hidden_tests`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aeh._util.files import InputJsonError, load_json_file
from aeh._util.problems import display_path
from aeh.errors import Problem
from aeh.suite._coding import CodingSuite

__all__ = ["TASK_JSON", "TaskJsonSuite", "is_task_json_path"]

TASK_JSON = "task.json"
#: A task file is a few fields; read it bounded all the same.
_MAX_TASK_BYTES = 1 << 20


def is_task_json_path(path: Path) -> bool:
    """True for a fixture holding task.json, or a folder without suite.yaml whose fixtures do."""
    if (path / TASK_JSON).is_file():
        return True
    if (path / "suite.yaml").exists() or (path / "suite.py").exists():
        return False
    return any((p / TASK_JSON).is_file() for p in path.iterdir() if p.is_dir())


def read_task_json(path: Path) -> tuple[Any, list[Problem]]:
    """The parsed JSON object of `path`, or None with the problem (`file:field: what — fix`)."""
    where = display_path(path)
    try:
        data, _ = load_json_file(path, max_bytes=_MAX_TASK_BYTES)
    except InputJsonError as exc:
        return None, [Problem.from_json_error(where, exc)]
    except json.JSONDecodeError as exc:
        return None, [Problem(f"{where}:{exc.lineno}", "(file)", f"is not valid JSON: {exc.msg}",
                              "fix the JSON syntax")]
    except (OSError, ValueError) as exc:
        return None, [Problem(where, "(file)", f"cannot be read: {exc}", "check the file")]
    if not isinstance(data, dict):
        return None, [Problem(where, "(file)", f"must be a JSON object, got {type(data).__name__}",
                              'write the task as {"id": …, "title": …, …}')]
    return data, []


class TaskJsonSuite(CodingSuite):
    """One `task.json` fixture, or a folder of them, as a coding suite (no `suite.yaml`)."""

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        given = Path(path).resolve()
        # One fixture: the suite is its parent folder, restricted to it (the graders and the
        # reference solver find a fixture as root / id).
        self._only: str | None = given.name if (given / TASK_JSON).is_file() else None
        self._given = given
        super().__init__(given.parent if self._only else given, name=name or given.name)

    def _read_suite_file(self, name: str | None) -> str | None:
        self.description = f"task.json fixtures at {self._given}"
        return name

    def _fixture_dirs(self) -> list[Path]:
        if self._only is not None:
            return [self.root / self._only]
        # Other folders beside the fixtures (runs/, docs/) are not fixtures; a folder with seed/
        # is one, so a missing task.json is reported rather than skipped.
        return [p for p in super()._fixture_dirs()
                if any((p / n).exists() for n in (TASK_JSON, "task.yaml", "seed"))]

    def _read_task_file(self, fx: Path) -> tuple[str, Any, list[Problem]]:
        if (fx / "task.yaml").is_file():
            return super()._read_task_file(fx)
        if not (fx / TASK_JSON).is_file():
            where = display_path(fx / TASK_JSON)
            return where, None, [Problem(where, "(file)", "fixture directory has no task.json",
                                         "add task.json (id, title, prompt, entry_files, timeout_seconds, "
                                         "taxonomy) or move the directory out of the folder")]
        data, problems = read_task_json(fx / TASK_JSON)
        return display_path(fx / TASK_JSON), data, problems

    def reload(self) -> CodingSuite:
        return TaskJsonSuite(self._given, name=self.name)

    def __repr__(self) -> str:
        return f"TaskJsonSuite({self.name!r}, {len(self.tasks())} fixtures at {self._given})"
