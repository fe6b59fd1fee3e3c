"""Where reports go and where the shipped notebooks live."""

from __future__ import annotations

from pathlib import Path

from aeh.errors import ConfigError

__all__ = ["NOTEBOOKS", "REPORTS_DIR", "default_out", "notebook_path", "notebooks_dir"]

REPORTS_DIR = Path("reports")
NOTEBOOKS = ("run_suite", "compare_runs", "judge_agreement", "explore", "coding_matrix")


def default_out(name: str) -> Path:
    """`reports/<name>` under the working directory."""
    return REPORTS_DIR / name


def notebooks_dir() -> Path:
    """The shipped notebooks, inside the package: what `aeh report` runs (explore copies of them)."""
    return Path(__file__).resolve().parent.parent / "_bundled" / "notebooks"


def notebook_path(name: str) -> Path:
    """The shipped notebook `name` (with or without `.ipynb`)."""
    stem = name[:-6] if name.endswith(".ipynb") else name
    path = notebooks_dir() / f"{stem}.ipynb"
    if not path.is_file():
        raise ConfigError(f"no shipped notebook {stem!r} in {notebooks_dir()} — one of: {', '.join(NOTEBOOKS)}")
    return path
