"""Confining a solver process to its workspace (the command adapter's spawning side).

With bubblewrap (`aeh.grading._jail`) the solver sees the machine read-only (its interpreter,
its libraries, the network unless `--sandbox-solver`), writes only its workspace and the usage
file's folder, and finds empty directories where the suite lives (with `reference/` and the
hidden tests), where the git checkout holding the suite keeps its objects, where other
attempts' workspaces and earlier runs' folders are, and in the temp dirs (where grading
folders are built). Its own PID namespace ends every process it started when it ends.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from pathlib import Path

from aeh.grading import HIDDEN_PATTERNS, Jail, jail_for, repository_dirs

#: Folders never walked for grading material (environments and caches, not fixtures).
_SKIP = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", "site-packages", ".tox", ".mypy_cache"})
#: A bound on the walk of the start folder (a huge tree is cut short, not walked for minutes).
_MAX_DIRS = 20_000

__all__ = ["confined_argv", "confinement_mode", "solver_jail"]


def solver_jail(enabled: bool) -> Jail:
    """The jail a solver runs in (`disabled` when turned off)."""
    return jail_for(enabled)


def confinement_mode(jail: Jail, builtin: bool) -> str:
    """What the run records as `solver_confinement`."""
    return "none (built-in solver)" if builtin else jail.mode


@functools.lru_cache(maxsize=8)
def fixture_material(root: Path) -> tuple[Path, ...]:
    """Hidden-test folders and their fixtures' `reference/` folders under `root` (walked once).

    The folder aeh was started from stays readable to the solver; any coding fixture in it (say
    the shipped suite, while a copy of it is measured) must still not hand out its answers."""
    found: list[Path] = []
    for seen, (folder, dirs, _) in enumerate(os.walk(root)):
        if seen >= _MAX_DIRS:
            break
        hidden = [d for d in dirs if any(fnmatch.fnmatch(d, pat) for pat in HIDDEN_PATTERNS)]
        found += [Path(folder) / d for d in hidden]
        if hidden and "reference" in dirs:
            found.append(Path(folder) / "reference")
        dirs[:] = [d for d in dirs if d not in _SKIP and d not in hidden and d != "reference"]
    return tuple(found)


def confined_argv(argv: list[str], jail: Jail, *, workspace: Path, writable: list[Path],
                  hide: list[Path]) -> list[str]:
    """`argv` inside the jail: read-write `workspace` + `writable`, the `hide` paths emptied."""
    start = Path.cwd()
    hidden = [*(p for p in hide if p is not None), *fixture_material(start)]
    for path in list(hidden):
        hidden += repository_dirs(path)
    # The folder aeh was started from stays readable (a solver script given by a path in the
    # user's checkout), even when that checkout is in a temp dir; the suite inside it stays hidden.
    return jail.wrap(argv, cwd=workspace, writable=[workspace, *writable], hidden=hidden, visible=[start])
