"""Shared test setup. Every test runs with the network blocked except loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REALDATA = REPO.parent / "shared" / "realdata"

# Test modules import nbformat (notebooks, reports): imported here as `aeh report` imports it,
# without the format checkers jsonschema never uses for a notebook — one of them builds a Lark
# grammar at import, 1–3 s of every test process's collection.
from aeh.report._lean_imports import import_lean  # noqa: E402

import_lean()

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths and other local families
    host = str(address[0])
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # an unresolved name: refuse rather than resolve it


class NetworkBlocked(OSError):
    pass


def _guarded_connect(self: socket.socket, address: object) -> None:
    if not _is_loopback(address):
        raise NetworkBlocked(f"tests may only use loopback; blocked connect to {address!r}")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if not _is_loopback(address):
        raise NetworkBlocked(f"tests may only use loopback; blocked connect to {address!r}")
    return _real_connect_ex(self, address)


def pytest_configure(config: pytest.Config) -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    # Keep Jupyter/matplotlib state out of $HOME so runs are clean and repeatable.
    base = Path(os.environ.get("AEH_TEST_HOME", "/tmp/aeh-test-home"))
    for var, sub in (("JUPYTER_CONFIG_DIR", "jupyter-config"), ("JUPYTER_DATA_DIR", "jupyter-data"),
                     ("JUPYTER_RUNTIME_DIR", "jupyter-runtime"), ("IPYTHONDIR", "ipython"),
                     ("MPLCONFIGDIR", "matplotlib")):
        path = base / sub
        path.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault(var, str(path))
    os.environ.pop("OPENAI_BASE_URL", None)
    os.environ.pop("AEH_DB", None)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A test that drives Chromium is a browser test wherever it lives, so the fast lane
    # (-m "not slow and not browser") never launches one by accident.
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A fresh store path per test."""
    return tmp_path / "runs.db"


@pytest.fixture(scope="session")
def mock_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A store with two toy_math runs: A (mock-strong) and B (mock-degraded), 3 attempts each."""
    import aeh

    db = tmp_path_factory.mktemp("store") / "runs.db"
    a = aeh.run("toy_math", adapter="mock", attempts=3, seed=1, db=str(db)).run_id
    b = aeh.run("toy_math", adapter="mock", attempts=3, seed=2, db=str(db), model="mock-degraded").run_id
    return db, a, b


@pytest.fixture
def realdata() -> Path:
    if not REALDATA.is_dir():
        pytest.skip(f"real recorded runs not found at {REALDATA}")
    return REALDATA


@pytest.fixture(autouse=True)
def no_leaked_store() -> Iterator[None]:
    """Fail a test that leaves an aeh Store open, or lets one be garbage-collected open.

    The library closes every store it opens from a path; a test closes the ones it opens
    (`with open_store(...)`). Like sqlite-utils' suite, a leak is a failure, not a warning.
    """
    from aeh.store import open_stores, unclosed_stores

    before_open, before_unclosed = set(map(id, open_stores())), len(unclosed_stores())
    yield
    leaked = [s for s in open_stores() if id(s) not in before_open]
    collected = unclosed_stores()[before_unclosed:]
    for store in leaked:
        store.close()  # so one leak does not fail the tests after it
    problems = [f"left open: {s.path}" for s in leaked] + [f"garbage-collected open: {p}" for p in collected]
    if problems:
        pytest.fail("aeh Store connection(s) leaked — close them (`with open_store(...)`):\n  "
                    + "\n  ".join(problems), pytrace=False)


@pytest.fixture(autouse=True)
def figures_closed() -> Iterator[None]:
    """Close the pyplot figures a test leaves open (charts aeh returns stay open for their caller):
    a later test that shows or counts open figures would otherwise see them."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
