"""docs/architecture.md and docs/plugins.md name what the code has: paths, layers, exports."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import aeh.plugins

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PLUGINS = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")

# `aeh/engine/runspec.py`, `aeh/commands/`, `docs/plugins.md`: a file or a folder, as the doc names them.
_PATH = re.compile(r"\b(?:aeh|tests|docs|scripts|benchmarks)/(?:[\w.]+/)*(?:[\w-]+\.(?:py|md|sh)\b|(?=[\s`),;]))")


def _named_paths() -> set[str]:
    return {m.group(0) for m in _PATH.finditer(ARCHITECTURE)}


def test_architecture_names_paths() -> None:
    """The path check reads the doc at all (a broken regex would pass everything)."""
    assert {"aeh/engine/runspec.py", "aeh/store/_seams.py", "aeh/commands/", "docs/plugins.md"} <= _named_paths()


def test_every_path_in_architecture_exists() -> None:
    missing = sorted(p for p in _named_paths() if not (ROOT / p).exists())
    assert missing == [], f"docs/architecture.md names paths that do not exist: {missing}"


def test_architecture_lists_every_layer_of_the_contract() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    absent = [layer for layer in contract["layers"] if layer not in ARCHITECTURE]
    assert absent == [], f"layers of pyproject's import-linter contract missing from docs/architecture.md: {absent}"


def test_plugins_doc_mentions_every_export() -> None:
    absent = [name for name in aeh.plugins.__all__ if f"`{name}`" not in PLUGINS]
    assert absent == [], f"aeh.plugins exports missing from docs/plugins.md: {absent}"
