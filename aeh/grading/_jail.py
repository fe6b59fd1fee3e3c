"""Filesystem and process confinement for code aeh runs on the agent's behalf (bubblewrap).

The same jail serves the solver (confined to its workspace) and graded code (its tests mounted
read-only): the whole filesystem read-only, the temp dirs and every path in `hidden` replaced by
empty tmpfs, `writable` paths bound back read-write, `read_only` ones bound read-only on top,
its own PID namespace (every process it starts dies with it) and `--die-with-parent` (it dies
with aeh). One probe per process (cached); the mode string is recorded like `grading_sandbox`:

    bwrap                   confined (argv prefix from `Jail.wrap`)
    unavailable             no `bwrap` on this machine (Debian: `apt-get install bubblewrap`)
    disabled                turned off on purpose
    fallback-off:<reason>   `bwrap` exists but would not start here; nothing is confined
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from aeh.grading._sandbox import linux_binary, try_command

__all__ = ["Jail", "jail_for", "pid_namespace_prefix", "probe_jail", "repository_dirs"]


@dataclass(frozen=True)
class Jail:
    mode: str
    binary: str | None = None

    @property
    def active(self) -> bool:
        return self.mode == "bwrap"

    def wrap(self, argv: list[str], *, cwd: Path, writable: Iterable[Path] = (),
             read_only: Iterable[Path] = (), hidden: Iterable[Path] = (),
             visible: Iterable[Path] = ()) -> list[str]:
        """`argv` run inside the jail with `cwd` as its working directory (unchanged if inactive).

        `visible` folders stay readable even inside a temp dir (the user's checkout holding the
        solver's script); the temp dirs themselves are never made visible whole."""
        if not self.active or self.binary is None:
            return list(argv)
        prefix = [self.binary, "--die-with-parent", "--unshare-pid", "--new-session",
                  "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        temp = _masks([Path("/tmp"), Path("/var/tmp"), Path(tempfile.gettempdir())])
        # Python itself may live in a temp dir (a throwaway venv), and so may the user's checkout:
        # bound back before the rest is hidden.
        wanted = [*_runtime_dirs(), *(Path(p).resolve() for p in visible if Path(p).is_dir())]
        runtime = _masks(p for p in wanted if _under(p, temp) and p not in temp)
        masks = [p for p in _masks(hidden) if p not in temp and (not _under(p, temp) or _under(p, runtime))]
        for path in temp:
            prefix += ["--tmpfs", str(path)]
        for path in runtime:
            prefix += ["--ro-bind", str(path), str(path)]
        for path in masks:
            prefix += ["--tmpfs", str(path)]
        for path in writable:
            prefix += ["--bind", str(path), str(path)]
        for path in read_only:
            prefix += ["--ro-bind", str(path), str(path)]
        return [*prefix, "--chdir", str(cwd), *argv]


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path.is_relative_to(r) for r in roots)


def _runtime_dirs() -> list[Path]:
    """Where this interpreter and its packages are (the jailed command runs the same Python),
    parents only."""
    found = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent,
             *(Path(p) for p in sys.path if p)}
    return _masks(found)


def _masks(hidden: Iterable[Path]) -> list[Path]:
    """Existing directories of `hidden`, parents only (a tmpfs over a parent hides its children)."""
    real = {Path(p).resolve() for p in hidden if Path(p).is_dir()}
    keep = [p for p in real if not any(q != p and p.is_relative_to(q) for q in real)]
    return sorted(keep, key=lambda p: len(p.parts))


@functools.lru_cache(maxsize=1)
def probe_jail() -> Jail:
    """bubblewrap when it runs here (probed once), else an honest fallback label."""
    binary = linux_binary("bwrap")
    if binary is None:
        return Jail("unavailable")
    probe = Jail("bwrap", binary).wrap([], cwd=Path(os.sep))
    reason = try_command(probe)
    if reason is not None:
        return Jail("fallback-off:" + reason.replace("\n", " "))
    return Jail("bwrap", binary)


def jail_for(enabled: bool) -> Jail:
    """`disabled` when turned off, else the probed backend."""
    return probe_jail() if enabled else Jail("disabled")


def repository_dirs(path: Path) -> list[Path]:
    """The git directories of the checkouts holding `path`: their objects hold every file too.

    A worktree's `.git` is a file naming its git dir, whose `commondir` names the shared one.
    """
    found: list[Path] = []
    for parent in [path.resolve(), *path.resolve().parents]:
        dot = parent / ".git"
        if dot.is_dir():
            found.append(dot)
        elif dot.is_file():
            found += _linked_git_dirs(dot)
    return found


def _linked_git_dirs(dot: Path) -> list[Path]:
    try:
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return []
    if not text.startswith("gitdir:"):
        return []
    gitdir = (dot.parent / text.removeprefix("gitdir:").strip()).resolve()
    found = [gitdir] if gitdir.is_dir() else []
    try:
        common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return found
    return found + ([common] if common.is_dir() else [])


@functools.lru_cache(maxsize=1)
def pid_namespace_prefix() -> tuple[str, ...]:
    """Where bubblewrap does not run: `unshare` into a PID namespace of its own (with a user
    namespace when not root), so every process graded code starts dies with it; () if neither works."""
    unshare = linux_binary("unshare")
    if unshare is None:
        return ()
    for argv in ([unshare, "--pid", "--fork", "--kill-child"], [unshare, "-r", "--pid", "--fork", "--kill-child"]):
        if try_command(argv) is None:
            return tuple(argv)
    return ()
