"""Filesystem and process confinement for code aeh runs on the agent's behalf.

The same jail serves the solver (confined to its workspace) and graded code (its tests mounted
read-only): the whole filesystem read-only, the temp dirs and every path in `hidden` replaced by
empty tmpfs, `writable` paths bound back read-write, `read_only` ones bound read-only on top,
its own PID namespace (every process it starts dies with it). Two mechanisms give it, probed
once per process in this order; the mode string is recorded like `grading_sandbox`:

    bwrap                   bubblewrap (`--die-with-parent`: it also dies with aeh)
    unshare                 util-linux `unshare` (user, mount and PID namespaces) with
                            `_jail_init` setting up the mounts inside, then a nested user
                            namespace that locks them and drops every capability
    unavailable             neither works here (`unavailable: <why>`): a coding run refuses to
                            start unless confinement is turned off on purpose
    disabled                turned off on purpose (--no-solver-confinement, --no-grading-confinement)
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from aeh.grading._sandbox import linux_binary, try_command

__all__ = ["CONFINED", "INSTALL_HINT", "Jail", "jail_for", "no_jail_message", "no_jail_reason", "pid_namespace_prefix",
           "probe_jail", "repository_dirs", "unconfined_lines"]

#: The modes that confine.
CONFINED = ("bwrap", "unshare")
#: How to get a mechanism where neither runs.
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; "
                "Alpine: apk add bubblewrap), or let unprivileged users create namespaces for util-linux "
                "`unshare` (sysctl kernel.unprivileged_userns_clone=1; Ubuntu 24.04+: "
                "kernel.apparmor_restrict_unprivileged_userns=0)")
_INIT = Path(__file__).with_name("_jail_init.py")
_UNSHARE_FLAGS = ("--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc")


@dataclass(frozen=True)
class Jail:
    mode: str
    binary: str | None = None

    @property
    def active(self) -> bool:
        return self.mode in CONFINED

    def wrap(self, argv: list[str], *, cwd: Path, writable: Iterable[Path] = (),
             read_only: Iterable[Path] = (), hidden: Iterable[Path] = (),
             visible: Iterable[Path] = ()) -> list[str]:
        """`argv` run inside the jail with `cwd` as its working directory (unchanged if inactive).

        `visible` folders stay readable even inside a temp dir (the user's checkout holding the
        solver's script); the temp dirs themselves are never made visible whole."""
        if not self.active or self.binary is None:
            return list(argv)
        temp = _masks([Path("/tmp"), Path("/var/tmp"), Path(tempfile.gettempdir())])
        # Python itself may live in a temp dir (a throwaway venv), and so may the user's checkout:
        # bound back before the rest is hidden.
        wanted = [*_runtime_dirs(), *(Path(p).resolve() for p in visible if Path(p).is_dir())]
        runtime = _masks(p for p in wanted if _under(p, temp) and p not in temp)
        masks = [p for p in _masks(hidden) if p not in temp and (not _under(p, temp) or _under(p, runtime))]
        if self.mode == "unshare":
            plan = {"uid": os.getuid(), "gid": os.getgid(), "cwd": str(cwd), "temp": [str(p) for p in temp],
                    "runtime": [str(p) for p in runtime], "hidden": [str(p) for p in masks],
                    "writable": [str(p) for p in writable], "read_only": [str(p) for p in read_only]}
            return [self.binary, *_UNSHARE_FLAGS, sys.executable, "-I", "-S", str(_INIT), json.dumps(plan), "--",
                    *argv]
        prefix = [self.binary, "--die-with-parent", "--unshare-pid", "--new-session",
                  "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
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
    """bubblewrap when it runs here, else `unshare` when it does (probed once), else why neither."""
    reasons = []
    for mode, name in (("bwrap", "bwrap"), ("unshare", "unshare")):
        binary = linux_binary(name)
        if binary is None:
            reasons.append(f"no {name} on PATH" if sys.platform.startswith("linux") else f"{name}: not Linux")
            continue
        # This interpreter, by its path: PATH itself may be hidden inside (a folder under /tmp).
        reason = try_command(Jail(mode, binary).wrap([sys.executable, "-c", "pass"], cwd=Path(os.sep)))
        if reason is None:
            return Jail(mode, binary)
        reasons.append(f"{name} would not start: {reason}")
    return Jail("unavailable: " + "; ".join(reasons).replace("\n", " "))


def jail_for(enabled: bool) -> Jail:
    """`disabled` when turned off, else the probed backend."""
    return probe_jail() if enabled else Jail("disabled")


def no_jail_reason(who: str, flag: str, jail: Jail) -> tuple[str, str]:
    """(what, fix) of a coding run refused where no jail runs (`who`: the solver, graded code)."""
    why = jail.mode.removeprefix("unavailable").lstrip(": ") or jail.mode
    return (f"no confinement for {who} on this machine ({why}): it could read the suite's reference/ and "
            "hidden tests, so the run is refused",
            f"{INSTALL_HINT}; or pass {flag} to accept an unconfined measurement (every output then marks "
            "the run unconfined)")


def no_jail_message(who: str, flag: str, jail: Jail) -> str:
    what, fix = no_jail_reason(who, flag, jail)
    return f"{what} — {fix}"


#: The run-config keys that record a jail, the flag that turns each off, and what it guards.
_RECORDED = (("solver_confinement", "--no-solver-confinement", "the solver could read the suite's reference/ "
              "and hidden tests"),
             ("grading_confinement", "--no-grading-confinement", "graded code could read the whole machine"))


def unconfined_lines(config: dict[str, object]) -> list[str]:
    """One `UNCONFINED` line per jail a run went without (empty for a confined or non-coding run)."""
    lines = []
    for key, flag, risk in _RECORDED:
        mode = config.get(key)
        if isinstance(mode, str) and mode not in CONFINED and not mode.startswith("none"):
            lines.append(f"UNCONFINED: {key.replace('_', ' ')} {mode} ({flag}): {risk}")
    return lines


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
