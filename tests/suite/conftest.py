"""Builders for suites written into tmp_path, so each loader test states only what it breaks."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

SUITE_PY = """
from aeh.tools._tools import ToolRegistry

tools = ToolRegistry()

@tools.tool("echo")
def echo(args, env):
    return args

@tools.tool("other")
def other(args, env):
    return 1

invariants = {"always_ok": lambda trace: True}
"""

GOOD_TASK = """
id: {id}
prompt: say hi
tools: [echo]
graders:
  - kind: exact
    expected: hi
"""

MakeSuite = Callable[..., Path]


@pytest.fixture
def make_suite(tmp_path: Path) -> MakeSuite:
    """Write a suite: `tasks` maps file stem -> YAML text; `files` maps relative path -> text."""

    def make(
        tasks: dict[str, str] | None = None,
        *,
        suite_py: str | None = SUITE_PY,
        goldens: dict[str, str] | None = None,
        files: dict[str, str] | None = None,
        name: str = "s",
    ) -> Path:
        root = tmp_path / name
        (root / "tasks").mkdir(parents=True)
        if suite_py is not None:
            (root / "suite.py").write_text(textwrap.dedent(suite_py))
        for stem, text in (tasks if tasks is not None else {"t1": GOOD_TASK.format(id="t1")}).items():
            (root / "tasks" / f"{stem}.yaml").write_text(textwrap.dedent(text))
        for stem, text in (goldens or {}).items():
            (root / "goldens").mkdir(exist_ok=True)
            (root / "goldens" / f"{stem}.yaml").write_text(textwrap.dedent(text))
        for rel, text in (files or {}).items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        return root

    return make

