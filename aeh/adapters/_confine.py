"""Confining a solver process to its workspace (the command adapter's spawning side).

With bubblewrap (`aeh.grading._jail`) the solver sees the machine read-only (its interpreter,
its libraries, the network unless `--sandbox-solver`), writes only its workspace and the usage
file's folder, and finds empty directories where the suite lives (with `reference/` and the
hidden tests), where the git checkout holding the suite keeps its objects, where other
attempts' workspaces and earlier runs' folders are, and in the temp dirs (where grading
folders are built). Its own PID namespace ends every process it started when it ends.
"""

from __future__ import annotations

from pathlib import Path

from aeh.grading._jail import Jail, jail_for, repository_dirs

__all__ = ["confined_argv", "confinement_mode", "solver_jail"]


def solver_jail(enabled: bool) -> Jail:
    """The jail a solver runs in (`disabled` when turned off)."""
    return jail_for(enabled)


def confinement_mode(jail: Jail, builtin: bool) -> str:
    """What the run records as `solver_confinement`."""
    return "none (built-in solver)" if builtin else jail.mode


def confined_argv(argv: list[str], jail: Jail, *, workspace: Path, writable: list[Path],
                  hide: list[Path]) -> list[str]:
    """`argv` inside the jail: read-write `workspace` + `writable`, the `hide` paths emptied."""
    hidden = [p for p in hide if p is not None]
    for path in list(hidden):
        hidden += repository_dirs(path)
    # The folder aeh was started from stays readable (a solver script given by a path in the
    # user's checkout), even when that checkout is in a temp dir; the suite inside it stays hidden.
    return jail.wrap(argv, cwd=workspace, writable=[workspace, *writable], hidden=hidden, visible=[Path.cwd()])
