"""Every `aeh` command, nested ones included, has help text and is documented.

The commands come from walking `aeh.cli.build_parser()`, so a new command cannot ship without
its help string, a mention in the prose docs (README.md or docs/*.md), and an entry in the
generated reference page docs/cli.md.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load_cli_docs():
    spec = importlib.util.spec_from_file_location("cli_docs", REPO / "scripts" / "cli_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("cli_docs", module)
    spec.loader.exec_module(module)
    return module


cli_docs = _load_cli_docs()
try:
    COMMANDS = cli_docs.commands()
except Exception:  # noqa: BLE001 — test_the_walk_finds_nested_commands reports it, without aborting collection
    COMMANDS = []
IDS = [" ".join(path) for path, _, _ in COMMANDS]


def _prose_docs() -> str:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return "\n".join(p.read_text(encoding="utf-8") for p in pages if p != cli_docs.PAGE)


def test_the_walk_finds_nested_commands() -> None:
    paths = [path for path, _, _ in cli_docs.commands()]  # raises here if the parser does not build
    assert {"run", "runs", "tasks", "tasks validate", "tasks list", "compare"} <= {" ".join(p) for p in paths}
    assert any(len(path) > 1 for path in paths)


@pytest.mark.parametrize(("path", "help_text"), [(p, h) for p, h, _ in COMMANDS], ids=IDS)
def test_command_has_help_text(path: tuple[str, ...], help_text: str) -> None:
    assert help_text.strip(), f"`aeh {' '.join(path)}` has no help= text in its add_parser call"


@pytest.mark.parametrize("path", [p for p, _, _ in COMMANDS], ids=IDS)
def test_command_is_mentioned_in_the_docs(path: tuple[str, ...]) -> None:
    command = "aeh " + " ".join(path)
    pattern = re.compile(re.escape(command) + r"(?![\w-])")
    assert pattern.search(_prose_docs()), (
        f"`{command}` is not mentioned in README.md or docs/*.md (docs/cli.md does not count: "
        "it is generated); add a line saying what it is for"
    )


def test_cli_reference_page_is_current() -> None:
    # In a fresh interpreter: plugins that earlier tests installed on sys.path stay out of it.
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "cli_docs.py"), "--check"],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr or done.stdout


def test_cli_reference_page_has_every_command() -> None:
    page = cli_docs.render()
    for path, _, _ in COMMANDS:
        assert f"`aeh {' '.join(path)}`" in page
