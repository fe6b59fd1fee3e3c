"""Network denial for code aeh executes on the agent's behalf (graded code, local solvers).

One probe per process (cached): does `unshare --net` work (root), else `unshare -rn` (an
unprivileged user namespace)? The answer is a mode string recorded on every run and attempt:

    unshare                 the network is denied (argv prefix below)
    unavailable             no backend on this platform (not Linux, or no `unshare` binary)
    disabled                turned off on purpose (--no-grading-sandbox / --sandbox-solver not given)
    fallback-off:<reason>   a backend exists but would not start here; the code runs with network

Never silent: callers record the mode, and the CLI prints it when it is not `unshare`.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

__all__ = ["Sandbox", "linux_binary", "probe_sandbox", "sandbox_for", "try_command"]


@dataclass(frozen=True)
class Sandbox:
    mode: str
    prefix: tuple[str, ...] = field(default=())

    @property
    def active(self) -> bool:
        return self.mode == "unshare"

    def wrap(self, argv: list[str]) -> list[str]:
        return [*self.prefix, *argv]


def try_command(argv: list[str]) -> str | None:
    """None when `argv + [true]` runs; else a short reason."""
    try:
        proc = subprocess.run([*argv, "true"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if proc.returncode == 0:
        return None
    reason = (proc.stderr or proc.stdout).strip().splitlines()
    return (reason[-1] if reason else f"exit {proc.returncode}")[:200]


def linux_binary(name: str) -> str | None:
    """The path of `name` on Linux (namespaces are Linux's), else None."""
    return shutil.which(name) if sys.platform.startswith("linux") else None


@functools.lru_cache(maxsize=1)
def probe_sandbox() -> Sandbox:
    """The best network-denial backend this process can use (probed once)."""
    unshare = linux_binary("unshare")
    if unshare is None:
        return Sandbox("unavailable")
    reasons = []
    for argv in ([unshare, "--net"], [unshare, "-rn"]):
        reason = try_command(argv)
        if reason is None:
            return Sandbox("unshare", tuple(argv))
        reasons.append(f"{' '.join(argv[1:])}: {reason}")
    # `:` separates the mode from its reason; keep the reason itself free of newlines.
    return Sandbox("fallback-off:" + "; ".join(reasons).replace("\n", " "))


def sandbox_for(enabled: bool) -> Sandbox:
    """`disabled` when turned off, else the probed backend."""
    return probe_sandbox() if enabled else Sandbox("disabled")
