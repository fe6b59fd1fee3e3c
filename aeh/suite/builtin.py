"""The suites shipped with aeh, registered on `aeh.suite.suites` (and published as `aeh.suites`
entry points too, so the built-ins prove the plugin path).
"""

from __future__ import annotations

from pathlib import Path

from aeh.errors import Problem, SuiteLoadError
from aeh.suite._coding import CodingSuite, is_coding_suite_dir
from aeh.suite._directory import DirectorySuite

__all__ = ["BUILTIN_SUITES", "available_builtin_suites", "bundled_suite", "coding", "core", "smoke", "toy_math"]

BUILTIN_SUITES: tuple[str, ...] = ("smoke", "toy_math", "core", "coding")


def _bundled_root() -> Path:
    # `_bundled/suites` is a symlink to the repo's suites/ in a checkout and a real folder in a
    # wheel, so the same lookup works both ways.
    return Path(__file__).resolve().parent.parent / "_bundled" / "suites"


def available_builtin_suites() -> list[str]:
    """The shipped suites this install actually has (core may not be there yet)."""
    return [n for n in BUILTIN_SUITES
            if (_bundled_root() / n / "suite.py").is_file() or (_bundled_root() / n / "suite.yaml").is_file()]


def bundled_suite(name: str) -> DirectorySuite:
    """A shipped suite directory by name; SuiteLoadError if this install does not have it."""
    root = _bundled_root() / name
    if not (root / "suite.py").is_file():
        raise SuiteLoadError(
            [Problem(name, "suite", f"the bundled suite {name!r} is not installed (looked in {root})",
                     "reinstall aeh, or pass the path of a suite directory")],
            suite=name,
        )
    return DirectorySuite(root, name=name)


def smoke() -> DirectorySuite:
    """Five quick workspace/lookup tasks; finishes in seconds on the mock adapter."""
    return bundled_suite("smoke")


def toy_math() -> DirectorySuite:
    """Three arithmetic tasks with one calculator tool: proof the engine is domain-blind."""
    return bundled_suite("toy_math")


def core() -> DirectorySuite:
    """The 32-task core suite."""
    return bundled_suite("core")


def coding() -> CodingSuite:
    """Eight small stdlib-Python repos with edge-case bugs, graded by hidden tests."""
    root = _bundled_root() / "coding"
    if not is_coding_suite_dir(root):
        raise SuiteLoadError(
            [Problem("coding", "suite", f"the bundled suite 'coding' is not installed (looked in {root})",
                     "reinstall aeh, or pass the path of a coding suite directory")],
            suite="coding",
        )
    return CodingSuite(root, name="coding")
