"""Helpers for the coding-suite tests: small suites built from the shipped fixtures."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "suites" / "coding"
FIXTURES = sorted(p.name for p in SHIPPED.iterdir() if (p / "task.yaml").is_file())


def mini_suite(root: Path, names: tuple[str, ...] = ("csv_dedup", "lru_eviction")) -> Path:
    """A coding suite under `root` holding copies of some shipped fixtures."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "suite.yaml").write_text("name: mini\ndescription: two shipped fixtures\nkind: coding_fixtures\n")
    for name in names:
        shutil.copytree(SHIPPED / name, root / name)
    return root


def grader_evidence(store_db: Path, run_id: str) -> dict[tuple[str, int], dict[str, Any]]:
    """{(task, attempt): hidden_tests evidence} of a stored run."""
    from aeh.store import open_store

    with open_store(store_db, must_exist=True) as store:
        frame = store.grader_frame(run_id)
    out = {}
    for row in frame.iter_rows(named=True):
        if row["kind"] == "hidden_tests":
            out[(row["task_id"], row["attempt"])] = json.loads(row["evidence"])
    return out


def run_coding(suite: Path | str, db: Path, solver: str, *, attempts: int = 1, concurrency: int = 2,
               seed: int = 1, **options: Any):
    import aeh

    # Most tests play a correct solver by copying the fixture's reference, which a confined
    # solver cannot read: confinement is opted into by the tests about it.
    adapter_options = {"solver": solver, "confine_solver": False, **options.pop("adapter_options", {})}
    return aeh.run(suite, adapter="command", attempts=attempts, concurrency=concurrency, seed=seed, db=db,
                   adapter_options=adapter_options, progress=False, **options)


class LoopbackServer:
    """A TCP server on 127.0.0.1 that answers every connection with b"pong"."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            with conn:
                conn.sendall(b"pong")

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def network_fixture(root: Path, port: int) -> Path:
    """A one-fixture coding suite whose hidden test needs a loopback connection to `port`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "suite.yaml").write_text("name: net\ndescription: network probe\nkind: coding_fixtures\n")
    fx = root / "net_probe"
    for sub in ("seed", "reference", "tests_public", "tests_hidden"):
        (fx / sub).mkdir(parents=True)
    (fx / "task.yaml").write_text(
        "id: net_probe\ntitle: probe\nprompt: |\n  Fix `probe.py`; tests are in `tests_public/`.\n"
        "entry_files:\n  - probe.py\ntimeout_seconds: 30\ntaxonomy:\n  - network\n")
    code = ("import socket\n\n\ndef fetch(port):\n"
            "    with socket.create_connection(('127.0.0.1', port), timeout=3) as s:\n"
            "        return s.recv(4)\n")
    (fx / "seed" / "probe.py").write_text(code)
    (fx / "reference" / "probe.py").write_text(code + "\n# reference\n")
    (fx / "tests_public" / "test_public_probe.py").write_text(
        "from probe import fetch\n\n\ndef test_imports():\n    assert callable(fetch)\n")
    (fx / "tests_hidden" / "test_hidden_probe.py").write_text(
        f"from probe import fetch\n\n\ndef test_loopback_reachable():\n    assert fetch({port}) == b'pong'\n")
    return root



def _clear_probes() -> None:
    from aeh.adapters._confine import fixture_material
    from aeh.grading._jail import pid_namespace_prefix, probe_jail
    from aeh.grading._sandbox import probe_sandbox

    for cached in (probe_jail, pid_namespace_prefix, probe_sandbox, fixture_material):
        cached.cache_clear()


@contextlib.contextmanager
def commands_without(shim: Path, *names: str) -> Iterator[Path]:
    """PATH holds every command of the current PATH but `names` (a machine that never installed
    them), through links in `shim`; the jail and sandbox probes ask again inside and after."""
    shim.mkdir(parents=True, exist_ok=True)
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or not Path(folder).is_dir():
            continue
        for entry in Path(folder).iterdir():
            target = shim / entry.name
            if entry.name not in names and not target.exists() and os.access(entry, os.X_OK):
                target.symlink_to(entry)
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = str(shim)
    _clear_probes()
    try:
        yield shim
    finally:
        os.environ["PATH"] = old
        _clear_probes()
