"""The grading verdict, read from a pipe aeh owns instead of a file the graded code can reach.

`VerdictPipe` makes the pipe, hands its write end to the pytest run (`_verdict_plugin` writes
one JSON line per test phase and a last line with pytest's exit status) and reads the other end
in a thread while the run goes on. `read_verdict` turns those lines into per-set counts and
checks them against what cannot be forged from inside the run: the exit status the process
really ended with and how many tests each set holds. Any disagreement is tampering, with the
reason kept as evidence.

The graded code shares the plugin's process, so it can find the descriptor (`/proc/self/fd`):
what it writes there lacks the one-time key, and what it suppresses leaves the run unfinished.
Code written to read the key out of the plugin's memory is the limit (docs/coding.md).
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MAX_VERDICT_BYTES", "PLUGIN", "Verdict", "VerdictPipe", "plugin_dir", "read_verdict"]

#: Far more than any fixture's results; a flood beyond it is cut off (and is itself suspicious).
MAX_VERDICT_BYTES = 4 * 1024 * 1024
PLUGIN = "_aeh_verdict"
_TAMPER_SHOWN = 20


def plugin_dir() -> tuple[Path, str]:
    """(a fresh directory holding the plugin, its module name; the caller removes the directory).

    The name is new each time: no file in the graded directory (which comes first on sys.path)
    can be named to stand in for it.
    """
    where = Path(tempfile.mkdtemp(prefix="aeh-plugin-"))
    name = f"{PLUGIN}_{secrets.token_hex(8)}"
    shutil.copyfile(Path(__file__).with_name("_verdict_plugin.py"), where / f"{name}.py")
    return where, name


class VerdictPipe:
    """The pipe's write end and the key's read end go to the child (`fds`, `env`);
    `close_child_end` after spawning."""

    def __init__(self) -> None:
        self._read, self.fd = os.pipe()
        os.set_inheritable(self.fd, True)
        # The one-time key waits in a pipe of its own: the plugin reads it before any graded code
        # runs, so it is never in the environment, on the command line or in a file.
        self.key = secrets.token_hex(16)
        self.key_fd, key_write = os.pipe()
        os.write(key_write, self.key.encode())
        os.close(key_write)
        os.set_inheritable(self.key_fd, True)
        self._chunks: list[bytes] = []
        self._size = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drain, name="aeh-verdict", daemon=True)
        self._thread.start()

    @property
    def env(self) -> dict[str, str]:
        return {"AEH_VERDICT_FD": f"{self.fd},{self.key_fd}"}

    @property
    def fds(self) -> tuple[int, int]:
        return self.fd, self.key_fd

    def close_child_end(self) -> None:
        for name in ("fd", "key_fd"):
            if getattr(self, name) >= 0:
                os.close(getattr(self, name))
                setattr(self, name, -1)

    def _drain(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._read], [], [], 0.1)
            if not ready:
                continue
            chunk = os.read(self._read, 65536)
            if not chunk:
                return
            if self._size < MAX_VERDICT_BYTES:
                self._chunks.append(chunk[: MAX_VERDICT_BYTES - self._size])
            self._size += len(chunk)

    def result(self, wait_s: float = 5.0) -> tuple[bytes, bool]:
        """(what was read, True when the writer closed its end); stops reading after `wait_s`."""
        self.close_child_end()
        self._thread.join(wait_s)
        closed = not self._thread.is_alive()
        self.close()
        return b"".join(self._chunks), closed and self._size <= MAX_VERDICT_BYTES

    def close(self) -> None:
        """Stop reading and close both ends (again: a no-op)."""
        self.close_child_end()
        self._stop.set()
        self._thread.join()
        if self._read >= 0:
            os.close(self._read)
            self._read = -1


@dataclass
class Verdict:
    """Per-set (passed, total), failing test ids and why the result cannot be trusted (if it cannot)."""

    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    failing: list[str] = field(default_factory=list)
    collection_errors: list[str] = field(default_factory=list)
    started: bool = False
    """pytest reported the start of its session (before any graded code was imported)."""
    finished: bool = False
    """pytest reported its exit status (the run reached its end)."""
    tamper: list[str] = field(default_factory=list)


def _records(data: bytes, key: str | None, verdict: Verdict) -> tuple[dict[str, dict[str, str]], dict[str, Any] | None]:
    phases: dict[str, dict[str, str]] = {}
    final: dict[str, Any] | None = None
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError(line)
        except ValueError:
            verdict.tamper.append("an unreadable line on the result channel")
            continue
        if key is not None and record.pop("key", None) != key:
            verdict.tamper.append("a result without the run's key (not written by aeh's plugin)")
            continue
        if final is not None:
            verdict.tamper.append("results reported after pytest had finished")
            break
        if "exitstatus" in record:
            final = record
        elif "started" in record:
            verdict.started = True
        elif "collect_error" in record:
            verdict.collection_errors.append(str(record["collect_error"]))
        else:
            nodeid, when = str(record.get("nodeid")), str(record.get("when"))
            if when in phases.setdefault(nodeid, {}):
                verdict.tamper.append(f"a second {when} result for {nodeid}")
                continue
            phases[nodeid][when] = str(record.get("outcome"))
    return phases, final


def read_verdict(data: bytes, complete: bool, returncode: int | None, sets: tuple[str, ...],
                 expected: dict[str, int], key: str | None = None) -> Verdict:
    """Per-set (passed, total) from the channel, with every disagreement recorded as tampering.

    `expected` is how many tests each set holds (collected from the fixture's own seed); a run
    that reports more is forging results. With `key`, a line that does not carry it is forged.
    """
    verdict = Verdict()
    if not complete:
        verdict.tamper.append(f"the result channel was flooded past {MAX_VERDICT_BYTES} bytes or held open")
    phases, final = _records(data, key, verdict)
    per_set = {name: [0, 0] for name in sets}
    for nodeid, outcome in phases.items():
        which = nodeid.split("/")[0]
        if which not in per_set:
            continue
        per_set[which][1] += 1
        if outcome.get("call") == "passed" and "failed" not in outcome.values():
            per_set[which][0] += 1
        else:
            verdict.failing.append(nodeid)
    verdict.counts = {k: (v[0], v[1]) for k, v in per_set.items()}
    for name, (_, total) in verdict.counts.items():
        if total > expected.get(name, total):
            verdict.tamper.append(f"{name}: {total} results reported, the set holds {expected[name]} tests")
    verdict.finished = final is not None
    status = final.get("exitstatus") if final is not None else None
    if final is None and returncode == 0:
        verdict.tamper.append("pytest exited 0 without reporting that the run finished")
    elif final is not None and status != returncode:
        verdict.tamper.append(f"pytest finished with exit status {status} but the process exited {returncode}")
    all_passed = not verdict.failing and not verdict.collection_errors and any(
        total for _, total in verdict.counts.values())
    if final is not None and status == 0 and not all_passed:
        verdict.tamper.append("exit status 0 while tests failed or did not run")
    if final is not None and all_passed and status not in (0, None):
        verdict.tamper.append(f"every test reported passed but pytest's exit status was {status}")
    verdict.tamper = verdict.tamper[:_TAMPER_SHOWN]
    return verdict
